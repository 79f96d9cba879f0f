/* Opens files as the first thing it does, closes one and opens again, and
 * prints the descriptor numbers it got: with the library loaded they must
 * be those it gets without (iopred's runtime starts and opens files of
 * its own on other threads at the same moment). Usage: fdnums DIR */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  char path[4096];
  int fds[6];
  for (int i = 0; i < 6; i++) {
    snprintf(path, sizeof path, "%s/f%d", argv[1], i);
    fds[i] = open(path, O_CREAT | O_RDWR, 0644);
    if (i == 2) close(fds[1]);
    if (i == 4) fds[4] = dup(fds[0]);
  }
  FILE *f = fopen(path, "r");
  printf("fds %d %d %d %d %d %d stream %d\n", fds[0], fds[1], fds[2], fds[3], fds[4], fds[5], f ? fileno(f) : -1);
  return 0;
}

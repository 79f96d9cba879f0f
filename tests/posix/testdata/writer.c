/* Writes 4 KiB records forever, one every millisecond, until killed.
 * Usage: writer FILE */
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  int fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0644);
  char rec[4096];
  memset(rec, 'w', sizeof rec);
  struct timespec ms = {0, 1000000};
  for (;;) {
    if (write(fd, rec, sizeof rec) != sizeof rec) return 1;
    nanosleep(&ms, NULL);
  }
}

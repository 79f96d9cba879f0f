/* A writer to kill: it forks a child, and both write pwrites of 64 bytes
 * to a file of their own in a loop. After each pwrite returns, the writer
 * reports its number on its side channel (fd 3 for the child, fd 4 for the
 * parent), so the test knows which calls returned before the kill.
 * Usage: killme DIR */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void loop(const char *dir, const char *name, int side) {
  char path[4096], buf[64];
  memset(buf, 'k', sizeof buf);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  for (unsigned i = 0;; i++) {
    if (pwrite(fd, buf, sizeof buf, (off_t)i * 64) != 64) return;
    if (write(side, &i, sizeof i) != sizeof i) return;
  }
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  pid_t p = fork();
  if (p == 0) loop(argv[1], "child.dat", 3);
  else loop(argv[1], "parent.dat", 4);
  return 1;
}

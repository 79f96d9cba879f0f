/* Prints the return value and errno of calls that fail, so that a run with
 * and without the library can be compared byte for byte. Usage: errnos DIR */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHOW(expr) do { errno = 0; long r_ = (long)(expr); printf("%-40s ret %ld errno %d\n", #expr, r_, errno); } while (0)

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  char path[4096], ro[4096];
  snprintf(path, sizeof path, "%s/missing/file", argv[1]);
  snprintf(ro, sizeof ro, "%s/ro.txt", argv[1]);
  int fd = open(ro, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  write(fd, "data", 4);
  close(fd);
  struct stat st;
  char buf[16];
  SHOW(open(path, O_RDONLY));
  SHOW(read(12345, buf, 4));
  SHOW(write(-1, buf, 4));
  fd = open(ro, O_RDONLY);
  printf("fd %d\n", fd);
  SHOW(pwrite(fd, buf, 4, 0));
  SHOW(lseek(fd, -10, SEEK_SET));
  SHOW(read(fd, buf, 4));
  SHOW(close(fd));
  SHOW(close(fd));
  SHOW(read(fd, buf, 4));
  SHOW(pread(fd, buf, 4, 0));
  SHOW(stat(path, &st));
  SHOW(unlink(path));
  SHOW(fopen(path, "r") == NULL);
  SHOW(rename(path, ro));
  int fd2 = open(ro, O_RDONLY);
  printf("fd reused %d\n", fd2);
  SHOW(dup2(fd2, 100));
  SHOW(fcntl(fd2, F_DUPFD, 50));
  return 0;
}

/* Calls every function gotchalike.c wraps, on a file, and checks their
 * results: write and fclose succeed, close(-1) fails with EBADF.
 * Usage: stacked FILE; prints the bytes written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  FILE *fp = fopen(argv[1], "w");
  if (!fp || fwrite("stream\n", 1, 7, fp) != 7 || fclose(fp) != 0) return 3;
  int fd = open(argv[1], O_WRONLY | O_APPEND);
  if (fd < 0 || write(fd, "direct\n", 7) != 7 || close(fd) != 0) return 4;
  errno = 0;
  if (close(-1) != -1 || errno != EBADF) return 5;
  printf("%d\n", 14);
  return 0;
}

/* A process that does one recorded I/O call: the Go runtime starts. */
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int fd = open(argc > 1 ? argv[1] : "/dev/shm/iopred-oneio", O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0 || write(fd, "x", 1) != 1) return 1;
  return close(fd);
}

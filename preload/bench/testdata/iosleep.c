/* One recorded I/O call, then a pause during which the benchmark reads
 * the process's memory from /proc. */
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int fd = open(argc > 1 ? argv[1] : "/dev/shm/iopred-iosleep", O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0 || write(fd, "x", 1) != 1) return 1;
  close(fd);
  usleep(400000);
  return 0;
}

/* pferrno: return values and errno of reads around a strided stream that
 * prefetching follows, printed so that runs with and without prefetching
 * can be compared byte for byte. Every successful read must leave errno as
 * the program set it.
 *
 * pferrno FILE */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) return 1;
  struct stat st;
  fstat(fd, &st);
  static char buf[65536];
  long stride = 1 << 20, kept = 0;
  /* A strided stream that runs past the end of the file: the last reads
   * are short, then empty. */
  for (off_t off = st.st_size - 40 * stride + 1000; off < st.st_size + 4 * stride; off += stride) {
    errno = 4242;
    ssize_t r = pread(fd, buf, sizeof buf, off);
    if (r >= 0 && errno == 4242) kept++;
    if (r != (ssize_t)sizeof buf) printf("pread at size%+lld: ret %zd errno %d\n", (long long)(off - st.st_size), r, errno);
  }
  printf("successful reads that kept errno: %ld\n", kept);
  errno = 0;
  ssize_t r = pread(fd, buf, 16, -4096);
  printf("pread negative offset: ret %zd errno %d\n", r, errno);
  errno = 0;
  r = read(999, buf, 16);
  printf("read on a closed descriptor: ret %zd errno %d\n", r, errno);
  int dir = open(".", O_RDONLY | O_DIRECTORY);
  errno = 0;
  r = read(dir, buf, 16);
  printf("read on a directory: ret %zd errno %d\n", r, errno);
  close(dir);
  /* read and lseek at a stride, then close while prefetches are pending. */
  for (int i = 0; i < 12; i++) {
    lseek(fd, (off_t)i * stride, SEEK_SET);
    errno = 77;
    ssize_t r = read(fd, buf, 4096);
    printf("read %d: ret %zd errno %d first %d\n", i, r, errno, buf[0]);
  }
  errno = 0;
  int c = close(fd);
  printf("close: ret %d errno %d\n", c, errno);
  return 0;
}

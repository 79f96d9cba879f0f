/* forkread: strided reads in a process and in children it forks without
 * exec, and prints a checksum of each.
 *
 * forkread FILE READS SIZE STRIDE COMPUTE_US
 *   The parent reads READS pieces of SIZE bytes at STRIDE from offset 0
 *   (its prefetching, if any, has started by then), then forks three
 *   children one after another, each reading READS pieces from its own
 *   region of the file: the first ends with exit, the second with _exit
 *   (no exit handlers run), the third was made by _Fork (glibc's fork
 *   without fork handlers) and ends with _exit. Each child prints its
 *   checksum before it ends; the parent waits for each in turn, so the
 *   output's order is fixed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

pid_t _Fork(void);

static long reads, size, stride, us;
static int fd;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* region reads READS pieces from base and returns their checksum. */
static uint64_t region(off_t base) {
  char *buf = malloc(size);
  uint64_t sum = 0, x = 1;
  for (long i = 0; i < reads; i++) {
    ssize_t r = pread(fd, buf, size, base + (off_t)i * stride);
    if (r < 0) {
      fprintf(stderr, "read %ld: %s\n", i, strerror(errno));
      exit(1);
    }
    for (ssize_t j = 0; j < r; j += 512) sum = sum * 31 + (unsigned char)buf[j];
    double end = now() + us / 1e6;
    while (now() < end) x = x * 6364136223846793005ull + 1442695040888963407ull;
  }
  free(buf);
  return sum + (x & 0);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: forkread FILE READS SIZE STRIDE COMPUTE_US\n");
    return 2;
  }
  reads = atol(argv[2]), size = atol(argv[3]), stride = atol(argv[4]), us = atol(argv[5]);
  fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  off_t span = (off_t)reads * stride;
  printf("parent %016llx\n", (unsigned long long)region(0));
  fflush(stdout);
  for (int k = 1; k <= 3; k++) {
    pid_t pid = k == 3 ? _Fork() : fork();
    if (pid < 0) {
      perror("fork");
      return 1;
    }
    if (pid == 0) {
      printf("child %d %016llx\n", k, (unsigned long long)region(k * span));
      fflush(stdout);
      if (k == 1) exit(0);
      _exit(0);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "child %d failed\n", k);
      return 1;
    }
  }
  return 0;
}

/* Times N interposable calls: `calls pwrite4k N FILE` or `calls write1 N FILE`,
 * or `calls mixed N FILE`: N/2 of the first, then N/2 of the second.
 * Prints the median and mean nanoseconds per call over batches of 1000,
 * then the 10th and 90th percentile batches. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: calls pwrite4k|write1|mixed N FILE\n");
    return 2;
  }
  int big = strcmp(argv[1], "pwrite4k") == 0;
  int mixed = strcmp(argv[1], "mixed") == 0;
  long n = atol(argv[2]);
  int fd = open(argv[3], O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) {
    perror(argv[3]);
    return 1;
  }
  static char buf[4096];
  memset(buf, 'x', sizeof buf);
  long batches = n / 1000;
  double *per = malloc(sizeof *per * (size_t)batches);
  long long t0 = now();
  for (long b = 0; b < batches; b++) {
    if (mixed) big = b < batches / 2;
    long long s = now();
    for (int i = 0; i < 1000; i++) {
      if (big) {
        if (pwrite(fd, buf, 4096, (off_t)(i % 256) * 4096) != 4096) return 1;
      } else if (write(fd, buf, 1) != 1) {
        return 1;
      }
    }
    per[b] = (double)(now() - s) / 1000.0;
  }
  double mean = (double)(now() - t0) / (double)(batches * 1000);
  qsort(per, (size_t)batches, sizeof *per, cmp);
  printf("%.1f %.1f %.1f %.1f\n", per[batches / 2], mean, per[batches / 10], per[batches * 9 / 10]);
  close(fd);
  return 0;
}

/* Periodic I/O: ITER iterations of a burst of 64 KiB writes followed by a
 * pause of PAUSE_MS. Asks iopred_period after each iteration from the
 * fourth on and prints "iter I found F period P confidence C window T0 T1"
 * lines (T0 and T1 bound the window analysed), then the mean
 * interval between the bursts' starts as the program measured it:
 * "mean_interval S". Usage: periodic FILE ITER PAUSE_MS */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "iopred.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  int (*period)(struct iopred_period_result *, int) =
      (int (*)(struct iopred_period_result *, int))dlsym(RTLD_DEFAULT, "iopred_period");
  int iters = atoi(argv[2]);
  long pause_ms = atol(argv[3]);
  static char buf[65536];
  int fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0644);
  double first = 0, last = 0;
  for (int it = 0; it < iters; it++) {
    double t = now();
    if (it == 0) first = t;
    last = t;
    for (int i = 0; i < 64; i++) pwrite(fd, buf, sizeof buf, (off_t)i * (off_t)sizeof buf);
    struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    if (it >= 3 && period) {
      struct iopred_period_result r;
      int found = period(&r, IOPRED_PERIOD_WRITE);
      printf("iter %d found %d period %.6f confidence %.3f window %.6f %.6f\n", it, found, r.period_s, r.confidence,
             r.t_start, r.t_end);
    }
  }
  close(fd);
  printf("mean_interval %.6f\n", (last - first) / (iters - 1));
  return 0;
}

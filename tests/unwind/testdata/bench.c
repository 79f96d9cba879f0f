/* Cost of one stack capture: iop_backtrace against libunwind's
 * unw_backtrace and glibc's backtrace(), each called from the same depth
 * (about 8 frames up to _start), warmed up, side by side in one process.
 *
 * bench time [- NEST]     median wall time per call over batches of 1000
 *                         calls, methods interleaved batch by batch
 * bench count N [NEST]    N calls of each method after a warm-up (run it
 *                         under callgrind with two values of N; the
 *                         difference of the loop functions' inclusive cost
 *                         divided by the difference of N is the cost of one
 *                         warm call)
 * NEST (default 2) adds frames between main and the loops: the stack is
 * NEST + 7 frames deep.
 * Output: one line per method: name frames value. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "../../../preload/unwind.h"

#define NOINLINE __attribute__((noinline, noclone))
#define MAXF 64

static uintptr_t buf[MAXF];
static volatile int frames_seen;

NOINLINE static void loop_iop(long n) {
  for (long i = 0; i < n; i++) frames_seen = iop_backtrace(buf, MAXF, 0);
}
NOINLINE static void loop_unw(long n) {
  for (long i = 0; i < n; i++) frames_seen = unw_backtrace((void **)buf, MAXF);
}
/* libunwind exports its own backtrace(), which the linker prefers; glibc's
 * comes from libc.so.6 by name. */
static int (*glibc_backtrace)(void **, int);
NOINLINE static void loop_glibc(long n) {
  for (long i = 0; i < n; i++) frames_seen = glibc_backtrace((void **)buf, MAXF);
}

typedef void (*loop_fn)(long);
static const struct {
  const char *name;
  loop_fn fn;
} methods[] = {{"iop_backtrace", loop_iop}, {"unw_backtrace", loop_unw}, {"glibc_backtrace", loop_glibc}};
#define NMETHODS 3

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int frames_of(int m) {
  methods[m].fn(1);
  return frames_seen;
}

NOINLINE static void run_time(void) {
  enum { BATCHES = 300, BATCH = 1000 };
  static double t[NMETHODS][BATCHES];
  for (int m = 0; m < NMETHODS; m++) methods[m].fn(BATCH);
  for (int b = 0; b < BATCHES; b++)
    for (int m = 0; m < NMETHODS; m++) {
      double t0 = now_ns();
      methods[m].fn(BATCH);
      t[m][b] = (now_ns() - t0) / BATCH;
    }
  for (int m = 0; m < NMETHODS; m++) {
    qsort(t[m], BATCHES, sizeof t[m][0], cmp_double);
    printf("%s %d %.1f\n", methods[m].name, frames_of(m), t[m][BATCHES / 2]);
  }
}

NOINLINE static void run_count(long n) {
  for (int m = 0; m < NMETHODS; m++) methods[m].fn(100); /* warm-up */
  for (int m = 0; m < NMETHODS; m++) methods[m].fn(n);
  for (int m = 0; m < NMETHODS; m++) printf("%s %d %ld\n", methods[m].name, frames_of(m), n);
}

/* A few frames between main and the loops, built without frame pointers. */
NOINLINE static int nest(int k, int argc, char **argv) {
  if (k > 0) {
    int r = nest(k - 1, argc, argv);
    frames_seen += r;
    return r;
  }
  if (argc > 2 && !strcmp(argv[1], "count")) run_count(atol(argv[2]));
  else run_time();
  return 0;
}

int main(int argc, char **argv) {
  iop_unwind_init();
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  glibc_backtrace = libc ? (int (*)(void **, int))dlsym(libc, "backtrace") : NULL;
  if (!glibc_backtrace) {
    fprintf(stderr, "bench: glibc's backtrace not found\n");
    return 1;
  }
  if (argc < 2 || (strcmp(argv[1], "time") && (strcmp(argv[1], "count") || argc < 3))) {
    fprintf(stderr, "usage: bench time [- NEST] | bench count N [NEST]\n");
    return 2;
  }
  nest(argc > 3 ? atoi(argv[3]) : 2, argc, argv);
  return 0;
}

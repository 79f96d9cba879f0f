/* Times MPI-IO calls for the overhead benchmark.
 * usage: mpibench FILE CALLS
 * On MPI_COMM_SELF, times CALLS MPI_File_write_at of 4 KiB (each a pwrite
 * underneath) and CALLS MPI_File_seek (no I/O underneath) in batches of
 * 1000, and prints "write_at MEDIAN MEAN seek MEDIAN MEAN": nanoseconds per
 * call, the median over batches and the overall mean. Then it times 2000
 * calls of each one by one, 20 us apart (busy-waiting), so that a tracer's
 * background work keeps up, and appends "paced WRITE_AT SEEK": the median
 * time of one call. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  long calls = atol(argv[2]);
  MPI_Init(&argc, &argv);
  MPI_File fh;
  if (MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS) return 3;
  static char buf[4096];
  memset(buf, 'x', sizeof buf);
  /* warm up: first-call resolution and page cache */
  for (long i = 0; i < 100; i++) MPI_File_write_at(fh, (MPI_Offset)(i % 64) * 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
  long batches = calls / 1000;
  if (batches < 1) batches = 1;
  double *w = malloc(sizeof *w * (size_t)batches), *s = malloc(sizeof *s * (size_t)batches);
  double t0 = now_ns();
  for (long b = 0; b < batches; b++) {
    double bs = now_ns();
    for (long i = 0; i < 1000; i++) MPI_File_write_at(fh, (MPI_Offset)(i % 64) * 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
    w[b] = (now_ns() - bs) / 1000;
  }
  double t1 = now_ns();
  for (long b = 0; b < batches; b++) {
    double bs = now_ns();
    for (long i = 0; i < 1000; i++) MPI_File_seek(fh, (MPI_Offset)(i % 64) * 4096, MPI_SEEK_SET);
    s[b] = (now_ns() - bs) / 1000;
  }
  double t2 = now_ns();
  enum { PACED = 2000 };
  static double pw[PACED], ps[PACED];
  for (int i = 0; i < 2 * PACED; i++) {
    double until = now_ns() + 20000;
    while (now_ns() < until) {
    }
    double bs = now_ns();
    if (i % 2 == 0)
      MPI_File_write_at(fh, (MPI_Offset)(i % 64) * 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
    else
      MPI_File_seek(fh, (MPI_Offset)(i % 64) * 4096, MPI_SEEK_SET);
    (i % 2 == 0 ? pw : ps)[i / 2] = now_ns() - bs;
  }
  MPI_File_close(&fh);
  MPI_Finalize();
  qsort(w, (size_t)batches, sizeof *w, cmp);
  qsort(s, (size_t)batches, sizeof *s, cmp);
  qsort(pw, PACED, sizeof *pw, cmp);
  qsort(ps, PACED, sizeof *ps, cmp);
  printf("write_at %.1f %.1f seek %.1f %.1f paced %.1f %.1f\n", w[batches / 2], (t1 - t0) / (batches * 1000.0), s[batches / 2],
         (t2 - t1) / (batches * 1000.0), pw[PACED / 2], ps[PACED / 2]);
  return 0;
}

/* Times MPI-IO calls for the overhead benchmark.
 * usage: mpibench FILE CALLS
 * On MPI_COMM_SELF, times CALLS MPI_File_write_at of 4 KiB (each a pwrite
 * underneath) and CALLS MPI_File_seek (no I/O underneath), and prints
 * "write_at NS seek NS": mean nanoseconds per call. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
  double t0 = now_ns();
  for (long i = 0; i < calls; i++) MPI_File_write_at(fh, (MPI_Offset)(i % 64) * 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
  double t1 = now_ns();
  for (long i = 0; i < calls; i++) MPI_File_seek(fh, (MPI_Offset)(i % 64) * 4096, MPI_SEEK_SET);
  double t2 = now_ns();
  MPI_File_close(&fh);
  MPI_Finalize();
  printf("write_at %.1f seek %.1f\n", (t1 - t0) / calls, (t2 - t1) / calls);
  return 0;
}

/* mpiread: a collective MPI-IO read job. Each iteration every rank reads
 * BLOCK bytes with MPI_File_read_at_all, the ranks' blocks side by side at
 * the start of each STRIDE bytes of the file, then computes; rank 0 prints
 * a checksum over all ranks.
 *
 * mpiread FILE BLOCK STRIDE ITERATIONS COMPUTE_US */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 6) {
    if (rank == 0) fprintf(stderr, "usage: mpiread FILE BLOCK STRIDE ITERATIONS COMPUTE_US\n");
    MPI_Finalize();
    return 2;
  }
  long block = atol(argv[2]), stride = atol(argv[3]), iters = atol(argv[4]), us = atol(argv[5]);
  MPI_File fh;
  if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
  unsigned char *buf = malloc(block);
  uint64_t sum = 0, x = 1;
  double t0 = MPI_Wtime();
  for (long i = 0; i < iters; i++) {
    MPI_Offset off = (MPI_Offset)i * stride + (MPI_Offset)rank * block;
    MPI_Status st;
    if (MPI_File_read_at_all(fh, off, buf, (int)block, MPI_BYTE, &st) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
    for (long j = 0; j < block; j += 512) sum = sum * 31 + buf[j];
    double end = MPI_Wtime() + us / 1e6;
    while (MPI_Wtime() < end)
      for (int k = 0; k < 1000; k++) x = x * 6364136223846793005ull + 1;
  }
  double t = MPI_Wtime() - t0, tmax;
  uint64_t all = 0;
  MPI_Reduce(&sum, &all, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_File_close(&fh);
  if (rank == 0) {
    printf("sum %016llx\n", (unsigned long long)all);
    fprintf(stderr, "time %.6f %llu\n", tmax, (unsigned long long)(x & 1));
  }
  MPI_Finalize();
  return 0;
}

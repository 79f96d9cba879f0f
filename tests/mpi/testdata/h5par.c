/* A parallel HDF5 checkpoint writer (Debian's libhdf5-openmpi): every
 * checkpoint creates DIR/ckpt_K.h5 through the MPI-IO driver and writes
 * three 2-D fields, each rank its own block of rows, collectively; rank 0
 * adds an attribute. Then every rank reads its rows back and checks them.
 * Usage: h5par DIR CHECKPOINTS */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 64 /* per rank */
#define COLS 256

static double value(int field, int ckpt, long row, long col) { return field * 1e6 + ckpt * 1e3 + row + col * 1e-3; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc != 3) MPI_Abort(MPI_COMM_WORLD, 2);
  int ckpts = atoi(argv[2]);
  static const char *fields[] = {"density", "pressure", "energy"};
  static double data[ROWS * COLS], back[ROWS * COLS];
  hsize_t dims[2] = {(hsize_t)n * ROWS, COLS}, start[2] = {(hsize_t)rank * ROWS, 0}, count[2] = {ROWS, COLS};
  int bad = 0;
  for (int c = 0; c < ckpts; c++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt_%03d.h5", argv[1], c);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
    hid_t fspace = H5Screate_simple(2, dims, NULL), mspace = H5Screate_simple(2, count, NULL);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    for (int f = 0; f < 3; f++) {
      for (long i = 0; i < ROWS; i++)
        for (long j = 0; j < COLS; j++) data[i * COLS + j] = value(f, c, rank * ROWS + i, j);
      hid_t ds = H5Dcreate2(file, fields[f], H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      if (ds < 0 || H5Dwrite(ds, H5T_NATIVE_DOUBLE, mspace, fspace, xfer, data) < 0) MPI_Abort(MPI_COMM_WORLD, 3);
      hid_t aspace = H5Screate(H5S_SCALAR);
      hid_t attr = H5Acreate2(ds, "checkpoint", H5T_NATIVE_INT, aspace, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(attr, H5T_NATIVE_INT, &c);
      H5Aclose(attr);
      H5Sclose(aspace);
      H5Dclose(ds);
    }
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Pclose(xfer);
    H5Fclose(file);
    /* read back this rank's rows */
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    fspace = H5Screate_simple(2, dims, NULL);
    mspace = H5Screate_simple(2, count, NULL);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    for (int f = 0; f < 3; f++) {
      hid_t ds = H5Dopen2(file, fields[f], H5P_DEFAULT);
      if (ds < 0 || H5Dread(ds, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, back) < 0) MPI_Abort(MPI_COMM_WORLD, 4);
      for (long i = 0; i < ROWS; i++)
        for (long j = 0; j < COLS; j++) bad += back[i * COLS + j] != value(f, c, rank * ROWS + i, j);
      H5Dclose(ds);
    }
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Fclose(file);
    H5Pclose(fapl);
  }
  int total = 0;
  MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%d checkpoints, %d wrong values\n", ckpts, total);
  MPI_Finalize();
  return total != 0;
}

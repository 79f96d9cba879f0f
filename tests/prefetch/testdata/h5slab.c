/* h5slab: HDF5 hyperslab reads of a 2-D dataset, with computation between
 * them, as an analysis reads one column stripe of a field.
 *
 * h5slab write FILE ROWS COLS        a dataset "field" of ROWS x COLS doubles
 * h5slab read FILE WIDTH TILE_ROWS COMPUTE_US
 *   reads columns [0, WIDTH) of the dataset TILE_ROWS rows at a time and
 *   prints a checksum of every value read. */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "write") == 0) {
    hsize_t dims[2] = {(hsize_t)atol(argv[3]), (hsize_t)atol(argv[4])};
    hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(f, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0 || ds < 0) return 1;
    double *row = malloc(dims[1] * sizeof *row);
    hsize_t one[2] = {1, dims[1]};
    hid_t mem = H5Screate_simple(2, one, NULL);
    for (hsize_t r = 0; r < dims[0]; r++) {
      for (hsize_t c = 0; c < dims[1]; c++) row[c] = (double)r * 1e-3 + (double)c * 1e-9;
      hsize_t start[2] = {r, 0};
      H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, one, NULL);
      if (H5Dwrite(ds, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, row) < 0) return 1;
    }
    H5Sclose(mem);
    H5Dclose(ds);
    H5Sclose(space);
    return H5Fclose(f) < 0;
  }
  if (argc == 6 && strcmp(argv[1], "read") == 0) {
    hsize_t width = (hsize_t)atol(argv[3]), tile = (hsize_t)atol(argv[4]);
    long us = atol(argv[5]);
    hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t ds = H5Dopen2(f, "field", H5P_DEFAULT);
    if (f < 0 || ds < 0) return 1;
    hid_t space = H5Dget_space(ds);
    hsize_t dims[2];
    H5Sget_simple_extent_dims(space, dims, NULL);
    double *buf = malloc(tile * width * sizeof *buf);
    hsize_t count[2] = {tile, width};
    hid_t mem = H5Screate_simple(2, count, NULL);
    double sum = 0;
    uint64_t x = 1;
    double t0 = now();
    for (hsize_t r = 0; r + tile <= dims[0]; r += tile) {
      hsize_t start[2] = {r, 0};
      H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
      if (H5Dread(ds, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf) < 0) return 1;
      for (hsize_t i = 0; i < tile * width; i += 64) sum += buf[i];
      double end = now() + us / 1e6;
      while (now() < end)
        for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ull + 1;
    }
    printf("sum %.9e\n", sum);
    fprintf(stderr, "time %.6f %llu\n", now() - t0, (unsigned long long)(x & 1));
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(ds);
    return H5Fclose(f) < 0;
  }
  fprintf(stderr, "usage: h5slab write FILE ROWS COLS | h5slab read FILE WIDTH TILE_ROWS COMPUTE_US\n");
  return 2;
}

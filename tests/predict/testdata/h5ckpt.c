/* An HDF5 checkpoint writer in the style of an atmospheric model (the
 * Omnisc'IO paper's CM1 case): every checkpoint creates a file holding
 * several 3-D fields as separate datasets plus a few attributes, so the
 * library's writes jump between metadata and the datasets' data.
 * Usage: h5ckpt DIR CHECKPOINTS */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

#define NX 32
#define NY 32
#define NZ 16

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int checkpoints = atoi(argv[2]);
  static const char *fields[] = {"u", "v", "w", "theta", "qv"};
  static double data[NX * NY * NZ];
  hsize_t dims[3] = {NX, NY, NZ};
  for (int c = 0; c < checkpoints; c++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt_%04d.h5", argv[1], c);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0) return 1;
    hid_t space = H5Screate_simple(3, dims, NULL);
    for (unsigned f = 0; f < sizeof fields / sizeof fields[0]; f++) {
      for (int i = 0; i < NX * NY * NZ; i++) data[i] = c + f * 0.1 + i * 1e-6;
      hid_t ds = H5Dcreate2(file, fields[f], H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      if (ds < 0 || H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) return 1;
      hid_t aspace = H5Screate(H5S_SCALAR);
      hid_t attr = H5Acreate2(ds, "step", H5T_NATIVE_INT, aspace, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(attr, H5T_NATIVE_INT, &c);
      H5Aclose(attr);
      H5Sclose(aspace);
      H5Dclose(ds);
    }
    H5Sclose(space);
    if (H5Fclose(file) < 0) return 1;
  }
  printf("%d checkpoints\n", checkpoints);
  return 0;
}

/* A plugin linked with MPI, loaded with dlopen(RTLD_LOCAL) by dlmain.c as
 * a Python extension module would be: its MPI library is then outside the
 * process's global symbol scope. */
#include <mpi.h>

int plugin_run(const char *path, int count) {
  int argc = 0;
  char **argv = 0;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 10;
  MPI_File fh;
  if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS) return 11;
  char buf[100] = {0};
  for (int i = 0; i < count; i++)
    if (MPI_File_write_at(fh, (MPI_Offset)i * 100, buf, 100, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS) return 12;
  if (MPI_File_close(&fh) != MPI_SUCCESS) return 13;
  return MPI_Finalize() == MPI_SUCCESS ? 0 : 14;
}

/* Calls every MPI-IO function iopred wraps, once each per rank, at offsets
 * the test computes: rank r works in its own region R = r*1024 of DIR/all.dat
 * with 16-int (64-byte) transfers, then at the shared file pointer from
 * byte 4096 on. usage: allcalls DIR
 *
 *   R+0    write_at, read_at_all, read_at (later, nonblocking)
 *   R+64   write_at_all_begin/end, iread_at_all (Testall)
 *   R+128  seek, write
 *   R+192  write_all
 *   R+256  iwrite (Wait)
 *   R+320  iwrite_all (Test)
 *   R+384  write_all_begin/end
 *   R+448  iwrite_at, R+512 iwrite_at (Waitany twice)
 *   R+576  iwrite_at_all + iread_at at R+0 (Waitsome until both)
 *   R+448  seek, iread (Testany), R+512 iread_all (Testsome), R+576 read, R+640 read_all,
 *   R+704  read_all_begin/end
 *   4096 + 64*r        write_shared (ranks in turn), then iwrite_shared at 4096+128+64*r
 *   4096+256           write_ordered, read_ordered_begin/end, write_ordered_begin/end
 *                      (recorded at the shared pointer when the call starts)
 *   also set_size, preallocate, sync, seek_shared, set_view, close, delete. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ok(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "allcalls: %s failed with %d\n", what, rc);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  char path[4096];
  snprintf(path, sizeof path, "%s/all.dat", argv[1]);
  int buf[16], in[16], more[16], again[16];
  for (int i = 0; i < 16; i++) buf[i] = rank * 100 + i;
  MPI_Offset R = (MPI_Offset)rank * 1024;
  MPI_File fh;
  MPI_Status st;
  MPI_Request rq[2];
  int flag, idx, outc, idxs[2];

  ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open");
  ok(MPI_File_set_size(fh, 8192), "set_size");
  ok(MPI_File_preallocate(fh, 8192), "preallocate");
  ok(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), "set_view");
  /* with an etype of MPI_INT, offsets count ints: R bytes = R/4 etypes */
#define E(bytes) ((MPI_Offset)(bytes) / 4)
  ok(MPI_File_write_at(fh, E(R), buf, 16, MPI_INT, &st), "write_at");
  ok(MPI_File_read_at_all(fh, E(R), in, 16, MPI_INT, &st), "read_at_all");
  ok(MPI_File_write_at_all_begin(fh, E(R + 64), buf, 16, MPI_INT), "write_at_all_begin");
  ok(MPI_File_write_at_all_end(fh, buf, &st), "write_at_all_end");
  ok(MPI_File_seek(fh, E(R + 128), MPI_SEEK_SET), "seek");
  ok(MPI_File_write(fh, buf, 16, MPI_INT, &st), "write");
  ok(MPI_File_write_all(fh, buf, 16, MPI_INT, &st), "write_all");
  ok(MPI_File_iwrite(fh, buf, 16, MPI_INT, &rq[0]), "iwrite");
  ok(MPI_Wait(&rq[0], &st), "wait");
  ok(MPI_File_iwrite_all(fh, buf, 16, MPI_INT, &rq[0]), "iwrite_all");
  do ok(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE), "test");
  while (!flag);
  ok(MPI_File_write_all_begin(fh, buf, 16, MPI_INT), "write_all_begin");
  ok(MPI_File_write_all_end(fh, buf, MPI_STATUS_IGNORE), "write_all_end");
  ok(MPI_File_iwrite_at(fh, E(R + 448), buf, 16, MPI_INT, &rq[0]), "iwrite_at");
  ok(MPI_File_iwrite_at(fh, E(R + 512), buf, 16, MPI_INT, &rq[1]), "iwrite_at");
  ok(MPI_Waitany(2, rq, &idx, &st), "waitany");
  ok(MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE), "waitany");
  ok(MPI_File_iwrite_at_all(fh, E(R + 576), buf, 16, MPI_INT, &rq[0]), "iwrite_at_all");
  ok(MPI_File_iread_at(fh, E(R), more, 16, MPI_INT, &rq[1]), "iread_at");
  for (int left = 2; left > 0; left -= outc) {
    ok(MPI_Waitsome(2, rq, &outc, idxs, MPI_STATUSES_IGNORE), "waitsome");
    if (outc == MPI_UNDEFINED) break;
  }
  ok(MPI_File_iread_at_all(fh, E(R + 64), in, 16, MPI_INT, &rq[0]), "iread_at_all");
  do ok(MPI_Testall(1, rq, &flag, MPI_STATUSES_IGNORE), "testall");
  while (!flag);
  ok(MPI_File_seek(fh, E(R + 448), MPI_SEEK_SET), "seek");
  ok(MPI_File_iread(fh, in, 16, MPI_INT, &rq[0]), "iread");
  do ok(MPI_Testany(1, rq, &idx, &flag, &st), "testany");
  while (!flag);
  ok(MPI_File_iread_all(fh, in, 16, MPI_INT, &rq[0]), "iread_all");
  for (outc = 0; outc == 0;) ok(MPI_Testsome(1, rq, &outc, idxs, MPI_STATUSES_IGNORE), "testsome");
  ok(MPI_File_read(fh, in, 16, MPI_INT, &st), "read");
  ok(MPI_File_read_all(fh, again, 16, MPI_INT, &st), "read_all");
  ok(MPI_File_read_all_begin(fh, in, 16, MPI_INT), "read_all_begin");
  ok(MPI_File_read_all_end(fh, in, &st), "read_all_end");
  ok(MPI_File_read_at(fh, E(R), in, 16, MPI_INT, &st), "read_at");
  if (memcmp(in, buf, sizeof buf) != 0 || memcmp(more, buf, sizeof buf) != 0) {
    fprintf(stderr, "allcalls: rank %d read back wrong data\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }

  /* the shared file pointer */
  ok(MPI_File_seek_shared(fh, E(4096), MPI_SEEK_SET), "seek_shared");
  for (int r = 0; r < n; r++) {
    if (r == rank) ok(MPI_File_write_shared(fh, buf, 16, MPI_INT, &st), "write_shared");
    MPI_Barrier(MPI_COMM_WORLD);
  }
  for (int r = 0; r < n; r++) {
    if (r == rank) {
      ok(MPI_File_iwrite_shared(fh, buf, 16, MPI_INT, &rq[0]), "iwrite_shared");
      ok(MPI_Wait(&rq[0], MPI_STATUS_IGNORE), "wait");
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ok(MPI_File_seek_shared(fh, E(4096 + 256), MPI_SEEK_SET), "seek_shared");
  ok(MPI_File_write_ordered(fh, buf, 16, MPI_INT, &st), "write_ordered");
  ok(MPI_File_seek_shared(fh, E(4096 + 256), MPI_SEEK_SET), "seek_shared");
  ok(MPI_File_read_ordered_begin(fh, in, 16, MPI_INT), "read_ordered_begin");
  ok(MPI_File_read_ordered_end(fh, in, &st), "read_ordered_end");
  ok(MPI_File_read_shared(fh, in, 16, MPI_INT, &st), "read_shared"); /* ranks race: offset unchecked */
  MPI_Barrier(MPI_COMM_WORLD);
  ok(MPI_File_seek_shared(fh, E(4096 + 512), MPI_SEEK_SET), "seek_shared");
  ok(MPI_File_write_ordered_begin(fh, buf, 16, MPI_INT), "write_ordered_begin");
  ok(MPI_File_write_ordered_end(fh, buf, &st), "write_ordered_end");
  ok(MPI_File_iread_shared(fh, in, 16, MPI_INT, &rq[0]), "iread_shared"); /* ranks race: offset unchecked */
  ok(MPI_Wait(&rq[0], &st), "wait");
  ok(MPI_File_sync(fh), "sync");
  ok(MPI_File_close(&fh), "close");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) ok(MPI_File_delete(path, MPI_INFO_NULL), "delete");
  MPI_Finalize();
  return 0;
}

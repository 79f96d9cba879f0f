/* An IOR-like MPI-IO workload for the iopred tests.
 *
 * usage: ior DIR SEGMENTS BLOCK TRANSFER PAUSE_MS [abort | ckpt=K]
 *
 * Every rank writes BLOCK bytes per segment in TRANSFER-byte calls:
 *   phase 1  N-1 strided, independent: MPI_File_write_at on DIR/n1_ind.dat,
 *            segment s of rank r at s*N*BLOCK + r*BLOCK;
 *   phase 2  N-1 strided, collective, through a file view (displacement
 *            r*BLOCK, filetype a vector of SEGMENTS blocks with stride
 *            N*BLOCK): MPI_File_write_all on DIR/n1_coll.dat;
 *   phase 3  N-N, file per process: MPI_File_write at the individual file
 *            pointer on DIR/nn.<rank>.dat (MPI_COMM_SELF);
 *   phase 4  reads phase 1's file back with MPI_File_iread_at, completed
 *            by one MPI_Waitall per segment, and checks the data;
 *   phase 5  with ckpt=K, K checkpoints: phase 1's writes to DIR/ckpt.dat,
 *            each followed by the pause, so the job's writes are periodic.
 * A compute pause of PAUSE_MS separates the phases. Before MPI_Init each
 * process writes DIR/preinit.<pid> with POSIX calls. With "abort", rank 0
 * calls MPI_Abort after phase 1 and a pause, and the others wait for it. */
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

static void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "ior: %s failed with %d\n", what, rc);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

static char pattern(int rank, long pos) { return (char)('a' + (rank * 7 + pos) % 26); }

/* N-1 strided, independent: segment s of rank r at s*N*BLOCK + r*BLOCK. */
static void write_strided(const char *dir, const char *name, int rank, int n, int segs, int block, int xfer, char *buf) {
  char path[4096];
  MPI_File fh;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open strided");
  for (int s = 0; s < segs; s++) {
    for (int j = 0; j < block / xfer; j++) {
      MPI_Offset off = (MPI_Offset)s * n * block + (MPI_Offset)rank * block + (MPI_Offset)j * xfer;
      for (int k = 0; k < xfer; k++) buf[k] = pattern(rank, off + k);
      check(MPI_File_write_at(fh, off, buf, xfer, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
    }
  }
  check(MPI_File_close(&fh), "close strided");
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: ior DIR SEGMENTS BLOCK TRANSFER PAUSE_MS [abort | ckpt=K]\n");
    return 2;
  }
  const char *dir = argv[1];
  int segs = atoi(argv[2]);
  int block = atoi(argv[3]), xfer = atoi(argv[4]);
  long pause = atol(argv[5]);
  int do_abort = argc > 6 && strcmp(argv[6], "abort") == 0;
  int ckpts = argc > 6 && strncmp(argv[6], "ckpt=", 5) == 0 ? atoi(argv[6] + 5) : 0;
  char path[4096];

  /* I/O before MPI_Init: the launcher's rank variables name the trace. */
  snprintf(path, sizeof path, "%s/preinit.%d", dir, (int)getpid());
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0 || write(fd, "before MPI_Init\n", 16) != 16) return 3;
  close(fd);

  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int per = block / xfer;
  char *buf = malloc((size_t)block);
  MPI_File fh;

  /* phase 1: N-1 strided, independent */
  write_strided(dir, "n1_ind.dat", rank, n, segs, block, xfer, buf);
  pause_ms(pause);

  if (do_abort) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) MPI_Abort(MPI_COMM_WORLD, 7);
    for (;;) pause_ms(1000);
  }

  /* phase 2: N-1 strided, collective, through a view */
  snprintf(path, sizeof path, "%s/n1_coll.dat", dir);
  MPI_Datatype ftype;
  MPI_Type_vector(segs, block, n * block, MPI_BYTE, &ftype);
  MPI_Type_commit(&ftype);
  check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "open n1_coll");
  check(MPI_File_set_view(fh, (MPI_Offset)rank * block, MPI_BYTE, ftype, "native", MPI_INFO_NULL), "set_view");
  for (int k = 0; k < segs * per; k++) {
    memset(buf, pattern(rank, k), (size_t)xfer);
    MPI_Status st;
    check(MPI_File_write_all(fh, buf, xfer, MPI_BYTE, &st), "write_all");
  }
  check(MPI_File_close(&fh), "close n1_coll");
  MPI_Type_free(&ftype);
  pause_ms(pause);

  /* phase 3: N-N, file per process, individual file pointer */
  snprintf(path, sizeof path, "%s/nn.%d.dat", dir, rank);
  check(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "open nn");
  for (int k = 0; k < segs * per; k++) {
    memset(buf, pattern(rank, k), (size_t)xfer);
    check(MPI_File_write(fh, buf, xfer, MPI_BYTE, MPI_STATUS_IGNORE), "write");
  }
  check(MPI_File_close(&fh), "close nn");
  pause_ms(pause);

  /* phase 4: read phase 1 back, nonblocking */
  snprintf(path, sizeof path, "%s/n1_ind.dat", dir);
  check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), "reopen n1_ind");
  MPI_Request *reqs = malloc(sizeof *reqs * (size_t)per);
  for (int s = 0; s < segs; s++) {
    MPI_Offset base = (MPI_Offset)s * n * block + (MPI_Offset)rank * block;
    for (int j = 0; j < per; j++)
      check(MPI_File_iread_at(fh, base + (MPI_Offset)j * xfer, buf + (size_t)j * xfer, xfer, MPI_BYTE, &reqs[j]), "iread_at");
    check(MPI_Waitall(per, reqs, MPI_STATUSES_IGNORE), "waitall");
    for (int k = 0; k < block; k++)
      if (buf[k] != pattern(rank, base + k)) {
        fprintf(stderr, "ior: rank %d read back wrong data at %lld\n", rank, (long long)(base + k));
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
  }
  check(MPI_File_close(&fh), "close n1_ind");
  free(reqs);

  /* phase 5: periodic checkpoints */
  for (int c = 0; c < ckpts; c++) {
    pause_ms(pause);
    write_strided(dir, "ckpt.dat", rank, n, segs, block, xfer, buf);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}

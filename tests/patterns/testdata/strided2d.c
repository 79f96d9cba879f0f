/* Each of NPROC processes (rank given) writes, then reads back, its part of
 * a shared file in a 2-D strided pattern of small records, like the PLFS
 * paper's LANL App 3 and MILC: for each row, COLS records of REC bytes,
 * the processes' blocks interleaved within a row.
 * Usage: strided2d FILE RANK NPROC ROWS COLS REC */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 7) return 2;
  int rank = atoi(argv[2]), nproc = atoi(argv[3]);
  long rows = atol(argv[4]), cols = atol(argv[5]), rec = atol(argv[6]);
  int fd = open(argv[1], O_CREAT | O_RDWR, 0644);
  if (fd < 0) return 1;
  char *buf = malloc(rec), *back = malloc(rec);
  long row_bytes = (long)nproc * cols * rec * 2; /* a gap after each process's block */
  unsigned long sum = 0;
  for (int pass = 0; pass < 2; pass++)
    for (long i = 0; i < rows; i++)
      for (long j = 0; j < cols; j++) {
        off_t off = i * row_bytes + (long)rank * cols * rec * 2 + j * rec;
        if (pass == 0) {
          memset(buf, (int)((i + j + rank) & 0xff), rec);
          if (pwrite(fd, buf, rec, off) != rec) return 1;
        } else {
          if (pread(fd, back, rec, off) != rec) return 1;
          sum += (unsigned char)back[0];
        }
      }
  printf("rank %d sum %lu\n", rank, sum);
  return close(fd);
}

/* Asks iopred for its prediction before each of its own I/O calls and
 * counts how often the prediction named the call it then made: nested
 * loops of pwrite, fsync and pread. Prints "checked N op N offset N size N".
 * CHECK_FIRST=1 also checks the first iteration (for a saved model). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include "iopred.h"

static int (*predict)(struct iopred_prediction *, int);
static long checked, right_op, right_off, right_size;

static void expect(int op, int fd, long long off, long long size, int iter) {
  struct iopred_prediction p;
  if (!predict || predict(&p, 1) < 1) return;
  if (iter == 0 && !getenv("CHECK_FIRST")) return; /* the first iteration teaches the model */
  checked++;
  right_op += p.op == op;
  right_off += p.offset == off;
  right_size += p.size == size;
  (void)fd;
}

int main(int argc, char **argv) {
  predict = (int (*)(struct iopred_prediction *, int))dlsym(RTLD_DEFAULT, "iopred_predict");
  const char *path = argc > 1 ? argv[1] : "/tmp/ptest/data";
  static char buf[8192];
  int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  for (int iter = 0; iter < 20; iter++) {
    for (int i = 0; i < 8; i++) {
      long long off = (long long)(iter * 8 + i) * 4096;
      expect(IOPRED_OP_WRITE, fd, off, 4096, iter);
      pwrite(fd, buf, 4096, off);
    }
    expect(IOPRED_OP_SYNC, fd, -1, 0, iter);
    fsync(fd);
    expect(IOPRED_OP_READ, fd, (long long)iter * 8 * 4096, 8192, iter);
    pread(fd, buf, 8192, (long long)iter * 8 * 4096);
  }
  close(fd);
  printf("checked %ld op %ld offset %ld size %ld\n", checked, right_op, right_off, right_size);
  return 0;
}

/* strided: reads a file at a stride, with computation between reads, and
 * prints a checksum of what it read, the time the loop took and how much
 * of it the thread spent blocked (neither on a CPU nor waiting for one,
 * from /proc/thread-self/schedstat: the reads' waits for the disk, which
 * prefetching removes, measured apart from the CPU that other work on the
 * machine takes).
 *
 * It also prints the names of its threads at the end ("tasks ...").
 *
 * strided FILE READS SIZE STRIDE COMPUTE_US [pread|read|fread|tiles|random SEED]
 *   pread: pread at offset i*STRIDE; read: lseek + read; fread: fseek +
 *   fread; tiles: runs of 16 reads at STRIDE, each run 4 SIZE further than
 *   the last (a row of tiles, one tile in four); random: READS offsets drawn with SEED
 *   (a multiple of SIZE below the file's size), the same for the same seed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* cpu_and_wait is the thread's time on a CPU plus its time waiting for
 * one. It reads with raw system calls: the file is no I/O of the
 * program's that the library should see (the tests count its files). */
static double cpu_and_wait(void) {
  unsigned long long run = 0, wait = 0;
  char b[128];
  long fd = syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/schedstat", O_RDONLY);
  if (fd < 0) return -1;
  long n = syscall(SYS_read, fd, b, sizeof b - 1);
  syscall(SYS_close, fd);
  if (n <= 0) return -1;
  b[n] = 0;
  return sscanf(b, "%llu %llu", &run, &wait) == 2 ? (run + wait) / 1e9 : -1;
}

/* print_tasks prints the names of the process's threads on stderr
 * ("tasks strided iopred-fadvise ..."), with raw system calls like
 * cpu_and_wait: the tests look for the library's fadvise thread. */
static void print_tasks(void) {
  char buf[4096], path[64], name[32];
  long dir = syscall(SYS_openat, AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY);
  if (dir < 0) return;
  fprintf(stderr, "tasks");
  long n;
  while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
    for (long pos = 0; pos < n;) {
      unsigned short reclen = *(unsigned short *)(buf + pos + 16);
      const char *d_name = buf + pos + 19;
      pos += reclen;
      if (d_name[0] == '.') continue;
      snprintf(path, sizeof path, "/proc/self/task/%s/comm", d_name);
      long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
      if (fd < 0) continue;
      long m = syscall(SYS_read, fd, name, sizeof name - 1);
      syscall(SYS_close, fd);
      if (m <= 0) continue;
      name[m] = 0;
      name[strcspn(name, "\n")] = 0;
      fprintf(stderr, " %s", name);
    }
  }
  syscall(SYS_close, dir);
  fprintf(stderr, "\n");
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* compute spins for about us microseconds of CPU work whose result counts. */
static uint64_t compute(long us, uint64_t x) {
  double end = now() + us / 1e6;
  while (now() < end)
    for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: strided FILE READS SIZE STRIDE COMPUTE_US [pread|read|fread|tiles|random SEED]\n");
    return 2;
  }
  long reads = atol(argv[2]), size = atol(argv[3]), stride = atol(argv[4]), us = atol(argv[5]);
  const char *mode = argc > 6 ? argv[6] : "pread";
  unsigned seed = argc > 7 ? (unsigned)atol(argv[7]) : 1;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  struct stat st;
  fstat(fd, &st);
  FILE *fp = strcmp(mode, "fread") == 0 ? fdopen(fd, "r") : NULL;
  if (fp) setvbuf(fp, NULL, _IONBF, 0);
  char *buf = malloc(size);
  uint64_t sum = 0, x = 1;
  double c0 = cpu_and_wait();
  double t0 = now();
  long short_reads = 0;
  for (long i = 0; i < reads; i++) {
    off_t off = (off_t)i * stride;
    if (strcmp(mode, "tiles") == 0) off = (off_t)(i % 16) * stride + (off_t)(i / 16) * 4 * size;
    if (strcmp(mode, "random") == 0) off = (off_t)(rand_r(&seed) % (st.st_size / size)) * size;
    ssize_t r;
    if (strcmp(mode, "read") == 0) {
      if (lseek(fd, off, SEEK_SET) != off) return 1;
      r = read(fd, buf, size);
    } else if (fp) {
      if (fseeko(fp, off, SEEK_SET) != 0) return 1;
      r = (ssize_t)fread(buf, 1, size, fp);
    } else {
      r = pread(fd, buf, size, off);
    }
    if (r < 0) {
      fprintf(stderr, "read %ld: %s\n", i, strerror(errno));
      return 1;
    }
    if (r < size) short_reads++;
    for (ssize_t j = 0; j < r; j += 512) sum = sum * 31 + (unsigned char)buf[j];
    x = compute(us, x ^ sum);
  }
  double t = now() - t0;
  double c1 = cpu_and_wait();
  printf("sum %016llx short %ld\n", (unsigned long long)sum, short_reads);
  fprintf(stderr, "time %.6f compute %llu\n", t, (unsigned long long)(x & 1));
  if (c0 >= 0 && c1 >= 0) fprintf(stderr, "blocked %.6f\n", t - (c1 - c0));
  print_tasks();
  return 0;
}

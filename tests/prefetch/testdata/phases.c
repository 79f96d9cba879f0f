/* phases: where a short reader's time goes. It opens FILE, preads READS
 * pieces of 64 KiB at a 1 MiB stride, and prints on stderr the
 * CLOCK_REALTIME instants (ns) at main, after the open, after the first
 * read and at the end: "phases MAIN OPEN FIRST END". The benchmark
 * stamps the spawn and the exit around it, so that the library's start
 * (before main), its wait on the first open, the reads and its exit are
 * told apart. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long long now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
  long long t_main = now();
  if (argc < 3) {
    fprintf(stderr, "usage: phases FILE READS\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  long long t_open = now();
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  long reads = atol(argv[2]);
  char *buf = malloc(64 << 10);
  long long t_first = t_open;
  unsigned sum = 0;
  for (long i = 0; i < reads; i++) {
    ssize_t r = pread(fd, buf, 64 << 10, (off_t)i << 20);
    if (r < 0) {
      perror("pread");
      return 1;
    }
    if (r > 0) sum += (unsigned char)buf[0];
    if (i == 0) t_first = now();
  }
  long long t_end = now();
  printf("sum %u\n", sum);
  fprintf(stderr, "phases %lld %lld %lld %lld\n", t_main, t_open, t_first, t_end);
  return 0;
}

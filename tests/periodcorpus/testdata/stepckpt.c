/* A stepping program for the period corpus's fifth fresh set
 * (record_fresh.sh, FRESH_HALF=fresh5): a fixed amount of computation, a
 * checkpoint written with write and fsync, then a relative nanosleep, over
 * and over. No deadline: the period is whatever the computation, the
 * write and the sleep take (the phase drifts), as for a simulation that
 * rests between steps.
 *
 * usage: stepckpt FILE COUNT CHUNK_BYTES CHUNKS WORK SLEEP_S SLEEP_MAX_S SEED
 *   each step computes WORK million multiply-adds, writes CHUNKS chunks
 *   of CHUNK_BYTES to FILE from offset 0 and fsyncs it, then sleeps
 *   SLEEP_S seconds; with SLEEP_MAX_S above SLEEP_S the sleep is drawn
 *   uniformly from [SLEEP_S, SLEEP_MAX_S] and the chunks from 1 to CHUNKS
 *   (a renewal process of bounded gaps: not periodic).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* xorshift64*: the same draws for the same seed. */
static unsigned long long state;
static double uniform(void) {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return (double)((state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static void rest(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

int main(int argc, char **argv) {
  if (argc != 9) {
    fprintf(stderr, "usage: %s FILE COUNT CHUNK_BYTES CHUNKS WORK SLEEP_S SLEEP_MAX_S SEED\n", argv[0]);
    return 2;
  }
  const char *file = argv[1];
  int count = atoi(argv[2]);
  size_t chunk = strtoul(argv[3], NULL, 10);
  int chunks = atoi(argv[4]);
  long work = atol(argv[5]) * 1000000L;
  double sleep_s = atof(argv[6]), sleep_max = atof(argv[7]);
  state = strtoull(argv[8], NULL, 10) * 0x9E3779B97F4A7C15ULL + 1;
  char *buf = calloc(1, chunk);
  int fd = open(file, O_WRONLY | O_CREAT, 0644);
  if (buf == NULL || fd < 0) {
    perror(file);
    return 1;
  }
  volatile double acc = 1;
  for (int i = 0; i < count; i++) {
    for (long k = 0; k < work; k++) {
      acc = acc * 1.0000001 + 1e-9;
    }
    int n = chunks;
    double s = sleep_s;
    if (sleep_max > sleep_s) {
      n = 1 + (int)(uniform() * chunks);
      s = sleep_s + uniform() * (sleep_max - sleep_s);
    }
    for (int c = 0; c < n; c++) {
      if (pwrite(fd, buf, chunk, (off_t)c * chunk) != (ssize_t)chunk) {
        perror("pwrite");
        return 1;
      }
    }
    if (fsync(fd) != 0) {
      perror("fsync");
      return 1;
    }
    rest(s);
  }
  close(fd);
  free(buf);
  return acc > 0 ? 0 : 1;
}

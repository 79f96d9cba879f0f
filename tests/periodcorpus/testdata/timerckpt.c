/* A checkpointing program for the period corpus's fourth fresh set
 * (record_fresh.sh, FRESH_HALF=fresh4): it computes on its main thread and
 * checkpoints with pwrite on absolute deadlines of a monotonic clock.
 *
 * usage: timerckpt FILE PERIOD_S COUNT CHUNK_BYTES CHUNKS JITTER SEED [STALL_AFTER STALL_S]
 *   every PERIOD_S seconds (deadline i at i*PERIOD_S, moved by up to
 *   JITTER*PERIOD_S either way) writes CHUNKS chunks of CHUNK_BYTES at
 *   offsets 0, CHUNK_BYTES, ... with pwrite, then fdatasync; after
 *   STALL_AFTER checkpoints the deadlines move STALL_S seconds later (a
 *   job that stalls mid-run and then resumes its clock).
 *   With PERIOD_S 0 the deadlines are random instead: exponential gaps of
 *   mean JITTER seconds (not periodic).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t) {
  struct timespec ts = {(time_t)t, (long)((t - (time_t)t) * 1e9)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

/* xorshift64*: the same deadlines for the same seed. */
static unsigned long long state;
static double uniform(void) {
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return (double)((state * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv) {
  if (argc != 8 && argc != 10) {
    fprintf(stderr, "usage: %s FILE PERIOD_S COUNT CHUNK_BYTES CHUNKS JITTER SEED [STALL_AFTER STALL_S]\n", argv[0]);
    return 2;
  }
  double period = atof(argv[2]), jitter = atof(argv[6]);
  int count = atoi(argv[3]), chunks = atoi(argv[5]);
  size_t chunk = strtoul(argv[4], NULL, 10);
  state = strtoull(argv[7], NULL, 10) * 0x9E3779B97F4A7C15ULL + 1;
  int stall_after = argc == 10 ? atoi(argv[8]) : -1;
  double stall = argc == 10 ? atof(argv[9]) : 0;
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  char *buf = malloc(chunk);
  memset(buf, 'c', chunk);
  double start = now(), at = start, shift = 0, sink = 0;
  for (int i = 0; i < count; i++) {
    if (i == stall_after)
      shift += stall;
    double deadline;
    if (period > 0) {
      deadline = start + shift + i * period + (2 * uniform() - 1) * jitter * period;
    } else {
      at += -log(1 - uniform()) * jitter;
      deadline = at;
    }
    /* Compute until shortly before the deadline, then sleep to it. */
    while (now() < deadline - 0.02)
      for (int k = 0; k < 10000; k++)
        sink += k * 0.5;
    sleep_until(deadline);
    for (int c = 0; c < chunks; c++) {
      if (pwrite(fd, buf, chunk, (off_t)c * chunk) != (ssize_t)chunk) {
        perror("pwrite");
        return 1;
      }
    }
    fdatasync(fd);
  }
  close(fd);
  free(buf);
  return sink < 0;
}

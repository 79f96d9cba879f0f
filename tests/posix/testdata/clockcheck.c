/* Brackets each of its pwrite calls with CLOCK_MONOTONIC reads and prints
 * them, so that a test can check the times the library records: two
 * threads at once, each on its own file, N calls each, with a pause of
 * 1 ms every 40 calls so that the run lasts a few hundred ms (the
 * library's TSC clock renews its calibration every 2 ms).
 * Usage: clockcheck DIR N; prints "thread call start_ns end_ns" lines. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static long n;
static long long *times[2];

static long long now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *writer(void *arg) {
  long id = (long)arg;
  char path[4096], buf[64] = {0};
  snprintf(path, sizeof path, "%s/data.%ld", dir, id);
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) exit(1);
  for (long i = 0; i < n; i++) {
    times[id][2 * i] = now();
    if (pwrite(fd, buf, sizeof buf, i * (long)sizeof buf) != (ssize_t)sizeof buf) exit(1);
    times[id][2 * i + 1] = now();
    if (i % 40 == 39) usleep(1000);
  }
  close(fd);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  dir = argv[1];
  n = atol(argv[2]);
  for (int t = 0; t < 2; t++) times[t] = malloc(sizeof(long long) * 2 * (size_t)n);
  pthread_t th;
  if (pthread_create(&th, NULL, writer, (void *)1L)) return 1;
  writer((void *)0L);
  pthread_join(th, NULL);
  for (int t = 0; t < 2; t++)
    for (long i = 0; i < n; i++) printf("%d %ld %lld %lld\n", t, i, times[t][2 * i], times[t][2 * i + 1]);
  return 0;
}

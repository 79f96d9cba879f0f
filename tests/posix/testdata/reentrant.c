/* A profiling timer fires every 100 us of CPU time; its handler writes to
 * a log file while the main loop writes and reads its own file, so the
 * handler often interrupts the library in the middle of recording a call.
 * Prints how many handler writes succeeded and the main file's checksum.
 * Usage: reentrant DIR N */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static int logfd;
static volatile long handled, handler_ok;

static void on_prof(int s) {
  (void)s;
  handled++;
  if (write(logfd, "tick\n", 5) == 5) handler_ok++;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/log.txt", argv[1]);
  logfd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0644);
  snprintf(path, sizeof path, "%s/data.bin", argv[1]);
  int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_prof;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);
  struct itimerval it = {{0, 100}, {0, 100}};
  setitimer(ITIMER_PROF, &it, NULL);
  long n = atol(argv[2]);
  unsigned char buf[512];
  unsigned long sum = 0;
  for (long i = 0; i < n; i++) {
    memset(buf, (int)(i & 0xff), sizeof buf);
    pwrite(fd, buf, sizeof buf, (i % 64) * (off_t)sizeof buf);
    pread(fd, buf, sizeof buf, (i % 64) * (off_t)sizeof buf);
    sum += buf[i % sizeof buf];
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  printf("sum %lu handler writes all succeeded %d\n", sum, handled == handler_ok);
  exit(handled > 0 ? 0 : 3); /* exit(), not a return from main */
}

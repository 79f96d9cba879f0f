/* Forks from a signal handler: a 2 ms interval timer's handler forks a
 * child (with _Fork, the async-signal-safe fork) while the main thread
 * writes in a loop, so the signal often lands inside the library. Each
 * child writes 10 pwrites to a file named after its pid, prints its pid
 * and _exits. Usage: sigfork DIR COUNT [FIRST_US]: the timer first fires
 * after FIRST_US (2,000 unless given), then every 2,000 us; a small
 * FIRST_US lands the first signal inside the library's start (its first
 * call looks every real function up). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern pid_t _Fork(void);
static const char *dir;
static volatile sig_atomic_t forked;

static void child(void) {
  char path[4096], buf[32];
  snprintf(path, sizeof path, "%s/sig.%d", dir, (int)getpid());
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  memset(buf, 's', sizeof buf);
  for (int i = 0; i < 10; i++) pwrite(fd, buf, sizeof buf, i * 32);
  close(fd);
  int len = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
  write(1, buf, (size_t)len);
  _exit(0);
}

static void on_alarm(int sig) {
  (void)sig;
  int e = errno;
  pid_t p = _Fork();
  if (p == 0) child();
  if (p > 0) forked++;
  errno = e;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) return 2;
  dir = argv[1];
  int count = atoi(argv[2]);
  long first = argc == 4 ? atol(argv[3]) : 2000;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 2000}, {0, first}};
  setitimer(ITIMER_REAL, &it, NULL);
  char path[4096], buf[64] = {0};
  snprintf(path, sizeof path, "%s/main.dat", dir);
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  for (long i = 0; forked < count; i++) pwrite(fd, buf, sizeof buf, (i % 4096) * 64);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  close(fd);
  while (wait(NULL) > 0 || errno == EINTR) {}
  return 0;
}

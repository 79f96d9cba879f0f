/* Blocking reads from a pipe under an interval timer whose SIGALRM handler
 * has no SA_RESTART, so a tick during a blocked read makes it fail with
 * EINTR. A writer child sends a byte every 5 ms; the parent reads 100 bytes
 * while the timer ticks every 3 ms. Prints the bytes read, the EINTR count
 * and the ticks delivered: every EINTR must be explained by a tick (no EINTR
 * from anybody else's signal). Usage: signals */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;
static void on_alarm(int s) { (void)s; ticks++; }

int main(void) {
  int p[2];
  if (pipe(p) != 0) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(p[0]);
    struct timespec ts = {0, 5000000};
    for (int i = 0; i < 100; i++) {
      nanosleep(&ts, NULL);
      if (write(p[1], "x", 1) != 1) _exit(1);
    }
    _exit(0);
  }
  close(p[1]);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: EINTR is expected, by design */
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGALRM, &sa, NULL) != 0) return 1;
  struct itimerval it = {{0, 3000}, {0, 3000}};
  if (setitimer(ITIMER_REAL, &it, NULL) != 0) return 1;
  int got = 0, eintr = 0, other = 0;
  char c;
  while (got < 100) {
    ssize_t n = read(p[0], &c, 1);
    if (n == 1) got++;
    else if (n < 0 && errno == EINTR) eintr++;
    else { other++; break; }
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  printf("read %d eintr %d ticks %d other %d\n", got, eintr, (int)ticks, other);
  return 0;
}

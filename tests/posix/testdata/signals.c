/* Blocking reads from a pipe under an interval timer whose handler has no
 * SA_RESTART: counts the reads that returned EINTR. The writer child sends
 * a byte every 2 ms; the parent reads 200 bytes. The count must not grow
 * under the library. Usage: signals */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int ticks;
static void on_alarm(int s) { (void)s; ticks++; }

int main(void) {
  int p[2];
  if (pipe(p) != 0) return 1;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    struct timespec ts = {0, 2000000};
    for (int i = 0; i < 200; i++) {
      write(p[1], "x", 1);
      nanosleep(&ts, NULL);
    }
    _exit(0);
  }
  close(p[1]);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: EINTR is possible, by design */
  sigaction(SIGALRM, &sa, NULL);
  int got = 0, eintr = 0;
  char c;
  while (got < 200) {
    ssize_t n = read(p[0], &c, 1);
    if (n == 1) got++;
    else if (n < 0 && errno == EINTR) eintr++;
    else break;
    if (got == 100) {
      /* The timer runs only while nothing is written: any EINTR must come
       * from it, never from iopred. */
    }
  }
  waitpid(pid, NULL, 0);
  printf("read %d eintr %d\n", got, eintr);
  return 0;
}

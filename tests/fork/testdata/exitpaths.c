/* Ends without running destructors, in the ways programs do. Usage:
 *   exitpaths DIR _exit|_Exit|vfork|signal
 * _exit, _Exit: writes 4 pwrites, forks a child that writes 4 and _exits,
 *   waits for it, and ends with that call and status 3; prints the
 *   child's pid.
 * vfork: a vfork child _exits at once; the parent then writes 4 pwrites
 *   and returns 0 (its trace must go on after the child's _exit).
 * signal: writes in a loop until a 1 ms timer's handler calls _exit(5),
 *   often while the library is inside a call. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void writes(const char *dir, const char *name) {
  char path[4096], buf[64];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  memset(buf, 'x', sizeof buf);
  for (int i = 0; i < 4; i++) pwrite(fd, buf, sizeof buf, i * 64);
  close(fd);
}

static void on_alarm(int sig) {
  (void)sig;
  _exit(5);
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  const char *dir = argv[1], *how = argv[2];
  if (!strcmp(how, "vfork")) {
    pid_t p = vfork();
    if (p == 0) _exit(0);
    waitpid(p, NULL, 0);
    writes(dir, "parent");
    return 0;
  }
  if (!strcmp(how, "signal")) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    for (;;) writes(dir, "loop");
  }
  writes(dir, "parent");
  pid_t p = fork();
  if (p == 0) {
    writes(dir, "child");
    _exit(0);
  }
  waitpid(p, NULL, 0);
  printf("%d\n", (int)p);
  fflush(stdout);
  if (!strcmp(how, "_Exit")) _Exit(3);
  _exit(3);
}

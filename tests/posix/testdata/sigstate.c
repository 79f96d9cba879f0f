/* Prints the disposition, flags and mask of the signals a Go runtime
 * would want, and the thread's blocked set: the library must leave all of
 * them as they were. */
#include <signal.h>
#include <stdio.h>

int main(void) {
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGPIPE, SIGURG, SIGPROF, SIGINT, SIGTERM, SIGCHLD, SIGUSR1};
  for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction sa;
    sigaction(sigs[i], NULL, &sa);
    printf("signal %d handler %p flags %#x\n", sigs[i], (void *)sa.sa_handler, (unsigned)sa.sa_flags);
  }
  sigset_t blocked;
  sigprocmask(SIG_BLOCK, NULL, &blocked);
  for (int s = 1; s < 32; s++)
    if (sigismember(&blocked, s)) printf("blocked %d\n", s);
  return 0;
}

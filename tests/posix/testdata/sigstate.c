/* Prints the disposition, flags and mask of the signals a Go runtime
 * would want, and the thread's blocked set: the library must leave all of
 * them as they were. Given a directory, the program first blocks a few
 * signals of its own, writes a file there and, when the iopred library is
 * loaded, calls iopred_flush, so this thread has run iopred's Go code
 * (whose runtime would like SIGCHLD and SIGPROF unblocked) before the
 * state is printed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc > 1) {
    sigset_t mine;
    sigemptyset(&mine);
    sigaddset(&mine, SIGCHLD);
    sigaddset(&mine, SIGPROF);
    sigaddset(&mine, SIGUSR1);
    sigprocmask(SIG_BLOCK, &mine, NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s/state.txt", argv[1]);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0 || write(fd, "state\n", 6) != 6 || close(fd) != 0) return 1;
    int (*flush)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "iopred_flush");
    if (flush) flush();
  }
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

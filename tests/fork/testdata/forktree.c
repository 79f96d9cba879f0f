/* A fork tree while other threads record: the main thread forks CHILDREN
 * children, each of which forks one grandchild, while THREADS threads of
 * the parent write in a loop (so some are inside the library at each
 * fork). Every child and grandchild writes N pwrites of 64 bytes to a file
 * named after its pid, and prints "pid ppid" on stdout. One child in four
 * forks with _Fork, which runs no fork handlers, and forks its grandchild
 * with _Fork too: a child of _Fork in a process with threads may call only
 * async-signal-safe functions (POSIX.1-2024), which fork is not. glibc's
 * fork takes malloc's locks, and in a child of _Fork those are as the
 * other threads left them: any thread that was inside malloc at the fork
 * (the program's, or one the Go runtime was starting) would make that
 * fork wait for ever, with iopred or without it.
 * Usage: forktree DIR CHILDREN THREADS N */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern pid_t _Fork(void);
static const char *dir;
static int n;
static atomic_int stop;

static void work(void) {
  char path[4096], buf[64];
  snprintf(path, sizeof path, "%s/out.%d", dir, (int)getpid());
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  memset(buf, 'x', sizeof buf);
  for (int i = 0; i < n; i++) pwrite(fd, buf, sizeof buf, (off_t)i * 64);
  close(fd);
  char line[64];
  int len = snprintf(line, sizeof line, "%d %d\n", (int)getpid(), (int)getppid());
  write(1, line, (size_t)len);
}

static void *spin(void *arg) {
  (void)arg;
  char path[4096], buf[64] = {0};
  snprintf(path, sizeof path, "%s/thread.%ld", dir, (long)pthread_self());
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  for (off_t i = 0; !atomic_load(&stop); i++) pwrite(fd, buf, sizeof buf, (i % 1024) * 64);
  close(fd);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  dir = argv[1];
  int children = atoi(argv[2]), threads = atoi(argv[3]);
  n = atoi(argv[4]);
  pthread_t t[64];
  for (int i = 0; i < threads && i < 64; i++) pthread_create(&t[i], NULL, spin, NULL);
  for (int c = 0; c < children; c++) {
    int raw = c % 4 == 3;
    pid_t p = raw ? _Fork() : fork();
    if (p == 0) {
      pid_t g = raw ? _Fork() : fork();
      if (g == 0) {
        work();
        _exit(0);
      }
      work();
      waitpid(g, NULL, 0);
      _exit(0);
    }
  }
  while (wait(NULL) > 0) {}
  atomic_store(&stop, 1);
  for (int i = 0; i < threads && i < 64; i++) pthread_join(t[i], NULL);
  return 0;
}

/* A writer to kill: it forks a child, and both write pwrites of 64 bytes
 * in a loop, the child from THREADS threads, each to a file of its own.
 * After each pwrite returns, the writer reports it on its side channel
 * (fd 3 for the child, fd 4 for the parent) as two 32-bit words, its
 * thread index and the call's number, so the test knows which calls
 * returned before the kill. Usage: killme DIR THREADS */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *dir;

struct writer { const char *who; int side; uint32_t index; };

static void *loop(void *arg) {
  struct writer *w = arg;
  char path[4096], buf[64];
  memset(buf, 'k', sizeof buf);
  snprintf(path, sizeof path, "%s/%s.%u.dat", dir, w->who, w->index);
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  for (uint32_t i = 0;; i++) {
    if (pwrite(fd, buf, sizeof buf, (off_t)i * 64) != 64) return NULL;
    uint32_t msg[2] = {w->index, i};
    if (write(w->side, msg, sizeof msg) != sizeof msg) return NULL;
  }
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  dir = argv[1];
  int threads = atoi(argv[2]);
  if (threads < 1 || threads > 64) return 2;
  pid_t p = fork();
  if (p == 0) {
    pthread_t t[64];
    struct writer w[64];
    for (int i = 0; i < threads; i++) {
      w[i] = (struct writer){"child", 3, (uint32_t)i};
      pthread_create(&t[i], NULL, loop, &w[i]);
    }
    pthread_join(t[0], NULL);
    return 1;
  }
  struct writer w = {"parent", 4, 0};
  loop(&w);
  return 1;
}

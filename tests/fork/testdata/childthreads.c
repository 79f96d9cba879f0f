/* A forked child that runs many short threads one after another (more
 * than the spill has streams at once), each writing one pwrite of 100
 * bytes to its own offset. Usage: childthreads FILE THREADS */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fd;

static void *one(void *arg) {
  char buf[100];
  memset(buf, 't', sizeof buf);
  pwrite(fd, buf, sizeof buf, (off_t)(long)arg * 100);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int n = atoi(argv[2]);
  pid_t p = fork();
  if (p == 0) {
    fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0644);
    for (long i = 0; i < n; i++) {
      pthread_t t;
      pthread_create(&t, NULL, one, (void *)i);
      pthread_join(t, NULL);
    }
    close(fd);
    _exit(0);
  }
  waitpid(p, NULL, 0);
  return 0;
}

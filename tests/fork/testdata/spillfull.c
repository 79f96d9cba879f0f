/* A forked child that records far more than its trace directory holds:
 * it writes N pwrites of 64 bytes to OUT, and the parent prints the
 * child's exit status. Usage: spillfull OUT N */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  long n = atol(argv[2]);
  pid_t p = fork();
  if (p == 0) {
    char buf[64];
    memset(buf, 'f', sizeof buf);
    int fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0644);
    long ok = 0;
    for (long i = 0; i < n; i++) ok += pwrite(fd, buf, sizeof buf, (i % 1024) * 64) == 64;
    close(fd);
    printf("child wrote %ld of %ld\n", ok, n);
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(p, &status, 0);
  printf("child exited %d, signal %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
         WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return 0;
}

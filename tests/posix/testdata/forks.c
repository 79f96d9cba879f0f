/* fork without exec: parent and child both do file I/O; the child's result
 * reaches the parent through a file. fork with exec: the child runs cat.
 * Usage: forks DIR noexec|exec */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  char a[4096], b[4096];
  snprintf(a, sizeof a, "%s/parent.txt", argv[1]);
  snprintf(b, sizeof b, "%s/child.txt", argv[1]);
  int fd = open(a, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  write(fd, "parent\n", 7);
  close(fd);
  pid_t pid = fork();
  if (pid == 0) {
    if (strcmp(argv[2], "exec") == 0) {
      int out = open(b, O_CREAT | O_TRUNC | O_WRONLY, 0644);
      dup2(out, 1);
      execlp("cat", "cat", a, (char *)NULL);
      _exit(127);
    }
    for (int i = 0; i < 100; i++) {
      int c = open(b, O_CREAT | O_WRONLY | O_APPEND, 0644);
      write(c, "child\n", 6);
      close(c);
    }
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  fd = open(b, O_RDONLY);
  char buf[8192];
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  printf("child status %d, read %zd\n", WEXITSTATUS(status), n);
  return 0;
}

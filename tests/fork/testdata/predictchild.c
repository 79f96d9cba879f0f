/* The prediction API in a forked child: the parent writes a little, forks,
 * and the child asks iopred_predict and iopred_period (looked up with
 * dlsym, as a program that only might run under iopred does) and prints
 * what they return, then writes a file so that it is recorded.
 * Usage: predictchild DIR */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct pred { int op; int pad; long long a, b, c, d; unsigned long long ctx; char more[64]; };

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  char path[4096], buf[512] = {0};
  snprintf(path, sizeof path, "%s/p", argv[1]);
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  for (int i = 0; i < 200; i++) write(fd, buf, sizeof buf);
  close(fd);
  int (*predict)(void *, int) = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "iopred_predict");
  int (*period)(void *, int) = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "iopred_period");
  int (*enabled)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "iopred_enabled");
  if (!predict || !period || !enabled) return 3;
  pid_t p = fork();
  if (p == 0) {
    static char out[4096];
    int n = predict(out, 4), r = period(out, 1), e = enabled();
    snprintf(path, sizeof path, "%s/c", argv[1]);
    fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    write(fd, buf, 100);
    close(fd);
    printf("child predict %d period %d enabled %d\n", n, r, e);
    fflush(stdout);
    _exit(0);
  }
  waitpid(p, NULL, 0);
  return 0;
}

/* plant: plays the attacker and the victim program at once. Before its
 * first recorded call it plants, with raw system calls the library does not
 * see, a link at the name its own trace will have; its forked child does the
 * same at the name of its spill. Both then write a file, and the child
 * prints the mode of the spill the library made: "spill 600". */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static void plant(const char *dir, const char *suffix, const char *victim) {
  struct utsname u;
  uname(&u);
  char *dot = strchr(u.nodename, '.');
  if (dot) *dot = 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/plant.%s.%d%s", dir, u.nodename, (int)syscall(SYS_getpid), suffix);
  if (syscall(SYS_symlinkat, victim, AT_FDCWD, path) != 0) {
    perror("symlink");
    exit(2);
  }
}

static void write_file(const char *path) {
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0 || write(fd, "data\n", 5) != 5) {
    perror(path);
    exit(3);
  }
  close(fd);
}

int main(int argc, char **argv) {
  if (argc < 3) return 1;
  const char *dir = getenv("IOPRED_DIR"), *victim = argv[1], *out = argv[2];
  plant(dir, ".iopred.zst", victim);
  write_file(out);
  pid_t pid = fork();
  if (pid == 0) {
    plant(dir, ".iopspill", victim);
    write_file(out);
    char want[64];
    snprintf(want, sizeof want, ".%d.", (int)getpid());
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      size_t n = strlen(e->d_name);
      struct stat st;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      if (strstr(e->d_name, want) && n > 9 && !strcmp(e->d_name + n - 9, ".iopspill") && lstat(p, &st) == 0 &&
          S_ISREG(st.st_mode))
        printf("spill %o\n", st.st_mode & 0777);
    }
    fflush(stdout);
    _exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

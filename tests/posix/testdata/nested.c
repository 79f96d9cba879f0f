/* Nested loops of open, write, pwrite, lseek, read, fwrite, fread and close.
 * Usage: nested DIR OUTER INNER RECORD
 * The test computes from the same parameters every event the trace must
 * hold. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: nested DIR OUTER INNER RECORD\n");
    return 2;
  }
  const char *dir = argv[1];
  int outer = atoi(argv[2]), inner = atoi(argv[3]);
  size_t rec = (size_t)atol(argv[4]);
  char *buf = malloc(rec);
  memset(buf, 'a', rec);
  char path[4096];
  for (int o = 0; o < outer; o++) {
    snprintf(path, sizeof path, "%s/posix.%d", dir, o % 4);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (fd < 0) return 1;
    for (int i = 0; i < inner; i++) {
      if (write(fd, buf, rec) != (ssize_t)rec) return 1;
      if (pwrite(fd, buf, rec, (off_t)((size_t)(inner + i) * rec)) != (ssize_t)rec) return 1;
    }
    lseek(fd, 0, SEEK_SET);
    for (int i = 0; i < inner; i++)
      if (read(fd, buf, rec) != (ssize_t)rec) return 1;
    close(fd);
    snprintf(path, sizeof path, "%s/stdio.%d", dir, o % 4);
    FILE *f = fopen(path, "w+");
    if (!f) return 1;
    for (int i = 0; i < inner; i++) fwrite(buf, 1, rec, f);
    rewind(f);
    for (int i = 0; i < inner; i++)
      if (fread(buf, 1, rec, f) != rec) return 1;
    fclose(f);
  }
  free(buf);
  printf("done\n");
  return 0;
}

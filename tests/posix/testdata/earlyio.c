/* A shared library whose constructor does file I/O before libiopred.so is
 * initialised (it is listed first in LD_PRELOAD). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void early(void) {
  const char *path = getenv("EARLY_FILE");
  if (!path) return;
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  write(fd, "early\n", 6);
  close(fd);
  FILE *f = fopen(path, "a");
  fprintf(f, "early stdio\n");
  fclose(f);
}

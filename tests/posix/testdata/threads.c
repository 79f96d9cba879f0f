/* THREADS threads each pwrite N records of 64 bytes to their own region
 * of one file, in increasing offset order. Usage: threads FILE THREADS N */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fd, n;

static void *writer(void *arg) {
  long id = (long)arg;
  char rec[64] = {0};
  for (int i = 0; i < n; i++)
    if (pwrite(fd, rec, sizeof rec, ((off_t)id * n + i) * (off_t)sizeof rec) != sizeof rec) exit(1);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0644);
  int threads = atoi(argv[2]);
  n = atoi(argv[3]);
  pthread_t t[64];
  for (long i = 0; i < threads && i < 64; i++) pthread_create(&t[i], NULL, writer, (void *)i);
  for (int i = 0; i < threads && i < 64; i++) pthread_join(t[i], NULL);
  close(fd);
  return 0;
}

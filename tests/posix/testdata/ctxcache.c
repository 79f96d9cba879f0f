/* Writes through many call stacks, so that the per-thread walk memo of the
 * context capture (preload/unwind.c, preload/context.c) is hit, missed and
 * overwritten: two callers of one function, two call sites in one
 * function, recursion to several depths (one deeper than the captured
 * depth), and calls from a dlopen'ed library that is closed and replaced
 * by another (usually at the same address) and then loaded again. Three
 * threads run one after another beside the main thread, so memo pages are
 * reused. Every call writes 8 or 16 bytes at an offset that names it.
 * Usage: ctxcache DATAFILE LIB1 LIB2 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fd;
static char buf[16];
typedef int (*lib_entry)(int fd, int depth, long off);

static void put(size_t n, long off) {
  if (pwrite(fd, buf, n, off) != (ssize_t)n) exit(3);
}

__attribute__((noinline)) static void leaf(long off) { put(8, off); }

__attribute__((noinline)) static void two_sites(long off) {
  if (off & 16) put(8, off); /* one call site */
  else put(16, off);        /* and another in the same function */
}

__attribute__((noinline)) static void caller_a(long off) {
  leaf(off);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void caller_b(long off) {
  leaf(off);
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static int recurse(int depth, long off) {
  if (depth == 0) {
    leaf(off);
    return 0;
  }
  int r = recurse(depth - 1, off);
  __asm__ volatile("" ::: "memory");
  return r + 1;
}

static void round_of_calls(lib_entry lib, long base) {
  for (int i = 0; i < 400; i++) {
    long off = (base + i) * 16;
    switch (i % 6) {
    case 0: caller_a(off); break;
    case 1: caller_b(off); break;
    case 2: two_sites(off); break;
    case 3: recurse(i % 7 == 0 ? 30 : i % 5, off); break;
    case 4: if (lib && lib(fd, i % 4, off) != 8) exit(4); break;
    default: leaf(off); break;
    }
  }
}

static lib_entry open_lib(const char *path, void **handle) {
  *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!*handle) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    exit(2);
  }
  lib_entry e = (lib_entry)dlsym(*handle, "lib_write");
  if (!e) exit(2);
  return e;
}

static void *thread_main(void *arg) {
  long base = (long)arg;
  for (int r = 0; r < 5; r++) round_of_calls(NULL, base + r * 400);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) return 1;
  long base = 0;
  for (int round = 0; round < 6; round++) {
    void *h;
    lib_entry lib = open_lib(argv[2 + round % 2], &h);
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, (void *)(1000000L * (round + 1)))) return 1;
    for (int r = 0; r < 3; r++, base += 400) round_of_calls(lib, base);
    pthread_join(t, NULL);
    dlclose(h);
  }
  close(fd);
  return 0;
}

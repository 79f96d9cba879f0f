/* The library ctxcache.c loads: lib_write recurses depth times and writes
 * 8 bytes. Built twice, the second time (-DVARIANT) with other code
 * before it, so that its return addresses differ when it is loaded at the
 * first one's address. */
#include <unistd.h>

#ifdef VARIANT
__attribute__((noinline)) int lib_pad(int fd, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += (int)write(fd, "", 0);
  return s;
}
#endif

static char buf[8];

__attribute__((noinline)) int lib_write(int fd, int depth, long off) {
  if (depth == 0) return (int)pwrite(fd, buf, sizeof buf, off);
  int r = lib_write(fd, depth - 1, off);
  __asm__ volatile("" ::: "memory");
  return r;
}

/* The harness for programs in other languages (Fortran, C++): they call
 * these C entry points. Built with -DWRAP_WRITE it also defines write(),
 * which the language runtimes (libgfortran, libstdc++) then call instead
 * of libc's, as they would call libiopred.so's interposer: each write to a
 * file captures the stack from inside the runtime's frames. */
#include "harness.h"

#ifdef WRAP_WRITE
#include <sys/syscall.h>

static _Atomic long writes_checked;

ssize_t write(int fd, const void *buf, size_t n) {
  if (fd > 2) { /* not the harness's own output */
    compare_stacks("write", 64);
    atomic_fetch_add(&writes_checked, 1);
  }
  return syscall(SYS_write, fd, buf, n);
}
#endif

int ext_check(int max) { return compare_stacks("ext", max); }
void ext_init(void) { iop_unwind_init(); }
int ext_report(const char *name) {
#ifdef WRAP_WRITE
  printf("%s: %ld captures inside write()\n", name, (long)atomic_load(&writes_checked));
  if (atomic_load(&writes_checked) == 0) {
    printf("%s: the runtime never called write()\n", name);
    atomic_fetch_add(&harness_failures, 1);
  }
#endif
  return report(name);
}

/* An LD_PRELOAD library that plays the interposer: it wraps write(),
 * captures the stack there with both unwinders and reports at exit. Run
 * under it, real programs (dd, python3) show that captures agree inside
 * distribution-built code without frame pointers, from a shared object
 * initialised in a constructor, as in libiopred.so. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>

#define HARNESS_NO_REPORT

#include "harness.h"

static __thread int reporting;
static _Atomic long writes_checked;

ssize_t write(int fd, const void *buf, size_t n) {
  if (!reporting) {
    compare_stacks("preload-write", 64);
    atomic_fetch_add(&writes_checked, 1);
  }
  return syscall(SYS_write, fd, buf, n);
}

__attribute__((constructor)) static void preload_init(void) { iop_unwind_init(); }

/* The report goes to the file named by UNWIND_REPORT, appended: many
 * programs close stdout and stderr before the destructors run. */
__attribute__((destructor)) static void preload_fini(void) {
  reporting = 1;
  const char *path = getenv("UNWIND_REPORT");
  if (!path) return;
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) return;
  long w = atomic_load(&writes_checked);
  dprintf(fd, "preload (%ld writes): checks %ld failures %ld frames %ld\n", w,
          (long)atomic_load(&harness_checks), (long)atomic_load(&harness_failures),
          (long)atomic_load(&harness_frames));
  if (harness_logged) dprintf(fd, "%s", harness_log);
  close(fd);
}

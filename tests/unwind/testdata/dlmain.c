/* Frames inside a library loaded with dlopen after iop_unwind_init: the
 * unwinder must discover the new module on its first miss there, and after
 * the library is closed and a different one is loaded, usually at the same
 * address, it must not reuse the rules cached for the old code.
 * Usage: dlmain LIB1 LIB2 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "harness.h"

typedef int (*callback)(int);
typedef int (*entry)(int, callback);

static int capture(int k) { return compare_stacks("dlopen", 64) + k; }

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  iop_unwind_init();
  for (int round = 0; round < 10; round++) {
    void *h = dlopen(argv[1 + round % 2], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      printf("dlopen: %s\n", dlerror());
      return 1;
    }
    entry rec = (entry)dlsym(h, "lib_recurse"), vla = (entry)dlsym(h, "lib_vla");
    if (!rec || !vla) return 1;
    for (int k = 0; k < 30; k += 7) {
      rec(k, capture);
      vla(k, capture);
    }
    entry pad = (entry)dlsym(h, "lib_pad");
    if (pad) pad(8, capture);
    Dl_info info;
    if (dladdr((void *)rec, &info)) printf("round %d: %s at %p\n", round, argv[1 + round % 2], info.dli_fbase);
    dlclose(h);
    /* The later rounds tell the unwinder, as the interposer's dlclose
     * hook does; the earlier ones rely on its own detection. */
    if (round >= 6) iop_unwind_invalidate();
  }
  return report("dlopen");
}

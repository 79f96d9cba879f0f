/* Frames inside a library loaded with dlopen after iop_unwind_init: the
 * unwinder must discover the new module on its first miss there, and after
 * the library is closed and a different one is loaded, usually at the same
 * address, it must not reuse the rules cached for the old code.
 * With a third argument, "threads", three threads capture through LIB1 all
 * along while the main thread loads and unloads LIB2 two hundred times:
 * module rescans, generation changes and cache fills race with captures.
 * Usage: dlmain LIB1 LIB2 [threads] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "harness.h"

typedef int (*callback)(int);
typedef int (*entry)(int, callback);

static int capture(int k) { return compare_stacks("dlopen", 64) + k; }

static atomic_int stop;
static entry shared_rec, shared_vla;

static void *capture_loop(void *arg) {
  (void)arg;
  for (int i = 0; !atomic_load(&stop); i++) {
    shared_rec(i % 17, capture);
    shared_vla(i % 11, capture);
  }
  return NULL;
}

static int race(const char *lib1, const char *lib2) {
  void *keep = dlopen(lib1, RTLD_NOW | RTLD_LOCAL);
  if (!keep) return 1;
  shared_rec = (entry)dlsym(keep, "lib_recurse");
  shared_vla = (entry)dlsym(keep, "lib_vla");
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, capture_loop, NULL);
  for (int round = 0; round < 200; round++) {
    void *h = dlopen(lib2, RTLD_NOW | RTLD_LOCAL);
    if (!h) return 1;
    entry rec = (entry)dlsym(h, "lib_recurse");
    rec(round % 9, capture);
    dlclose(h);
    if (round % 50 == 49) iop_unwind_invalidate();
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  return report("dlopen-threads");
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  iop_unwind_init();
  if (argc > 3 && !strcmp(argv[3], "threads")) return race(argv[1], argv[2]);
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

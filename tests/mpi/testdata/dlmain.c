/* Loads an MPI plugin with dlopen(RTLD_LOCAL) and runs it.
 * usage: dlmain PLUGIN FILE COUNT; exits with the plugin's status. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlmain: %s\n", dlerror());
    return 3;
  }
  int (*run)(const char *, int) = (int (*)(const char *, int))dlsym(h, "plugin_run");
  if (!run) return 4;
  int r = run(argv[2], atoi(argv[3]));
  if (r) fprintf(stderr, "dlmain: plugin failed with %d\n", r);
  return r;
}

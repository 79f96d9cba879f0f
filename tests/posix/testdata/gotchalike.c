/* A second tracer built as GOTCHA (DFTracer's interposition library) is:
 * it interposes dlsym, answers a dlsym(RTLD_NEXT) for a function it wraps
 * with its own wrapper, and its wrapper calls the first definition of the
 * function in the process (for a library preloaded before the C library,
 * that library's). Preloaded with libiopred.so, the two wrappers call each
 * other unless iopred sees through the answer. Every other dlsym is passed
 * on by a tail call, so that RTLD_NEXT keeps its caller. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#define DLSYM_VERSION "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define DLSYM_VERSION "GLIBC_2.17"
#else
#error "set the C library's base version of dlsym for this architecture"
#endif

static void *(*real_dlsym)(void *, const char *);

static void *first_definition(const char *name) {
  return real_dlsym(RTLD_DEFAULT, name);
}

static ssize_t (*next_write)(int, const void *, size_t);
static ssize_t wrap_write(int fd, const void *buf, size_t n) {
  if (!next_write) next_write = first_definition("write");
  return next_write(fd, buf, n);
}

static int (*next_close)(int);
static int wrap_close(int fd) {
  if (!next_close) next_close = first_definition("close");
  return next_close(fd);
}

static int (*next_fclose)(FILE *);
static int wrap_fclose(FILE *fp) {
  if (!next_fclose) next_fclose = first_definition("fclose");
  return next_fclose(fp);
}

__attribute__((constructor)) static void init(void) {
  real_dlsym = dlvsym(RTLD_NEXT, "dlsym", DLSYM_VERSION);
}

void *dlsym(void *handle, const char *name) {
  if (handle == RTLD_NEXT) {
    if (!strcmp(name, "write")) return (void *)wrap_write;
    if (!strcmp(name, "close")) return (void *)wrap_close;
    if (!strcmp(name, "fclose")) return (void *)wrap_fclose;
  }
  return real_dlsym(handle, name);
}

/* Test harness shared by the unwinder's test programs: compare_stacks
 * captures the stack with iop_backtrace and with libunwind's unw_backtrace
 * from the same function and checks that the return addresses agree.
 * Async-signal-safe: results go to counters and a static text buffer that
 * report() prints from normal context. */
#ifndef UNWIND_HARNESS_H
#define UNWIND_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "../../../preload/unwind.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HARNESS_MAX 256

static _Atomic long harness_checks, harness_failures, harness_frames;
static _Atomic int harness_logged;
static char harness_log[8192];
static uintptr_t harness_bad_a[HARNESS_MAX], harness_bad_b[HARNESS_MAX];
static int harness_bad_n, harness_bad_m;

static void harness_hex(char *out, uintptr_t v) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; i--, v >>= 4) out[i] = digits[v & 15];
  out[16] = 0;
}

/* Only the first failure is logged in full, by whichever context wins. */
static void harness_log_failure(const char *tag, int max, const uintptr_t *a, int n,
                                const uintptr_t *b, int m) {
  if (atomic_exchange(&harness_logged, 1)) return;
  memcpy(harness_bad_a, a, (size_t)n * sizeof *a);
  memcpy(harness_bad_b, b, (size_t)m * sizeof *b);
  harness_bad_n = n;
  harness_bad_m = m;
  char *p = harness_log, *end = harness_log + sizeof harness_log - 64;
  p += snprintf(p, (size_t)(end - p), "%s: max %d, iop_backtrace %d frames, unw_backtrace %d\n",
                tag, max, n, m);
  for (int i = 0; i < n || i < m; i++) {
    if (p >= end) break;
    char x[17] = "-", y[17] = "-";
    if (i < n) harness_hex(x, a[i]);
    if (i < m) harness_hex(y, b[i]);
    p += snprintf(p, (size_t)(end - p), "  %3d %s %s%s\n", i, x, y,
                  (i < n && i < m && a[i] == b[i]) ? "" : "  <-");
  }
}

/* compare_stacks checks one capture at depth limit max. The two calls sit
 * at different call sites of this function, so frame 0 (our own return
 * address) is only required to lie close by; every other frame must be
 * equal, and both must stop at the same depth. */
__attribute__((noinline)) static int compare_stacks(const char *tag, int max) {
  uintptr_t mine[HARNESS_MAX];
  void *theirs[HARNESS_MAX];
  if (max > HARNESS_MAX) max = HARNESS_MAX;
  int n = iop_backtrace(mine, max, 0);
  int m = unw_backtrace(theirs, max);
  int ok = n == m && n > 0;
  for (int i = 0; ok && i < n; i++) {
    uintptr_t x = mine[i], y = (uintptr_t)theirs[i];
    if (i == 0) ok = (x > y ? x - y : y - x) < 256;
    else ok = x == y;
  }
  atomic_fetch_add(&harness_checks, 1);
  atomic_fetch_add(&harness_frames, n);
  if (!ok) {
    atomic_fetch_add(&harness_failures, 1);
    harness_log_failure(tag, max, mine, n, (const uintptr_t *)theirs, m);
  }
  return ok;
}

#ifndef HARNESS_NO_REPORT
/* report prints the totals and returns the exit status: failure when any
 * comparison failed or none ran. */
static int report(const char *prog) {
  long c = atomic_load(&harness_checks), f = atomic_load(&harness_failures);
  struct iop_unwind_stats st;
  iop_unwind_stats(&st);
  printf("%s: checks %ld failures %ld frames %ld misses %lu cached %lu modules %lu\n", prog, c, f,
         atomic_load(&harness_frames), (unsigned long)st.misses, (unsigned long)st.cached,
         (unsigned long)st.modules);
  if (harness_logged) {
    fputs(harness_log, stdout);
    /* Where the first differing frames are, for the reader. */
    for (int i = 0; i < harness_bad_n || i < harness_bad_m; i++) {
      uintptr_t pc[2] = {i < harness_bad_n ? harness_bad_a[i] : 0,
                         i < harness_bad_m ? harness_bad_b[i] : 0};
      for (int j = 0; j < 2; j++) {
        Dl_info info;
        if (pc[j] && dladdr((void *)pc[j], &info))
          printf("  %3d.%d %s+%#lx (%s+%#lx)\n", i, j, info.dli_sname ? info.dli_sname : "?",
                 (unsigned long)(pc[j] - (uintptr_t)info.dli_saddr), info.dli_fname,
                 (unsigned long)(pc[j] - (uintptr_t)info.dli_fbase));
      }
      if (i > 4) break;
    }
  }
  fflush(stdout);
  return (f == 0 && c > 0) ? 0 : 1;
}
#endif

#ifdef __cplusplus
}
#endif
#endif

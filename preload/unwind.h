/* Call-stack capture for the interposer's hot path (x86-64 Linux).
 *
 * iop_backtrace walks the stack with the DWARF call-frame information of
 * .eh_frame (found through each module's .eh_frame_hdr search table), so it
 * is correct in code built without frame pointers. The unwind rule of every
 * return address is computed once and kept in a lock-free table; a warm
 * frame then costs a hash probe and two or three loads.
 *
 * Safety: no malloc, no stdio, no lock a signal handler could deadlock on.
 * Every stack read is checked against the current thread's stack bounds and
 * every code read against a loaded module's segments; on anything unexpected
 * the walk stops and returns the frames found so far. */
#ifndef IOP_UNWIND_H
#define IOP_UNWIND_H

#include <stdint.h>

/* iop_unwind_init finds the loaded modules and the main thread's stack.
 * Call it once from normal (non-signal) context, before iop_backtrace,
 * typically from the library constructor. It may allocate. Calling it again
 * is harmless. */
void iop_unwind_init(void) __attribute__((visibility("hidden")));

/* iop_backtrace stores up to max return addresses of the current call
 * stack and returns how many it stored. With skip = 0 the first address
 * stored is iop_backtrace's own return address (a pc inside its caller);
 * skip = n leaves out the first n addresses. Returns 0 before
 * iop_unwind_init. Async-signal-safe and thread-safe. */
int iop_backtrace(uintptr_t *pcs, int max, int skip)
    __attribute__((visibility("hidden")));

/* iop_unwind_invalidate forgets every cached rule and rescans the modules.
 * Call it after dlclose (from normal context). Without it the unwinder
 * notices an unloaded module on its next cache miss, but a walk made only
 * of cache hits could still apply the old code's rules to new code mapped
 * at the same addresses (the walk stays inside the stack: wrong frames,
 * never a fault). */
void iop_unwind_invalidate(void) __attribute__((visibility("hidden")));

/* Counters for tests and diagnostics: rule-cache misses since start (each
 * one parsed .eh_frame), rules in the cache, modules known. */
struct iop_unwind_stats {
  uint64_t misses, cached, modules;
};
void iop_unwind_stats(struct iop_unwind_stats *out) __attribute__((visibility("hidden")));

#endif

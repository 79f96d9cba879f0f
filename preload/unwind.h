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
 * the walk stops and returns the frames found so far.
 *
 * Cost (tests/unwind, BenchmarkBacktrace): a warm capture of 9 frames is
 * about 330 instructions and 28 ns, of 19 frames about 620 and 73 ns; each
 * further frame about 29 instructions. A cache miss (the first time a return
 * address is seen) parses .eh_frame and asks dl_iterate_phdr, outside a
 * nested call, whether a library was unloaded: a few microseconds, once.
 *
 * Limits, all of them stop the walk early rather than guess:
 * - x86-64 Linux with glibc only. Known stacks: the main thread's (bounded
 *   by __libc_stack_end and RLIMIT_STACK), glibc threads' (bounded by the
 *   thread pointer, the pages up to it probed once per thread with
 *   process_vm_readv) and sigaltstack. On any other stack (makecontext,
 *   user-level threads) the walk stays within the readable pages above sp,
 *   at most 256 KiB, probed on every capture. Where process_vm_readv is
 *   refused (seccomp), threads and such stacks give 0 frames.
 * - Code without .eh_frame_hdr (or with a search table not in GNU ld's
 *   datarel/sdata4 form), without CFI (-fno-asynchronous-unwind-tables), or
 *   JIT code: the walk ends at its first such frame (libunwind does too).
 * - CFA rules other than rsp/rbp/rbx + N, *(rbp + N) and the PLT
 *   expression: the walk ends there (seen only in hand-written assembly).
 * - A frame interrupted by a signal in a prologue that keeps its CFA in
 *   another register (r10 while gcc realigns the stack): the walk ends there.
 * - After dlclose, a walk made only of cache hits can still apply the old
 *   code's rules to new code mapped at the same addresses until the next
 *   miss (wrong frames, never a fault). The library's dlclose wrapper
 *   closes that window for the program's own dlclose calls with
 *   iop_unwind_rescan. At most 512 distinct module loads are tracked per
 *   process.
 * - iop_backtrace returns 0 before iop_unwind_init. */
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

/* iop_unwind_rescan asks the loader which modules are loaded now; when
 * one is gone it forgets the rules cached for it and starts a new unload
 * epoch. Call it after dlclose (from normal context): it costs one
 * dl_iterate_phdr and changes nothing when no module was unloaded. */
void iop_unwind_rescan(void) __attribute__((visibility("hidden")));

/* iop_unwind_epoch counts the module-table refreshes that found a module
 * unloaded. Code at one address can belong to two modules only in two
 * different epochs, so a walk's frames together with the epoch read
 * before it name code unambiguously. */
uint64_t iop_unwind_epoch(void) __attribute__((visibility("hidden")));

/* iop_unwind_module_at names the module that held pc in the given epoch:
 * its path as the loader gave it ("" for the program) and its load bias,
 * from the unwinder's own table, which keeps unloaded modules. Returns 0
 * when the table does not know (a module loaded and unloaded between two
 * refreshes, more than 512 modules, a path too long to keep); the caller
 * then asks the loader. Returns 1 for a module still loaded, 2 for one
 * unloaded since: the loader's copy of its tables is gone. */
int iop_unwind_module_at(uintptr_t pc, uint64_t epoch, const char **name, uintptr_t *bias)
    __attribute__((visibility("hidden")));

/* iop_unwind_after_fork runs in a forked child: the child never asks the
 * loader again (a lock another thread held at the fork stays held). */
void iop_unwind_after_fork(void) __attribute__((visibility("hidden")));

/* A memo of walks (one per thread, owned by the caller): a walk whose
 * every step took the unwinder's fast path (a K_FAST rule at its first
 * probe, ending at the depth limit, a zero return address or a K_END
 * rule) is a function of its starting pc and of the stack words it read,
 * at offsets from its starting sp that its rules fix. Such a walk is
 * kept as those (offset, word) pairs with a tag of the caller's choice;
 * a later walk from the same place that finds the same words would
 * repeat it exactly, so it is answered with the tag instead. The ways are
 * filled in turn and searched from the last one that matched, so a loop
 * through up to IOP_MEMO_WAYS call stacks finds each at the first or
 * second way it tries. */
#define IOP_MEMO_FRAMES 32
#define IOP_MEMO_WAYS 16
struct iop_walk_memo {
  uintptr_t pc0;  /* the return address the walk started from; 0: empty */
  uintptr_t key;  /* rule-cache generation | the depth limit of the walk */
  uint32_t span;  /* the walk read [sp, sp + span) */
  uint32_t nchk;  /* words to check */
  uint32_t tag;   /* the caller's value */
  uint32_t pad;
  /* word i was at sp + off[i]; the outermost first, so that the check,
   * which starts from the innermost, meets the words that differ between
   * call sites (the application's own frames) early */
  uint32_t off[IOP_MEMO_FRAMES];
  uintptr_t word[IOP_MEMO_FRAMES];
};
struct iop_walk_memos {
  uint32_t last;    /* the entry that matched last: tried first */
  uint32_t next;    /* the entry the next memoisable walk replaces */
  int32_t pending;  /* the entry a fresh walk just filled, awaiting its tag, or -1 */
  uint32_t pad;
  uintptr_t pending_pc; /* its starting pc, stored into it with the tag */
  struct iop_walk_memo e[IOP_MEMO_WAYS];
};

/* iop_backtrace_memo is iop_backtrace(pcs, max, 0), except that it first
 * replays the walks memorised in m: when one matches it returns -1 and
 * sets *tag to that entry's tag, and pcs is left untouched. Otherwise it
 * walks and returns the frame count; when the walk can be memorised it is
 * kept in m, and iop_walk_memo_tag(m, tag) then makes it answerable. The
 * caller must pass the same m from the same function only, and never use
 * m from a signal handler that may interrupt a use of it. */
int iop_backtrace_memo(uintptr_t *pcs, int max, struct iop_walk_memos *m, uint32_t *tag)
    __attribute__((visibility("hidden")));
void iop_walk_memo_tag(struct iop_walk_memos *m, uint32_t tag) __attribute__((visibility("hidden")));

/* Counters for tests and diagnostics: rule-cache misses since start (each
 * one parsed .eh_frame), rules in the cache, modules known. */
struct iop_unwind_stats {
  uint64_t misses, cached, modules;
};
void iop_unwind_stats(struct iop_unwind_stats *out) __attribute__((visibility("hidden")));

#endif

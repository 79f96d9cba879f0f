/* Context symbols (Omnisc'IO section II.B.1): the call stack above the
 * interposer, reduced to a table slot. The hot path hashes the raw return
 * addresses and finds the slot in a lock-free table; the Go side turns
 * each new slot into module + offset frames once, off the application's
 * threads, so that context ids are stable across runs despite address
 * randomisation. */
#include "iop.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "unwind.h"

#define IOP_MAX_DEPTH 64
#define IOP_CTX_CAP (1 << 14)

struct iop_ctx {
  _Atomic uint64_t key; /* hash of the raw stack; 0 marks a free slot */
  _Atomic uint32_t ready;
  uint32_t n;
  uintptr_t *pcs;
};

static struct iop_ctx ctx_table[IOP_CTX_CAP];
IOP_HIDDEN void *iop_arena_alloc(size_t n);

/* Text of libiopred.so itself: frames there are iopred's, not the
 * application's. */
static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  uintptr_t addr = (uintptr_t)data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (addr >= lo && addr < hi) {
      self_lo = lo;
      self_hi = hi;
      return 1;
    }
  }
  return 0;
}

IOP_HIDDEN void iop_context_init(void) {
  dl_iterate_phdr(find_self, (void *)(uintptr_t)&iop_context_init);
  iop_unwind_init();
}

static inline uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x;
  h *= 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

IOP_HIDDEN uint32_t iop_capture(void) {
  int depth = iop_cfg.ctx_depth;
  if (depth <= 0) return 0;
  uintptr_t pcs[IOP_MAX_DEPTH + 8];
  int n = iop_backtrace(pcs, depth + 8, 0);
  int first = 0;
  while (first < n && pcs[first] >= self_lo && pcs[first] < self_hi) first++;
  n -= first;
  if (n > depth) n = depth;
  if (n <= 0) return 0;
  uint64_t h = 0x6a09e667f3bcc908ull;
  for (int i = 0; i < n; i++) h = mix(h, pcs[first + i]);
  h |= 1;
  for (uint32_t i = (uint32_t)h & (IOP_CTX_CAP - 1), probes = 0; probes < IOP_CTX_CAP;
       i = (i + 1) & (IOP_CTX_CAP - 1), probes++) {
    struct iop_ctx *s = &ctx_table[i];
    uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
    if (k == h) return i + 1;
    if (k == 0) {
      uint64_t expected = 0;
      if (!atomic_compare_exchange_strong(&s->key, &expected, h)) {
        if (expected == h) return i + 1;
        continue;
      }
      uintptr_t *copy = iop_arena_alloc((size_t)n * sizeof *copy);
      if (copy) {
        memcpy(copy, pcs + first, (size_t)n * sizeof *copy);
        s->pcs = copy;
        s->n = (uint32_t)n;
      }
      atomic_store_explicit(&s->ready, 1, memory_order_release);
      return i + 1;
    }
  }
  return 0; /* table full: the event goes without a context */
}

/* iop_ctx_pcs copies the frames of a context slot; the slot's writer may
 * still be filling it when a concurrent event reaches the consumer. */
IOP_HIDDEN int iop_ctx_pcs(uint32_t ctx, uintptr_t *pcs, int max) {
  if (ctx == 0 || ctx > IOP_CTX_CAP) return 0;
  struct iop_ctx *s = &ctx_table[ctx - 1];
  while (!atomic_load_explicit(&s->ready, memory_order_acquire)) __builtin_ia32_pause();
  int n = (int)s->n < max ? (int)s->n : max;
  if (s->pcs) memcpy(pcs, s->pcs, (size_t)n * sizeof *pcs);
  return s->pcs ? n : 0;
}

/* ---- symbolisation support for the Go side (consumer thread only) ---- */

struct module_query {
  uintptr_t pc;
  char *path;
  int cap;
  uintptr_t bias;
  int found;
};

static int module_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct module_query *q = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (q->pc >= lo && q->pc < lo + ph->p_memsz) {
      const char *name = info->dlpi_name ? info->dlpi_name : "";
      strncpy(q->path, name, (size_t)q->cap - 1);
      q->path[q->cap - 1] = 0;
      q->bias = info->dlpi_addr;
      q->found = 1;
      return 1;
    }
  }
  return 0;
}

/* iop_module_of finds the loaded object holding pc: its path ("" for the
 * main program) and its load bias. Returns 0 when none holds it. */
IOP_HIDDEN int iop_module_of(uintptr_t pc, char *path, int cap, uintptr_t *bias) {
  struct module_query q = {pc, path, cap, 0, 0};
  dl_iterate_phdr(module_cb, &q);
  *bias = q.bias;
  return q.found;
}

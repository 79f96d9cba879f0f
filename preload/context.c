/* Context symbols (Omnisc'IO section II.B.1): the call stack above the
 * interposer, reduced to a table slot. The hot path hashes the raw return
 * addresses and finds the slot in a lock-free table; the Go side turns
 * each new slot into module + offset frames once, off the application's
 * threads, so that context ids are stable across runs despite address
 * randomisation.
 *
 * A library unloaded with dlclose and another loaded at its addresses
 * would give the same raw addresses to different code: the hash also
 * takes the unwinder's unload epoch (the count of unloads seen), and the
 * slot keeps it, so that its frames are named after the modules loaded
 * when it was captured, even when the Go side names it after the
 * unloading. The cost: stacks captured again after an unload take new
 * slots (the same frames, so the same context ids in the trace). */
#include "iop.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "unwind.h"

#define IOP_MAX_DEPTH 64
#define IOP_CTX_CAP (1 << 14)

struct iop_ctx {
  _Atomic uint64_t key; /* hash of the raw stack; 0 marks a free slot */
  _Atomic uint32_t ready;
  uint32_t n;
  uintptr_t *pcs;
  uint64_t epoch; /* the unwinder's unload epoch when the stack was captured */
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

/* ---- the per-thread walk memo ----
 * A call site that repeats (a loop writing through the same functions)
 * gives the same walk each time: unwind.c replays it by checking the
 * stack words it read, and the memo answers with the walk's context slot
 * without walking or hashing: the capture of a 4 KiB pwrite in a loop
 * (7 frames) costs 153 instructions instead of 385 (BenchmarkCall-
 * Instructions). Each thread has its own memo, on pages that return to a
 * pool when the thread ends. Everything is lock-free, so a forked child
 * finds nothing locked.
 * IOPRED_CONTEXT_CACHE=0 turns it off; =verify also walks on every hit,
 * checks that the walk gives the memo's slot, and prints the counts at
 * exit (for tests). */
struct memo_page {
  struct iop_walk_memos memos;
  struct memo_page *next;
  _Atomic int used;
};
static struct memo_page *_Atomic memo_pages;
static IOP_TLS struct iop_walk_memos *my_memos;
static IOP_TLS int memo_unavailable;
static pthread_key_t memo_key;
enum { MEMO_OFF = 0, MEMO_ON = 1, MEMO_VERIFY = 2 };
static int memo_mode;
static _Atomic uint64_t memo_hits, memo_mismatches;

static void memo_release(void *arg) {
  struct memo_page *p = arg;
  my_memos = NULL;
  atomic_store_explicit(&p->used, 0, memory_order_release);
}

static __attribute__((noinline)) struct iop_walk_memos *memo_acquire(void) {
  if (memo_unavailable) return NULL;
  struct memo_page *p;
  for (p = atomic_load(&memo_pages); p; p = p->next) {
    int unused = 0;
    if (atomic_compare_exchange_strong(&p->used, &unused, 1)) break;
  }
  if (!p) {
    p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      memo_unavailable = 1;
      return NULL;
    }
    atomic_store(&p->used, 1);
    struct memo_page *head = atomic_load(&memo_pages);
    do p->next = head;
    while (!atomic_compare_exchange_weak(&memo_pages, &head, p));
  }
  memset(&p->memos, 0, sizeof p->memos);
  p->memos.pending = -1;
  if (pthread_setspecific(memo_key, p) != 0) {
    /* Without the destructor the page could not go back to the pool. */
    atomic_store(&p->used, 0);
    memo_unavailable = 1;
    return NULL;
  }
  my_memos = &p->memos;
  return my_memos;
}

static void memo_report(void) {
  if (memo_mode != MEMO_VERIFY) return;
  char msg[128];
  snprintf(msg, sizeof msg, "context cache: %llu hits, %llu mismatches",
           (unsigned long long)atomic_load(&memo_hits),
           (unsigned long long)atomic_load(&memo_mismatches));
  iop_warn(msg);
}

IOP_HIDDEN void iop_context_init(void) {
  dl_iterate_phdr(find_self, (void *)(uintptr_t)&iop_context_init);
  iop_unwind_init();
  const char *v = getenv("IOPRED_CONTEXT_CACHE");
  memo_mode = MEMO_ON;
  if (v && strcmp(v, "0") == 0) memo_mode = MEMO_OFF;
  else if (v && strcmp(v, "verify") == 0) memo_mode = MEMO_VERIFY;
  else if (v && *v && strcmp(v, "1") != 0)
    iop_warn("IOPRED_CONTEXT_CACHE is not 0, 1 or verify; using 1");
  if (memo_mode != MEMO_OFF && pthread_key_create(&memo_key, memo_release) != 0) memo_mode = MEMO_OFF;
  if (memo_mode == MEMO_VERIFY) atexit(memo_report);
}

static inline uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x;
  h *= 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

/* slot_of finds (or makes) the slot of a walk's frames captured in an
 * unload epoch, leaving out the frames inside iopred and keeping at most
 * depth. */
static uint32_t slot_of(const uintptr_t *pcs, int n, int depth, uint64_t epoch) {
  int first = 0;
  while (first < n && pcs[first] >= self_lo && pcs[first] < self_hi) first++;
  n -= first;
  if (n > depth) n = depth;
  if (n <= 0) return 0;
  uint64_t h = 0x6a09e667f3bcc908ull;
  if (epoch) h = mix(h, epoch);
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
      s->epoch = epoch;
      atomic_store_explicit(&s->ready, 1, memory_order_release);
      return i + 1;
    }
  }
  return 0; /* table full: the event goes without a context */
}

/* memo_verify walks the stack again for a memo hit and counts a mismatch
 * when the walk's frames are not those of the memo's slot. */
static __attribute__((noinline)) uint32_t memo_verify(uint32_t tag) {
  uintptr_t pcs[IOP_MAX_DEPTH + 8], kept[IOP_MAX_DEPTH];
  int depth = iop_cfg.ctx_depth;
  int n = iop_backtrace(pcs, depth + 8, 0);
  uint32_t slot = slot_of(pcs, n, depth, iop_unwind_epoch());
  int first = 0;
  while (first < n && pcs[first] >= self_lo && pcs[first] < self_hi) first++;
  int want = n - first < depth ? n - first : depth;
  int got = iop_ctx_pcs(tag, kept, IOP_MAX_DEPTH);
  int same = slot == tag && got == want && memcmp(kept, pcs + first, (size_t)got * sizeof *kept) == 0;
  atomic_fetch_add(&memo_hits, 1);
  if (!same) atomic_fetch_add(&memo_mismatches, 1);
  return slot;
}

IOP_HIDDEN uint32_t iop_capture(void) {
  int depth = iop_cfg.ctx_depth;
  if (depth <= 0) return 0;
  uintptr_t pcs[IOP_MAX_DEPTH + 8];
  struct iop_walk_memos *m = my_memos;
  if (IOP_UNLIKELY(!m) && memo_mode != MEMO_OFF) m = memo_acquire();
  /* The epoch is read after the walk, and only when a slot is looked up:
   * an unload during the walk cannot have removed code the walk passed
   * through (it is on this stack), so those modules are named alike in
   * either epoch. A memo hit needs none: the unwinder drops every memo
   * when an unload begins. */
  if (IOP_UNLIKELY(!m)) {
    int n = iop_backtrace(pcs, depth + 8, 0);
    return slot_of(pcs, n, depth, iop_unwind_epoch());
  }
  uint32_t tag;
  int n = iop_backtrace_memo(pcs, depth + 8, m, &tag);
  if (IOP_LIKELY(n < 0)) return IOP_LIKELY(memo_mode == MEMO_ON) ? tag : memo_verify(tag);
  uint32_t slot = slot_of(pcs, n, depth, iop_unwind_epoch());
  iop_walk_memo_tag(m, slot);
  return slot;
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

/* iop_ctx_epoch is the unload epoch of a context slot's capture. */
IOP_HIDDEN uint64_t iop_ctx_epoch(uint32_t ctx) {
  if (ctx == 0 || ctx > IOP_CTX_CAP) return 0;
  struct iop_ctx *s = &ctx_table[ctx - 1];
  while (!atomic_load_explicit(&s->ready, memory_order_acquire)) __builtin_ia32_pause();
  return s->epoch;
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

/* iop_module_in finds the object that held pc in an unload epoch: from
 * the unwinder's table, which remembers unloaded objects, else from the
 * loader. Returns 0 when none is known, 1 for an object still loaded, 2
 * for one unloaded since (its loaded symbol tables are gone). */
IOP_HIDDEN int iop_module_in(uintptr_t pc, uint64_t epoch, char *path, int cap, uintptr_t *bias) {
  const char *name;
  int r = iop_unwind_module_at(pc, epoch, &name, bias);
  if (r == 0) return iop_module_of(pc, path, cap, bias);
  strncpy(path, name, (size_t)cap - 1);
  path[cap - 1] = 0;
  return r;
}

/* ---- names from a loaded module's dynamic symbol table ----
 * A stripped module (libc, the MPI libraries) has only its dynamic
 * symbols, and the dynamic loader has them mapped already: looking a name
 * up there reads no file and touches no new memory. The lookup runs inside
 * dl_iterate_phdr's callback, which holds the loader's list lock, so the
 * module cannot be unloaded meanwhile (dladdr would take the loader's
 * main lock instead, which a thread running a dlopen'd constructor holds
 * while it may wait for this consumer). */

struct dynsym_query {
  uintptr_t pc;
  char *name;
  int cap;
  int found; /* 1: the module holds pc; 2: and a function symbol too */
};

/* dynsym_count is the number of entries of the dynamic symbol table,
 * from the ELF hash table or, with only a GNU hash table, from its last
 * chain. */
static size_t dynsym_count(const ElfW(Word) *hash, const uint32_t *gnu) {
  if (hash) return hash[1]; /* nchain */
  if (!gnu) return 0;
  uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom = gnu[2];
  const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + bloom);
  const uint32_t *chains = buckets + nbuckets;
  uint32_t last = 0;
  for (uint32_t b = 0; b < nbuckets; b++)
    if (buckets[b] > last) last = buckets[b];
  if (last < symoffset) return symoffset;
  while (!(chains[last - symoffset] & 1)) last++;
  return (size_t)last + 1;
}

static int dynsym_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct dynsym_query *q = data;
  const ElfW(Dyn) *dyn = NULL;
  int holds = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && q->pc >= lo && q->pc < lo + ph->p_memsz) holds = 1;
    if (ph->p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
  }
  if (!holds) return 0;
  q->found = 1;
  if (!dyn) return 1;
  const ElfW(Sym) *syms = NULL;
  const char *strs = NULL;
  size_t strsz = 0;
  const ElfW(Word) *hash = NULL;
  const uint32_t *gnu = NULL;
  /* The loader has relocated these entries to addresses, except on a few
   * architectures; x86-64 is not one of them. */
  for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
    switch (d->d_tag) {
    case DT_SYMTAB: syms = (const ElfW(Sym) *)d->d_un.d_ptr; break;
    case DT_STRTAB: strs = (const char *)d->d_un.d_ptr; break;
    case DT_STRSZ: strsz = d->d_un.d_val; break;
    case DT_HASH: hash = (const ElfW(Word) *)d->d_un.d_ptr; break;
    case DT_GNU_HASH: gnu = (const uint32_t *)d->d_un.d_ptr; break;
    }
  }
  size_t n = dynsym_count(hash, gnu);
  if (!syms || !strs || n == 0) return 1;
  uintptr_t vaddr = q->pc - info->dlpi_addr;
  const ElfW(Sym) *best = NULL;
  for (size_t i = 1; i < n; i++) { /* entry 0 is reserved */
    const ElfW(Sym) *s = &syms[i];
    if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_value == 0 || s->st_name >= strsz) continue;
    if (s->st_value <= vaddr && (!best || s->st_value > best->st_value)) best = s;
  }
  if (best && vaddr < best->st_value + (best->st_size ? best->st_size : 1)) {
    strncpy(q->name, strs + best->st_name, (size_t)q->cap - 1);
    q->name[q->cap - 1] = 0;
    q->found = 2;
  }
  return 1;
}

/* iop_dynsym_name writes the name of the dynamic function symbol holding
 * pc into name; it returns 0 when no loaded module holds pc, 1 when one
 * does but no dynamic function symbol covers it, 2 with a name. */
IOP_HIDDEN int iop_dynsym_name(uintptr_t pc, char *name, int cap) {
  struct dynsym_query q = {pc, name, cap, 0};
  name[0] = 0;
  dl_iterate_phdr(dynsym_cb, &q);
  return q.found;
}

/* iop_ctx_pcs_nowait is iop_ctx_pcs for a forked child: a slot another
 * thread of the parent was filling at the fork is never finished in the
 * child, so the child takes it without frames instead of waiting. */
IOP_HIDDEN int iop_ctx_pcs_nowait(uint32_t ctx, uintptr_t *pcs, int max) {
  if (ctx == 0 || ctx > IOP_CTX_CAP) return 0;
  struct iop_ctx *s = &ctx_table[ctx - 1];
  if (!atomic_load_explicit(&s->ready, memory_order_acquire) || !s->pcs) return 0;
  int n = (int)s->n < max ? (int)s->n : max;
  memcpy(pcs, s->pcs, (size_t)n * sizeof *pcs);
  return n;
}

/* DWARF-CFI stack unwinder for the hot path; see unwind.h.
 *
 * Per frame the walk tracks four registers: pc, sp, rbp and rbx (the only
 * registers gcc, gfortran and glibc base a CFA on). The rule that turns
 * them into the caller's values (CFA = rsp+N, rbp+N, rbx+N or *(rbp+N);
 * the return address at CFA+k; rbp and rbx unchanged or saved at CFA+k) is
 * derived once per return address from .eh_frame and packed into one
 * 64-bit word in an open-addressing table that threads fill with CAS.
 * Signal frames are recognised by the sigreturn trampoline's code, and the
 * walk continues from the saved ucontext.
 *
 * The module table is append-only; only a thread that is not already
 * inside iop_backtrace (so never a signal handler interrupting our own
 * walk) may refresh it through dl_iterate_phdr, which takes the loader
 * lock. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "unwind.h"

#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/ucontext.h>
#include <unistd.h>

#define UNW_HIDDEN __attribute__((visibility("hidden")))
#define UNW_TLS __thread __attribute__((tls_model("initial-exec")))
#define UNW_LIKELY(x) __builtin_expect(!!(x), 1)
#define UNW_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---------------------------------------------------------------- rules */

enum {
  K_EMPTY = 0,
  /* The common case, walked inline: CFA = rsp + off, the return address at
   * CFA-8, rbp and rbx unchanged or saved below the CFA. The save offsets
   * (8-byte units) are 0 for "unchanged". */
  K_FAST = 1,
  K_CFA_SP = 2,      /* CFA = rsp + off */
  K_CFA_BP = 3,      /* CFA = rbp + off */
  K_CFA_BPDEREF = 4, /* CFA = *(rbp + off): gcc's realigned frames */
  K_CFA_BX = 5,      /* CFA = rbx + off: glibc's _dl_runtime_resolve */
  K_SIGNAL = 6,      /* __restore_rt: the registers are in the ucontext at sp */
  K_END = 7,         /* outermost frame, no FDE, or a rule we do not model */
};
enum {
  B_SAME = 0,  /* rbp unchanged */
  B_CFA = 1,   /* rbp saved at CFA + boff */
  B_BPREL = 2, /* rbp saved at rbp + boff */
  B_LOST = 3,  /* rbp not recoverable: later frames must not use it */
};
/* rbx, for the few frames whose CFA is based on it: same, saved at
 * CFA + xoff, or lost. */
enum { X_SAME = 0, X_CFA = 1, X_LOST = 3 };

typedef uint64_t rule_t;

/* Layout: kind in bits 0-2, rbp rule 3-4, rbx rule 5-6; the return
 * address, rbp and rbx save offsets from the CFA in 8-byte units in bits
 * 8-15, 16-23 and 24-31; the CFA offset in bytes in bits 32-63. */
static inline rule_t rule_pack(unsigned kind, unsigned bkind, unsigned xkind, int ra8, int b8,
                               int x8, int32_t cfaoff) {
  return (rule_t)kind | ((rule_t)bkind << 3) | ((rule_t)xkind << 5) |
         ((rule_t)(uint8_t)(int8_t)ra8 << 8) | ((rule_t)(uint8_t)(int8_t)b8 << 16) |
         ((rule_t)(uint8_t)(int8_t)x8 << 24) | ((rule_t)(uint32_t)cfaoff << 32);
}
#define R_KIND(r) ((unsigned)(r)&7u)
#define R_BKIND(r) ((unsigned)((r) >> 3) & 3u)
#define R_XKIND(r) ((unsigned)((r) >> 5) & 3u)
#define R_RAOFF(r) ((intptr_t)(int8_t)(uint8_t)((r) >> 8) * 8)
#define R_BOFF(r) ((intptr_t)(int8_t)(uint8_t)((r) >> 16) * 8)
#define R_XOFF(r) ((intptr_t)(int8_t)(uint8_t)((r) >> 24) * 8)
#define R_CFAOFF(r) ((intptr_t)(int32_t)(uint32_t)((r) >> 32))

/* ---------------------------------------------------------- rule cache */

#define CACHE_BITS 15
#define CACHE_SIZE (1u << CACHE_BITS)
#define CACHE_PROBES 32
#define KEY_PENDING ((uintptr_t)1 << 63)
/* Keys carry a generation in bits 48-62, bumped when a module is unloaded,
 * so that rules cached for code that is gone never match again. User-space
 * code addresses fit in 47 bits. */
#define GEN_SHIFT 48
#define GEN_MASK ((uintptr_t)0x7fff << GEN_SHIFT)
static _Atomic uintptr_t cache_gen;

/* The table is two arrays, keys and rules, so that the hot path reaches
 * both with one index register (scale 8). A slot is written once: the
 * rule first, then the key with release order; readers load the key with
 * acquire order and may then read the rule's bytes directly. */
union rule_fields {
  rule_t rule;
  struct { /* the fields of rule_pack, little-endian */
    uint8_t kinds;
    int8_t ra8, b8, x8;
    int32_t cfaoff;
  } f;
};
_Static_assert(sizeof(union rule_fields) == 8, "rule layout");

static struct {
  _Atomic uintptr_t keys[CACHE_SIZE]; /* generation|address; 0 free; KEY_PENDING|key while filled */
  union rule_fields rules[CACHE_SIZE];
} cache;
static _Atomic uint64_t n_misses, n_cached;

/* A 32-bit multiplicative hash of the low address bits: one imul with an
 * immediate and one shift in the hot path. */
static inline uint32_t cache_slot(uintptr_t key) {
  return ((uint32_t)key * 0x9e3779b1u) >> (32 - CACHE_BITS);
}

/* cache_insert publishes a rule; a reader sees either nothing or the whole
 * entry, because the key is stored last. */
static void cache_insert(uintptr_t key, rule_t rule) {
  uint32_t i = cache_slot(key);
  for (int p = 0; p < CACHE_PROBES; p++, i = (i + 1) & (CACHE_SIZE - 1)) {
    _Atomic uintptr_t *slot = &cache.keys[i];
    uintptr_t k = atomic_load_explicit(slot, memory_order_acquire);
    if (k == key || k == (key | KEY_PENDING)) return;
    /* Slots of older generations stay taken: an entry never changes once
     * published, so a reader can never see a torn rule. */
    if (k != 0) continue;
    uintptr_t expected = 0;
    if (!atomic_compare_exchange_strong_explicit(slot, &expected, key | KEY_PENDING,
                                                 memory_order_acq_rel, memory_order_acquire)) {
      if (expected == key || expected == (key | KEY_PENDING)) return;
      continue;
    }
    cache.rules[i].rule = rule;
    atomic_store_explicit(slot, key, memory_order_release);
    atomic_fetch_add_explicit(&n_cached, 1, memory_order_relaxed);
    return;
  }
  /* Neighbourhood full: the rule is recomputed on every use. */
}

/* ------------------------------------------------------------- modules */

#define MAX_MODULES 512
#define MAX_SEGS 6

struct module {
  uintptr_t text_lo, text_hi; /* span of the executable PT_LOAD segments */
  uintptr_t bias;
  const uint8_t *hdr; /* .eh_frame_hdr, NULL when absent */
  uintptr_t hdr_len;
  uintptr_t seg_lo[MAX_SEGS], seg_hi[MAX_SEGS]; /* readable PT_LOAD segments */
  int nseg;
  uint64_t name_hash; /* with the addresses, tells a reloaded file from another */
  const char *name;   /* a copy of its path ("" for the program), NULL when the pool ran out */
  _Atomic int dead; /* no longer reported by dl_iterate_phdr */
  _Atomic uint64_t dead_epoch; /* the unload epoch its unloading began; 0 while loaded */
  unsigned seen;    /* refresh generation that last saw it (writer only) */
};

static struct module modules[MAX_MODULES];
static _Atomic int n_modules;
static atomic_flag refresh_lock = ATOMIC_FLAG_INIT;
static unsigned refresh_gen;
/* Counts the refreshes that found a module gone. A context captured in
 * epoch e names its frames with the modules loaded then: the first one in
 * table order that holds the pc and whose dead_epoch is 0 or above e. */
static _Atomic uint64_t unload_epoch;
/* The modules' paths, copied when they are found: once a module is
 * unloaded the loader frees its own copy. Names that do not fit are not
 * kept (naming falls back to the loader's current view). */
static char name_pool[1 << 17];
static size_t name_pool_used;
/* dl_iterate_phdr's count of unloaded objects when the table was built. */
static _Atomic unsigned long long known_subs;
static _Atomic int initialised;

/* The main thread's stack, from init. */
static uintptr_t main_stack_lo, main_stack_hi;
extern void *__libc_stack_end; /* exported by ld.so: the initial stack pointer */

static int module_readable(const struct module *m, uintptr_t a, uintptr_t len) {
  if (a + len < a) return 0;
  for (int i = 0; i < m->nseg; i++)
    if (a >= m->seg_lo[i] && a + len <= m->seg_hi[i]) return 1;
  return 0;
}

static const struct module *module_of(uintptr_t pc) {
  int n = atomic_load_explicit(&n_modules, memory_order_acquire);
  for (int i = 0; i < n; i++) {
    const struct module *m = &modules[i];
    if (pc >= m->text_lo && pc < m->text_hi &&
        !atomic_load_explicit(&m->dead, memory_order_relaxed))
      return m;
  }
  return NULL;
}

static int refresh_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  *(unsigned long long *)data = info->dlpi_subs;
  struct module cand;
  memset(&cand, 0, sizeof cand);
  cand.bias = info->dlpi_addr;
  cand.text_lo = UINTPTR_MAX;
  cand.name_hash = 0xcbf29ce484222325ull;
  if (info->dlpi_name)
    for (const char *c = info->dlpi_name; *c && c - info->dlpi_name < 4096; c++)
      cand.name_hash = (cand.name_hash ^ (uint8_t)*c) * 0x100000001b3ull;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (ph->p_type == PT_LOAD) {
      if (ph->p_flags & PF_X) {
        if (lo < cand.text_lo) cand.text_lo = lo;
        if (hi > cand.text_hi) cand.text_hi = hi;
      }
      if ((ph->p_flags & PF_R) && cand.nseg < MAX_SEGS) {
        cand.seg_lo[cand.nseg] = lo;
        cand.seg_hi[cand.nseg] = hi;
        cand.nseg++;
      }
    } else if (ph->p_type == PT_GNU_EH_FRAME) {
      cand.hdr = (const uint8_t *)lo;
      cand.hdr_len = ph->p_memsz;
    }
  }
  if (cand.text_hi == 0) return 0;
  int n = atomic_load_explicit(&n_modules, memory_order_relaxed);
  for (int i = 0; i < n; i++) {
    struct module *m = &modules[i];
    if (m->text_lo == cand.text_lo && m->text_hi == cand.text_hi && m->bias == cand.bias &&
        m->hdr == cand.hdr && m->hdr_len == cand.hdr_len && m->name_hash == cand.name_hash &&
        !atomic_load(&m->dead)) {
      m->seen = refresh_gen;
      return 0;
    }
  }
  if (n >= MAX_MODULES) return 0;
  const char *path = info->dlpi_name ? info->dlpi_name : "";
  size_t len = strnlen(path, 4096);
  if (len < 4096 && name_pool_used + len + 1 <= sizeof name_pool) {
    char *copy = name_pool + name_pool_used;
    memcpy(copy, path, len);
    copy[len] = 0;
    name_pool_used += len + 1;
    cand.name = copy;
  }
  cand.seen = refresh_gen;
  modules[n] = cand;
  atomic_store_explicit(&n_modules, n + 1, memory_order_release);
  return 0;
}

/* Set in a child that forked (iop_unwind_after_fork): another thread of
 * the parent (iopred's consumer symbolising, or the program's) may have
 * held the loader's lock at the fork, and it stays held for ever in the
 * child, which has only the forking thread. The child never asks the
 * loader: it walks with the module table it inherited, and a frame in a
 * module it loads later ends its context. */
static int loader_off;

void iop_unwind_after_fork(void) {
  loader_off = 1;
  atomic_flag_clear_explicit(&refresh_lock, memory_order_release);
}

/* refresh_modules rescans the loaded objects. Never called while this
 * thread is already inside the unwinder (see busy). When another thread is
 * rescanning, it waits for it, but not forever: that thread waits in
 * dl_iterate_phdr for the loader's list lock, and a signal handler that
 * interrupted this thread while it held that lock (inside dlopen or
 * dlclose) would otherwise wait for it in turn. After about a thousand
 * yields the caller gives up on the frame, caching nothing. */
static int refresh_modules(int wait) {
  if (loader_off) return 0;
  for (int tries = 0; atomic_flag_test_and_set_explicit(&refresh_lock, memory_order_acquire);
       tries++) {
    if (!wait && tries >= 1000) return 0;
    syscall(SYS_sched_yield);
  }
  refresh_gen++;
  unsigned long long subs = atomic_load(&known_subs);
  dl_iterate_phdr(refresh_cb, &subs);
  int n = atomic_load_explicit(&n_modules, memory_order_relaxed), unloaded = 0;
  uint64_t epoch = atomic_load(&unload_epoch) + 1;
  for (int i = 0; i < n; i++)
    if (modules[i].seen != refresh_gen && !atomic_load(&modules[i].dead)) {
      atomic_store(&modules[i].dead_epoch, epoch);
      atomic_store(&modules[i].dead, 1);
      unloaded = 1;
    }
  if (unloaded) {
    atomic_store(&unload_epoch, epoch);
    atomic_store(&cache_gen, (atomic_load(&cache_gen) + ((uintptr_t)1 << GEN_SHIFT)) & GEN_MASK);
  }
  atomic_store(&known_subs, subs);
  atomic_flag_clear_explicit(&refresh_lock, memory_order_release);
  return 1;
}

/* ------------------------------------------------------ DWARF decoding */

struct rd {
  const uint8_t *p, *end;
  int bad;
};

static inline uint8_t rd_u8(struct rd *r) {
  if (r->p >= r->end) {
    r->bad = 1;
    return 0;
  }
  return *r->p++;
}

static uint64_t rd_uleb(struct rd *r) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = rd_u8(r);
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  r->bad = 1;
  return v;
}

static int64_t rd_sleb(struct rd *r) {
  uint64_t v = 0;
  int shift = 0;
  uint8_t b;
  do {
    b = rd_u8(r);
    if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
  } while ((b & 0x80) && !r->bad && shift < 70);
  if (shift < 64 && (b & 0x40)) v |= ~(uint64_t)0 << shift;
  return (int64_t)v;
}

static uint64_t rd_fixed(struct rd *r, int n) {
  if (r->end - r->p < n) {
    r->bad = 1;
    return 0;
  }
  uint64_t v = 0;
  memcpy(&v, r->p, (size_t)n);
  r->p += n;
  return v;
}

/* rd_encoded reads a pointer in DW_EH_PE encoding enc. datarel is relative
 * to base (the .eh_frame_hdr in the search table). Indirect pointers and
 * text/func-relative ones are not used by gcc/ld on x86-64: refused. */
static uintptr_t rd_encoded(struct rd *r, uint8_t enc, uintptr_t datarel) {
  if (enc == 0xff) return 0;
  uintptr_t at = (uintptr_t)r->p, v;
  switch (enc & 0x0f) {
  case 0x00: v = (uintptr_t)rd_fixed(r, 8); break;
  case 0x01: v = (uintptr_t)rd_uleb(r); break;
  case 0x02: v = (uintptr_t)(uint16_t)rd_fixed(r, 2); break;
  case 0x03: v = (uintptr_t)(uint32_t)rd_fixed(r, 4); break;
  case 0x04: v = (uintptr_t)rd_fixed(r, 8); break;
  case 0x09: v = (uintptr_t)rd_sleb(r); break;
  case 0x0a: v = (uintptr_t)(intptr_t)(int16_t)rd_fixed(r, 2); break;
  case 0x0b: v = (uintptr_t)(intptr_t)(int32_t)rd_fixed(r, 4); break;
  case 0x0c: v = (uintptr_t)rd_fixed(r, 8); break;
  default: r->bad = 1; return 0;
  }
  switch (enc & 0x70) {
  case 0x00: break;
  case 0x10: v += at; break;
  case 0x30: v += datarel; break;
  default: r->bad = 1; return 0;
  }
  if (enc & 0x80) r->bad = 1;
  return v;
}

/* --------------------------------------------------- CFA program state */

enum { REG_RULE_SAME = 0, REG_RULE_OFFSET, REG_RULE_EXPR_BPREL, REG_RULE_UNDEF, REG_RULE_OTHER };

struct reg_rule {
  uint8_t how;
  int64_t off;
};

struct cfa_state {
  int cfa_reg; /* DWARF register; -1 for an expression */
  int64_t cfa_off;
  int cfa_deref_bp; /* CFA = *(rbp + cfa_off) */
  int cfa_bad;      /* an expression we do not model */
  struct reg_rule bp, bx, ra;
};

#define DW_REG_RBX 3
#define DW_REG_RBP 6
#define DW_REG_RSP 7
#define DW_REG_RA 16

static void set_reg(struct cfa_state *s, uint64_t reg, uint8_t how, int64_t off) {
  if (reg == DW_REG_RBP) {
    s->bp.how = how;
    s->bp.off = off;
  } else if (reg == DW_REG_RBX) {
    s->bx.how = how;
    s->bx.off = off;
  } else if (reg == DW_REG_RA) {
    s->ra.how = how;
    s->ra.off = off;
  }
}

/* run_cfa executes call-frame instructions in [p, end) from location loc,
 * stopping before the first row past target. init holds the CIE's initial
 * rules for DW_CFA_restore. Returns 0 on malformed input. */
/* cfa_expr_sp evaluates a CFA expression that is rsp plus something
 * computable from the pc alone, as in the PLT's CFI: rsp + 8 +
 * ((rip & 15) >= 11) * 8. Values carry how many times rsp is summed in.
 * Returns 0 for anything else. */
static int cfa_expr_sp(const uint8_t *p, const uint8_t *end, uintptr_t rip, int64_t *off) {
  struct val {
    int64_t c;
    int sp;
  } st[16];
  int n = 0;
  struct rd r = {p, end, 0};
  while (r.p < r.end) {
    uint8_t op = rd_u8(&r);
    struct val a, b;
    if (op >= 0x30 && op <= 0x4f) { /* lit0..31 */
      if (n == 16) return 0;
      st[n++] = (struct val){op - 0x30, 0};
      continue;
    }
    switch (op) {
    case 0x77: /* breg7 (rsp) */
      if (n == 16) return 0;
      st[n++] = (struct val){rd_sleb(&r), 1};
      continue;
    case 0x80: /* breg16 (rip) */
      if (n == 16) return 0;
      st[n++] = (struct val){(int64_t)rip + rd_sleb(&r), 0};
      continue;
    case 0x08: case 0x0a: case 0x0c: /* const1u, const2u, const4u */
      if (n == 16) return 0;
      st[n++] = (struct val){(int64_t)rd_fixed(&r, op == 0x08 ? 1 : op == 0x0a ? 2 : 4), 0};
      continue;
    case 0x23: /* plus_uconst */
      if (n < 1) return 0;
      st[n - 1].c += (int64_t)rd_uleb(&r);
      continue;
    }
    if (n < 2) return 0;
    b = st[--n];
    a = st[--n];
    if (op == 0x22) { /* plus */
      st[n++] = (struct val){a.c + b.c, a.sp + b.sp};
      continue;
    }
    if (op == 0x1c && !b.sp) { /* minus */
      st[n++] = (struct val){a.c - b.c, a.sp};
      continue;
    }
    if (a.sp || b.sp) return 0;
    int64_t v;
    switch (op) {
    case 0x1a: v = a.c & b.c; break;
    case 0x21: v = a.c | b.c; break;
    case 0x27: v = a.c ^ b.c; break;
    case 0x1e: v = a.c * b.c; break;
    case 0x24: v = (b.c >= 0 && b.c < 64) ? (int64_t)((uint64_t)a.c << b.c) : 0; break;
    case 0x25: v = (b.c >= 0 && b.c < 64) ? (int64_t)((uint64_t)a.c >> b.c) : 0; break;
    case 0x29: v = a.c == b.c; break;
    case 0x2a: v = a.c >= b.c; break;
    case 0x2b: v = a.c > b.c; break;
    case 0x2c: v = a.c <= b.c; break;
    case 0x2d: v = a.c < b.c; break;
    case 0x2e: v = a.c != b.c; break;
    default: return 0;
    }
    st[n++] = (struct val){v, 0};
  }
  if (r.bad || n != 1 || st[0].sp != 1) return 0;
  *off = st[0].c;
  return 1;
}

static int run_cfa(struct cfa_state *s, const struct cfa_state *init, const uint8_t *p,
                   const uint8_t *end, uintptr_t loc, uintptr_t target, uint64_t code_align,
                   int64_t data_align, uintptr_t rip) {
  struct cfa_state stack[8];
  int depth = 0;
  struct rd r = {p, end, 0};
  while (r.p < r.end && !r.bad) {
    uint8_t op = rd_u8(&r);
    uint64_t reg, delta;
    switch (op >> 6) {
    case 1: /* advance_loc */
      delta = (op & 0x3f) * code_align;
      if (loc + delta > target) return 1;
      loc += delta;
      continue;
    case 2: /* offset */
      set_reg(s, op & 0x3f, REG_RULE_OFFSET, (int64_t)rd_uleb(&r) * data_align);
      continue;
    case 3: /* restore */
      reg = op & 0x3f;
      if (reg == DW_REG_RBP) s->bp = init->bp;
      if (reg == DW_REG_RBX) s->bx = init->bx;
      if (reg == DW_REG_RA) s->ra = init->ra;
      continue;
    }
    switch (op) {
    case 0x00: break; /* nop */
    case 0x01: {      /* set_loc */
      uintptr_t nl = (uintptr_t)rd_fixed(&r, 8);
      if (nl > target) return 1;
      loc = nl;
      break;
    }
    case 0x02: case 0x03: case 0x04:
      delta = rd_fixed(&r, op == 0x02 ? 1 : op == 0x03 ? 2 : 4) * code_align;
      if (loc + delta > target) return 1;
      loc += delta;
      break;
    case 0x05: /* offset_extended */
      reg = rd_uleb(&r);
      set_reg(s, reg, REG_RULE_OFFSET, (int64_t)rd_uleb(&r) * data_align);
      break;
    case 0x06: /* restore_extended */
      reg = rd_uleb(&r);
      if (reg == DW_REG_RBP) s->bp = init->bp;
      if (reg == DW_REG_RBX) s->bx = init->bx;
      if (reg == DW_REG_RA) s->ra = init->ra;
      break;
    case 0x07: set_reg(s, rd_uleb(&r), REG_RULE_UNDEF, 0); break;
    case 0x08: set_reg(s, rd_uleb(&r), REG_RULE_SAME, 0); break;
    case 0x09: /* register */
      reg = rd_uleb(&r);
      rd_uleb(&r);
      set_reg(s, reg, REG_RULE_OTHER, 0);
      break;
    case 0x0a: /* remember_state */
      if (depth == 8) return 0;
      stack[depth++] = *s;
      break;
    case 0x0b: /* restore_state */
      if (depth == 0) return 0;
      *s = stack[--depth];
      break;
    case 0x0c: /* def_cfa */
      s->cfa_reg = (int)rd_uleb(&r);
      s->cfa_off = (int64_t)rd_uleb(&r);
      s->cfa_deref_bp = s->cfa_bad = 0;
      break;
    case 0x0d: /* def_cfa_register */
      s->cfa_reg = (int)rd_uleb(&r);
      s->cfa_deref_bp = s->cfa_bad = 0;
      break;
    case 0x0e: /* def_cfa_offset */
      s->cfa_off = (int64_t)rd_uleb(&r);
      break;
    case 0x0f: { /* def_cfa_expression */
      uint64_t len = rd_uleb(&r);
      if (len > (uint64_t)(r.end - r.p)) return 0;
      struct rd e = {r.p, r.p + len, 0};
      r.p += len;
      /* DW_OP_breg6 N; DW_OP_deref */
      s->cfa_reg = -1;
      s->cfa_bad = 1;
      s->cfa_deref_bp = 0;
      if (rd_u8(&e) == 0x76) {
        int64_t n = rd_sleb(&e);
        if (rd_u8(&e) == 0x06 && e.p == e.end && !e.bad) {
          s->cfa_off = n;
          s->cfa_deref_bp = 1;
          s->cfa_bad = 0;
        }
      } else if (cfa_expr_sp(r.p - len, r.p, rip, &s->cfa_off)) {
        s->cfa_reg = DW_REG_RSP;
        s->cfa_bad = 0;
      }
      break;
    }
    case 0x10: { /* expression */
      reg = rd_uleb(&r);
      uint64_t len = rd_uleb(&r);
      if (len > (uint64_t)(r.end - r.p)) return 0;
      struct rd e = {r.p, r.p + len, 0};
      r.p += len;
      uint8_t how = REG_RULE_OTHER;
      int64_t n = 0;
      if (rd_u8(&e) == 0x76) { /* DW_OP_breg6 N: saved at rbp + N */
        n = rd_sleb(&e);
        if (e.p == e.end && !e.bad) how = REG_RULE_EXPR_BPREL;
      }
      set_reg(s, reg, how, n);
      break;
    }
    case 0x11: /* offset_extended_sf */
      reg = rd_uleb(&r);
      set_reg(s, reg, REG_RULE_OFFSET, rd_sleb(&r) * data_align);
      break;
    case 0x12: /* def_cfa_sf */
      s->cfa_reg = (int)rd_uleb(&r);
      s->cfa_off = rd_sleb(&r) * data_align;
      s->cfa_deref_bp = s->cfa_bad = 0;
      break;
    case 0x13: /* def_cfa_offset_sf */
      s->cfa_off = rd_sleb(&r) * data_align;
      break;
    case 0x14: /* val_offset */
      reg = rd_uleb(&r);
      rd_uleb(&r);
      set_reg(s, reg, REG_RULE_OTHER, 0);
      break;
    case 0x15: /* val_offset_sf */
      reg = rd_uleb(&r);
      rd_sleb(&r);
      set_reg(s, reg, REG_RULE_OTHER, 0);
      break;
    case 0x16: { /* val_expression */
      reg = rd_uleb(&r);
      uint64_t len = rd_uleb(&r);
      if (len > (uint64_t)(r.end - r.p)) return 0;
      r.p += len;
      set_reg(s, reg, REG_RULE_OTHER, 0);
      break;
    }
    case 0x2e: rd_uleb(&r); break; /* GNU_args_size */
    case 0x2f: /* GNU_negative_offset_extended */
      reg = rd_uleb(&r);
      set_reg(s, reg, REG_RULE_OFFSET, -(int64_t)rd_uleb(&r) * data_align);
      break;
    default: return 0;
    }
  }
  return !r.bad;
}

/* --------------------------------------------------------- FDE lookup */

/* find_fde binary-searches the module's .eh_frame_hdr table. The table
 * holds (initial location, FDE address) pairs sorted by location, both
 * datarel sdata4 as GNU ld writes them. */
static const uint8_t *find_fde(const struct module *m, uintptr_t pc) {
  const uint8_t *h = m->hdr;
  if (!h || m->hdr_len < 12 || !module_readable(m, (uintptr_t)h, m->hdr_len)) return NULL;
  if (h[0] != 1 || h[3] != 0x3b) return NULL;
  struct rd r = {h + 4, h + m->hdr_len, 0};
  rd_encoded(&r, h[1], (uintptr_t)h); /* eh_frame_ptr */
  uintptr_t count = rd_encoded(&r, h[2], (uintptr_t)h);
  if (r.bad || count == 0) return NULL;
  const int32_t *tab = (const int32_t *)r.p;
  if ((uintptr_t)(r.end - r.p) / 8 < count) return NULL;
  uintptr_t lo = 0, hi = count;
  uintptr_t base = (uintptr_t)h;
  if (pc < base + (intptr_t)tab[0]) return NULL;
  while (hi - lo > 1) {
    uintptr_t mid = lo + (hi - lo) / 2;
    if (pc < base + (intptr_t)tab[2 * mid]) hi = mid;
    else lo = mid;
  }
  return (const uint8_t *)(base + (intptr_t)tab[2 * lo + 1]);
}

/* A CIE or FDE record: its body, bounds-checked against the module. */
static int record_at(const struct module *m, const uint8_t *at, const uint8_t **body,
                     const uint8_t **end) {
  if (!module_readable(m, (uintptr_t)at, 4)) return 0;
  uint32_t len32;
  memcpy(&len32, at, 4);
  if (len32 == 0 || len32 == 0xffffffffu) return 0; /* 64-bit DWARF: not emitted on x86-64 */
  if (!module_readable(m, (uintptr_t)at + 4, len32)) return 0;
  *body = at + 4;
  *end = at + 4 + len32;
  return 1;
}

/* compute_rule derives the unwind rule at the address key (a return
 * address minus one, or an exact pc after a signal frame). */
static rule_t compute_rule(const struct module *m, uintptr_t key, uintptr_t pc) {
  const rule_t stop = rule_pack(K_END, B_SAME, X_SAME, 0, 0, 0, 0);
  const uint8_t *fde = find_fde(m, key);
  if (!fde) return stop;
  const uint8_t *fb, *fe;
  if (!record_at(m, fde, &fb, &fe) || fe - fb < 4) return stop;
  uint32_t cie_delta;
  memcpy(&cie_delta, fb, 4);
  if (cie_delta == 0) return stop; /* a CIE, not an FDE */
  const uint8_t *cie = fb - cie_delta;
  const uint8_t *cb, *ce;
  if (!record_at(m, cie, &cb, &ce)) return stop;

  struct rd c = {cb, ce, 0};
  if (rd_fixed(&c, 4) != 0) return stop;
  uint8_t version = rd_u8(&c);
  const char *aug = (const char *)c.p;
  while (c.p < c.end && *c.p) c.p++;
  rd_u8(&c);
  if (c.bad) return stop;
  if (aug[0] == 'e' && aug[1] == 'h') return stop; /* pre-gcc-3 layout */
  uint64_t code_align = rd_uleb(&c);
  int64_t data_align = rd_sleb(&c);
  uint64_t ra_reg = version == 1 ? rd_u8(&c) : rd_uleb(&c);
  if (ra_reg != DW_REG_RA) return stop;
  uint8_t fde_enc = 0;
  int has_z = aug[0] == 'z';
  if (has_z) {
    uint64_t alen = rd_uleb(&c);
    if (alen > (uint64_t)(c.end - c.p)) return stop;
    const uint8_t *aend = c.p + alen;
    for (const char *a = aug + 1; *a && c.p < aend; a++) {
      if (*a == 'R') fde_enc = rd_u8(&c);
      else if (*a == 'L') rd_u8(&c);
      else if (*a == 'P') {
        uint8_t penc = rd_u8(&c);
        rd_encoded(&c, penc & 0x7f, 0);
      } else if (*a == 'S' || *a == 'B' || *a == 'G')
        continue;
      else
        break;
    }
    c.p = aend;
  }
  if (c.bad) return stop;

  struct rd f = {fb + 4, fe, 0};
  uintptr_t pc_begin = rd_encoded(&f, fde_enc, 0);
  uintptr_t pc_range = rd_encoded(&f, fde_enc & 0x0f, 0);
  if (f.bad || key < pc_begin || key - pc_begin >= pc_range) return stop;
  if (has_z) {
    uint64_t alen = rd_uleb(&f);
    if (alen > (uint64_t)(f.end - f.p)) return stop;
    f.p += alen;
  }
  if (f.bad) return stop;

  struct cfa_state s;
  memset(&s, 0, sizeof s);
  s.cfa_reg = DW_REG_RSP;
  s.ra.how = REG_RULE_SAME;
  if (!run_cfa(&s, &s, c.p, c.end, pc_begin, UINTPTR_MAX, code_align, data_align, pc))
    return stop;
  struct cfa_state init = s;
  if (!run_cfa(&s, &init, f.p, f.end, pc_begin, key, code_align, data_align, pc)) return stop;

  if (s.ra.how != REG_RULE_OFFSET) return stop; /* undefined RA: outermost frame */
  if (s.ra.off < -1024 || s.ra.off > 1016 || (s.ra.off & 7)) return stop;
  if (s.cfa_bad || s.cfa_off < INT32_MIN || s.cfa_off > INT32_MAX) return stop;
  unsigned kind;
  if (s.cfa_deref_bp) kind = K_CFA_BPDEREF;
  else if (s.cfa_reg == DW_REG_RSP) kind = K_CFA_SP;
  else if (s.cfa_reg == DW_REG_RBP) kind = K_CFA_BP;
  else if (s.cfa_reg == DW_REG_RBX) kind = K_CFA_BX;
  else return stop;
  unsigned bkind, xkind;
  int64_t boff = 0, xoff = 0;
  switch (s.bp.how) {
  case REG_RULE_SAME: bkind = B_SAME; break;
  case REG_RULE_OFFSET: bkind = B_CFA; boff = s.bp.off; break;
  case REG_RULE_EXPR_BPREL: bkind = B_BPREL; boff = s.bp.off; break;
  default: bkind = B_LOST; break;
  }
  if (boff < -1024 || boff > 1016 || (boff & 7)) bkind = B_LOST, boff = 0;
  switch (s.bx.how) {
  case REG_RULE_SAME: xkind = X_SAME; break;
  case REG_RULE_OFFSET: xkind = X_CFA; xoff = s.bx.off; break;
  default: xkind = X_LOST; break;
  }
  if (xoff < -1024 || xoff > 1016 || (xoff & 7)) xkind = X_LOST, xoff = 0;
  /* K_FAST needs no bounds check but cfa <= top: the CFA is at least 8
   * above sp, and the saved slots lie between sp and the CFA (a slot
   * below sp, already popped, happens only in epilogues that a signal
   * interrupted, and takes the general path). */
  if (kind == K_CFA_SP && s.ra.off == -8 && s.cfa_off >= 8 &&
      (bkind == B_SAME || (bkind == B_CFA && boff < 0 && s.cfa_off + boff >= 0)) &&
      (xkind == X_SAME || (xkind == X_CFA && xoff < 0 && s.cfa_off + xoff >= 0)))
    return rule_pack(K_FAST, 0, 0, -1, (int)(boff / 8), (int)(xoff / 8), (int32_t)s.cfa_off);
  return rule_pack(kind, bkind, xkind, (int)(s.ra.off / 8), (int)(boff / 8), (int)(xoff / 8),
                   (int32_t)s.cfa_off);
}

/* The sigreturn trampoline: mov $15,%rax; syscall. */
static const uint8_t restore_rt_code[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

/* ---------------------------------------------------- per-thread state */

struct thread_state {
  int busy;            /* nesting depth of iop_backtrace on this thread */
  uintptr_t lo, hi;    /* a verified range of this thread's stack */
};
static UNW_TLS struct thread_state tstate;

static inline uintptr_t thread_pointer(void) {
  uintptr_t tp;
  __asm__("mov %%fs:0, %0" : "=r"(tp));
  return tp;
}

#define THREAD_STACK_MAX ((uintptr_t)1 << 30)

/* stack_top finds the upper bound of the stack holding sp, so that every
 * address in [sp, top) is mapped. nested: do not update the thread cache
 * (a signal may have interrupted an update of it). */
static __attribute__((noinline)) uintptr_t stack_top_of(uintptr_t sp, int nested);

/* stack_top: the thread's cached range first (one compare), then the
 * search. */
static inline uintptr_t stack_top(uintptr_t sp, int nested) {
  struct thread_state *t = &tstate;
  uintptr_t top = sp - t->lo < t->hi - t->lo ? t->hi : stack_top_of(sp, nested);
  /* Room for at least one frame: the walk's unsigned bounds checks rely on it. */
  return top >= 16 && sp <= top - 16 ? top : 0;
}

/* remember_range caches a verified stack range for this thread. hi = 0
 * first: a signal arriving between the stores sees an empty range. */
static void remember_range(struct thread_state *t, uintptr_t lo, uintptr_t hi) {
  t->hi = 0;
  atomic_signal_fence(memory_order_seq_cst);
  t->lo = lo;
  atomic_signal_fence(memory_order_seq_cst);
  t->hi = hi;
}

/* readable_pages counts the readable pages from lo, at most max (<= 64),
 * with one process_vm_readv of one byte per page: the transfer stops at
 * the first page that would fault. (mincore would not do: it cannot tell
 * a PROT_NONE guard page from a stack page.) Async-signal-safe: two
 * system calls, no memory is touched. Returns 0 when the call is refused. */
#define PROBE_PAGES 64
static uintptr_t readable_pages(uintptr_t lo, uintptr_t max) {
  char sink[PROBE_PAGES];
  struct iovec local = {sink, sizeof sink}, remote[PROBE_PAGES];
  if (max > PROBE_PAGES) max = PROBE_PAGES;
  for (uintptr_t i = 0; i < max; i++) {
    remote[i].iov_base = (void *)(lo + i * 4096);
    remote[i].iov_len = 1;
  }
  long pid = syscall(SYS_getpid);
  long n = syscall(SYS_process_vm_readv, pid, &local, 1UL, remote, (unsigned long)max, 0UL);
  if (n >= 0 || (errno != ENOSYS && errno != EPERM)) return n > 0 ? (uintptr_t)n : 0;
  /* Refused (seccomp): fall back to mincore, which sees mappings but not
   * their protection. */
  unsigned char vec[PROBE_PAGES];
  uintptr_t good = 0, bad = max + 1; /* the longest mapped prefix, by bisection */
  while (bad - good > 1) {
    uintptr_t mid = good + (bad - good) / 2;
    if (syscall(SYS_mincore, lo, (size_t)(mid * 4096), vec) == 0) good = mid;
    else bad = mid;
  }
  return good;
}

/* range_readable reports whether every page in [lo, hi) can be read. */
static int range_readable(uintptr_t lo, uintptr_t hi) {
  for (uintptr_t a = lo & ~(uintptr_t)4095; a < hi;) {
    uintptr_t want = (hi - a + 4095) / 4096;
    if (want > PROBE_PAGES) want = PROBE_PAGES;
    uintptr_t got = readable_pages(a, want);
    if (got < want) return 0;
    a += got * 4096;
  }
  return 1;
}

/* readable_window returns the end of the run of readable pages from lo, at
 * most 64 of them, or 0. */
static uintptr_t readable_window(uintptr_t lo) {
  uintptr_t n = readable_pages(lo, 64);
  return n ? lo + n * 4096 : 0;
}

static uintptr_t stack_top_search(uintptr_t sp, int nested);

/* The slow paths make system calls; a signal handler's caller must find
 * errno as it left it. */
static __attribute__((noinline)) uintptr_t stack_top_of(uintptr_t sp, int nested) {
  int saved = errno;
  uintptr_t top = stack_top_search(sp, nested);
  errno = saved;
  return top;
}

static uintptr_t stack_top_search(uintptr_t sp, int nested) {
  struct thread_state *t = &tstate;
  if (sp >= main_stack_lo && sp < main_stack_hi) {
    if (!nested) remember_range(t, main_stack_lo, main_stack_hi);
    return main_stack_hi;
  }
  /* An alternate signal stack? (async-signal-safe system call) */
  stack_t ss;
  if (syscall(SYS_sigaltstack, NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE)) {
    uintptr_t lo = (uintptr_t)ss.ss_sp, hi = lo + ss.ss_size;
    if (sp >= lo && sp < hi) return hi;
  }
  /* A glibc thread: the thread descriptor sits at the top of its stack
   * block, above the static TLS. The pages from sp up to it are checked
   * once (only the part below the range already known for this thread), so
   * that memory that merely lies below the thread pointer, such as a
   * coroutine stack from malloc with a guard page above, is not taken for
   * the thread's stack. */
  uintptr_t tp = thread_pointer(), lo = sp & ~(uintptr_t)4095;
  if (tp > sp && tp - sp < THREAD_STACK_MAX) {
    uintptr_t known = t->hi == tp && t->lo > lo ? t->lo : tp;
    if (range_readable(lo, known)) {
      if (!nested) remember_range(t, lo, tp);
      return tp;
    }
  }
  /* Another kind of stack (makecontext, a user-level thread library):
   * accept the pages above sp, up to 256 KiB, that can be read. Not
   * cached: such stacks may be freed. */
  return readable_window(lo);
}

/* ----------------------------------------------------------- the walk */

static int subs_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  *(unsigned long long *)data = info->dlpi_subs;
  return 1;
}

/* slow_rule computes and caches the rule at key (generation | address).
 * Outside a nested call it first asks the loader whether any object was
 * unloaded since the module table was built (dl_iterate_phdr stops after
 * the first object), so that a stale module is never parsed. */
static rule_t slow_rule(uintptr_t key, uintptr_t pc, int nested) {
  atomic_fetch_add_explicit(&n_misses, 1, memory_order_relaxed);
  uintptr_t addr = key & ~GEN_MASK;
  if (!nested && !loader_off) {
    unsigned long long subs = 0;
    dl_iterate_phdr(subs_cb, &subs);
    /* Gave up waiting for another thread's rescan: retry next time. */
    if (subs != atomic_load(&known_subs) && !refresh_modules(0)) return 0;
  }
  const struct module *m = module_of(addr);
  if (!m && !nested) {
    refresh_modules(0);
    m = module_of(addr);
  }
  if (!m) return 0;
  rule_t rule;
  if (pc == addr + 1 && module_readable(m, pc, sizeof restore_rt_code) &&
      memcmp((const void *)pc, restore_rt_code, sizeof restore_rt_code) == 0)
    rule = rule_pack(K_SIGNAL, B_SAME, X_SAME, 0, 0, 0, 0);
  else
    rule = compute_rule(m, addr, pc);
  cache_insert(key, rule);
  return rule;
}

static __attribute__((noinline)) rule_t lookup_rule(uintptr_t key, uintptr_t pc) {
  int nested = tstate.busy > 1;
  uint32_t i = cache_slot(key);
  for (int p = 0; p < CACHE_PROBES; p++, i = (i + 1) & (CACHE_SIZE - 1)) {
    uintptr_t k = atomic_load_explicit(&cache.keys[i], memory_order_acquire);
    if (UNW_LIKELY(k == key)) return cache.rules[i].rule;
    if (k == 0) break;
  }
  int saved = errno; /* see stack_top_of */
  rule_t rule = slow_rule(key, pc, nested);
  errno = saved;
  return rule;
}

#define UC_OFF(reg) offsetof(ucontext_t, uc_mcontext.gregs[reg])

/* Stack reads: 8-byte aligned and inside [lo, top - 8]. */
#define STACK_OK(at, lo, top) ((at) >= (lo) && (at) <= (top)-8 && !((at)&7))

/* The registers of the frame being unwound. A register whose value could
 * not be recovered is 0: any rule that uses it then fails its bounds check.
 * kbias turns pc into its cache key in one addition: gen - 1 for a return
 * address (look up the call instruction, pc - 1), and gen + KB_EXACT for
 * the exact pc of a frame a signal interrupted; that key matches no slot,
 * which sends the frame to the slow path, where it is looked up at pc
 * itself. */
#define KB_EXACT ((uintptr_t)1 << 47)
#define KB_GEN(kbias) (((kbias) + 1) & GEN_MASK)
#define KB_IS_EXACT(kbias) ((((kbias) + 1) & (((uintptr_t)1 << GEN_SHIFT) - 1)) != 0)
struct walk {
  uintptr_t pc, sp, bp, bx;
  uintptr_t top; /* end of the stack holding sp */
  uintptr_t kbias;
};

/* step_general applies any rule with every check: registers other than
 * rsp as CFA base, signal frames, and saved slots that lie below sp (an
 * exact frame interrupted in its epilogue). Returns 0 to stop. */
static int step_general(struct walk *w, rule_t rule) {
  unsigned kind = R_KIND(rule);
  uintptr_t sp = w->sp, top = w->top, cfa;
  uintptr_t gen = KB_GEN(w->kbias);
  switch (kind) {
  case K_FAST:
  case K_CFA_SP: cfa = sp + R_CFAOFF(rule); break;
  case K_CFA_BP: cfa = w->bp + R_CFAOFF(rule); break;
  case K_CFA_BPDEREF: {
    uintptr_t at = w->bp + R_CFAOFF(rule);
    if (!STACK_OK(at, sp, top)) return 0;
    cfa = *(const uintptr_t *)at;
    break;
  }
  case K_CFA_BX: cfa = w->bx + R_CFAOFF(rule); break;
  case K_SIGNAL: {
    /* The handler returned into __restore_rt with rsp at the ucontext. */
    uintptr_t uc = sp;
    if (uc + sizeof(ucontext_t) > top || uc + sizeof(ucontext_t) < uc || (uc & 7)) return 0;
    w->sp = *(const uintptr_t *)(uc + UC_OFF(REG_RSP));
    w->pc = *(const uintptr_t *)(uc + UC_OFF(REG_RIP));
    w->bp = *(const uintptr_t *)(uc + UC_OFF(REG_RBP));
    w->bx = *(const uintptr_t *)(uc + UC_OFF(REG_RBX));
    w->kbias = gen + KB_EXACT;
    w->top = stack_top(w->sp, 1);
    if (w->top == 0 || w->pc == 0 || w->pc >= KB_EXACT) return 0;
    /* The interrupted sp came from memory: make sure its page is mapped
     * (then so is its stack up to top) before reading there. Signal frames
     * are rare; one system call is cheap next to the signal itself. */
    return readable_pages(w->sp & ~(uintptr_t)4095, 1) == 1;
  }
  default: return 0;
  }
  /* The caller's frame lies above ours, inside this stack. */
  uintptr_t ra_at = cfa + R_RAOFF(rule);
  if (cfa <= sp || cfa > top || !STACK_OK(ra_at, sp, top)) return 0;
  uintptr_t ra = *(const uintptr_t *)ra_at;
  /* A save slot below sp was already popped (a signal interrupted the
   * epilogue after `leave` or `pop`): the register holds the caller's
   * value again. */
  unsigned bkind = R_BKIND(rule);
  if (bkind == B_LOST) w->bp = 0;
  else if (bkind != B_SAME) {
    uintptr_t at = (bkind == B_BPREL ? w->bp : cfa) + R_BOFF(rule);
    if (at >= sp) {
      if (!STACK_OK(at, sp, top)) return 0;
      w->bp = *(const uintptr_t *)at;
    }
  }
  unsigned xkind = R_XKIND(rule);
  if (xkind == X_LOST) w->bx = 0;
  else if (xkind != X_SAME) {
    uintptr_t at = cfa + R_XOFF(rule);
    if (at >= sp) {
      if (!STACK_OK(at, sp, top)) return 0;
      w->bx = *(const uintptr_t *)at;
    }
  }
  w->sp = cfa;
  w->pc = ra;
  w->kbias = gen - 1;
  return ra != 0 && ra < KB_EXACT;
}

/* step_slow handles what the first probe of the hot path did not: a rule
 * in another slot or not cached yet, exact frames, and rules other than
 * K_FAST. */
static __attribute__((noinline)) int step_slow(struct walk *w) {
  uintptr_t gen = KB_GEN(w->kbias);
  uintptr_t addr = KB_IS_EXACT(w->kbias) ? w->pc : w->pc - 1;
  if (w->pc >= KB_EXACT) return 0;
  rule_t rule = lookup_rule(addr | gen, w->pc);
  /* K_FAST rules ignore saved slots below sp; general rules handle them. */
  if (R_KIND(rule) == K_FAST) rule = rule_pack(K_CFA_SP, R_BOFF(rule) != 0 ? B_CFA : B_SAME,
                                               R_XOFF(rule) != 0 ? X_CFA : X_SAME, -1,
                                               (int)(R_BOFF(rule) / 8), (int)(R_XOFF(rule) / 8),
                                               (int32_t)R_CFAOFF(rule));
  return step_general(w, rule);
}

/* step moves w to the caller's frame and returns 0 to stop. The hot path,
 * a K_FAST rule found at the first probe, costs one hash, one key compare,
 * one bounds check and two to four loads. w is a local of the caller that
 * stays in registers: only the cold path copies it to memory. */
static inline __attribute__((always_inline)) int step(struct walk *w) {
  uintptr_t key = w->pc + w->kbias;
  uint32_t i = cache_slot(key);
  if (UNW_UNLIKELY(atomic_load_explicit(&cache.keys[i], memory_order_acquire) != key ||
                   cache.rules[i].f.kinds != K_FAST)) {
    if (atomic_load_explicit(&cache.keys[i], memory_order_relaxed) == key &&
        cache.rules[i].f.kinds == K_END)
      return 0; /* the outermost frame, usually _start or clone3 */
    struct walk copy = *w;
    int ok = step_slow(&copy);
    *w = copy;
    return ok;
  }
  /* K_FAST guarantees sp + 8 <= cfa and that the saved slots lie in
   * [sp, cfa - 8]: cfa <= top keeps every read inside the stack. */
  uintptr_t cfa = w->sp + (intptr_t)cache.rules[i].f.cfaoff;
  if (UNW_UNLIKELY(cfa > w->top)) return 0;
  intptr_t boff = cache.rules[i].f.b8, xoff = cache.rules[i].f.x8;
  if (boff) w->bp = *(const uintptr_t *)(cfa + boff * 8);
  if (xoff) w->bx = *(const uintptr_t *)(cfa + xoff * 8);
  w->pc = *(const uintptr_t *)(cfa - 8);
  w->sp = cfa;
  return w->pc != 0;
}

/* iop_backtrace_from walks from the registers of iop_backtrace's caller:
 * pc (the return address), sp (the caller's rsp after the return) and the
 * callee-saved rbp and rbx. */
UNW_HIDDEN __attribute__((used)) int iop_backtrace_from(uintptr_t *pcs, int max, int skip,
                                                        uintptr_t sp, uintptr_t pc,
                                                        uintptr_t bp, uintptr_t bx) {
  if (UNW_UNLIKELY(!atomic_load_explicit(&initialised, memory_order_acquire))) return 0;
  struct thread_state *t = &tstate;
  int nested = t->busy++;
  uintptr_t *out = pcs, *end = pcs + (max > 0 ? max : 0);
  uintptr_t top = stack_top(sp, nested);
  if (top != 0 && out < end && pc != 0) {
    struct walk w = {pc, sp, bp, bx, top,
                     atomic_load_explicit(&cache_gen, memory_order_relaxed) - 1};
    for (; skip > 0; skip--)
      if (!step(&w)) goto out;
    for (;;) {
      *out++ = w.pc;
      if (out == end || !step(&w)) break;
    }
  }
out:
  t->busy--;
  return (int)(out - pcs);
}

/* probe_rule returns the slot of key in the rule cache, or -1, without
 * computing anything. */
static inline int probe_rule(uintptr_t key) {
  uint32_t i = cache_slot(key);
  for (int p = 0; p < CACHE_PROBES; p++, i = (i + 1) & (CACHE_SIZE - 1)) {
    uintptr_t k = atomic_load_explicit(&cache.keys[i], memory_order_acquire);
    if (k == key) return (int)i;
    if (k == 0) break;
  }
  return -1;
}

/* step_memo is step, also telling whether the step can be replayed
 * (*fast stays 1) and where it read the caller's return address (*at).
 * A K_FAST rule found at a later probe (after a library was unloaded,
 * its first slot is often taken by the previous generation's entry) is
 * applied as step_slow would apply it: the same loads, and the walk stops
 * at a return address of KB_EXACT or more; memo_walk does not keep walks
 * that read such a word, so replays never depend on which probe held the
 * rule. */
static inline __attribute__((always_inline)) int step_memo(struct walk *w, int *fast,
                                                            uintptr_t *at) {
  uintptr_t key = w->pc + w->kbias;
  int i = (int)cache_slot(key), later = 0;
  if (UNW_UNLIKELY(atomic_load_explicit(&cache.keys[i], memory_order_acquire) != key ||
                   cache.rules[i].f.kinds != K_FAST)) {
    if (atomic_load_explicit(&cache.keys[i], memory_order_relaxed) == key &&
        cache.rules[i].f.kinds == K_END)
      return 0; /* as step: decided by the pc alone */
    i = probe_rule(key);
    if (i >= 0 && cache.rules[i].f.kinds == K_END) return 0; /* as step_general */
    if (i < 0 || cache.rules[i].f.kinds != K_FAST ||
        ((w->sp + (intptr_t)cache.rules[i].f.cfaoff) & 7)) {
      *fast = 0;
      struct walk copy = *w;
      int ok = step_slow(&copy);
      *w = copy;
      return ok;
    }
    later = 1;
  }
  uintptr_t cfa = w->sp + (intptr_t)cache.rules[i].f.cfaoff;
  if (UNW_UNLIKELY(cfa > w->top)) {
    *fast = 0; /* decided by the stack's extent, which a replay cannot know */
    return 0;
  }
  intptr_t boff = cache.rules[i].f.b8, xoff = cache.rules[i].f.x8;
  if (boff) w->bp = *(const uintptr_t *)(cfa + boff * 8);
  if (xoff) w->bx = *(const uintptr_t *)(cfa + xoff * 8);
  *at = cfa - 8;
  w->pc = *(const uintptr_t *)(cfa - 8);
  w->sp = cfa;
  if (later) {
    w->kbias = KB_GEN(w->kbias) - 1;
    return w->pc != 0 && w->pc < KB_EXACT;
  }
  return w->pc != 0;
}

/* memo_walk walks as iop_backtrace_from does and memorises the walk in
 * m when it stayed on the fast path (m NULL: no memo). */
static __attribute__((noinline)) int memo_walk(uintptr_t *pcs, int max, struct iop_walk_memos *m,
                                               uintptr_t sp, uintptr_t pc, uintptr_t bp,
                                               uintptr_t bx, uintptr_t top, uintptr_t gen) {
  struct iop_walk_memo *e = NULL;
  if (m) {
    e = &m->e[m->next];
    e->pc0 = 0;
  }
  struct walk w = {pc, sp, bp, bx, top, gen - 1};
  int fast = m != NULL;
  uint32_t nchk = 0;
  uintptr_t *o = pcs, *end = pcs + max;
  for (;;) {
    *o++ = w.pc;
    if (o == end) break;
    uintptr_t at = 0;
    int ok = step_memo(&w, &fast, &at);
    if (fast && at && (at - sp > UINT32_MAX - 8 || w.pc >= KB_EXACT)) fast = 0;
    if (fast && at) {
      e->off[nchk] = (uint32_t)(at - sp);
      e->word[nchk] = w.pc;
      nchk++;
    }
    if (!ok) break;
  }
  if (fast) {
    for (uint32_t i = 0, j = nchk ? nchk - 1 : 0; i < j; i++, j--) {
      uint32_t o = e->off[i];
      uintptr_t v = e->word[i];
      e->off[i] = e->off[j];
      e->word[i] = e->word[j];
      e->off[j] = o;
      e->word[j] = v;
    }
    e->key = gen | (uintptr_t)max;
    e->nchk = nchk;
    e->span = nchk ? e->off[0] + 8 : 0; /* the outermost word */
    e->tag = 0;
    m->pending = (int32_t)m->next;
    m->pending_pc = pc;
    m->next = (m->next + 1) & (IOP_MEMO_WAYS - 1);
  }
  return (int)(o - pcs);
}

/* memo_miss is the walk when no memorised one matched (or none could be
 * tried): iop_backtrace_from's checks, then memo_walk. */
static __attribute__((noinline)) int memo_miss(uintptr_t *pcs, int max, struct iop_walk_memos *m,
                                               uintptr_t sp, uintptr_t pc, uintptr_t bp,
                                               uintptr_t bx) {
  struct thread_state *t = &tstate;
  int nested = t->busy++;
  int n = 0;
  uintptr_t top = stack_top(sp, nested);
  if (top != 0 && max > 0 && pc != 0) {
    uintptr_t gen = atomic_load_explicit(&cache_gen, memory_order_relaxed);
    int usable = !nested && max <= IOP_MEMO_FRAMES;
    if (usable) m->pending = -1;
    n = memo_walk(pcs, max, usable ? m : NULL, sp, pc, bp, bx, top, gen);
  }
  t->busy--;
  return n;
}

/* memo_words_match compares the memorised words with the stack, the
 * innermost (stored last) first, unrolled: four instructions a word. */
static inline __attribute__((always_inline)) int memo_words_match(const struct iop_walk_memo *c,
                                                                  uintptr_t sp) {
#define W(i) (*(const uintptr_t *)(sp + c->off[i]) != c->word[i])
  _Static_assert(IOP_MEMO_FRAMES == 32, "one case per word");
  switch (c->nchk) {
  case 32: if (W(31)) return 0; /* fall through */
  case 31: if (W(30)) return 0; /* fall through */
  case 30: if (W(29)) return 0; /* fall through */
  case 29: if (W(28)) return 0; /* fall through */
  case 28: if (W(27)) return 0; /* fall through */
  case 27: if (W(26)) return 0; /* fall through */
  case 26: if (W(25)) return 0; /* fall through */
  case 25: if (W(24)) return 0; /* fall through */
  case 24: if (W(23)) return 0; /* fall through */
  case 23: if (W(22)) return 0; /* fall through */
  case 22: if (W(21)) return 0; /* fall through */
  case 21: if (W(20)) return 0; /* fall through */
  case 20: if (W(19)) return 0; /* fall through */
  case 19: if (W(18)) return 0; /* fall through */
  case 18: if (W(17)) return 0; /* fall through */
  case 17: if (W(16)) return 0; /* fall through */
  case 16: if (W(15)) return 0; /* fall through */
  case 15: if (W(14)) return 0; /* fall through */
  case 14: if (W(13)) return 0; /* fall through */
  case 13: if (W(12)) return 0; /* fall through */
  case 12: if (W(11)) return 0; /* fall through */
  case 11: if (W(10)) return 0; /* fall through */
  case 10: if (W(9)) return 0; /* fall through */
  case 9: if (W(8)) return 0; /* fall through */
  case 8: if (W(7)) return 0; /* fall through */
  case 7: if (W(6)) return 0; /* fall through */
  case 6: if (W(5)) return 0; /* fall through */
  case 5: if (W(4)) return 0; /* fall through */
  case 4: if (W(3)) return 0; /* fall through */
  case 3: if (W(2)) return 0; /* fall through */
  case 2: if (W(1)) return 0; /* fall through */
  case 1: if (W(0)) return 0; /* fall through */
  case 0: return 1;
  default: return 0;
  }
#undef W
}

/* iop_backtrace_memo_from is iop_backtrace_from with the memo of unwind.h.
 * Why a replay is exact: on the fast path each step's CFA is sp plus an
 * offset fixed by the rule of the frame's pc, the next pc is the word at
 * CFA - 8, and the walk ends on a pc's K_END rule, a zero word or the
 * depth limit. Rules of one generation never change once published, and a
 * rule found at its first probe stays there. So from the same starting pc,
 * the same words at the same offsets from sp give the same steps, provided
 * the stack extends as far as the walk read (span). A walk that left the
 * fast path, or stopped at the stack's end, is not memorised.
 * The replay only reads: it runs without the busy count, and only on the
 * stack range this thread has verified already; anything else goes to
 * memo_miss. */
UNW_HIDDEN __attribute__((used)) int iop_backtrace_memo_from(uintptr_t *pcs, int max,
                                                             struct iop_walk_memos *m,
                                                             uint32_t *tag, uintptr_t sp,
                                                             uintptr_t pc, uintptr_t bp,
                                                             uintptr_t bx) {
  if (UNW_UNLIKELY(!atomic_load_explicit(&initialised, memory_order_acquire))) return 0;
  struct thread_state *t = &tstate;
  uintptr_t lo = t->lo, hi = t->hi;
  if (UNW_LIKELY(!t->busy && sp - lo < hi - lo && hi - sp >= 16 && pc != 0)) {
    uintptr_t key = atomic_load_explicit(&cache_gen, memory_order_relaxed) | (uintptr_t)max;
    uintptr_t room = hi - sp;
    uint32_t j = m->last;
    for (int k = 0; k < IOP_MEMO_WAYS; k++, j = (j + 1) & (IOP_MEMO_WAYS - 1)) {
      const struct iop_walk_memo *c = &m->e[j];
      if (c->pc0 != pc || c->key != key || c->span > room) continue;
      if (memo_words_match(c, sp)) {
        m->last = j;
        *tag = c->tag;
        return -1;
      }
    }
  }
  return memo_miss(pcs, max, m, sp, pc, bp, bx);
}

void iop_walk_memo_tag(struct iop_walk_memos *m, uint32_t tag) {
  if (m->pending >= 0 && tag != 0) {
    struct iop_walk_memo *e = &m->e[m->pending];
    e->tag = tag;
    e->pc0 = m->pending_pc; /* the entry can match from now on */
    m->last = (uint32_t)m->pending;
  }
  m->pending = -1;
}

/* The entry point captures the caller's registers exactly: at entry,
 * (%rsp) is the return address, rsp+8 the caller's stack pointer after the
 * return, and rbp and rbx are still the caller's. It tail-jumps to the C
 * walker, passing the seventh argument on the stack below a fake return
 * address slot, as the ABI expects. */
__asm__(".text\n"
        ".globl iop_backtrace\n"
        ".hidden iop_backtrace\n"
        ".type iop_backtrace,@function\n"
        ".p2align 4\n"
        "iop_backtrace:\n"
        ".cfi_startproc\n"
        "  lea 8(%rsp), %rcx\n"
        "  mov (%rsp), %r8\n"
        "  mov %rbp, %r9\n"
        "  push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  call iop_backtrace_from\n"
        "  add $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size iop_backtrace, .-iop_backtrace\n");

/* The memo's entry: the same registers, the seventh and eighth arguments
 * (rbp, rbx) on the stack, which stays 16-byte aligned at the call. */
__asm__(".text\n"
        ".globl iop_backtrace_memo\n"
        ".hidden iop_backtrace_memo\n"
        ".type iop_backtrace_memo,@function\n"
        ".p2align 4\n"
        "iop_backtrace_memo:\n"
        ".cfi_startproc\n"
        "  lea 8(%rsp), %r8\n"
        "  mov (%rsp), %r9\n"
        "  sub $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  push %rbx\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  push %rbp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  call iop_backtrace_memo_from\n"
        "  add $24, %rsp\n"
        ".cfi_adjust_cfa_offset -24\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size iop_backtrace_memo, .-iop_backtrace_memo\n");

void iop_unwind_init(void) {
  if (atomic_load(&initialised)) return;
  /* The main thread's stack: everything from its sp up to the page that
   * holds __libc_stack_end (the initial sp) is mapped. Downwards it can
   * grow to RLIMIT_STACK, and the kernel places no mapping there. This
   * works from any thread and neither allocates nor opens files (unlike
   * pthread_getattr_np, which reads /proc/self/maps). */
  uintptr_t end = (uintptr_t)__libc_stack_end;
  if (end) {
    struct rlimit rl;
    uintptr_t size = (uintptr_t)8 << 20;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) size = rl.rlim_cur;
    if (size > ((uintptr_t)8 << 30)) size = (uintptr_t)8 << 30;
    main_stack_hi = (end + 4095) & ~(uintptr_t)4095;
    main_stack_lo = main_stack_hi > size ? main_stack_hi - size : 0;
  }
  tstate.busy++;
  refresh_modules(1);
  tstate.busy--;
  atomic_store(&initialised, 1);
}

void iop_unwind_invalidate(void) {
  if (!atomic_load(&initialised) || tstate.busy) return;
  tstate.busy++;
  refresh_modules(1);
  atomic_store(&cache_gen, (atomic_load(&cache_gen) + ((uintptr_t)1 << GEN_SHIFT)) & GEN_MASK);
  tstate.busy--;
}

void iop_unwind_rescan(void) {
  if (!atomic_load(&initialised) || tstate.busy) return;
  tstate.busy++;
  refresh_modules(1);
  tstate.busy--;
}

uint64_t iop_unwind_epoch(void) { return atomic_load_explicit(&unload_epoch, memory_order_acquire); }

int iop_unwind_module_at(uintptr_t pc, uint64_t epoch, const char **name, uintptr_t *bias) {
  int n = atomic_load_explicit(&n_modules, memory_order_acquire);
  for (int i = 0; i < n; i++) {
    const struct module *m = &modules[i];
    if (pc < m->text_lo || pc >= m->text_hi) continue;
    uint64_t dead = atomic_load_explicit(&m->dead_epoch, memory_order_acquire);
    if (dead != 0 && dead <= epoch) continue;
    if (!m->name) return 0;
    *name = m->name;
    *bias = m->bias;
    return dead ? 2 : 1;
  }
  return 0;
}

void iop_unwind_stats(struct iop_unwind_stats *out) {
  out->misses = atomic_load(&n_misses);
  out->cached = atomic_load(&n_cached);
  out->modules = (uint64_t)atomic_load(&n_modules);
}

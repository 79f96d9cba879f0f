/* Prefetching in the running process (IOPRED_PREFETCH=1, off by default).
 *
 * Where the prediction is made: on the thread that reads, right after its
 * read returned, by a detector of a few dozen instructions per open file
 * description. The model in Go sees reads only when the consumer drains a
 * batch, up to 100 ms later, which is too late for the next read of a
 * program that reads every 100 us; so Go does not predict read by read.
 * What is known ahead of time is the read sequence of each file from an
 * earlier run with IOPRED_MODEL, which Go saves at exit (prefetch.go) and
 * the library's constructor installs here (iop_pf_load_tables), as a
 * table the detector follows. Two sources, then:
 *  - stride: the next reads at a constant distance (strided, or
 *    contiguous reads of 128 KiB and more, which Linux's read-ahead leaves
 *    to the request size), or nested (runs of equal length at an inner
 *    stride, the runs' starts at an outer stride: tiles, hyperslabs);
 *  - table: the reads that followed this offset in the earlier run, once
 *    the run is being followed (the previous read's successor came true).
 * When confident, the detector asks the kernel for the next predicted
 * reads with posix_fadvise(WILLNEED), which starts the reads: the data is
 * in the page cache when the program asks for it. The call itself is not
 * cheap here (13 to 16 us per 64 KiB range on this virtual machine's idle
 * disk, 60 to 280 us while other work loads it, where a cold read costs
 * 110 us and more), so the reading thread only queues the ranges, and one
 * background thread of the library (started at the first prefetch,
 * signals blocked) makes the calls; a sleeping thread is woken when 4
 * ranges wait or one is for the next 2 reads (PF_BATCH). When
 * that thread gets no CPU in time (a loaded machine) and a queued range
 * has waited 300 us, the reading thread issues the oldest one itself, at
 * most one per read (help()).
 *
 * How far ahead: 8 predicted reads at first; a covered read that still
 * took longer than a read from the page cache (its prefetch arrived
 * late) doubles the depth, up to 64 (IOPRED_PREFETCH_DEPTH), to 4 ms of
 * the stream's reads and to a 24th of the predictions in a row that came
 * true, which bounds what a stream's end wastes; a miss halves it. A
 * file whose reads come from the page cache (no read slower than that
 * yet) is not prefetched at all: the calls would buy nothing.
 *
 * Forked children prefetch with a thread of their own, their counters in
 * their spill's header (iop_pf_after_fork); a child of _Fork does not.
 *
 * Safety: fadvise is a hint that never changes what a read returns; errno
 * is saved and restored around it; nothing here waits (a description whose
 * state another thread holds is skipped for that read). A file whose
 * predictions miss raises the confidence it needs (2, 4, ... up to 64
 * matching reads), so random reads never pay for a syscall. Bytes
 * prefetched and not yet read are bounded per file and per process.
 *
 * Counters: prefetched = bytes advised; used = bytes of later reads that
 * fell inside an advised range (each advised byte counts once); wasted =
 * advised bytes no read used by the file's close or the process's end;
 * covered = reads whose every byte was advised. prefetched = used +
 * wasted once every file is closed. */
#include "iop.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "prefetch.h"

IOP_HIDDEN int iop_pf_on;
static int pf_depth = 64;
#define PF_START_DEPTH 8
/* The depth a stream starts at, and falls back to when it misses. */
static inline int32_t start_depth(void) { return pf_depth < PF_START_DEPTH ? pf_depth : PF_START_DEPTH; }
static int64_t pf_file_cap = 64LL << 20;
static int64_t pf_proc_cap = 256LL << 20;
static _Atomic int64_t pf_outstanding; /* advised bytes not yet used or written off, all files */
static _Atomic uint64_t pf_count[IOP_PF_NCOUNTERS];
/* Where the counters go: pf_count, or in a forked child the header of its
 * spill, which outlives an _exit (iop_pf_spill_counters). */
static _Atomic uint64_t *pf_counts = pf_count;
/* A forked child counts and prefetches only once its spill has a header. */
static int pf_child;

#define PF_RANGES 80 /* more than the deepest prediction */
#define PF_MAX_NEED 64
#define PF_MIN_SEQ (128 << 10) /* contiguous reads smaller than this are Linux read-ahead's */

struct pf_range { int64_t lo, hi; };

/* A table of reads from an earlier run (installed by Go). */
struct pf_table {
  int64_t n;
  int64_t *off, *size;
  uint32_t mask;   /* of the hash below */
  int32_t *slots;  /* offset hash -> first index + 1 */
};

/* The detector of one open file description. */
struct iop_pf {
  _Atomic int busy;
  int64_t last_off, last_size, stride;
  int32_t conf;  /* reads in a row at the current stride and size */
  /* Per source (PF_STRIDE, PF_NESTED, PF_TABLE): the confidence needed
   * before it prefetches, raised by its misses (back-off), and its
   * predictions that came true since it last fell. */
  int32_t need[3], hits[3];
  uint8_t source; /* of the last prediction */
  /* nested: runs of run_len reads at the inner stride */
  int64_t run_start, run_stride, outer;
  int32_t run_len, prev_len, outer_conf;
  /* the earlier run's table */
  int64_t tpos;  /* index in the table of the last read, -1 when lost */
  int32_t tconf;
  /* what was predicted last: a read there is a hit, elsewhere a miss */
  int64_t expect;
  int32_t last_k; /* predictions made at the last read */
  int32_t depth;  /* predictions asked for ahead: grows while covered reads still wait */
  int64_t last_end, period; /* when the last read returned; the time between reads, smoothed */
  int32_t streak; /* predictions in a row that came true */
  uint8_t predicted, expect_valid;
  uint8_t cold; /* a read here missed the page cache: prefetching can help */
  int64_t fsize;
  /* advised ranges not yet read, oldest first */
  struct pf_range r[PF_RANGES];
  int nr;
  int64_t outstanding;
};

static struct pf_table *_Atomic *pf_tables; /* file id -> table, IOP_PF_FILES entries */
static int pf_table_files; /* tables installed at start */
#define IOP_PF_FILES (1 << 16)

static long env_long(const char *name, long def, long lo, long hi) {
  const char *v = getenv(name);
  if (!v || !*v) return def;
  char *end;
  long x = strtol(v, &end, 10);
  if (*end || x < lo || x > hi) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s=%s is not a whole number from %ld to %ld; using %ld", name, v, lo, hi, def);
    iop_warn(msg);
    return def;
  }
  return x;
}

IOP_HIDDEN void iop_pf_config(void) {
  iop_pf_on = (int)env_long("IOPRED_PREFETCH", 0, 0, 1);
  if (!iop_pf_on) return;
  pf_depth = (int)env_long("IOPRED_PREFETCH_DEPTH", 64, 1, 64);
  pf_file_cap = (int64_t)env_long("IOPRED_PREFETCH_FILE_MB", 64, 1, 1 << 20) << 20;
  pf_proc_cap = (int64_t)env_long("IOPRED_PREFETCH_PROCESS_MB", 256, 1, 1 << 20) << 20;
}

IOP_HIDDEN uint64_t iop_pf_counter(int which) {
  return which >= 0 && which < IOP_PF_NCOUNTERS ? atomic_load(&pf_counts[which]) : 0;
}

static inline void count(int which, uint64_t n) {
  if (n) atomic_fetch_add_explicit(&pf_counts[which], n, memory_order_relaxed);
}

/* ---- the earlier run's tables ---- */

static void *pf_map(size_t n) {
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static inline uint32_t hash_off(int64_t off) {
  uint64_t h = (uint64_t)off * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(h >> 32);
}

/* iop_pf_install gives file id the read sequence off/size[0..n-1] of an
 * earlier run. Called once per file by iop_pf_load_tables, before the
 * program's main; a table, once installed, stays for the process's life. */
IOP_HIDDEN int iop_pf_install(uint32_t file, const int64_t *off, const int64_t *size, int64_t n) {
  if (!iop_pf_on || file == 0 || file >= IOP_PF_FILES || n < 2 || n > (1 << 24)) return 0;
  if (!pf_tables) {
    void *t = pf_map(sizeof(struct pf_table *) * IOP_PF_FILES);
    if (!t) return 0;
    struct pf_table *_Atomic *expected = NULL;
    if (!atomic_compare_exchange_strong((_Atomic(struct pf_table *_Atomic *) *)&pf_tables, &expected, t))
      munmap(t, sizeof(struct pf_table *) * IOP_PF_FILES);
  }
  if (atomic_load(&pf_tables[file])) return 0;
  uint32_t cap = 4;
  while (cap < 2 * (uint64_t)n) cap <<= 1;
  size_t bytes = sizeof(struct pf_table) + 2 * sizeof(int64_t) * (size_t)n + sizeof(int32_t) * cap;
  char *mem = pf_map(bytes);
  if (!mem) return 0;
  struct pf_table *t = (struct pf_table *)mem;
  t->n = n;
  t->off = (int64_t *)(mem + sizeof *t);
  t->size = t->off + n;
  t->slots = (int32_t *)(t->size + n);
  t->mask = cap - 1;
  memcpy(t->off, off, sizeof(int64_t) * (size_t)n);
  memcpy(t->size, size, sizeof(int64_t) * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    for (uint32_t s = hash_off(off[i]) & t->mask;; s = (s + 1) & t->mask) {
      if (t->slots[s] == 0) {
        t->slots[s] = (int32_t)(i + 1);
        break;
      }
      if (t->off[t->slots[s] - 1] == off[i]) break; /* the first occurrence stays */
    }
  }
  atomic_store(&pf_tables[file], t);
  return 1;
}

/* ---- reading the earlier run's tables at start ----
 * IOPRED_MODEL's .reads file, written by prefetch.go (a msgpack map
 * {"files": {path: {"off": [int, ...], "size": [int, ...]}}}), is read
 * here, in the library's first constructor, before the program's main and
 * before the Go runtime's main begins: the tables are in place for the
 * program's first read, and its first open need not wait for the Go
 * runtime's initialisers (files.c), as it did when Go installed them
 * (41 to 53 ms more before the loop than with prefetching off at load 10
 * to 16). No malloc: the file is mapped, the numbers decoded into one
 * mapping, both unmapped at the end. A file that does not parse installs
 * what came before the fault and says so on stderr. */

struct mp {
  const unsigned char *p, *end;
};

/* mp_be reads an n-byte big-endian number. */
static int mp_be(struct mp *m, int n, uint64_t *v) {
  if (m->end - m->p < n) return 0;
  uint64_t x = 0;
  for (int i = 0; i < n; i++) x = x << 8 | m->p[i];
  m->p += n;
  *v = x;
  return 1;
}

/* mp_len reads the header of a map ('m'), an array ('a') or a string
 * ('s') and returns its length; -2 for nil, -1 for anything else. */
static int64_t mp_len(struct mp *m, char kind) {
  if (m->p >= m->end) return -1;
  unsigned c = *m->p++;
  uint64_t v;
  int n = 0;
  if (c == 0xc0) return -2;
  if (kind == 'm' && (c & 0xf0) == 0x80) return c & 0x0f;
  if (kind == 'a' && (c & 0xf0) == 0x90) return c & 0x0f;
  if (kind == 's' && (c & 0xe0) == 0xa0) return c & 0x1f;
  if (kind == 'm') n = c == 0xde ? 2 : c == 0xdf ? 4 : 0;
  if (kind == 'a') n = c == 0xdc ? 2 : c == 0xdd ? 4 : 0;
  if (kind == 's') n = c == 0xd9 ? 1 : c == 0xda ? 2 : c == 0xdb ? 4 : 0;
  return n && mp_be(m, n, &v) ? (int64_t)v : -1;
}

/* mp_int reads an integer in any of msgpack's encodings. */
static int mp_int(struct mp *m, int64_t *out) {
  if (m->p >= m->end) return 0;
  unsigned c = *m->p++;
  uint64_t v;
  if (c <= 0x7f || c >= 0xe0) {
    *out = (int8_t)c;
    if (c <= 0x7f) *out = c;
    return 1;
  }
  static const signed char width[16] = {1, 2, 4, 8, -1, -2, -4, -8}; /* 0xcc..0xd3 */
  if (c < 0xcc || c > 0xd3) return 0;
  int w = width[c - 0xcc];
  if (!mp_be(m, w < 0 ? -w : w, &v)) return 0;
  switch (w) {
  case -1: *out = (int8_t)v; break;
  case -2: *out = (int16_t)v; break;
  case -4: *out = (int32_t)v; break;
  default: *out = (int64_t)v;
  }
  return 1;
}

/* mp_str reads a string into buf (NUL-terminated; empty when it does not
 * fit, a name that is not ours then); 0 if it is not a string. */
static int mp_str(struct mp *m, char *buf, size_t cap) {
  int64_t n = mp_len(m, 's');
  if (n < 0 || m->end - m->p < n) return 0;
  buf[0] = 0;
  if ((uint64_t)n < cap) {
    memcpy(buf, m->p, (size_t)n);
    buf[n] = 0;
  }
  m->p += n;
  return 1;
}

/* mp_skip passes over one value of the kinds a newer writer could add. */
static int mp_skip(struct mp *m, int depth) {
  if (m->p >= m->end || depth > 8) return 0;
  unsigned c = *m->p;
  uint64_t v;
  int64_t i;
  if (c <= 0x7f || c >= 0xe0 || (c >= 0xcc && c <= 0xd3)) return mp_int(m, &i);
  if (c == 0xc0 || c == 0xc2 || c == 0xc3) return m->p++, 1;
  if (c == 0xca || c == 0xcb) return m->p++, mp_be(m, c == 0xca ? 4 : 8, &v);
  if ((c & 0xe0) == 0xa0 || c == 0xd9 || c == 0xda || c == 0xdb || c == 0xc4 || c == 0xc5 || c == 0xc6) {
    if (c >= 0xc4 && c <= 0xc6) {
      m->p++;
      if (!mp_be(m, 1 << (c - 0xc4), &v)) return 0;
    } else {
      int64_t n = mp_len(m, 's');
      if (n < 0) return 0;
      v = (uint64_t)n;
    }
    if ((uint64_t)(m->end - m->p) < v) return 0;
    m->p += v;
    return 1;
  }
  int is_map = (c & 0xf0) == 0x80 || c == 0xde || c == 0xdf;
  int64_t n = mp_len(m, is_map ? 'm' : 'a');
  if (n < 0) return 0;
  for (int64_t k = 0; k < (is_map ? 2 * n : n); k++)
    if (!mp_skip(m, depth + 1)) return 0;
  return 1;
}

/* load_file_reads reads one file's {"off": [...], "size": [...]} into
 * off and size (room for max each) and installs it; 0 when the bytes do
 * not parse. */
static int load_file_reads(struct mp *m, const char *path, int64_t *off, int64_t *size, int64_t max) {
  int64_t fields = mp_len(m, 'm'), n_off = -1, n_size = -1;
  if (fields == -2) return 1; /* a nil entry: no reads */
  if (fields < 0) return 0;
  for (int64_t f = 0; f < fields; f++) {
    char key[16];
    if (!mp_str(m, key, sizeof key)) return 0;
    int64_t *dst = strcmp(key, "off") == 0 ? off : strcmp(key, "size") == 0 ? size : NULL;
    if (!dst) {
      if (!mp_skip(m, 1)) return 0;
      continue;
    }
    int64_t n = mp_len(m, 'a');
    if (n == -2) n = 0;
    if (n < 0) return 0;
    for (int64_t k = 0; k < n; k++) {
      int64_t v;
      if (!mp_int(m, &v)) return 0;
      if (k < max) dst[k] = v;
    }
    *(dst == off ? &n_off : &n_size) = n;
  }
  /* prefetch.go keeps at most 1 << 16 reads a file: more is not its file. */
  if (*path && n_off >= 2 && n_off == n_size && n_off <= max) {
    uint32_t id = iop_file_lookup(path);
    if (id && iop_pf_install(id, off, size, n_off)) pf_table_files++;
  }
  return 1;
}

IOP_HIDDEN void iop_pf_load_tables(void) {
  if (!iop_pf_on) return;
  const char *model = getenv("IOPRED_MODEL");
  char path[4096];
  if (!model || !*model || snprintf(path, sizeof path, "%s.reads", model) >= (int)sizeof path) return;
  int e = errno;
  /* Never through a link planted at the name (as the model, the key and
   * the spill are read): it would feed the detector another file. */
  int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ELOOP) {
    char msg[4200];
    snprintf(msg, sizeof msg, "%s is a symbolic link, not followed; prefetching without the previous run's reads", path);
    iop_warn(msg);
  }
  struct stat st;
  if (fd < 0 || syscall(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > (256 << 20)) {
    if (fd >= 0) syscall(SYS_close, fd);
    errno = e;
    return;
  }
  const int64_t max = 1 << 16;
  void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  syscall(SYS_close, fd);
  int64_t *nums = pf_map(2 * sizeof(int64_t) * (size_t)max);
  int ok = 0;
  long at = 0;
  if (data != MAP_FAILED && nums) {
    struct mp m = {data, (const unsigned char *)data + st.st_size};
    int64_t keys = mp_len(&m, 'm');
    ok = keys >= 0;
    for (int64_t k = 0; ok && k < keys; k++) {
      char key[16];
      ok = mp_str(&m, key, sizeof key);
      if (ok && strcmp(key, "files") != 0) {
        ok = mp_skip(&m, 1);
        continue;
      }
      int64_t files = ok ? mp_len(&m, 'm') : -1;
      if (files == -2) files = 0;
      ok = files >= 0;
      for (int64_t f = 0; ok && f < files; f++) {
        char name[4096];
        ok = mp_str(&m, name, sizeof name) && load_file_reads(&m, name, nums, nums + max, max);
      }
    }
    at = (long)(m.p - (const unsigned char *)data);
  }
  if (!ok) {
    char msg[4200];
    snprintf(msg, sizeof msg, "%s: not a read table (near byte %ld); prefetching without the rest of the previous run's reads", path, at);
    iop_warn(msg);
  }
  if (nums) munmap(nums, 2 * sizeof(int64_t) * (size_t)max);
  if (data != MAP_FAILED) munmap(data, (size_t)st.st_size);
  errno = e;
}

IOP_HIDDEN int iop_pf_table_files(void) { return pf_table_files; }

static int64_t table_find(const struct pf_table *t, int64_t off) {
  for (uint32_t s = hash_off(off) & t->mask;; s = (s + 1) & t->mask) {
    int32_t i = t->slots[s];
    if (i == 0) return -1;
    if (t->off[i - 1] == off) return i - 1;
  }
}

/* ---- accounting of advised ranges ---- */

/* consume counts the bytes of [lo, hi) that fell inside advised ranges as
 * used, and takes them out of the ranges. Returns the bytes used. */
static int64_t consume(struct iop_pf *p, int64_t lo, int64_t hi) {
  int64_t used = 0;
  for (int i = 0; i < p->nr; i++) {
    struct pf_range *r = &p->r[i];
    int64_t a = r->lo > lo ? r->lo : lo, b = r->hi < hi ? r->hi : hi;
    if (a >= b) continue;
    used += b - a;
    if (a == r->lo && b == r->hi) {
      memmove(r, r + 1, sizeof *r * (size_t)(p->nr - i - 1));
      p->nr--;
      i--;
    } else if (a == r->lo) {
      r->lo = b;
    } else if (b == r->hi) {
      r->hi = a;
    } else if (p->nr < PF_RANGES) {
      memmove(r + 2, r + 1, sizeof *r * (size_t)(p->nr - i - 1));
      r[1].lo = b;
      r[1].hi = r->hi;
      r->hi = a;
      p->nr++;
      i++;
    } else {
      /* No slot for the tail: it is written off now. */
      count(IOP_PF_WASTED, (uint64_t)(r->hi - b));
      p->outstanding -= r->hi - b;
      atomic_fetch_sub(&pf_outstanding, r->hi - b);
      r->hi = a;
    }
  }
  p->outstanding -= used;
  atomic_fetch_sub(&pf_outstanding, used);
  return used;
}

static int advised(const struct iop_pf *p, int64_t lo, int64_t hi) {
  for (int i = p->nr - 1; i >= 0; i--)
    if (p->r[i].lo <= lo && hi <= p->r[i].hi) return 1;
  return 0;
}

/* write_off counts every advised range of p as wasted and forgets them. */
static void write_off(struct iop_pf *p) {
  if (p->outstanding > 0) {
    count(IOP_PF_WASTED, (uint64_t)p->outstanding);
    atomic_fetch_sub(&pf_outstanding, p->outstanding);
  }
  p->outstanding = 0;
  p->nr = 0;
}

/* ---- the thread that calls fadvise ---- */

#define PF_QUEUE 1024 /* a power of two */
struct pf_req { int fd; int64_t lo, hi, t; };
static struct pf_req queue[PF_QUEUE];
static uint64_t q_head, q_tail; /* guarded by q_lock */
static _Atomic int q_lock;
static _Atomic uint32_t q_word;   /* bumped when work arrives */
static _Atomic int q_sleeping;
enum { Q_IDLE, Q_STARTING, Q_STARTED, Q_FAILED };
static _Atomic int q_state; /* of the thread; a forked child starts again from Q_IDLE */

static void fadvise_willneed(int fd, int64_t lo, int64_t hi) {
  int e = errno;
  syscall(SYS_fadvise64, fd, (off_t)lo, (off_t)(hi - lo), POSIX_FADV_WILLNEED);
  errno = e;
  count(IOP_PF_CALLS, 1);
}

static void *pf_thread(void *arg) {
  (void)arg;
  iop_in = 1; /* nothing this thread does is the program's */
  /* Named, so that top and /proc show whose thread it is. */
  int e = errno;
  syscall(SYS_prctl, PR_SET_NAME, (unsigned long)"iopred-fadvise", 0, 0, 0);
  errno = e;
  for (;;) {
    uint32_t w = atomic_load(&q_word);
    struct pf_req r;
    int have = 0;
    while (atomic_exchange_explicit(&q_lock, 1, memory_order_acquire)) __builtin_ia32_pause();
    if (q_tail < q_head) {
      r = queue[q_tail & (PF_QUEUE - 1)];
      q_tail++;
      have = 1;
    }
    atomic_store_explicit(&q_lock, 0, memory_order_release);
    if (have) {
      fadvise_willneed(r.fd, r.lo, r.hi);
      continue;
    }
    atomic_store(&q_sleeping, 1);
    if (atomic_load(&q_word) == w) syscall(SYS_futex, &q_word, FUTEX_WAIT_PRIVATE, w, NULL, NULL, 0);
    atomic_store(&q_sleeping, 0);
  }
  return NULL;
}

/* pf_start starts the thread; the first reader to get here does it, the
 * others go on without prefetching meanwhile. */
static void pf_start(void) {
  int idle = Q_IDLE;
  if (!atomic_compare_exchange_strong(&q_state, &idle, Q_STARTING)) return;
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 << 10);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int e = errno;
  atomic_store(&q_state, pthread_create(&t, &attr, pf_thread, NULL) == 0 ? Q_STARTED : Q_FAILED);
  errno = e;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
}

/* enqueue hands a range to the thread and returns how many wait in the
 * queue with it; 0 when the queue is full, or when its lock stays taken
 * (the thread holding it was preempted): the reading thread never waits
 * for a prefetch. */
static int enqueue(int fd, int64_t lo, int64_t hi, int64_t now) {
  for (int spins = 0; atomic_exchange_explicit(&q_lock, 1, memory_order_acquire); spins++) {
    if (spins == 64) return 0;
    __builtin_ia32_pause();
  }
  int n = 0;
  if (q_head - q_tail < PF_QUEUE) {
    queue[q_head & (PF_QUEUE - 1)] = (struct pf_req){fd, lo, hi, now};
    q_head++;
    n = (int)(q_head - q_tail);
  }
  atomic_store_explicit(&q_lock, 0, memory_order_release);
  return n;
}

/* help issues the oldest queued range on the reading thread when it has
 * waited longer than PF_HELP_NS: the background thread did not get a CPU
 * in time (a loaded machine), and a prefetch issued late is worth less
 * than the call costs. At most one call per read; the lock is only
 * tried. */
#define PF_HELP_NS 300000
static void help(int64_t now) {
  if (atomic_load_explicit(&q_lock, memory_order_relaxed)) return;
  if (atomic_exchange_explicit(&q_lock, 1, memory_order_acquire)) return;
  struct pf_req r;
  int have = q_tail < q_head && now - queue[q_tail & (PF_QUEUE - 1)].t > PF_HELP_NS;
  if (have) {
    r = queue[q_tail & (PF_QUEUE - 1)];
    q_tail++;
  }
  atomic_store_explicit(&q_lock, 0, memory_order_release);
  if (have) fadvise_willneed(r.fd, r.lo, r.hi);
}

/* A sleeping thread is woken when PF_BATCH ranges wait, or when a range
 * is for one of the next PF_URGENT reads (a stream's start, a window that
 * grew): a stream that follows its prediction queues one range a read,
 * the farthest, and one wake-up (a futex call here, a context switch
 * there) then serves PF_BATCH reads instead of one. The ranges that wait
 * are still PF_START_DEPTH - PF_BATCH reads ahead or more; the help path
 * issues any left waiting 300 us. */
#define PF_BATCH 4
#define PF_URGENT 2

/* kick wakes the thread if it sleeps. */
static void kick(void) {
  atomic_fetch_add(&q_word, 1);
  if (atomic_load(&q_sleeping)) {
    int e = errno;
    syscall(SYS_futex, &q_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = e;
  }
}

/* ---- prediction ---- */

enum { PF_STRIDE, PF_NESTED, PF_TABLE };

/* miss raises the confidence the last prediction's source needs on this
 * file: it predicted a read that did not come. */
static void miss(struct iop_pf *p) {
  int s = p->source;
  count(IOP_PF_MISSES, 1);
  p->need[s] = p->need[s] * 2 > PF_MAX_NEED ? PF_MAX_NEED : p->need[s] * 2;
  p->hits[s] = 0;
  p->streak = 0;
  p->depth = p->depth / 2 >= start_depth() ? p->depth / 2 : start_depth();
}

static void hit(struct iop_pf *p) {
  int s = p->source;
  if (p->streak < 1 << 20) p->streak++;
  if (++p->hits[s] >= 16 && p->need[s] > 2) {
    p->need[s] /= 2;
    p->hits[s] = 0;
  }
}

static void pf_reset(struct iop_pf *p) {
  memset((char *)p + sizeof p->busy, 0, sizeof *p - sizeof p->busy);
  for (int i = 0; i < 3; i++) p->need[i] = 2;
  p->depth = start_depth();
  p->tpos = -1;
  p->fsize = -1;
}

/* learn updates the stride and nested detectors with the read [off, off+n). */
static void learn(struct iop_pf *p, int64_t off, int64_t n) {
  int64_t delta = off - p->last_off;
  if (p->run_len == 1 && n == p->last_size) {
    /* The second read of a run sets its stride. */
    p->stride = delta;
    p->conf = 1;
    p->run_len = 2;
  } else if (p->run_len >= 2 && delta == p->stride && n == p->last_size) {
    if (p->conf < 1 << 20) p->conf++;
    p->run_len++;
  } else {
    /* The run at the old stride ended: compare it with the one before. */
    int64_t jump = off - p->run_start;
    if (p->run_len >= 2 && p->run_len == p->prev_len && p->run_stride == p->stride && jump == p->outer) {
      if (p->outer_conf < 1 << 20) p->outer_conf++;
    } else {
      p->outer_conf = 0;
      p->outer = jump;
    }
    p->prev_len = p->run_len;
    p->run_stride = p->stride;
    p->run_start = off;
    p->run_len = 1;
    p->conf = 0;
  }
  p->last_off = off;
  p->last_size = n;
}

/* late_ns is how long a read of n bytes from the page cache may take:
 * a covered read that took longer waited for its prefetch to arrive. */
static inline int64_t late_ns(int64_t n) { return 30000 + n / 2; }

/* deeper doubles the predictions asked for ahead, up to pf_depth, to
 * PF_MAX_LEAD_NS of the file's reads, and to a 24th of the
 * predictions in a row that came true: the predictions past a stream's
 * last read are wasted (at most a 24th of what it read, then), and
 * a deeper window pays only while the reads come faster than the disk
 * answers. */
#define PF_MAX_LEAD_NS 4000000
static void deeper(struct iop_pf *p) {
  int64_t most = pf_depth;
  if (p->period > 0 && PF_MAX_LEAD_NS / p->period < most) most = PF_MAX_LEAD_NS / p->period;
  if (p->streak / 24 < most) most = p->streak / 24;
  if (most < start_depth()) most = start_depth();
  int64_t d = (int64_t)p->depth * 2;
  if (d > most) d = most;
  if (d > p->depth) p->depth = (int32_t)d;
}

/* predict writes up to max predicted reads after the current one; returns
 * how many, or 0 when not confident. */
static int predict(struct iop_pf *p, int64_t *offs, int64_t *sizes, int max, const struct pf_table *t) {
  if (t && p->tpos >= 0 && p->tconf >= p->need[PF_TABLE] / 2) {
    p->source = PF_TABLE;
    int k = 0;
    for (int64_t i = p->tpos + 1; i < t->n && k < max; i++, k++) {
      offs[k] = t->off[i];
      sizes[k] = t->size[i];
    }
    if (k) return k; /* at the sequence's end the stride detector may know more */
  }
  int64_t n = p->last_size;
  if (n <= 0) return 0;
  /* Nested: inside a run of the learnt length, the next runs at the
   * outer stride. The run being read has the previous runs' stride once
   * it has two reads; at its first read, the stride is still the jump. */
  int64_t inner = p->run_len >= 2 ? p->stride : p->run_stride;
  if (p->outer_conf >= p->need[PF_NESTED] / 2 && p->prev_len >= 2 && p->run_len <= p->prev_len &&
      inner == p->run_stride && p->outer != 0) {
    p->source = PF_NESTED;
    int64_t L = p->prev_len;
    for (int i = 0; i < max; i++) {
      int64_t idx = p->run_len - 1 + 1 + i;
      offs[i] = p->run_start + (idx / L) * p->outer + (idx % L) * inner;
      sizes[i] = n;
    }
    return max;
  }
  if (p->run_len < 2 || p->conf < p->need[PF_STRIDE] || p->stride == 0) return 0;
  if (p->stride == n && n < PF_MIN_SEQ) return 0; /* Linux read-ahead's case */
  p->source = PF_STRIDE;
  for (int i = 0; i < max; i++) {
    offs[i] = p->last_off + (int64_t)(i + 1) * p->stride;
    sizes[i] = n;
  }
  return max;
}

static int64_t file_size(int fd) {
  struct stat st;
  int e = errno;
  int64_t n = syscall(SYS_fstat, fd, &st) == 0 ? (int64_t)st.st_size : -1;
  errno = e;
  return n;
}

IOP_HIDDEN void iop_pf_read(struct iop_pf **slot, int fd, uint32_t file, int64_t off, int64_t n, int64_t start_ns, int64_t end_ns) {
  int64_t ns = end_ns - start_ns;
  if (n <= 0 || off < 0) return;
  struct iop_pf *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (IOP_UNLIKELY(!p)) {
    /* Two threads' first reads of one description may race here: one
     * detector wins, the other's few bytes stay in the arena. */
    struct iop_pf *fresh = iop_arena_alloc(sizeof *fresh);
    if (!fresh) return;
    pf_reset(fresh);
    p = NULL;
    if (__atomic_compare_exchange_n(slot, &p, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) p = fresh;
  }
  if (IOP_UNLIKELY(pf_child && pf_counts == pf_count)) return; /* no spill header yet */
  /* The fadvise thread is started at the first range to queue, not here:
   * a process whose reads are never predicted (random reads, Python's
   * module loads) never creates it. */
  int started = atomic_load_explicit(&q_state, memory_order_relaxed) == Q_STARTED;
  if (atomic_exchange_explicit(&p->busy, 1, memory_order_acquire)) return;
  count(IOP_PF_READS, 1);
  int64_t used = p->nr ? consume(p, off, off + n) : 0;
  int was_cold = p->cold;
  if (used >= n) {
    count(IOP_PF_COVERED, 1); /* more when advised ranges overlapped */
    /* Covered and still slow: the prefetch came too late, ask further
     * ahead. */
    if (ns > late_ns(n)) deeper(p);
  } else {
    /* A file whose reads come from the page cache gains nothing. */
    if (ns > late_ns(n)) p->cold = 1;
  }
  count(IOP_PF_USED, (uint64_t)used);
  if (p->last_end > 0 && end_ns > p->last_end) p->period += (end_ns - p->last_end - p->period) / 8;
  p->last_end = end_ns;
  int came_true = 0, last_k = p->last_k;
  uint8_t last_source = p->source;
  if (p->expect_valid) {
    if (off == p->expect) {
      hit(p);
      came_true = 1;
    } else if (p->predicted) {
      miss(p);
    }
  }
  /* Follow the earlier run's table when it has this read. */
  const struct pf_table *t = NULL;
  if (pf_tables && file < IOP_PF_FILES) t = atomic_load_explicit(&pf_tables[file], memory_order_acquire);
  if (t) {
    if (p->tpos >= 0 && p->tpos + 1 < t->n && t->off[p->tpos + 1] == off) {
      p->tpos++;
      if (p->tconf < 1 << 20) p->tconf++;
    } else {
      p->tpos = table_find(t, off);
      p->tconf = 0;
    }
  }
  learn(p, off, n);

  int64_t offs[64], sizes[64];
  int k = predict(p, offs, sizes, p->depth, p->tpos >= 0 ? t : NULL);
  p->expect_valid = k > 0;
  p->predicted = 0;
  p->last_k = k;
  if (k > 0) p->expect = offs[0];
  /* In a stream that follows its prediction, all but the farthest of the
   * new predictions were the last read's, and were looked at then. */
  int first = 0;
  if (came_true && k == last_k && p->source == last_source && k > 1 && was_cold) {
    first = k - 1;
    p->predicted = p->nr > 0;
  }
  /* The new ranges go to the queue. */
  int nout = 0, wake = 0;
  for (int i = first; i < k; i++) {
    int64_t lo = offs[i], hi = offs[i] + sizes[i];
    if (lo < 0 || sizes[i] <= 0) continue;
    if (p->fsize < 0 || hi > p->fsize) p->fsize = file_size(fd);
    if (hi > p->fsize) hi = p->fsize;
    if (lo >= hi) continue;
    p->predicted = 1;
    if (!p->cold) break;
    if (advised(p, lo, hi)) continue;
    if (IOP_UNLIKELY(!started)) {
      pf_start();
      started = atomic_load(&q_state) == Q_STARTED;
      if (!started) break; /* another reader starts it, or it failed */
    }
    if (p->nr >= PF_RANGES || p->outstanding + (hi - lo) > pf_file_cap) break;
    if (atomic_fetch_add(&pf_outstanding, hi - lo) + (hi - lo) > pf_proc_cap) {
      atomic_fetch_sub(&pf_outstanding, hi - lo);
      count(IOP_PF_CAPPED, 1);
      break;
    }
    int queued = enqueue(fd, lo, hi, end_ns);
    if (!queued) {
      atomic_fetch_sub(&pf_outstanding, hi - lo);
      count(IOP_PF_CAPPED, 1);
      break;
    }
    p->r[p->nr].lo = lo;
    p->r[p->nr].hi = hi;
    p->nr++;
    p->outstanding += hi - lo;
    count(IOP_PF_PREFETCHED, (uint64_t)(hi - lo));
    nout++;
    if (queued >= PF_BATCH || i < PF_URGENT) wake = 1;
  }
  int cold = p->cold;
  atomic_store_explicit(&p->busy, 0, memory_order_release);
  if (wake) kick();
  if (k > 0 && cold && started) help(end_ns);
}

/* iop_pf_close writes off what the description's reads never used, and
 * leaves the detector fresh for the next file the slot serves. */
IOP_HIDDEN void iop_pf_close(struct iop_pf *p) {
  if (!p) return;
  /* Another thread may be reading through the description as it goes:
   * its few instructions are waited for, a preempted one is not. */
  for (int spins = 0; atomic_exchange_explicit(&p->busy, 1, memory_order_acquire); spins++) {
    if (spins == 4096) return;
    __builtin_ia32_pause();
  }
  write_off(p);
  pf_reset(p);
  atomic_store_explicit(&p->busy, 0, memory_order_release);
}

/* iop_pf_finish writes off every file's unused ranges: the process ends. */
IOP_HIDDEN void iop_pf_finish(struct iop_pf *p) {
  if (!p) return;
  if (atomic_exchange_explicit(&p->busy, 1, memory_order_acquire)) return;
  write_off(p);
  atomic_store_explicit(&p->busy, 0, memory_order_release);
}

/* iop_pf_forget leaves a detector fresh without counting its ranges: in a
 * forked child they are the parent's, which counts them. */
IOP_HIDDEN void iop_pf_forget(struct iop_pf *p) {
  if (!p) return;
  pf_reset(p);
  atomic_store(&p->busy, 0);
}

/* iop_pf_after_fork runs first in a forked child, which has one thread:
 * the fadvise thread is gone and any lock another thread held (the
 * queue's, a detector's) stays taken for ever. The queue, the thread's
 * state and the counters start afresh (the parent counts what it queued
 * and advised); the detectors are made fresh by the file table
 * (iop_pf_forget). safe is 0 after _Fork, whose child may make only
 * async-signal-safe calls (glibc's locks were not reset: pthread_create
 * could deadlock), and then the child does not prefetch. Otherwise the
 * child starts a thread of its own at its first prediction, once its
 * spill has a header for the counters: glibc's fork has reset the locks
 * pthread_create takes (the allocator's, the stacks', the loader's TLS
 * lock) before the fork handlers run. */
IOP_HIDDEN void iop_pf_after_fork(int safe) {
  if (!iop_pf_on) return;
  atomic_store(&q_lock, 0);
  q_head = q_tail = 0;
  atomic_store(&q_word, 0);
  atomic_store(&q_sleeping, 0);
  atomic_store(&q_state, Q_IDLE);
  atomic_store(&pf_outstanding, 0);
  pf_counts = pf_count;
  for (int i = 0; i < IOP_PF_NCOUNTERS; i++) atomic_store(&pf_count[i], 0);
  pf_child = 1;
  if (!safe) iop_pf_on = 0;
}

/* iop_pf_spill_counters moves a forked child's counters into its spill's
 * header (spill.c calls it when the header is mapped): they are in the
 * file the moment they change, so a child that ends with _exit or a
 * signal keeps them. on is set to say the child prefetches. */
IOP_HIDDEN void iop_pf_spill_counters(_Atomic uint32_t *on, _Atomic uint64_t *counters) {
  if (!iop_pf_on || !pf_child) return;
  for (int i = 0; i < IOP_PF_NCOUNTERS; i++) atomic_store(&counters[i], atomic_load(&pf_count[i]));
  atomic_store(on, 1);
  pf_counts = counters;
}

/* The spill: the record path of a child that forked without exec.
 *
 * The Go runtime's threads do not survive fork, so a forked child cannot
 * hand its records to Go. It appends them instead to a file of its own in
 * the trace directory, `<exe>.<host>.<pid>[.<n>].iopspill`, through
 * MAP_SHARED chunks: a record is in the kernel's page cache the moment
 * its call returns, so neither _exit (how Python's pool workers end) nor
 * SIGKILL loses it, and no system call runs per record. The Go process
 * the child descends from converts the spill into an ordinary trace once
 * the child has ended (preload/children.go); a spill nobody converted is
 * read as a trace by every iopred command (tracefmt/spill, which owns the
 * format and documents it in its package comment).
 *
 * Layout: an 8 KiB header (identity, fork time, end state, the op-name
 * table), then 64 KiB chunks of 128-byte slots. Each thread writes its own
 * stream of chunks; a record takes whole slots and is published by
 * storing its sequence number last. A chunk gets its storage by written
 * zeros before it is mapped: a full file system then fails the write, and
 * the records that cannot be kept are counted as dropped, never a SIGBUS.
 *
 * Everything here runs inside the reentrancy guard. */
#include "iop.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <stddef.h>
#include <unistd.h>

#include "prefetch.h"

#define SPILL_HDR 8192
#define SPILL_OPS_AT 2048
#define SPILL_CHUNK 65536
#define SPILL_SLOT 128
#define SPILL_SLOTS (SPILL_CHUNK / SPILL_SLOT)
#define SPILL_STREAMS 256
#define SPILL_FILES (1 << 16)
#define SPILL_CTXS (1 << 14)
#define SPILL_RETRY_NS 100000000LL /* a chunk that got no storage is asked for again after 100 ms */

enum { REC_EVENT = 1, REC_FILE = 2, REC_CTX = 3, REC_NEXT = 4 };
enum { CHUNK_MAGIC = 0x4b4e4843 /* "CHNK" */ };

struct spill_hdr {
  char magic[8]; /* "IOPSPILL" */
  uint32_t version, chunk_size;
  int32_t pid, ppid, root, ctx_depth;
  int64_t t0_mono, t0_unix;
  _Atomic int64_t end_mono;
  _Atomic uint32_t state; /* 0 running, 1 exited through exit(), 2 exec'd */
  uint32_t hdr_size;
  _Atomic uint64_t dropped;
  char host[64];
  char prog[1024];
  _Atomic uint32_t prefetch; /* 1: the child prefetched, pf holds its counters */
  uint32_t pad;
  _Atomic uint64_t pf[IOP_PF_NCOUNTERS]; /* in prefetch.h's order */
};
_Static_assert(offsetof(struct spill_hdr, prefetch) == 1160 && offsetof(struct spill_hdr, pf) == 1168 &&
                   sizeof(struct spill_hdr) <= SPILL_OPS_AT,
               "the spill header's layout is tracefmt/spill's");

struct spill_rec {
  _Atomic uint64_t seq; /* from 1 in each stream; stored last */
  uint16_t type, slots;
  uint32_t len;
};

struct spill_chunk_hdr {
  _Atomic uint32_t magic; /* stored last */
  int32_t tid;
  uint32_t stream, index;
  uint64_t first_seq;
};

struct spill_stream {
  char *chunk;
  uint32_t slot, index, id;
  uint64_t seq;
  _Atomic int free; /* its thread ended: another thread may take it over */
};

typedef atomic_int spin_t;
static void spin_lock(spin_t *l) {
  while (atomic_exchange_explicit(l, 1, memory_order_acquire))
    while (atomic_load_explicit(l, memory_order_relaxed)) __builtin_ia32_pause();
}
static void spin_unlock(spin_t *l) { atomic_store_explicit(l, 0, memory_order_release); }

/* The spill of this process; all of it is reset in a child after fork. */
static struct {
  spin_t lock;
  int active;   /* this process records into a spill */
  int failed;   /* the file could not be created: every record is dropped */
  int fd;
  struct spill_hdr *hdr;
  uint64_t chunks; /* chunks allocated in the file */
  int64_t retry_at;
  uint32_t nstreams;
  struct spill_stream streams[SPILL_STREAMS];
  int root;
  int pid; /* the spilling process: a vfork child shares this memory */
  int64_t fork_mono, fork_unix;
} sp = {.fd = -1};

static uint32_t generation; /* bumped in every child: stale per-thread pointers are seen */
static IOP_TLS struct spill_stream *my_stream;
static IOP_TLS uint32_t my_generation;
static IOP_TLS struct iop_event scratch;
static _Atomic uint8_t file_defined[SPILL_FILES / 8];
static _Atomic uint8_t ctx_defined[SPILL_CTXS / 8];
static _Alignas(4096) const char zeros[SPILL_CHUNK];
/* Tells a spilling process's streams when their threads end, so that a
 * child that runs many short threads reuses streams instead of running
 * out of them. Created at start, in the parent, and inherited. */
static pthread_key_t stream_key;
static int stream_key_ok;

static void stream_thread_exit(void *p) {
  struct spill_stream *s = p;
  /* A record this thread makes later (another destructor's I/O) takes a
   * stream anew rather than share this one with its next owner. */
  my_stream = NULL;
  if (s) atomic_store_explicit(&s->free, 1, memory_order_release);
}

IOP_HIDDEN void iop_spill_init(void) { stream_key_ok = pthread_key_create(&stream_key, stream_thread_exit) == 0; }

IOP_HIDDEN int iop_ctx_pcs_nowait(uint32_t ctx, uintptr_t *pcs, int max);

IOP_HIDDEN int iop_spill_active(void) { return sp.active; }

/* iop_spill_after_fork starts the child's spill state: the file is made at
 * the first record, so a child that execs at once (posix_spawn's fallback,
 * a shell) costs nothing. root is the pid of the Go process the child
 * descends from, which converts the spill. */
IOP_HIDDEN void iop_spill_after_fork(int root) {
  sp.lock = 0;
  sp.active = 1;
  sp.failed = 0;
  /* The parent's spill (a grandchild's parent) is not ours: its chunks stay
   * mapped but are never written again. */
  if (sp.fd >= 0) syscall(SYS_close, sp.fd);
  sp.fd = -1;
  sp.hdr = NULL;
  sp.chunks = 0;
  sp.retry_at = 0;
  sp.nstreams = 0;
  sp.root = root;
  sp.pid = (int)syscall(SYS_getpid);
  sp.fork_mono = iop_now();
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  sp.fork_unix = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  generation++;
  my_stream = NULL;
  if (stream_key_ok) pthread_setspecific(stream_key, NULL);
  memset((void *)file_defined, 0, sizeof file_defined);
  memset((void *)ctx_defined, 0, sizeof ctx_defined);
}

static int write_all(int fd, const void *p, size_t n, uint64_t off) {
  while (n > 0) {
    long r = syscall(SYS_pwrite64, fd, p, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    p = (const char *)p + r;
    n -= (size_t)r;
    off += (uint64_t)r;
  }
  return 1;
}

/* spill_create makes the file and maps its header. Called under sp.lock. */
static int spill_create(void) {
  char exe[1024];
  long n = syscall(SYS_readlink, "/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  const char *base = strrchr(exe, '/');
  base = base ? base + 1 : exe;
  if (!*base) base = "unknown";
  struct utsname u;
  if (syscall(SYS_uname, &u) != 0) strcpy(u.nodename, "unknown");
  char *dot = strchr(u.nodename, '.');
  if (dot) *dot = 0;
  int pid = sp.pid;
  char path[sizeof iop_cfg.dir + 1024 + 128];
  int fd = -1;
  for (int i = 0; i < 100 && fd < 0; i++) {
    if (i == 0)
      snprintf(path, sizeof path, "%s/%s.%s.%d.iopspill", iop_cfg.dir, base, u.nodename, pid);
    else
      snprintf(path, sizeof path, "%s/%s.%s.%d.%d.iopspill", iop_cfg.dir, base, u.nodename, pid, i);
    fd = iop_open_private(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, iop_cfg.file_mode);
    if (fd == -ENOENT) {
      syscall(SYS_mkdir, iop_cfg.dir, iop_cfg.dir_mode);
      fd = iop_open_private(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, iop_cfg.file_mode);
    }
    if (fd < 0 && fd != -EEXIST) return 0;
  }
  if (fd < 0) return 0;
  static char page[SPILL_HDR];
  memset(page, 0, sizeof page);
  struct spill_hdr *h = (struct spill_hdr *)page;
  memcpy(h->magic, "IOPSPILL", 8);
  h->version = 1;
  h->chunk_size = SPILL_CHUNK;
  h->hdr_size = SPILL_HDR;
  h->pid = pid;
  h->ppid = (int32_t)syscall(SYS_getppid);
  h->root = sp.root;
  h->ctx_depth = iop_cfg.ctx_depth;
  h->t0_mono = sp.fork_mono;
  h->t0_unix = sp.fork_unix;
  snprintf(h->host, sizeof h->host, "%s", u.nodename);
  snprintf(h->prog, sizeof h->prog, "%s", exe);
  /* The op names, NUL-separated in op-code order: the reader needs no
   * copy of this library's op table. */
  char *o = page + SPILL_OPS_AT, *end = page + SPILL_HDR - 1;
  for (int op = 0; op < IOP_OP_MAX; op++) {
    const char *name = iop_op_name(op);
    if (!*name && op) name = "?"; /* an empty name would end the list */
    size_t len = strlen(name);
    if (o + len + 1 > end) break;
    memcpy(o, name, len + 1);
    o += len + 1;
  }
  void *m = MAP_FAILED;
  if (write_all(fd, page, sizeof page, 0))
    m = mmap(NULL, SPILL_HDR, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    syscall(SYS_close, fd);
    syscall(SYS_unlink, path);
    return 0;
  }
  sp.fd = fd;
  sp.hdr = m;
  iop_pf_spill_counters(&sp.hdr->prefetch, sp.hdr->pf);
  return 1;
}

/* new_chunk gives stream s a fresh chunk, or leaves it without one when
 * the file system refuses storage. Called under sp.lock. */
static void new_chunk(struct spill_stream *s, int tid) {
  s->chunk = NULL;
  int64_t now = iop_now();
  if (sp.retry_at && now < sp.retry_at) return;
  uint64_t off = SPILL_HDR + sp.chunks * SPILL_CHUNK;
  void *m = MAP_FAILED;
  if (write_all(sp.fd, zeros, SPILL_CHUNK, off))
    m = mmap(NULL, SPILL_CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, sp.fd, (off_t)off);
  if (m == MAP_FAILED) {
    /* Give back what the failed write may have added: the next try must
     * not find a half chunk in its place. */
    syscall(SYS_ftruncate, sp.fd, (off_t)off);
    sp.retry_at = now + SPILL_RETRY_NS;
    return;
  }
  sp.retry_at = 0;
  sp.chunks++;
  struct spill_chunk_hdr *c = m;
  c->tid = tid;
  c->stream = s->id;
  c->index = s->index++;
  c->first_seq = s->seq + 1;
  atomic_store_explicit(&c->magic, CHUNK_MAGIC, memory_order_release);
  s->chunk = m;
  s->slot = 1;
}

/* stream returns the calling thread's stream, or NULL. */
static struct spill_stream *stream(void) {
  if (IOP_LIKELY(my_stream && my_generation == generation)) return my_stream;
  struct spill_stream *s = NULL;
  spin_lock(&sp.lock);
  if (!sp.failed && !sp.hdr && !spill_create()) sp.failed = 1;
  /* The stream of a thread that ended goes on with this one: events carry
   * their thread's id, so the reader needs no stream per thread. */
  for (uint32_t i = 0; !sp.failed && i < sp.nstreams && !s; i++) {
    int one = 1;
    if (atomic_compare_exchange_strong(&sp.streams[i].free, &one, 0)) s = &sp.streams[i];
  }
  if (!s && !sp.failed && sp.nstreams < SPILL_STREAMS) {
    s = &sp.streams[sp.nstreams];
    memset(s, 0, sizeof *s);
    s->id = sp.nstreams++;
  }
  spin_unlock(&sp.lock);
  my_stream = s;
  my_generation = generation;
  if (s && stream_key_ok) pthread_setspecific(stream_key, s);
  return s;
}

static void drop(void) {
  if (sp.hdr) atomic_fetch_add(&sp.hdr->dropped, 1);
}

/* append copies one record of len data bytes into the thread's stream. */
static int append(int type, const void *a, uint32_t alen, const void *b, uint32_t blen) {
  struct spill_stream *s = stream();
  if (!s) return 0;
  uint32_t len = alen + blen;
  uint32_t slots = (uint32_t)((sizeof(struct spill_rec) + len + SPILL_SLOT - 1) / SPILL_SLOT);
  if (slots > SPILL_SLOTS - 1) return 0;
  if (!s->chunk || s->slot + slots > SPILL_SLOTS) {
    spin_lock(&sp.lock);
    if (s->chunk && s->slot < SPILL_SLOTS) {
      /* The rest of this chunk stays empty: say so, for the reader. */
      struct spill_rec *r = (struct spill_rec *)(s->chunk + (size_t)s->slot * SPILL_SLOT);
      r->type = REC_NEXT;
      r->slots = (uint16_t)(SPILL_SLOTS - s->slot);
      r->len = 0;
      atomic_store_explicit(&r->seq, ++s->seq, memory_order_release);
    }
    new_chunk(s, iop_gettid());
    spin_unlock(&sp.lock);
    if (!s->chunk) return 0;
  }
  struct spill_rec *r = (struct spill_rec *)(s->chunk + (size_t)s->slot * SPILL_SLOT);
  r->type = (uint16_t)type;
  r->slots = (uint16_t)slots;
  r->len = len;
  memcpy((char *)(r + 1), a, alen);
  if (blen) memcpy((char *)(r + 1) + alen, b, blen);
  atomic_store_explicit(&r->seq, ++s->seq, memory_order_release);
  s->slot += slots;
  return 1;
}

static int first_use(_Atomic uint8_t *bits, uint32_t i) {
  uint8_t bit = (uint8_t)(1u << (i & 7));
  /* A plain load first: the locked read-modify-write only at first use. */
  if (IOP_LIKELY(atomic_load_explicit(&bits[i >> 3], memory_order_relaxed) & bit)) return 0;
  return !(atomic_fetch_or_explicit(&bits[i >> 3], bit, memory_order_relaxed) & bit);
}

/* iop_spill_scratch is where a thread of a spilling process fills its
 * next event; iop_spill_commit appends it. */
IOP_HIDDEN struct iop_event *iop_spill_scratch(void) { return &scratch; }

IOP_HIDDEN void iop_spill_commit(void) {
  struct iop_event *e = &scratch;
  e->tid = iop_gettid();
  /* A file or context is defined in the spill at its first use there; the
   * reader takes definitions from anywhere in the file. */
  if (e->file && e->file < SPILL_FILES && first_use(file_defined, e->file)) {
    const char *path = iop_file_path(e->file);
    uint32_t id = e->file;
    if (path) append(REC_FILE, &id, sizeof id, path, (uint32_t)strnlen(path, 8192));
  }
  if (e->ctx && e->ctx < SPILL_CTXS && first_use(ctx_defined, e->ctx)) {
    uintptr_t pcs[64];
    uint32_t head[2] = {e->ctx, 0};
    int n = iop_ctx_pcs_nowait(e->ctx, pcs, 64);
    head[1] = n > 0 ? (uint32_t)n : 0;
    append(REC_CTX, head, sizeof head, pcs, head[1] * (uint32_t)sizeof pcs[0]);
  }
  if (!append(REC_EVENT, e, sizeof *e, NULL, 0)) drop();
}

/* iop_spill_end marks how the process left: 1 exit, 2 exec; 0 takes an
 * end back (the exec failed). */
IOP_HIDDEN void iop_spill_end(int state) {
  if (!sp.active || !sp.hdr || (int)syscall(SYS_getpid) != sp.pid) return;
  atomic_store(&sp.hdr->end_mono, state ? iop_now() : 0);
  atomic_store(&sp.hdr->state, (uint32_t)state);
}

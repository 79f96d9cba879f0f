/* What iopred knows of open files: the descriptor table (which file and
 * which offset each descriptor stands for, shared between duplicates as
 * the kernel shares an open file description), the file ids with their
 * paths, and stream positions for stdio.
 *
 * Everything here runs inside the reentrancy guard, so a short spin lock
 * can never be taken twice by one thread, even from a signal handler. */
#include "iop.h"
#include "prefetch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <limits.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>

/* ---- a spin lock and a bump arena that never calls malloc ---- */

typedef atomic_int iop_spin;
static inline void spin_lock(iop_spin *l) {
  while (atomic_exchange_explicit(l, 1, memory_order_acquire))
    while (atomic_load_explicit(l, memory_order_relaxed)) __builtin_ia32_pause();
}
static inline void spin_unlock(iop_spin *l) { atomic_store_explicit(l, 0, memory_order_release); }

#define IOP_ARENA_CHUNK (1 << 20)
static iop_spin arena_lock;
static char *arena_cur, *arena_end;

/* iop_arena_alloc returns zeroed memory that lives as long as the process. */
IOP_HIDDEN void *iop_arena_alloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n > IOP_ARENA_CHUNK) return NULL;
  spin_lock(&arena_lock);
  if (!arena_cur || (size_t)(arena_end - arena_cur) < n) {
    void *p = mmap(NULL, IOP_ARENA_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      spin_unlock(&arena_lock);
      return NULL;
    }
    arena_cur = p;
    arena_end = arena_cur + IOP_ARENA_CHUNK;
  }
  void *r = arena_cur;
  arena_cur += n;
  spin_unlock(&arena_lock);
  return r;
}

/* ---- file ids: one per distinct path ---- */

#define IOP_FILES_CAP (1 << 16)
static iop_spin files_lock;
static uint32_t files_next = 1;
static const char *file_paths[IOP_FILES_CAP];       /* id -> path */
static _Atomic int32_t file_fd[IOP_FILES_CAP];       /* id -> descriptor + 1 last used for it */
static uint32_t file_index[2 * IOP_FILES_CAP];      /* open addressing: path hash -> id */

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static uint32_t file_id(const char *path);

/* iop_file_lookup returns the id of a path, assigning one if needed. */
IOP_HIDDEN uint32_t iop_file_lookup(const char *path) { return file_id(path); }

static uint32_t file_id(const char *path) {
  uint64_t h = hash_str(path);
  size_t mask = 2 * IOP_FILES_CAP - 1;
  spin_lock(&files_lock);
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    uint32_t id = file_index[i];
    if (id == 0) {
      if (files_next >= IOP_FILES_CAP) break;
      size_t len = strlen(path) + 1;
      char *copy = iop_arena_alloc(len);
      if (!copy) break;
      memcpy(copy, path, len);
      id = files_next++;
      file_paths[id] = copy;
      file_index[i] = id;
      spin_unlock(&files_lock);
      return id;
    }
    if (strcmp(file_paths[id], path) == 0) {
      spin_unlock(&files_lock);
      return id;
    }
  }
  spin_unlock(&files_lock);
  return 0;
}

/* iop_file_fd returns a descriptor the program has open on file id, the
 * one it used last, or -1. */
IOP_HIDDEN int iop_file_fd(uint32_t id) {
  if (id == 0 || id >= IOP_FILES_CAP) return -1;
  return atomic_load_explicit(&file_fd[id], memory_order_relaxed) - 1;
}

static inline void note_fd(uint32_t id, int fd) {
  if (id && id < IOP_FILES_CAP) atomic_store_explicit(&file_fd[id], fd + 1, memory_order_relaxed);
}

IOP_HIDDEN const char *iop_file_path(uint32_t id) {
  if (id == 0 || id >= IOP_FILES_CAP) return NULL;
  spin_lock(&files_lock);
  const char *p = file_paths[id];
  spin_unlock(&files_lock);
  return p;
}

/* The absolute form of a path named relative to dirfd; for trace file
 * ids only, so a path that cannot be resolved keeps its given form. */
static void abs_path(int dirfd, const char *path, char *out, size_t cap) {
  out[0] = 0;
  if (!path) return;
  if (path[0] == '/' || cap < 2) {
    strncpy(out, path, cap - 1);
    out[cap - 1] = 0;
    return;
  }
  long n;
  if (dirfd == AT_FDCWD) {
    n = syscall(SYS_getcwd, out, cap);
    n = n > 0 ? (long)strlen(out) : -1;
  } else {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    n = syscall(SYS_readlink, link, out, cap - 1);
    if (n >= 0) out[n] = 0;
  }
  if (n <= 0) {
    strncpy(out, path, cap - 1);
    out[cap - 1] = 0;
    return;
  }
  while (path[0] == '.' && path[1] == '/') path += 2;
  size_t len = (size_t)n;
  if (len + 1 < cap && out[len - 1] != '/') out[len++] = '/';
  size_t plen = strlen(path);
  if (len + plen >= cap) plen = cap - 1 - len;
  memcpy(out + len, path, plen);
  out[len + plen] = 0;
}

static int is_own_trace(const char *path) {
  static const char suffix[] = ".iopred.zst";
  size_t n = strlen(path), s = sizeof suffix - 1;
  return n >= s && memcmp(path + n - s, suffix, s) == 0;
}

/* ---- the descriptor table ---- */

/* An open file description as iopred sees it. */
struct iop_ofd {
  _Atomic int64_t offset;
  _Atomic int refs;
  uint32_t file;
  uint8_t append;
  uint8_t seekable;
  uint8_t direct;    /* O_DIRECT: the page cache is not in the reads' way */
  struct iop_pf *pf; /* the prefetch detector (prefetch.c), made at the first read */
};

#define IOP_MAX_FD 65536
#define IOP_OFD_CAP 16384
/* Descriptors iopred looked at and decided not to record (pipes,
 * sockets, terminals, directories, its own traces). */
static struct iop_ofd not_recorded;
static struct iop_ofd *_Atomic fdtab[IOP_MAX_FD];
/* Open files come from the pool: first the ones freed, then the ones
 * never used, in order, so that a process touches only the pages of the
 * pool and of the free list it needs (a page fault costs up to 16 us on
 * some virtual machines). */
static struct iop_ofd ofd_pool[IOP_OFD_CAP];
static struct iop_ofd *ofd_free[IOP_OFD_CAP];
static int ofd_free_n, ofd_fresh;
static iop_spin ofd_lock;

static struct iop_ofd *ofd_new(uint32_t file, int64_t offset, int append, int seekable, int direct) {
  spin_lock(&ofd_lock);
  struct iop_ofd *o = NULL;
  if (ofd_free_n > 0)
    o = ofd_free[--ofd_free_n];
  else if (ofd_fresh < IOP_OFD_CAP)
    o = &ofd_pool[ofd_fresh++];
  spin_unlock(&ofd_lock);
  if (!o) return NULL;
  atomic_store(&o->offset, offset);
  atomic_store(&o->refs, 1);
  o->file = file;
  o->append = (uint8_t)append;
  o->seekable = (uint8_t)seekable;
  o->direct = (uint8_t)direct;
  return o;
}

static void ofd_put(struct iop_ofd *o) {
  if (!o || o == &not_recorded) return;
  if (atomic_fetch_sub(&o->refs, 1) != 1) return;
  if (o->pf) iop_pf_close(o->pf);
  spin_lock(&ofd_lock);
  ofd_free[ofd_free_n++] = o;
  spin_unlock(&ofd_lock);
}

static void fd_set_entry(int fd, struct iop_ofd *o) {
  if (fd < 0 || fd >= IOP_MAX_FD) {
    ofd_put(o);
    return;
  }
  ofd_put(atomic_exchange(&fdtab[fd], o));
}

IOP_HIDDEN void iop_drop_fds(unsigned lo, unsigned hi) {
  if (hi >= IOP_MAX_FD) hi = IOP_MAX_FD - 1;
  for (unsigned fd = lo; fd <= hi && fd < IOP_MAX_FD; fd++)
    if (atomic_load_explicit(&fdtab[fd], memory_order_relaxed)) fd_set_entry((int)fd, NULL);
}

/* Describes a descriptor iopred has not seen opened (inherited, or opened
 * before it started, or by a call it does not wrap). */
static struct iop_ofd *classify(int fd) {
  struct stat st;
  if (syscall(SYS_fstat, fd, &st) != 0) return NULL;
  int regular = S_ISREG(st.st_mode);
  if (!regular && !iop_cfg.all_fds) {
    struct iop_ofd *expected = NULL;
    atomic_compare_exchange_strong(&fdtab[fd], &expected, &not_recorded);
    return atomic_load(&fdtab[fd]);
  }
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  long n = syscall(SYS_readlink, link, path, sizeof path - 1);
  if (n < 0) n = 0;
  path[n] = 0;
  struct iop_ofd *o = &not_recorded;
  if (!is_own_trace(path)) {
    int64_t off = (int64_t)syscall(SYS_lseek, fd, 0, SEEK_CUR);
    int flags = (int)syscall(SYS_fcntl, fd, F_GETFL);
    o = ofd_new(file_id(path), off, flags >= 0 && (flags & O_APPEND), off >= 0, flags >= 0 && (flags & O_DIRECT));
    if (!o) return NULL;
  }
  struct iop_ofd *expected = NULL;
  if (!atomic_compare_exchange_strong(&fdtab[fd], &expected, o)) ofd_put(o);
  return atomic_load(&fdtab[fd]);
}

/* lookup returns the description to record for fd, or NULL. */
static inline struct iop_ofd *lookup(int fd) {
  if (IOP_UNLIKELY(fd < 0 || fd >= IOP_MAX_FD)) return NULL;
  struct iop_ofd *o = atomic_load_explicit(&fdtab[fd], memory_order_acquire);
  if (IOP_UNLIKELY(!o)) o = classify(fd);
  return o == &not_recorded ? NULL : o;
}

IOP_HIDDEN uint32_t iop_file_of_fd(int fd) {
  struct iop_ofd *o = lookup(fd);
  return o ? o->file : 0;
}

IOP_HIDDEN int iop_fd_tracked(int fd) { return lookup(fd) != NULL; }

IOP_HIDDEN int64_t iop_iov_size(const void *iov, int cnt) {
  const struct iovec *v = iov;
  int64_t n = 0;
  for (int i = 0; v && i < cnt; i++) n += (int64_t)v[i].iov_len;
  return n;
}

/* ---- POSIX hooks ---- */

IOP_HIDDEN void iop_pre_fd(struct iop_call *c, int fd, int64_t size, int64_t off) {
  c->size = size;
  struct iop_ofd *o = lookup(fd);
  if (!o) return;
  c->ofd = o;
  c->file = o->file;
  note_fd(o->file, fd);
  c->offset = off >= 0 ? off : (o->seekable ? atomic_load_explicit(&o->offset, memory_order_relaxed) : -1);
  c->aux = fd;
}

/* is_read tells the reads among the calls iop_post_rw sees. */
static inline int is_read(int op) {
  switch (op) {
  case IOP_OP_read: case IOP_OP___read_chk: case IOP_OP_readv:
  case IOP_OP_pread: case IOP_OP_pread64: case IOP_OP___pread_chk: case IOP_OP___pread64_chk:
  case IOP_OP_preadv: case IOP_OP_preadv64: case IOP_OP_preadv2: case IOP_OP_preadv64v2:
    return 1;
  }
  return 0;
}

IOP_HIDDEN void iop_post_rw(struct iop_call *c, int fd, int64_t r, int positional) {
  if (!c->file) return;
  c->record = 1;
  c->bytes = r > 0 ? r : 0;
  /* One test of a word read once at start when prefetching is off. */
  if (IOP_UNLIKELY(iop_pf_on) && r > 0 && c->offset >= 0 && c->ofd && is_read(c->op)) {
    struct iop_ofd *o = c->ofd;
    if (!o->direct) iop_pf_read(&o->pf, fd, o->file, c->offset, r, c->start_ns, c->end_ns);
  }
  if (positional || r < 0) return;
  struct iop_ofd *o = c->ofd;
  if (!o || !o->seekable) return;
  if (o->append && c->op != IOP_OP_read && c->op != IOP_OP_readv && c->op != IOP_OP___read_chk) {
    /* An appending write lands at the end of the file, wherever that was. */
    int64_t end = (int64_t)syscall(SYS_lseek, fd, 0, SEEK_CUR);
    if (end >= 0) {
      c->offset = end - r;
      atomic_store(&o->offset, end);
    }
    return;
  }
  atomic_fetch_add_explicit(&o->offset, r, memory_order_relaxed);
}

IOP_HIDDEN void iop_post_fdmeta(struct iop_call *c, int fd, int64_t r) {
  (void)r;
  struct iop_ofd *o = lookup(fd);
  if (!o) return;
  c->file = o->file;
  c->record = 1;
}

IOP_HIDDEN void iop_post_seek(struct iop_call *c, int fd, int64_t r, int whence) {
  struct iop_ofd *o = lookup(fd);
  if (!o) return;
  c->file = o->file;
  c->aux = whence;
  if (r >= 0) {
    atomic_store(&o->offset, r);
    c->offset = r;
  }
  c->record = 1;
}

IOP_HIDDEN void iop_post_close(struct iop_call *c, int fd, int r) {
  if (fd < 0 || fd >= IOP_MAX_FD) return;
  struct iop_ofd *o = atomic_load(&fdtab[fd]);
  if (o && o != &not_recorded) {
    c->file = o->file;
    c->record = 1;
    int32_t expected = fd + 1;
    if (o->file < IOP_FILES_CAP) atomic_compare_exchange_strong(&file_fd[o->file], &expected, 0);
  }
  /* Linux releases the descriptor even when close reports EINTR. */
  if (r == 0 || c->err == EINTR) fd_set_entry(fd, NULL);
}

IOP_HIDDEN void iop_post_dup(struct iop_call *c, int fd, int newfd) {
  if (newfd < 0 || newfd >= IOP_MAX_FD) return;
  struct iop_ofd *o = lookup(fd);
  if (newfd == fd) return;
  if (!o) {
    fd_set_entry(newfd, NULL);
    return;
  }
  atomic_fetch_add(&o->refs, 1);
  fd_set_entry(newfd, o);
  c->file = o->file;
  c->aux = newfd;
  c->record = 1;
}

static void track_open(struct iop_call *c, int dirfd, const char *path, int flags, int fd) {
  char abs[4096];
  abs_path(dirfd, path, abs, sizeof abs);
  if (is_own_trace(abs)) {
    if (fd >= 0 && fd < IOP_MAX_FD) fd_set_entry(fd, &not_recorded);
    return;
  }
  if (fd < 0) {
    /* A failed open names a file the program looked for: worth a record. */
    c->file = file_id(abs);
    c->record = c->file != 0;
    return;
  }
  struct stat st;
  int regular = syscall(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode);
  if (!regular && !iop_cfg.all_fds) {
    fd_set_entry(fd, &not_recorded);
    return;
  }
  uint32_t id = file_id(abs);
  struct iop_ofd *o = id ? ofd_new(id, 0, (flags & O_APPEND) != 0, regular, (flags & O_DIRECT) != 0) : NULL;
  fd_set_entry(fd, o);
  if (!o) return;
  note_fd(id, fd);
  c->file = id;
  c->record = 1;
}

IOP_HIDDEN void iop_post_open(struct iop_call *c, int dirfd, const char *path, int flags, int fd) {
  c->aux = flags;
  track_open(c, dirfd, path, flags, fd);
}

IOP_HIDDEN void iop_post_path(struct iop_call *c, int dirfd, const char *path, int r, int is_regular) {
  if (!path || !(iop_cfg.all_fds || (r == 0 && is_regular))) return;
  char abs[4096];
  abs_path(dirfd, path, abs, sizeof abs);
  if (is_own_trace(abs)) return;
  c->file = file_id(abs);
  c->record = c->file != 0;
}

IOP_HIDDEN void iop_post_copy(struct iop_call *c, int fd_in, int in_positional, int fd_out, int out_positional, int64_t r) {
  struct iop_ofd *in = lookup(fd_in), *out = lookup(fd_out);
  /* Without an offset pointer the call moves the descriptor's offset. */
  if (r > 0 && in && !in_positional) atomic_fetch_add(&in->offset, r);
  if (r > 0 && out && !out_positional) atomic_fetch_add(&out->offset, r);
  if (!in && !out) return;
  c->file = in ? in->file : 0;
  c->aux = out ? out->file : 0;
  c->bytes = r > 0 ? r : 0;
  c->record = 1;
}

/* iop_files_pf_finish writes off the prefetched ranges of every open
 * file: the process ends (or execs). */
IOP_HIDDEN void iop_files_pf_finish(void) {
  spin_lock(&ofd_lock);
  int n = ofd_fresh;
  spin_unlock(&ofd_lock);
  for (int i = 0; i < n; i++)
    if (ofd_pool[i].pf) iop_pf_finish(ofd_pool[i].pf);
}

IOP_HIDDEN int64_t iop_fd_offset(int fd) {
  struct iop_ofd *o = lookup(fd);
  return o ? atomic_load(&o->offset) : -1;
}

/* ---- stdio ---- */

static off64_t (*real_ftello64)(FILE *);

IOP_HIDDEN void iop_stream_pos_resolve(void) {
  if (!real_ftello64) real_ftello64 = (off64_t(*)(FILE *))iop_resolve("ftello64");
}

static int64_t stream_pos(FILE *fp) {
  if (IOP_UNLIKELY(!real_ftello64)) iop_stream_pos_resolve();
  int e = errno;
  int64_t pos = real_ftello64 ? real_ftello64(fp) : -1;
  errno = e;
  return pos;
}

IOP_HIDDEN void iop_pre_stream(struct iop_call *c, FILE *fp, int64_t size) {
  c->size = size;
  c->aux = -1;
  if (!fp) return;
  int fd = fileno(fp);
  c->aux = fd;
  struct iop_ofd *o = lookup(fd);
  if (!o) return;
  c->file = o->file;
  c->ofd = o;
  c->offset = o->seekable ? stream_pos(fp) : -1;
}

/* bytes: >= 0 data moved; -1 no data (fflush); -2 data measured by the
 * stream position (scanf); -3 a positioning call, recorded at the new
 * position. */
IOP_HIDDEN void iop_post_stream(struct iop_call *c, FILE *fp, int64_t bytes) {
  if (!c->file) return;
  c->record = 1;
  if (bytes >= 0) {
    c->bytes = bytes;
    if (bytes < c->size && ferror(fp)) c->failed = 1;
    if (IOP_UNLIKELY(iop_pf_on) && bytes > 0 && c->offset >= 0 && c->ofd &&
        (c->op == IOP_OP_fread || c->op == IOP_OP___fread_chk)) {
      struct iop_ofd *o = c->ofd;
      if (!o->direct) iop_pf_read(&o->pf, fileno(fp), o->file, c->offset, bytes, c->start_ns, c->end_ns);
    }
  } else if (bytes == -2 && c->offset >= 0) {
    int64_t now = stream_pos(fp);
    c->bytes = now >= c->offset ? now - c->offset : 0;
    c->size = c->bytes;
  } else if (bytes == -3) {
    c->offset = stream_pos(fp);
  }
}

IOP_HIDDEN void iop_post_fopen(struct iop_call *c, const char *path, const char *mode, FILE *fp) {
  int flags = 0;
  if (mode && mode[0] == 'a') flags |= O_APPEND;
  int oldfd = (int)c->aux;
  if (!fp) {
    if (path) track_open(c, AT_FDCWD, path, flags, -1);
    return;
  }
  int fd = fileno(fp);
  if (c->op == IOP_OP_freopen || c->op == IOP_OP_freopen64) {
    if (oldfd >= 0 && oldfd != fd) fd_set_entry(oldfd, NULL);
    if (!path) path = iop_file_path(iop_file_of_fd(fd));
  }
  if (!path) {
    /* fdopen: the descriptor is already known (or is classified now). */
    struct iop_ofd *o = lookup(fd);
    if (o) {
      c->file = o->file;
      c->record = 1;
    }
    return;
  }
  track_open(c, AT_FDCWD, path, flags, fd);
}

IOP_HIDDEN void iop_post_fclose(struct iop_call *c, int fd, int r) {
  (void)r;
  if (c->file) c->record = 1;
  /* fclose releases the descriptor whatever it reports. */
  if (fd >= 0 && fd < IOP_MAX_FD) fd_set_entry(fd, NULL);
}

/* ---- descriptor numbers ----
 * The kernel gives every new descriptor the lowest free number. When
 * iopred opens a file on a thread of its own (the Go runtime reading
 * cgroup limits as it starts; the trace, a module's symbols, a saved
 * model) while the program opens one, the program could get another
 * number than it would without iopred. So the program's descriptor-
 * creating calls wait at a gate while the Go runtime starts and while
 * iopred opens a file of its own (open, move to a high number, close: a
 * few microseconds), and a private open waits until none of the program's
 * is in flight. Every wait is bounded: a program blocked in open (a FIFO
 * without a writer) delays iopred, never the reverse, and a runtime that
 * does not start in time opens the gate for good. */
enum { GATE_PRIVATE_OPEN = 1, GATE_GO_STARTING = 2 };
static _Atomic uint32_t fd_gate;
static atomic_int app_fd_calls;

static void gate_open(uint32_t bit) {
  atomic_fetch_and(&fd_gate, ~bit);
  syscall(SYS_futex, &fd_gate, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* The Go runtime's variable runtime.gomaxprocs, when the library's
 * symbol table has it: the runtime opens its files (the huge page size
 * in osinit; the cgroup CPU limits in schedinit, which it reads even with
 * containermaxprocs=0 and closes at once) on its first thread, and
 * schedinit sets gomaxprocs (procresize) right after the last of them.
 * From then on nothing of the runtime's start opens a file (the rest of
 * schedinit, the main goroutine's creation and start), and neither do
 * the package initialisers that follow: the gate opens once it is
 * non-zero. Waiting for runtime.main to start (the flag
 * runtime.mainStarted, used before) added the end of the runtime's start
 * to the program's first open; waiting for the initialisers, most of the
 * wait. Without the symbol the gate waits for preload/internal/early's
 * initialiser. (An earlier run's read tables, which the program's first
 * reads need, are installed by the library's constructor before main:
 * prefetch.c, iop_pf_load_tables.) */
static const volatile int32_t *go_procs_set;

IOP_HIDDEN void iop_fd_gate_go_starting(const void *gomaxprocs) {
  go_procs_set = gomaxprocs;
  atomic_fetch_or(&fd_gate, GATE_GO_STARTING);
}
IOP_HIDDEN void iop_fd_gate_go_started(void) { gate_open(GATE_GO_STARTING); }

IOP_HIDDEN void iop_app_fd_enter(void) {
  int saved = errno;
  int64_t deadline = 0;
  for (;;) {
    atomic_fetch_add(&app_fd_calls, 1);
    uint32_t g = atomic_load(&fd_gate);
    if (!g) break;
    atomic_fetch_sub(&app_fd_calls, 1);
    if ((g & GATE_GO_STARTING) && go_procs_set && *go_procs_set) {
      gate_open(GATE_GO_STARTING);
      continue;
    }
    int64_t now = iop_now();
    if (!deadline) deadline = now + 100000000; /* 100 ms */
    if (now >= deadline) {
      /* Whatever holds the gate is stuck: never make the program wait again. */
      gate_open(GATE_PRIVATE_OPEN | GATE_GO_STARTING);
      continue;
    }
    /* The runtime's variable is looked at every 200 us: it wakes no one. */
    struct timespec ts = {0, (g & GATE_GO_STARTING) && go_procs_set ? 200000 : 10000000};
    syscall(SYS_futex, &fd_gate, FUTEX_WAIT_PRIVATE, g, &ts, NULL, 0);
  }
  errno = saved;
}

IOP_HIDDEN void iop_app_fd_leave(void) { atomic_fetch_sub(&app_fd_calls, 1); }

/* iop_open_private opens path for iopred itself at a descriptor number of
 * at least iop_cfg.trace_fd_min, and returns it, or -errno. */
IOP_HIDDEN int iop_open_private(const char *path, int flags, int mode) {
  atomic_fetch_or(&fd_gate, GATE_PRIVATE_OPEN);
  for (int tries = 0; atomic_load(&app_fd_calls) > 0 && tries < 500; tries++) {
    struct timespec ts = {0, 20000};
    syscall(SYS_nanosleep, &ts, NULL);
  }
  int fd = (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
  int err = fd < 0 ? errno : 0;
  if (fd >= 0 && fd < iop_cfg.trace_fd_min) {
    int high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, iop_cfg.trace_fd_min);
    if (high >= 0) {
      syscall(SYS_close, fd);
      fd = high;
    }
  }
  gate_open(GATE_PRIVATE_OPEN);
  return fd < 0 ? -err : fd;
}

/* iop_files_after_fork runs in a forked child: a lock another thread of
 * the parent held at the fork, or a gate it had closed, would stay so for
 * ever in the child, which has only the forking thread. The tables
 * themselves are consistent: every writer publishes its entry before it
 * lets go of the lock. */
IOP_HIDDEN void iop_files_after_fork(void) {
  atomic_store(&arena_lock, 0);
  atomic_store(&files_lock, 0);
  atomic_store(&ofd_lock, 0);
  atomic_store(&fd_gate, 0);
  atomic_store(&app_fd_calls, 0);
  for (int i = 0; i < ofd_fresh; i++)
    if (ofd_pool[i].pf) iop_pf_forget(ofd_pool[i].pf);
}

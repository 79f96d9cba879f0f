/* Start-up, configuration, the per-call guard and the process calls
 * (fork, exec) of libiopred.so. */
#include "iop.h"
#include "prefetch.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

IOP_HIDDEN struct iop_config iop_cfg;
IOP_HIDDEN volatile int iop_state = IOP_LOADING;
IOP_HIDDEN IOP_TLS int iop_in;
static IOP_TLS int iop_tid;
IOP_HIDDEN int64_t iop_t0_mono, iop_t0_unix;
static pid_t iop_pid;

/* What iop_holder_of looks for: the object whose loaded segments hold
 * addr, by its load address. */
struct iop_holder {
  uintptr_t addr, base;
  int found;
};

static int iop_holder_of(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct iop_holder *h = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && h->addr >= lo && h->addr - lo < ph->p_memsz) {
      h->base = info->dlpi_addr;
      h->found = 1;
      return 1;
    }
  }
  return 0;
}

/* The link map entry of the object holding addr, or NULL. Found from the
 * segments' bounds: dladdr would also scan the object's symbols
 * (callgrind, cat's four resolutions: 1.28 M instructions in dladdr
 * against 29 k for the whole check this way). */
static struct link_map *iop_object_of(const void *addr) {
  struct iop_holder h = {(uintptr_t)addr, 0, 0};
  dl_iterate_phdr(iop_holder_of, &h);
  if (!h.found) return NULL;
  for (struct link_map *lm = _r_debug.r_map; lm; lm = lm->l_next)
    if (lm->l_addr == h.base) return lm;
  return NULL;
}

/* The object's handle, NULL for one dlopen cannot name (the vDSO, the
 * program, another link-map namespace). */
static void *iop_handle_of(struct link_map *lm) {
  if (!lm || !lm->l_name || !lm->l_name[0]) return NULL;
  return dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
}

/* The definition of name that the object lm itself exports, or NULL.
 * dlsym on the object's handle searches its dependencies too: an answer
 * from elsewhere is not the object's own. */
static void *iop_defined_in(struct link_map *lm, void *h, const char *name) {
  void *p = dlsym(h, name);
  return p && iop_object_of(p) == lm ? p : NULL;
}

/* dlsym(RTLD_NEXT) can be answered by a tool that interposes dlsym itself.
 * GOTCHA (DFTracer's) does: for a function it wraps, it answers with its
 * wrapper, whose own "next" is the first definition in the process, ours,
 * so the two would call each other until the stack overflows. A genuine
 * answer is a definition of name exported by the object that holds it;
 * anything else is replaced by the first object after ours, in load
 * order, that exports name, which is what RTLD_NEXT means; with none, the
 * function is missing (ENOSYS) rather than a crash. An answer that cannot
 * be judged (its object has no handle) is kept. Runs once per function:
 * the wrappers' per-call path is unchanged. */
static void *iop_checked_next(const char *name, void *p) {
  struct link_map *holder = iop_object_of(p);
  void *h = iop_handle_of(holder);
  if (!h) return p;
  void *own = iop_defined_in(holder, h, name);
  dlclose(h);
  if (own == p) return p;
  struct link_map *self = iop_object_of((const void *)iop_checked_next);
  for (struct link_map *lm = self ? self->l_next : NULL; lm; lm = lm->l_next) {
    if (!(h = iop_handle_of(lm))) continue;
    void *q = iop_defined_in(lm, h, name);
    dlclose(h);
    if (q) return q;
  }
  return NULL;
}

/* Set in a child that fork made. The check of dlsym's answer walks the
 * loaded objects under the loader's write lock (dl_iterate_phdr), which a
 * thread of the parent (the Go runtime's, the consumer) may have held at
 * the fork: in the child nobody would release it, and a shell's subshell
 * hung there on its first dup2. A child keeps the pointers its parent
 * checked and takes dlsym's answer for the rest, as before the check. */
static int iop_forked;

/* Every real function is looked up at the first lookup of any (see
 * iop_resolve_all). Not in the constructor: a tool preloaded before this
 * library that interposes dlsym (GOTCHA) is not ready before its own
 * constructor, which runs after ours. 0: not yet, 1: under way, 2: done. */
static _Atomic int resolve_state;
static __thread int resolving_here;
static void iop_resolve_all(void);

/* The lookups run with every signal blocked on this thread. The loader
 * holds its lock through dlsym and dlopen, and a signal handler that forks
 * (with _Fork, which runs no atfork handler) in the middle of them would
 * leave that lock held for ever in the child, whose first call of a
 * function not looked up yet would wait on it (TestForkDuringLookups; a
 * 2 ms timer hit this window in about one run of 80 at start-up). Other
 * threads that fork wait in iop_await_resolved. A signal that arrives in
 * these few milliseconds is delivered when they end, as a busy machine
 * would delay it. */
static void iop_resolve_all_once(void) {
  int expect = 0;
  if (!atomic_compare_exchange_strong(&resolve_state, &expect, 1)) return;
  sigset_t all, was;
  sigfillset(&all);
  int masked = pthread_sigmask(SIG_BLOCK, &all, &was) == 0;
  resolving_here = 1;
  iop_resolve_all();
  resolving_here = 0;
  atomic_store(&resolve_state, 2);
  if (masked) pthread_sigmask(SIG_SETMASK, &was, NULL);
}

/* iop_await_resolved runs before a fork: the child must not inherit the
 * loader's lock from a thread that is still looking functions up. The
 * wait is bounded: a constructor that forks holds the loader's lock
 * itself, and the lookup it waits for would wait for that lock. */
static void iop_await_resolved(void) {
  if (resolving_here) return;
  for (int i = 0; atomic_load(&resolve_state) == 1 && i < 20000; i++) sched_yield();
}

IOP_HIDDEN void *iop_resolve(const char *name) {
  if (atomic_load_explicit(&resolve_state, memory_order_relaxed) == 0) iop_resolve_all_once();
  /* dlsym may allocate and, on some paths, do I/O of its own: keep it
   * unrecorded. */
  int was = iop_in;
  iop_in = 1;
  void *p = dlsym(RTLD_NEXT, name);
  if (p && !iop_forked) p = iop_checked_next(name, p);
  iop_in = was;
  return p;
}

IOP_HIDDEN int64_t iop_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the events' clock (iop_clock in iop.h) ----
 * Used only when the CPU's TSC is invariant (CPUID) and the kernel itself
 * keeps time with it (clocksource "tsc": it found the TSCs of all CPUs in
 * step), and IOPRED_TSC is not 0.
 *
 * The rate, ns per tick, comes from two (TSC, CLOCK_MONOTONIC) pairs: one
 * taken when the library starts, and the newest. Each pair is the
 * tightest of up to four tries (a TSC read on each side of clock_gettime)
 * and is refused when its two TSC reads lie more than 2,000 ticks (about
 * 1 us) apart: the thread was preempted, and that read goes to
 * CLOCK_MONOTONIC instead. The rate is used once the pairs lie at least
 * 10 ms apart; before that every read goes to CLOCK_MONOTONIC. Each
 * thread anchors its own copy on a fresh pair every 2 ms, so errors never
 * add up across anchors. The error of a time is then at most:
 *  - the anchor pair's uncertainty, half its TSC gap: 15 to 40 ns here,
 *    0.5 us at most;
 *  - plus 2 ms times the rate's error: the two pairs' uncertainties over
 *    their distance (at most 80 ns / 10 ms = 8e-6, so 16 ns, falling as
 *    the process runs; 2 ms times 1 us / 10 ms = 0.2 us at the very
 *    worst) and any change of NTP's slewing of CLOCK_MONOTONIC since the
 *    start (at most 500 ppm, so 1 us at the very worst);
 *  - plus the upward nudge that keeps times monotonic per thread (a new
 *    anchor never goes below the last time returned), itself within the
 *    bound above.
 * TestClockAgreesWithMonotonic checks it: every event's times must lie
 * within 2 us of CLOCK_MONOTONIC read by the program around the call.
 *
 * Nothing here takes a lock: the shared rate is one atomic word and the
 * start pair never changes, so a forked child (whose other threads are
 * gone) reads and renews its clock like any thread. */
IOP_HIDDEN IOP_TLS struct iop_clock_cal iop_cal;
static int tsc_usable;
static uint64_t tsc_start;
static int64_t ns_start;
static _Atomic uint64_t tsc_rate; /* ns per tick, 32.32; 0 until known */

#define IOP_TSC_WINDOW_NS 2000000
#define IOP_TSC_MIN_SPAN_NS 10000000
#define IOP_TSC_MAX_GAP 2000 /* ticks: about 1 us at 2 GHz */

/* tsc_pair reads the TSC and CLOCK_MONOTONIC together; 0 when every try
 * was preempted. */
static int tsc_pair(uint64_t *tsc, int64_t *ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 4 && best > 200; i++) {
    uint64_t a = iop_rdtsc();
    int64_t n = iop_now();
    uint64_t b = iop_rdtsc();
    if (b - a < best) {
      best = b - a;
      *tsc = a + (b - a) / 2;
      *ns = n;
    }
  }
  return best <= IOP_TSC_MAX_GAP;
}

static int tsc_trusted(void) {
  const char *v = getenv("IOPRED_TSC");
  if (v && strcmp(v, "0") == 0) return 0;
  if (v && *v && strcmp(v, "1") != 0) iop_warn("IOPRED_TSC is not 0 or 1; using 1");
  unsigned a, b, c, d;
  __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
  if (a < 0x80000007u) return 0;
  __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000007u), "c"(0));
  if (!(d & (1u << 8))) return 0; /* no invariant TSC */
  int fd = (int)syscall(SYS_openat, AT_FDCWD, "/sys/devices/system/clocksource/clocksource0/current_clocksource",
                        O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[16] = {0};
  long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
  syscall(SYS_close, fd);
  return n >= 4 && memcmp(buf, "tsc\n", 4) == 0;
}

static void iop_clock_init(void) {
  if (!tsc_trusted()) return;
  if (tsc_pair(&tsc_start, &ns_start)) tsc_usable = 1;
}

/* iop_clock_renew anchors this thread's calibration again and returns
 * the time now. */
IOP_HIDDEN int64_t iop_clock_renew(void) {
  struct iop_clock_cal *c = &iop_cal;
  uint64_t t;
  int64_t ns;
  if (!tsc_usable || !tsc_pair(&t, &ns)) {
    ns = iop_now();
    c->window = 0;
  } else {
    uint64_t rate = atomic_load_explicit(&tsc_rate, memory_order_relaxed);
    if (ns - ns_start >= IOP_TSC_MIN_SPAN_NS && t > tsc_start) {
      rate = (uint64_t)(((unsigned __int128)(uint64_t)(ns - ns_start) << 32) / (t - tsc_start));
      atomic_store_explicit(&tsc_rate, rate, memory_order_relaxed);
    }
    if (rate) {
      c->tsc0 = t;
      c->mult = rate;
      c->window = (uint64_t)(((unsigned __int128)IOP_TSC_WINDOW_NS << 32) / rate);
    } else {
      c->window = 0;
    }
    /* The pair was read a little before now: its time is the anchor's,
     * and the TSC reads after it run on from there. */
    if (ns < c->last) ns = c->last;
    c->ns0 = ns;
    if (rate) {
      uint64_t now = iop_rdtsc();
      if (now > t) ns += (int64_t)(((now - t) * rate) >> 32);
    }
  }
  if (ns < c->last) ns = c->last;
  c->last = ns;
  return ns;
}

IOP_HIDDEN int iop_gettid(void) {
  if (IOP_UNLIKELY(!iop_tid)) iop_tid = (int)syscall(SYS_gettid);
  return iop_tid;
}

IOP_HIDDEN void iop_warn(const char *msg) {
  static const char prefix[] = "iopred: ";
  syscall(SYS_write, 2, prefix, sizeof prefix - 1);
  syscall(SYS_write, 2, msg, strlen(msg));
  syscall(SYS_write, 2, "\n", 1);
}

IOP_HIDDEN int iop_begin(struct iop_call *c, int op, int layer) {
  if (IOP_UNLIKELY(iop_state != IOP_ACTIVE) || iop_in) return 0;
  iop_in = 1;
  c->op = (uint16_t)op;
  c->layer = (uint8_t)layer;
  c->record = 0;
  c->offset = -1;
  c->size = 0;
  c->bytes = 0;
  c->aux = 0;
  c->file = 0;
  c->ret = 0;
  c->failed = 0;
  c->ofd = NULL;
  c->seq = 0;
  c->parent = iop_mpi_parent;
  return 1;
}

IOP_HIDDEN void iop_end(struct iop_call *c) {
  if (c->record) {
    uint32_t ctx = iop_capture();
    struct iop_event *e = iop_ring_reserve();
    if (e) {
      e->start_ns = c->start_ns;
      e->end_ns = c->end_ns;
      e->offset = c->offset;
      e->size = c->size;
      e->ret = c->ret;
      e->bytes = c->bytes;
      e->aux = c->aux;
      e->file = c->file;
      e->ctx = ctx;
      e->err = c->failed ? c->err : 0;
      e->op = c->op;
      e->kind = IOP_KIND_EVENT;
      e->layer = c->layer;
      e->seq = c->seq;
      e->parent = c->parent;
      iop_ring_commit();
    }
  }
  iop_in = 0;
}

static const char *const iop_op_names[IOP_OP_MAX] = {
  [IOP_OP_none] = "",
#define CALL(layer, R, name, params, args, pre, post) [IOP_OP_##name] = #name,
#define VCALL(layer, R, name, params, lastarg, vreal, vargs, pre, post) [IOP_OP_##name] = #name,
#include "calls.def.h"
#undef CALL
#undef VCALL
#define MPI_CALL(name, ...) [IOP_OP_##name] = #name,
#include "mpiio.def.h"
#undef MPI_CALL
  [IOP_OP_open] = "open", [IOP_OP_open64] = "open64",
  [IOP_OP_openat] = "openat", [IOP_OP_openat64] = "openat64",
  [IOP_OP_fcntl] = "fcntl", [IOP_OP_fcntl64] = "fcntl64",
  [IOP_OP_rewind] = "rewind",
  [IOP_OP_fork] = "fork", [IOP_OP_exec] = "exec",
};

IOP_HIDDEN const char *iop_op_name(int op) {
  return op > 0 && op < IOP_OP_MAX && iop_op_names[op] ? iop_op_names[op] : "";
}

/* The layer each call is interposed in (calls.def.h's first argument), for
 * the test that the trace's readers, which tell a call's layer from its
 * name, file every call where the wrappers do. */
static const signed char iop_op_layers[IOP_OP_MAX] = {
#define CALL(layer, R, name, params, args, pre, post) [IOP_OP_##name] = layer,
#define VCALL(layer, R, name, params, lastarg, vreal, vargs, pre, post) [IOP_OP_##name] = layer,
#include "calls.def.h"
#undef CALL
#undef VCALL
#define MPI_CALL(name, ...) [IOP_OP_##name] = IOP_MPIIO,
#include "mpiio.def.h"
#undef MPI_CALL
  [IOP_OP_open] = IOP_POSIX, [IOP_OP_open64] = IOP_POSIX,
  [IOP_OP_openat] = IOP_POSIX, [IOP_OP_openat64] = IOP_POSIX,
  [IOP_OP_fcntl] = IOP_POSIX, [IOP_OP_fcntl64] = IOP_POSIX,
  [IOP_OP_rewind] = IOP_STDIO,
  [IOP_OP_fork] = IOP_POSIX, [IOP_OP_exec] = IOP_POSIX,
};

IOP_HIDDEN int iop_op_layer(int op) { return op > 0 && op < IOP_OP_MAX ? iop_op_layers[op] : -1; }

/* ---- configuration ---- */

static long iop_env_long(const char *name, long def, long lo, long hi) {
  const char *v = getenv(name);
  if (!v || !*v) return def;
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || *end || x < lo || x > hi) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s=%s is not a whole number from %ld to %ld; using %ld", name, v, lo, hi, def);
    iop_warn(msg);
    return def;
  }
  return x;
}

static void iop_read_config(void) {
  iop_cfg.disabled = iop_env_long("IOPRED_DISABLE", 0, 0, 1);
  iop_cfg.all_fds = iop_env_long("IOPRED_ALL_FDS", 0, 0, 1);
  iop_cfg.ctx_depth = (int)iop_env_long("IOPRED_CONTEXT_DEPTH", 16, 0, 64);
  iop_cfg.flush_bytes = iop_env_long("IOPRED_FLUSH_BYTES", 1 << 20, 4096, 1L << 30);
  iop_cfg.flush_ms = iop_env_long("IOPRED_FLUSH_MS", 1000, 10, 3600 * 1000);
  iop_pf_config();
  /* A trace holds the command line, the host and every path the program
   * touched: private by default, readable by the group when the site or
   * the user says so (Darshan's group-readable logs). */
  int group = (int)iop_env_long("IOPRED_GROUP_READABLE", IOP_GROUP_READABLE_DEFAULT, 0, 1);
  iop_cfg.file_mode = group ? 0640 : 0600;
  iop_cfg.dir_mode = group ? 0750 : 0700;
  /* The trace directory is fixed at start, before the program can chdir. */
  const char *dir = getenv("IOPRED_DIR");
  size_t cap = sizeof iop_cfg.dir;
  if (dir && dir[0] == '/') {
    snprintf(iop_cfg.dir, cap, "%s", dir);
  } else if (syscall(SYS_getcwd, iop_cfg.dir, cap) > 0) {
    if (dir && *dir) {
      size_t n = strlen(iop_cfg.dir);
      snprintf(iop_cfg.dir + n, cap - n, "/%s", dir);
    }
  } else {
    snprintf(iop_cfg.dir, cap, "%s", dir && *dir ? dir : ".");
  }
}

/* ---- a Go runtime already in the process ----
 * Two Go runtimes in one process fight over signals and threads: when the
 * program (or a library loaded before us) is Go, iopred stays passive. Go
 * binaries carry an ELF note named "Go" of type 4 (the build id). */
struct iop_go_probe { uintptr_t self; int found; };

static int iop_has_go_note(const struct dl_phdr_info *info) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
    const unsigned char *end = p + ph->p_memsz;
    while (p + 12 <= end) {
      uint32_t namesz, descsz, type;
      memcpy(&namesz, p, 4);
      memcpy(&descsz, p + 4, 4);
      memcpy(&type, p + 8, 4);
      const unsigned char *name = p + 12;
      if (namesz == 3 && type == 4 && name + 3 <= end && memcmp(name, "Go", 3) == 0) return 1;
      p = name + ((namesz + 3) & ~3u) + ((descsz + 3) & ~3u);
    }
  }
  return 0;
}

static int iop_go_probe_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct iop_go_probe *probe = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && probe->self >= lo && probe->self < lo + ph->p_memsz) return 0; /* ourselves */
  }
  if (iop_has_go_note(info)) probe->found = 1;
  return 0;
}

static int iop_other_go_runtime(void) {
  struct iop_go_probe probe = {(uintptr_t)&iop_other_go_runtime, 0};
  dl_iterate_phdr(iop_go_probe_cb, &probe);
  return probe.found;
}

/* ---- signals ----
 * The Go runtime of a c-shared library installs handlers for SIGSEGV,
 * SIGBUS, SIGFPE and SIGPIPE when it loads. The application must see the
 * dispositions it would have without iopred, so the early constructor
 * saves them and the late one puts back any that Go changed. It also
 * blocks asynchronous signals while Go starts its first thread, so every
 * thread of the Go runtime inherits a mask that keeps the application's
 * signals on the application's own threads. */
static const int iop_go_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGPIPE, SIGURG, SIGPROF};
#define IOP_NSIG (sizeof iop_go_signals / sizeof iop_go_signals[0])
/* The kernel's own sigaction record: restoring through the raw system
 * call gives back exactly the flags the kernel had, which the C library's
 * sigaction would amend. */
struct iop_ksigaction {
  void *handler;
  unsigned long flags;
  void *restorer;
  uint64_t mask;
};
static struct iop_ksigaction iop_saved_sa[IOP_NSIG];
static sigset_t iop_saved_mask;

static int iop_ksig(int sig, const struct iop_ksigaction *act, struct iop_ksigaction *old) {
  return (int)syscall(SYS_rt_sigaction, sig, act, old, sizeof(uint64_t));
}

/* The trace's descriptor lives high, so that the numbers the program gets
 * from open stay what they would be without iopred. The first use of a
 * high number makes the kernel grow the descriptor table, which costs
 * milliseconds once the process has threads: grow it now, while the
 * process still has one thread, by a dup and a close. */
static void iop_reserve_trace_fd(void) {
  struct rlimit lim;
  int min = 100;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur > 256) {
    min = (int)(lim.rlim_cur - 64 < 960 ? lim.rlim_cur - 64 : 960);
  }
  iop_cfg.trace_fd_min = min;
  for (int fd = 0; fd <= 2; fd++) {
    int high = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, min);
    if (high >= 0) {
      syscall(SYS_close, high);
      return;
    }
  }
}

/* Go's runtime unblocks a few asynchronous signals (SIGCHLD, SIGPROF,
 * SIGSTKFLT) on every thread it runs, whatever mask it inherited: the
 * kernel could then deliver the program's own SIGCHLD or SIGPROF to a Go
 * thread, whose handler would run beside the program's threads on a small
 * goroutine stack (a shell's SIGCHLD handler, or a profiler's, crashed
 * there). Before the runtime starts, iopred clears that "always unblock"
 * flag in the runtime's signal table, so Go's threads keep the mask that
 * blocks them. Each entry of runtime.sigtable is {int32 flags; string
 * name}; the entry's name is checked before anything is changed. */
#define IOP_GO_SIGTAB_ENTRY 24
#define IOP_GO_SIG_UNBLOCK (1 << 7)

/* read_at reads exactly n bytes at off, or fails. */
static int read_at(int fd, void *buf, size_t n, uint64_t off) {
  size_t got = 0;
  while (got < n) {
    long r = syscall(SYS_pread64, fd, (char *)buf + got, n - got, (off_t)(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    got += (size_t)r;
  }
  return 1;
}

/* A data symbol of this library that find_go_symbols looks for: its
 * name, and the sizes it may have (a multiple of unit, from min_size to
 * max_size). found is its run-time address, or NULL. */
struct go_symbol {
  const char *name;
  size_t unit, min_size, max_size;
  void *found;
};

/* strtab_window is the part of the string table read last: the linker
 * writes names in the order of the symbols, so the names of nearby
 * candidates come from one read. */
struct strtab_window {
  uint64_t lo;
  size_t n;
  char buf[4096];
};

static const char *strtab_name(int fd, const ElfW(Shdr) *strs, struct strtab_window *w, uint64_t off, size_t len) {
  if (off + len > strs->sh_size) return NULL;
  if (w->n && off >= w->lo && off + len <= w->lo + w->n) return w->buf + (off - w->lo);
  size_t n = strs->sh_size - off < sizeof w->buf ? (size_t)(strs->sh_size - off) : sizeof w->buf;
  if (n < len || !read_at(fd, w->buf, n, strs->sh_offset + off)) {
    w->n = 0;
    return NULL;
  }
  w->lo = off;
  w->n = n;
  return w->buf;
}

/* find_go_symbols sets the run-time address of each (local) data symbol
 * of this library in want[0..n-1] that its ELF symbol table on disk
 * holds. No malloc, no stdio, and no mapping of the file: it reads the
 * headers, the symbol table and the names it compares in pieces into
 * buffers on the stack, and compares the name of a symbol only when the
 * symbol is data of a size a wanted one may have. Mapping the whole file
 * and comparing every name cost about 0.7 ms per process on a virtual
 * machine (page faults over the string table, and the unmapping). */
static void find_go_symbols(struct go_symbol *want, int nwant) {
  Dl_info info;
  if (!dladdr((void *)&find_go_symbols, &info) || !info.dli_fname) return;
  int fd = (int)syscall(SYS_openat, AT_FDCWD, info.dli_fname, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  int left = nwant;
  ElfW(Ehdr) eh;
  if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_shentsize != sizeof(ElfW(Shdr)))
    goto out;
  /* The lowest PT_LOAD's virtual address, to turn st_value into an address. */
  uintptr_t lowest = UINTPTR_MAX;
  for (int i = 0; i < eh.e_phnum; i++) {
    ElfW(Phdr) ph;
    if (!read_at(fd, &ph, sizeof ph, eh.e_phoff + (uint64_t)i * sizeof ph)) goto out;
    if (ph.p_type == PT_LOAD && ph.p_vaddr < lowest) lowest = ph.p_vaddr;
  }
  for (int i = 0; i < eh.e_shnum && left > 0; i++) {
    ElfW(Shdr) sh, strs;
    if (!read_at(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh)) goto out;
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum) continue;
    if (!read_at(fd, &strs, sizeof strs, eh.e_shoff + (uint64_t)sh.sh_link * sizeof strs)) goto out;
    struct strtab_window win;
    win.n = 0;
    ElfW(Sym) syms[256];
    size_t n = sh.sh_size / sizeof syms[0];
    for (size_t k = 0; k < n && left > 0; k += 256) {
      size_t m = n - k < 256 ? n - k : 256;
      if (!read_at(fd, syms, m * sizeof syms[0], sh.sh_offset + k * sizeof syms[0])) goto out;
      for (size_t j = 0; j < m && left > 0; j++) {
        const ElfW(Sym) *sym = &syms[j];
        if (ELF64_ST_TYPE(sym->st_info) != STT_OBJECT) continue;
        for (int w = 0; w < nwant; w++) {
          struct go_symbol *g = &want[w];
          if (g->found || sym->st_size < g->min_size || sym->st_size > g->max_size || sym->st_size % g->unit) continue;
          size_t len = strlen(g->name) + 1;
          const char *name = strtab_name(fd, &strs, &win, sym->st_name, len);
          if (name && memcmp(name, g->name, len) == 0) {
            g->found = (char *)info.dli_fbase + (sym->st_value - (lowest == UINTPTR_MAX ? 0 : lowest));
            left--;
          }
        }
      }
    }
  }
out:
  syscall(SYS_close, fd);
}

static void iop_keep_go_threads_out_of_signals(char *table) {
  static const struct { int sig; const char *name; } sigs[] = {
      {SIGCHLD, "SIGCHLD"}, {SIGPROF, "SIGPROF"}, {SIGSTKFLT, "SIGSTKFLT"}};
  if (!table) return;
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    char *entry = table + (size_t)sigs[i].sig * IOP_GO_SIGTAB_ENTRY;
    const char *name;
    size_t len;
    memcpy(&name, entry + 8, sizeof name);
    memcpy(&len, entry + 16, sizeof len);
    size_t want = strlen(sigs[i].name);
    if (!name || len < want || memcmp(name, sigs[i].name, want) != 0) return; /* not the layout we know */
    int32_t flags;
    memcpy(&flags, entry, sizeof flags);
    flags &= ~IOP_GO_SIG_UNBLOCK;
    memcpy(entry, &flags, sizeof flags);
  }
}

/* iop_child_reset runs first in a child that fork (or _Fork) made.
 * The child has one thread and a Go runtime that may be stuck in a lock
 * held by a thread that no longer exists: it must never enter Go. It
 * records into a spill file of its own instead (spill.c), which the Go
 * process it descends from (iop_pid, kept through nested forks) converts
 * once it has ended. */
static void iop_child_reset(int safe) {
  iop_forked = 1;
  iop_tid = 0; /* the forking thread's cached id is the parent's */
  if (iop_state != IOP_ACTIVE) return;
  iop_in = 0;  /* a fork from a signal handler that interrupted iopred */
  /* Prefetching starts afresh in the child, its counters going to its
   * spill; not after _Fork (safe = 0: prefetch.c says why). */
  iop_pf_after_fork(safe);
  iop_files_after_fork();
  iop_unwind_after_fork();
  iop_ring_after_fork();
  iop_spill_after_fork(iop_pid);
}

/* The fork handler: glibc's fork has reset its own locks in the child. */
static void iop_child_after_fork(void) { iop_child_reset(1); }

__attribute__((constructor(101))) static void iop_init_early(void) {
  iop_pid = getpid();
  iop_read_config();
  iop_t0_mono = iop_now();
  iop_clock_init();
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  iop_t0_unix = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  for (size_t i = 0; i < IOP_NSIG; i++) iop_ksig(iop_go_signals[i], NULL, &iop_saved_sa[i]);
  sigset_t all;
  sigfillset(&all);
  for (size_t i = 0; i < IOP_NSIG - 2; i++) sigdelset(&all, iop_go_signals[i]);
  pthread_sigmask(SIG_BLOCK, &all, &iop_saved_mask);
  /* The signal table has an entry per signal, up to SIGSTKFLT at least.
   * runtime.gomaxprocs (an int32) becomes non-zero once the runtime has
   * opened and closed what it opens as it starts (the descriptor gate,
   * files.c). runtime.MemProfileRate (an int) is zeroed here, before the
   * runtime's thread starts: the runtime itself zeroes it in schedinit
   * (nothing in the library reads heap profiles), but its allocations
   * before that line sample into the profile's bucket tables, fresh
   * memory on the path the program's first open waits for. */
  struct go_symbol syms[] = {
      {"runtime.sigtable", IOP_GO_SIGTAB_ENTRY, (SIGSTKFLT + 1) * IOP_GO_SIGTAB_ENTRY, SIZE_MAX, NULL},
      {"runtime.gomaxprocs", 4, 4, 4, NULL},
      {"runtime.MemProfileRate", sizeof(long), sizeof(long), sizeof(long), NULL},
  };
  find_go_symbols(syms, iop_cfg.disabled ? 1 : 3);
  iop_keep_go_threads_out_of_signals(syms[0].found);
  if (syms[2].found) {
    long off = 0;
    memcpy(syms[2].found, &off, sizeof off);
  }
  pthread_atfork(NULL, NULL, iop_child_after_fork);
  if (!iop_cfg.disabled) {
    iop_reserve_trace_fd();
    /* An earlier run's read tables are installed before the program's
     * main (prefetch.c): the gate need not wait for Go to install them. */
    iop_pf_load_tables();
    iop_fd_gate_go_starting(syms[1].found);
  }
}

/* Runs after the Go runtime's own initialiser in this library. */
__attribute__((constructor(65535))) static void iop_init_late(void) {
  for (size_t i = 0; i < IOP_NSIG; i++) {
    struct iop_ksigaction now;
    iop_ksig(iop_go_signals[i], NULL, &now);
    if (now.handler != iop_saved_sa[i].handler) iop_ksig(iop_go_signals[i], &iop_saved_sa[i], NULL);
  }
  pthread_sigmask(SIG_SETMASK, &iop_saved_mask, NULL);
  if (iop_cfg.disabled || iop_other_go_runtime()) {
    iop_fd_gate_go_started();
    iop_state = IOP_PASSIVE;
    return;
  }
  iop_context_init();
  iop_ring_init();
  iop_spill_init();
  iop_state = IOP_ACTIVE;
}

__attribute__((destructor)) static void iop_fini(void) {
  if (iop_state != IOP_ACTIVE) return;
  if (iop_spill_active()) {
    iop_spill_end(1);
  } else if (getpid() == iop_pid) {
    iop_shutdown(0);
    iop_state = IOP_PASSIVE;
  }
}

/* ---- dlclose ----
 * A library the program unloads may be followed by another at the same
 * addresses. The unwinder learns of the unloading at once (not at its
 * next cache miss), so that the new code is neither unwound with the old
 * code's cached rules nor named after the old library (context.c). The
 * answer is dlsym's own, unchecked: iop_checked_next calls dlclose. */
IOP_EXPORT int dlclose(void *handle) {
  static int (*real)(void *);
  if (!real) real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
  if (!real) return -1;
  int r = real(handle);
  if (r == 0 && iop_state == IOP_ACTIVE && !iop_in && !iop_forked) {
    int e = errno;
    iop_in = 1;
    iop_unwind_rescan();
    iop_in = 0;
    errno = e;
  }
  return r;
}

/* ---- fork and exec ---- */

static pid_t (*real_fork)(void);
IOP_EXPORT pid_t fork(void) {
  if (!real_fork) real_fork = (pid_t(*)(void))iop_resolve("fork");
  pid_t (*real)(void) = real_fork;
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  iop_await_resolved();
  pid_t r = real();
  if (r > 0 && iop_state == IOP_ACTIVE) {
    int e = errno;
    iop_record_proc(IOP_KIND_FORK, r);
    errno = e;
  }
  return r;
}

/* _Fork (glibc 2.34) runs no fork handlers: the child's reset is called
 * here instead. */
static pid_t (*real__Fork)(void);
IOP_EXPORT pid_t _Fork(void) {
  if (!real__Fork) real__Fork = (pid_t(*)(void))iop_resolve("_Fork");
  pid_t (*real)(void) = real__Fork;
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  iop_await_resolved();
  pid_t r = real();
  int e = errno;
  if (r == 0) {
    iop_child_reset(0);
  } else if (r > 0 && iop_state == IOP_ACTIVE) {
    iop_record_proc(IOP_KIND_FORK, r);
  }
  errno = e;
  return r;
}

/* Before the image is replaced, everything recorded goes to the trace,
 * closed with a footer. A vfork child shares our memory but not our pid:
 * it must not touch the session. */
static int iop_exec_prepare(const char *path) {
  (void)path;
  if (iop_state != IOP_ACTIVE || iop_in) return 0;
  if (iop_spill_active()) {
    /* A vfork child shares the spilling process's memory: iop_spill_end
     * marks the spill only in the process that writes it. */
    iop_spill_end(2);
    return 2;
  }
  if (getpid() != iop_pid) return 0;
  iop_record_proc(IOP_KIND_EXEC, 0);
  iop_shutdown(1);
  return 1;
}

IOP_HIDDEN void iop_exec_failed(void);

#define EXEC_WRAPPER(name, params, args, pathexpr)                        \
  static int(*real_##name) params;                                       \
  IOP_EXPORT int name params {                                           \
    if (!real_##name) real_##name = (int(*) params)iop_resolve(#name);   \
    int(*real) params = real_##name;                                     \
    if (!real) {                                                         \
      errno = ENOSYS;                                                    \
      return -1;                                                         \
    }                                                                    \
    int prepared = iop_exec_prepare(pathexpr);                           \
    int r = real args;                                                   \
    if (prepared) {                                                      \
      int e = errno;                                                     \
      if (prepared == 2) iop_spill_end(0);                               \
      else iop_exec_failed();                                            \
      errno = e;                                                         \
    }                                                                    \
    return r;                                                            \
  }

EXEC_WRAPPER(execve, (const char *path, char *const argv[], char *const envp[]), (path, argv, envp), path)
EXEC_WRAPPER(execv, (const char *path, char *const argv[]), (path, argv), path)
EXEC_WRAPPER(execvp, (const char *file, char *const argv[]), (file, argv), file)
EXEC_WRAPPER(execvpe, (const char *file, char *const argv[], char *const envp[]), (file, argv, envp), file)
EXEC_WRAPPER(fexecve, (int fd, char *const argv[], char *const envp[]), (fd, argv, envp), "")

/* ---- _exit and _Exit ----
 * A program that ends with _exit runs no destructor: dash ends every
 * script so, Python's os._exit does. Without this its trace would lose
 * the records not yet written and its footer, and the spills of the
 * children it forked would be left unconverted. A forked or vfork child
 * passes straight through (its spill outlives _exit), and so does a call
 * from a signal handler that interrupted iopred itself. _exit may come
 * from any signal handler: the wait for the trace is bounded. */
static void iop_exit_prepare(void) {
  if (iop_state != IOP_ACTIVE || iop_in || iop_spill_active()) return;
  if ((pid_t)syscall(SYS_getpid) != iop_pid) return;
  int e = errno;
  if (iop_shutdown_bounded(0)) iop_state = IOP_PASSIVE;
  errno = e;
}

#define EXIT_WRAPPER(name)                                               \
  static void (*real_##name)(int);                                       \
  IOP_EXPORT void name(int status) {                                     \
    if (!real_##name) real_##name = (void (*)(int))iop_resolve(#name);   \
    iop_exit_prepare();                                                  \
    if (real_##name) real_##name(status);                                \
    for (;;) syscall(SYS_exit_group, status);                            \
  }

EXIT_WRAPPER(_exit)
EXIT_WRAPPER(_Exit)

/* iop_resolve_all looks every real function up at once, before the
 * first fork. Looked up on each function's first use instead, a lookup
 * could run in a thread of the program while another thread forks: the
 * loader's lock (and a malloc arena's, which dlsym may take) would then
 * stay held for ever in the child, whose first call of that function
 * would wait on it. A forked child that only writes (or execs) must never
 * need the loader. */
static void iop_resolve_all(void) {
  real_fork = (pid_t(*)(void))iop_resolve("fork");
  real__Fork = (pid_t(*)(void))iop_resolve("_Fork");
#define RESOLVE_EXEC(name) real_##name = (__typeof__(real_##name))iop_resolve(#name);
  RESOLVE_EXEC(execve) RESOLVE_EXEC(execv) RESOLVE_EXEC(execvp) RESOLVE_EXEC(execvpe) RESOLVE_EXEC(fexecve)
  RESOLVE_EXEC(_exit) RESOLVE_EXEC(_Exit)
#undef RESOLVE_EXEC
  iop_resolve_wrapped();
}

/* The list forms gather their arguments into a vector on the stack. */
#define IOP_MAX_EXEC_ARGS 4096
#define GATHER_ARGS(first, argv, ap)                                     \
  char *argv[IOP_MAX_EXEC_ARGS];                                         \
  int argc_ = 0;                                                         \
  argv[argc_++] = (char *)(first);                                       \
  while (argv[argc_ - 1] && argc_ < IOP_MAX_EXEC_ARGS) argv[argc_++] = va_arg(ap, char *); \
  if (argv[argc_ - 1]) { errno = E2BIG; va_end(ap); return -1; }

IOP_EXPORT int execl(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  GATHER_ARGS(arg, argv, ap);
  va_end(ap);
  return execv(path, argv);
}

IOP_EXPORT int execlp(const char *file, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  GATHER_ARGS(arg, argv, ap);
  va_end(ap);
  return execvp(file, argv);
}

IOP_EXPORT int execle(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  GATHER_ARGS(arg, argv, ap);
  char *const *envp = va_arg(ap, char *const *);
  va_end(ap);
  return execve(path, argv, envp);
}

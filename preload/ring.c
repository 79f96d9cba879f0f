/* Per-thread rings and the consumer thread.
 *
 * Each application thread appends events to a single-producer ring of its
 * own: no lock is shared between threads on the hot path. One background
 * C thread drains every ring and hands whole batches to Go, so the Go
 * runtime runs on that thread only (and on callers of the prediction API).
 * A full ring makes its thread wait for the consumer: nothing recorded is
 * dropped. Rings of threads that ended are reused by new threads, so a
 * short-lived thread costs no allocation once the process has warmed up. */
#include "iop.h"

#include <limits.h>
#include "iopred.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define IOP_RING_CAP 1024 /* events; a power of two */

struct iop_ring {
  _Atomic uint64_t head; /* next slot the producer writes */
  uint64_t tail_seen;    /* the producer's last look at tail: it rereads the
                          * consumer's cache line only when this says full */
  char pad1[48];
  _Atomic uint64_t tail; /* next slot the consumer reads */
  char pad2[56];
  int32_t tid;
  _Atomic int state; /* RING_LIVE, RING_DEAD (thread ended), RING_FREE (drained, reusable) */
  struct iop_ring *next;
  struct iop_event ev[IOP_RING_CAP];
};
enum { RING_LIVE, RING_DEAD, RING_FREE };

static struct iop_ring *_Atomic rings;
static IOP_TLS struct iop_ring *my_ring;
static pthread_key_t ring_key;
static pthread_once_t consumer_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t drain_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t wake_word;
/* Producers waiting for room in a full ring, and the word they wait on:
 * the consumer bumps it, and wakes them, whenever it frees ring slots
 * while one waits. */
static _Atomic int room_waiters;
static _Atomic uint32_t room_word;
static _Atomic int consumer_started;
static _Atomic uint64_t dropped;
/* 1: the session has written its last footer; 2: this is a forked child,
 * whose records go to its spill (spill.c) and never to Go. */
static volatile int finished;
enum { FINISHED = 1, SPILLING = 2 };

/* Set by the Go side's package initialiser: the runtime has finished
 * starting. Entering Go from a C thread while the runtime still starts,
 * with another thread forking, was seen to crash the process (about one
 * run in a hundred of a forking shell); iopred waits for this instead. */
static _Atomic uint32_t go_ready;

IOP_HIDDEN void iop_go_ready_set(void) {
  atomic_store(&go_ready, 1);
  syscall(SYS_futex, &go_ready, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
  iop_fd_gate_go_started();
}

/* wait_go_ready waits for the Go runtime, at most about ten seconds: a
 * runtime that never comes up costs the trace, never a hung program. */
static int wait_go_ready(void) {
  int64_t deadline = iop_now() + 10000000000LL;
  while (!atomic_load(&go_ready) && iop_now() < deadline) {
    struct timespec ts = {0, 100000000};
    syscall(SYS_futex, &go_ready, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
  }
  return atomic_load(&go_ready);
}

/* Exported by the Go side (session.go). */
extern void iopGoIngest(struct iop_event *evs, int n);
extern void iopGoFinish(int reason);
extern int iopGoFrameOpen(void);
extern int iopGoPredict(struct iopred_prediction *out, int max);
extern int iopGoPeriod(struct iopred_period_result *out, int mode);

static void futex_wake(_Atomic uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

static void wake_consumer(void) {
  atomic_fetch_add(&wake_word, 1);
  futex_wake(&wake_word);
}

static void ring_thread_exit(void *p) {
  struct iop_ring *r = p;
  if (r) atomic_store(&r->state, RING_DEAD);
}

static void *consumer_main(void *arg);

static void start_consumer(void) {
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  /* The consumer must never take a signal meant for the application. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  if (pthread_create(&t, &attr, consumer_main, NULL) == 0) atomic_store(&consumer_started, 1);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
}

static struct iop_ring *ring_acquire(void) {
  for (struct iop_ring *r = atomic_load(&rings); r; r = r->next) {
    int free_state = RING_FREE;
    if (atomic_compare_exchange_strong(&r->state, &free_state, RING_LIVE)) {
      r->tid = iop_gettid();
      my_ring = r;
      pthread_setspecific(ring_key, r);
      return r;
    }
  }
  struct iop_ring *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r == MAP_FAILED) return NULL;
  r->tid = iop_gettid();
  atomic_store(&r->state, RING_LIVE);
  struct iop_ring *head = atomic_load(&rings);
  do r->next = head;
  while (!atomic_compare_exchange_weak(&rings, &head, r));
  my_ring = r;
  pthread_setspecific(ring_key, r);
  return r;
}

/* iop_ring_reserve returns the slot the calling thread's next event goes
 * to, waiting for the consumer if the ring is full, or NULL when the event
 * cannot be kept (counted as dropped). iop_ring_commit publishes it. */
IOP_HIDDEN struct iop_event *iop_ring_reserve(void) {
  if (IOP_UNLIKELY(finished)) {
    if (finished == SPILLING) return iop_spill_scratch();
    atomic_fetch_add(&dropped, 1);
    return NULL;
  }
  struct iop_ring *r = my_ring;
  if (IOP_UNLIKELY(!r)) {
    pthread_once(&consumer_once, start_consumer);
    r = ring_acquire();
    if (!r) {
      atomic_fetch_add(&dropped, 1);
      return NULL;
    }
  }
  uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
  if (IOP_LIKELY(h - r->tail_seen < IOP_RING_CAP)) return &r->ev[h & (IOP_RING_CAP - 1)];
  uint64_t t = r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
  if (IOP_UNLIKELY(h - t >= IOP_RING_CAP)) {
    /* Back-pressure: wait for the consumer rather than lose the event,
     * until it frees slots (it wakes us then), at most 200 us at a time. */
    atomic_fetch_add(&room_waiters, 1);
    for (;;) {
      uint32_t w = atomic_load(&room_word);
      t = r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
      if (h - t < IOP_RING_CAP) break;
      if (finished || !atomic_load(&consumer_started)) {
        atomic_fetch_sub(&room_waiters, 1);
        atomic_fetch_add(&dropped, 1);
        return NULL;
      }
      wake_consumer();
      struct timespec ts = {0, 200000};
      syscall(SYS_futex, &room_word, FUTEX_WAIT_PRIVATE, w, &ts, NULL, 0);
    }
    atomic_fetch_sub(&room_waiters, 1);
  }
  return &r->ev[h & (IOP_RING_CAP - 1)];
}

IOP_HIDDEN void iop_ring_commit(void) {
  struct iop_ring *r = my_ring;
  if (IOP_UNLIKELY(!r)) { /* a spilling child: reserve gave the scratch event */
    iop_spill_commit();
    return;
  }
  uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed) + 1;
  atomic_store_explicit(&r->head, h, memory_order_release);
  /* Half full by the last look: look again, and wake the consumer if the
   * ring really is filling up. */
  if (IOP_UNLIKELY(h - r->tail_seen == IOP_RING_CAP / 2)) {
    r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (h - r->tail_seen >= IOP_RING_CAP / 2) wake_consumer();
  }
}

/* Set once the process has forked: the consumer then calls into Go even
 * while nothing is recorded, so that children that ended are converted
 * from their spills within the scan interval (children.go), not only at
 * the parent's next event. */
static _Atomic int forked_any;

IOP_HIDDEN void iop_record_proc(int kind, int64_t aux) {
  if (kind == IOP_KIND_FORK) atomic_store_explicit(&forked_any, 1, memory_order_relaxed);
  if (iop_in) return;
  iop_in = 1;
  struct iop_event *e = iop_ring_reserve();
  if (e) {
    memset(e, 0, sizeof *e);
    e->start_ns = e->end_ns = iop_clock();
    e->offset = -1;
    e->aux = aux;
    e->kind = (uint8_t)kind;
    e->op = kind == IOP_KIND_FORK ? IOP_OP_fork : IOP_OP_exec;
    iop_ring_commit();
  }
  iop_in = 0;
}

/* ---- the consumer side ---- */

#define IOP_BATCH 4096
static struct iop_event batch[IOP_BATCH]; /* guarded by drain_mutex */

IOP_HIDDEN void iop_lock_drain(void) { pthread_mutex_lock(&drain_mutex); }
IOP_HIDDEN void iop_unlock_drain(void) { pthread_mutex_unlock(&drain_mutex); }

/* room_freed wakes the producers waiting for ring slots, if any. */
static void room_freed(void) {
  if (IOP_LIKELY(!atomic_load(&room_waiters))) return;
  atomic_fetch_add(&room_word, 1);
  syscall(SYS_futex, &room_word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Must be called with drain_mutex held. Returns the number of events. */
static long drain_locked(void) {
  long total = 0;
  int n = 0;
  for (struct iop_ring *r = atomic_load(&rings); r; r = r->next) {
    int state = atomic_load(&r->state);
    if (state == RING_FREE) continue;
    uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    while (t < h) {
      batch[n] = r->ev[t & (IOP_RING_CAP - 1)];
      batch[n].tid = r->tid;
      n++;
      t++;
      if (n == IOP_BATCH) {
        atomic_store_explicit(&r->tail, t, memory_order_release);
        room_freed();
        iopGoIngest(batch, n);
        total += n;
        n = 0;
      }
    }
    atomic_store_explicit(&r->tail, t, memory_order_release);
    room_freed();
    if (state == RING_DEAD && t == atomic_load(&r->head)) {
      int dead = RING_DEAD;
      atomic_compare_exchange_strong(&r->state, &dead, RING_FREE);
    }
  }
  if (n > 0) iopGoIngest(batch, n);
  return total + n;
}

IOP_HIDDEN void iop_drain_and_ingest(void) {
  pthread_mutex_lock(&drain_mutex);
  if (!finished) {
    long n = drain_locked();
    /* With nothing new, Go still closes a frame that has grown too old. */
    if (n == 0 && (atomic_load_explicit(&forked_any, memory_order_relaxed) || iopGoFrameOpen())) iopGoIngest(NULL, 0);
  }
  pthread_mutex_unlock(&drain_mutex);
}

/* The exiting thread's shutdown, run by the consumer (see iop_shutdown):
 * shutdown_req is the reason + 1, shutdown_done is bumped once it is over. */
static _Atomic uint32_t shutdown_req;
static _Atomic uint32_t shutdown_done;
static void shutdown_locked(int reason);

static void *consumer_main(void *arg) {
  (void)arg;
  iop_in = 1; /* whatever this thread does is iopred's own */
  long wait_ms = iop_cfg.flush_ms / 4;
  if (wait_ms < 5) wait_ms = 5;
  if (wait_ms > 100) wait_ms = 100;
  /* Enter Go as soon as its runtime is up: the first call and the
   * trace's creation then overlap with the program's work instead of
   * delaying its exit. */
  int ready = wait_go_ready();
  for (;;) {
    /* The wake word is read before draining: a producer that asks for a
     * drain while this one runs (its ring half full, or full) makes the
     * wait below return at once, so a busy producer never waits for the
     * timeout with the consumer idle. */
    uint32_t w = atomic_load(&wake_word);
    uint32_t req = atomic_exchange(&shutdown_req, 0);
    if (req) {
      pthread_mutex_lock(&drain_mutex);
      shutdown_locked((int)req - 1);
      pthread_mutex_unlock(&drain_mutex);
      atomic_fetch_add(&shutdown_done, 1);
      syscall(SYS_futex, &shutdown_done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
      continue;
    }
    if (finished) {
      if (iop_state != IOP_ACTIVE) return NULL;
    } else if (ready || (ready = atomic_load(&go_ready))) {
      iop_drain_and_ingest();
    }
    struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000};
    syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, w, &ts, NULL, 0);
  }
}

IOP_HIDDEN void iop_ring_init(void) { pthread_key_create(&ring_key, ring_thread_exit); }

/* iop_ring_after_fork runs in a forked child: its one thread must never
 * enter Go or wait for a consumer that did not survive the fork, and the
 * parent's rings and locks (another thread may have held them at the
 * fork) are not the child's. Every record goes to the child's spill. */
IOP_HIDDEN void iop_ring_after_fork(void) {
  finished = SPILLING;
  atomic_store(&forked_any, 0);
  my_ring = NULL;
  atomic_store(&rings, NULL);
  atomic_store(&consumer_started, 0);
  atomic_store(&room_waiters, 0);
  pthread_mutex_init(&drain_mutex, NULL);
}

static void shutdown_locked(int reason) {
  if (!finished && atomic_load(&consumer_started) && wait_go_ready()) {
    drain_locked();
    iopGoFinish(reason);
  }
  finished = 1;
}

/* shutdown_by_consumer has the consumer thread close the trace and waits
 * for it, until deadline (CLOCK_MONOTONIC ns; 0: no bound). The exiting
 * thread does not enter Go itself: a thread's first call into Go costs
 * it an M of its own (the runtime reads /proc/self/maps for the main
 * thread's stack bounds and makes the next spare M), and the only P,
 * which the consumer's M keeps while it waits in C, comes to another M
 * only when the runtime's monitor takes it back, up to 10 ms later. The
 * consumer has both already. Returns 1 when the trace was closed, 0 when
 * there is no consumer, -1 past the deadline. */
static int shutdown_by_consumer(int reason, int64_t deadline) {
  if (!atomic_load(&consumer_started)) return 0;
  uint32_t seen = atomic_load(&shutdown_done);
  atomic_store(&shutdown_req, (uint32_t)reason + 1);
  wake_consumer();
  while (atomic_load(&shutdown_done) == seen) {
    int64_t now = iop_now();
    if (deadline && now >= deadline) return -1;
    struct timespec ts = {0, 20000000};
    syscall(SYS_futex, &shutdown_done, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
  }
  return 1;
}

/* iop_shutdown hands every pending event to Go and closes the trace with
 * its footer. reason 0: the process exits; 1: it is about to exec. */
IOP_HIDDEN void iop_shutdown(int reason) {
  int was = iop_in;
  iop_in = 1;
  if (shutdown_by_consumer(reason, 0) == 0) {
    pthread_mutex_lock(&drain_mutex);
    shutdown_locked(reason);
    pthread_mutex_unlock(&drain_mutex);
  }
  iop_in = was;
}

/* iop_shutdown_bounded is iop_shutdown for an exit that may come from a
 * signal handler. The caller is outside iopred (iop_in clear), so the
 * drain lock is held, if at all, by another thread: the consumer, or a
 * caller of the C API, which let it go once done. But that thread may
 * wait in turn for a lock the interrupted code holds (malloc's), so the
 * wait is bounded: past it the trace is left without its last records,
 * as a kill would, rather than the program hung. It returns whether the
 * trace was closed. */
IOP_HIDDEN int iop_shutdown_bounded(int reason) {
  int was = iop_in;
  iop_in = 1;
  int done = shutdown_by_consumer(reason, iop_now() + 2000000000LL);
  if (done == 0) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    done = pthread_mutex_timedlock(&drain_mutex, &until) == 0;
    if (done) {
      shutdown_locked(reason);
      pthread_mutex_unlock(&drain_mutex);
    }
  }
  iop_in = was;
  return done > 0;
}

/* After an exec that failed, the process goes on: so does its trace,
 * whose writer accepts records after a footer (the last footer counts). */
IOP_HIDDEN void iop_exec_failed(void) {
  if (finished == SPILLING) return;
  pthread_mutex_lock(&drain_mutex);
  finished = 0;
  pthread_mutex_unlock(&drain_mutex);
}

IOP_HIDDEN uint64_t iop_dropped(void) { return atomic_load(&dropped); }

/* ---- the public C API that does not need Go ---- */

/* iop_flush_pending hands every pending event to Go and closes the open
 * trace frame, for a caller already inside iopred (iop_in set). It returns
 * 0 when Go cannot take them (the consumer or the runtime is not up). */
IOP_HIDDEN int iop_flush_pending(void) {
  if (finished == SPILLING) return 1; /* a child's records are in its spill file already */
  if (iop_state != IOP_ACTIVE || !atomic_load(&consumer_started) || !wait_go_ready()) return 0;
  pthread_mutex_lock(&drain_mutex);
  if (!finished) {
    drain_locked();
    iopGoFinish(2);
  }
  pthread_mutex_unlock(&drain_mutex);
  return 1;
}

IOP_EXPORT int iopred_flush(void) {
  if (iop_in) return 0;
  iop_in = 1;
  int r = iop_flush_pending();
  iop_in = 0;
  return r;
}

IOP_EXPORT int iopred_enabled(void) { return iop_state == IOP_ACTIVE; }

IOP_EXPORT int iopred_predict(struct iopred_prediction *out, int max) {
  /* A forked child has no model: it lives in the parent's Go runtime. */
  if (!out || max <= 0 || iop_state != IOP_ACTIVE || iop_in || finished == SPILLING || !wait_go_ready()) return 0;
  int e = errno;
  iop_in = 1;
  pthread_mutex_lock(&drain_mutex);
  int n = 0;
  if (!finished) {
    drain_locked();
    n = iopGoPredict(out, max);
  }
  pthread_mutex_unlock(&drain_mutex);
  iop_in = 0;
  errno = e;
  return n;
}

IOP_EXPORT int iopred_period(struct iopred_period_result *out, int mode) {
  if (!out || iop_state != IOP_ACTIVE || iop_in || finished == SPILLING || !wait_go_ready()) return -1;
  int e = errno;
  iop_in = 1;
  pthread_mutex_lock(&drain_mutex);
  int r = -1;
  if (!finished) {
    drain_locked();
    r = iopGoPeriod(out, mode);
  }
  pthread_mutex_unlock(&drain_mutex);
  iop_in = 0;
  errno = e;
  return r;
}

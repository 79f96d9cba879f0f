/* Internal declarations shared by the C side of libiopred.so.
 *
 * The hot path (an interposed call) touches only C: a thread-local guard,
 * two clock reads, the real call, the file-table update, the context
 * capture and one append to the calling thread's ring. A background C
 * thread drains the rings and hands whole batches to Go. */
#ifndef IOP_H
#define IOP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define IOP_HIDDEN __attribute__((visibility("hidden")))
/* A site makes traces group-readable by default by building with
 * CGO_CFLAGS=-DIOP_GROUP_READABLE_DEFAULT=1; IOPRED_GROUP_READABLE still
 * decides per run. */
#ifndef IOP_GROUP_READABLE_DEFAULT
#define IOP_GROUP_READABLE_DEFAULT 0
#endif
#define IOP_EXPORT __attribute__((visibility("default")))
#define IOP_LIKELY(x) __builtin_expect(!!(x), 1)
#define IOP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define IOP_TLS __thread __attribute__((tls_model("initial-exec")))

/* Operation codes: one per interposed function, from calls.def.h, plus the
 * process events. */
enum iop_op {
  IOP_OP_none = 0,
#define CALL(layer, R, name, params, args, pre, post) IOP_OP_##name,
#define VCALL(layer, R, name, params, lastarg, vreal, vargs, pre, post) IOP_OP_##name,
#include "calls.def.h"
#undef CALL
#undef VCALL
#define MPI_CALL(name, ...) IOP_OP_##name,
#include "mpiio.def.h"
#undef MPI_CALL
  IOP_OP_open, IOP_OP_open64, IOP_OP_openat, IOP_OP_openat64,
  IOP_OP_fcntl, IOP_OP_fcntl64, IOP_OP_rewind,
  IOP_OP_fork,
  IOP_OP_exec,
  IOP_OP_MAX
};

/* Layers, as in tracefmt. */
enum { IOP_POSIX = 0, IOP_STDIO = 1, IOP_MPIIO = 2 };

/* Event kinds in a ring. */
enum { IOP_KIND_EVENT = 0, IOP_KIND_FORK = 1, IOP_KIND_EXEC = 2 };

/* One recorded call. The producer fills everything but tid; the consumer
 * copies the thread id of the ring into each event it hands to Go. */
struct iop_event {
  int64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
  int64_t offset;           /* -1 when none */
  int64_t size;             /* bytes requested */
  int64_t ret;              /* return value as the program saw it */
  int64_t bytes;            /* bytes moved (data calls) */
  int64_t aux;              /* second operand: open flags, whence, other file, child pid */
  uint32_t file;            /* per-process open id, 0 when none */
  uint32_t ctx;             /* context slot + 1, 0 when capture is off */
  int32_t err;
  int32_t tid;
  uint16_t op;
  uint8_t kind;
  uint8_t layer;
  uint32_t pad;
  int64_t seq;    /* MPI-IO events: per-process sequence number, else 0 */
  int64_t parent; /* seq of the MPI-IO call this event happened inside, or
                   * that a completion completes; 0 when none */
};

/* Per-call state between the halves of a wrapper. */
struct iop_call {
  int64_t start_ns, end_ns;
  int64_t offset, size, bytes, aux, ret;
  uint32_t file;
  int err;
  uint8_t failed; /* the result says the call failed: errno is recorded */
  void *ofd;      /* the open file the pre hook found, for the post hook */
  uint16_t op;
  uint8_t layer;
  uint8_t record; /* set by the post hook when the call is worth recording */
  int64_t seq, parent; /* as in iop_event; iop_begin sets parent from iop_mpi_parent */
};

/* Configuration, read once from the environment at start. */
struct iop_config {
  int disabled;
  int all_fds;
  int ctx_depth;
  long flush_bytes;
  long flush_ms;
  int trace_fd_min; /* where the trace's descriptor goes: out of the program's way */
  int file_mode;    /* of traces, spills, models, job summaries: 0600, 0640 with IOPRED_GROUP_READABLE=1 */
  int dir_mode;     /* of the directories the library creates: 0700, 0750 */
  char dir[4096];
};
extern IOP_HIDDEN struct iop_config iop_cfg;

/* Process state: recording happens only in IOP_ACTIVE. */
enum { IOP_LOADING = 0, IOP_ACTIVE = 1, IOP_PASSIVE = 2 };
extern IOP_HIDDEN volatile int iop_state;
/* The time anchor of the trace: CLOCK_MONOTONIC and CLOCK_REALTIME ns
 * when the library started. */
extern IOP_HIDDEN int64_t iop_t0_mono, iop_t0_unix;

IOP_HIDDEN void *iop_resolve(const char *name);
/* Look up every wrapper's real function (wrappers.c), and the stream
 * position function (files.c), while the library starts. */
IOP_HIDDEN void iop_resolve_wrapped(void);
IOP_HIDDEN void iop_stream_pos_resolve(void);
IOP_HIDDEN int iop_begin(struct iop_call *c, int op, int layer);
IOP_HIDDEN void iop_end(struct iop_call *c);
/* CLOCK_MONOTONIC in ns, read through the vDSO (30 to 45 ns here). */
IOP_HIDDEN int64_t iop_now(void);

#include "clock.h"

/* File tracking hooks (files.c). */
IOP_HIDDEN void iop_pre_fd(struct iop_call *c, int fd, int64_t size, int64_t off);
IOP_HIDDEN void iop_post_rw(struct iop_call *c, int fd, int64_t r, int positional);
IOP_HIDDEN void iop_post_fdmeta(struct iop_call *c, int fd, int64_t r);
IOP_HIDDEN void iop_post_seek(struct iop_call *c, int fd, int64_t r, int whence);
IOP_HIDDEN void iop_post_close(struct iop_call *c, int fd, int r);
IOP_HIDDEN void iop_post_dup(struct iop_call *c, int fd, int newfd);
IOP_HIDDEN void iop_post_open(struct iop_call *c, int dirfd, const char *path, int flags, int fd);
IOP_HIDDEN void iop_post_path(struct iop_call *c, int dirfd, const char *path, int r, int is_regular);
IOP_HIDDEN void iop_post_copy(struct iop_call *c, int fd_in, int in_positional, int fd_out, int out_positional, int64_t r);
IOP_HIDDEN void iop_drop_fds(unsigned lo, unsigned hi);
IOP_HIDDEN int64_t iop_iov_size(const void *iov, int cnt);
IOP_HIDDEN uint32_t iop_file_of_fd(int fd);
IOP_HIDDEN const char *iop_file_path(uint32_t id);
IOP_HIDDEN int iop_file_fd(uint32_t id);
IOP_HIDDEN uint32_t iop_file_lookup(const char *path);
IOP_HIDDEN int iop_fd_tracked(int fd);
/* The gate between the program's descriptor-creating calls and iopred's
 * own opens (files.c). */
IOP_HIDDEN void iop_app_fd_enter(void);
IOP_HIDDEN void iop_app_fd_leave(void);
IOP_HIDDEN int iop_open_private(const char *path, int flags, int mode);
IOP_HIDDEN void iop_fd_gate_go_starting(const void *gomaxprocs);
IOP_HIDDEN void iop_fd_gate_go_started(void);
IOP_HIDDEN int64_t iop_fd_offset(int fd);

/* stdio hooks (files.c). */
IOP_HIDDEN void iop_pre_stream(struct iop_call *c, FILE *fp, int64_t size);
IOP_HIDDEN void iop_post_stream(struct iop_call *c, FILE *fp, int64_t bytes);
IOP_HIDDEN void iop_post_fopen(struct iop_call *c, const char *path, const char *mode, FILE *fp);
IOP_HIDDEN void iop_post_fclose(struct iop_call *c, int fd, int r);

/* Contexts (context.c). */
IOP_HIDDEN uint32_t iop_capture(void);
IOP_HIDDEN int iop_ctx_pcs(uint32_t ctx, uintptr_t *pcs, int max);
IOP_HIDDEN void iop_context_init(void);

/* Rings and the consumer (ring.c). */
IOP_HIDDEN struct iop_event *iop_ring_reserve(void);
IOP_HIDDEN void iop_ring_commit(void);
IOP_HIDDEN void iop_record_proc(int kind, int64_t aux);
IOP_HIDDEN void iop_drain_and_ingest(void);
IOP_HIDDEN int iop_flush_pending(void);
IOP_HIDDEN void iop_ring_init(void);
IOP_HIDDEN void iop_shutdown(int reason);
IOP_HIDDEN int iop_shutdown_bounded(int reason);
IOP_HIDDEN void iop_go_ready_set(void);
IOP_HIDDEN void iop_lock_drain(void);
IOP_HIDDEN void iop_unlock_drain(void);
IOP_HIDDEN void iop_ring_after_fork(void);

/* The spill of a forked child (spill.c). */
IOP_HIDDEN void iop_spill_after_fork(int root);
IOP_HIDDEN struct iop_event *iop_spill_scratch(void);
IOP_HIDDEN void iop_spill_commit(void);
IOP_HIDDEN void iop_spill_end(int state);
IOP_HIDDEN int iop_spill_active(void);
IOP_HIDDEN void iop_spill_init(void);
IOP_HIDDEN void iop_files_after_fork(void);

/* The thread-local reentrancy guard: nonzero while iopred's own code runs
 * on this thread, so calls made by iopred itself, or by a signal handler
 * that interrupted it, pass through. It is clear during the real call, so
 * a handler that interrupts the application's I/O is recorded. */
extern IOP_HIDDEN IOP_TLS int iop_in;

/* The seq of the MPI-IO call this thread is inside (mpiio.c), 0 outside:
 * the POSIX calls an MPI-IO call makes underneath point to it. */
extern IOP_HIDDEN IOP_TLS int64_t iop_mpi_parent;

/* iop_enter is iop_begin for the generated wrappers (CALL and VCALL),
 * inlined: one branch decides (the state and the guard are tested
 * together), and only the fields the hooks read before the wrapper sets
 * them are stored (ret and failed are set right after the real call). */
static inline __attribute__((always_inline)) int iop_enter(struct iop_call *c, int op, int layer) {
  if (IOP_UNLIKELY((iop_state ^ IOP_ACTIVE) | iop_in)) return 0;
  iop_in = 1;
  c->op = (uint16_t)op;
  c->layer = (uint8_t)layer;
  c->record = 0;
  c->offset = -1;
  c->size = 0;
  c->bytes = 0;
  c->aux = 0;
  c->file = 0;
  c->ofd = NULL;
  c->seq = 0;
  c->parent = iop_mpi_parent;
  return 1;
}

/* The result as the trace records it: pointers become 1 (or 0 for NULL). */
#define iop_ret(r) _Generic((r), FILE *: (int64_t)((r) != 0), char *: (int64_t)((r) != 0), \
                            size_t: (int64_t)(size_t)(uintptr_t)(r), default: (int64_t)(intptr_t)(r))
#define iop_failed(r) _Generic((r), FILE *: (r) == 0, char *: (r) == 0, size_t: 0, default: (intptr_t)(r) < 0)

IOP_HIDDEN const char *iop_op_name(int op);
IOP_HIDDEN int iop_op_layer(int op);
IOP_HIDDEN int iop_gettid(void);
IOP_HIDDEN void iop_warn(const char *msg);

#endif

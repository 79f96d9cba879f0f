/* MPI-IO interposition, generated from mpiio.def.h.
 *
 * One libiopred.so serves Open MPI and MPICH (and the MPICH ABI family)
 * without mpi.h: every handle is an opaque register-sized value that the
 * wrappers pass on untouched (Open MPI's handles are pointers; MPICH's
 * datatypes, communicators and requests are ints, its MPI_File a pointer;
 * MPI_Offset is a 64-bit integer in both). The few things that differ and
 * that iopred must read itself (MPI_COMM_WORLD, MPI_BYTE, the ignore-status
 * value, the width of a request and of a status in an array) are chosen at
 * the first MPI call from which implementation the process holds. The
 * PMPI_ functions are found then, with dlsym: a program without MPI never
 * calls a wrapper here and needs no MPI symbol.
 *
 * Each recorded MPI-IO call gets a per-process sequence number (seq); the
 * POSIX calls it makes underneath carry it as their parent (iop_begin
 * reads the thread's iop_mpi_parent). A nonblocking call (and a
 * split-collective begin) is recorded when issued with the bytes it
 * requests in size and 0 in bytes; its completion (MPI_Wait, MPI_Test and
 * their all/any/some forms, or the _end call) is recorded as its own event
 * whose parent is the issuing call's seq, with the bytes the status
 * reports. MPI-IO calls the MPI library makes inside another one pass
 * through, so that each of the program's calls is traced once.
 *
 * Offsets: the explicit-offset calls translate their etype offset with
 * PMPI_File_get_byte_offset; the individual and shared file pointer calls
 * read the pointer (PMPI_File_get_position[_shared]) just before the call.
 * That is exact for the individual pointer; at the shared pointer, other
 * ranks may move it between iopred's read and the call, and an _ordered
 * call is recorded at the shared pointer at entry (between the
 * collective's start and the rank's own start). Files opened with
 * MPI_MODE_SEQUENTIAL have no positions: their events carry none.
 *
 * Sequence numbers are taken by every call that may complete a request of
 * ours, even one that completes none (an MPI_Test in a polling loop), so
 * the recorded seqs increase with gaps.
 *
 * Fortran: Open MPI's Fortran bindings (mpif.h, use mpi, use mpi_f08) call
 * the PMPI_ names, so the Fortran entry points are wrapped too
 * (mpi_file_write_at_ and Open MPI's ompi_file_write_at_f, which the f08
 * bindings call). MPICH's mpif.h/use mpi bindings and its mpi_f08 data
 * calls call the MPI_ names and pass straight to the C wrappers; its
 * mpi_f08 open, close, seek, view, size, sync, wait/test, init and
 * finalize call PMPI_, so those mpi_*_f08_ entry points are wrapped. A
 * wrapper that is not for the running implementation forwards at once. */
#include "iop.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef uintptr_t mh;      /* an MPI handle: pointer or int, as the implementation has it */
typedef long long moff;    /* MPI_Offset */

IOP_HIDDEN IOP_TLS int64_t iop_mpi_parent;
IOP_HIDDEN int iop_mpi_rank = -1; /* MPI_COMM_WORLD rank once MPI_Init returned */

#define MPI_ERR_FALLBACK 16 /* nonzero: a function the MPI library lacks */
#define MPI_UNDEFINED_VAL (-32766) /* the same in Open MPI and MPICH */
#define STATUS_MAX 64              /* bytes: larger than either implementation's MPI_Status */
#define MODE_SEQUENTIAL 256        /* the same in both */
#define SEEK_SET_VAL 600           /* MPI_SEEK_SET, the same in both */

enum { IMPL_UNKNOWN = 0, IMPL_OMPI = 1, IMPL_MPICH = 2 };

static struct {
  _Atomic int ready;
  int impl;
  mh comm_world, byte;
  uintptr_t status_ignore; /* MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE */
  size_t status_size, req_size;
  int *f_status_ignore;   /* Open MPI's Fortran MPI_STATUS_IGNORE */
  int *f_statuses_ignore; /* and MPI_STATUSES_IGNORE */
  void *f08_status_ignore[2], *f08_statuses_ignore[2]; /* MPICH's mpi_f08 ones */
  int (*type_size)(mh, int *);
  int (*byte_offset)(mh, moff, moff *);
  int (*position)(mh, moff *);
  int (*position_shared)(mh, moff *);
  int (*get_count)(const void *, mh, int *);
  int (*comm_rank)(mh, int *);
  mh (*file_f2c)(int);
  mh (*type_f2c)(int);
  int (*status_f2c)(const int *, void *);
  mh (*request_f2c)(int);
} mpi;

/* ---- finding MPI's functions ----
 * The MPI library may be outside the global symbol scope: a plugin (a
 * Python extension module, say) linked with it and loaded with
 * dlopen(RTLD_LOCAL) brings it in as a local dependency. Its calls still
 * reach the wrappers here, first in the global scope, but RTLD_NEXT and
 * RTLD_DEFAULT do not see the library: then every loaded object is asked
 * in turn, through its own handle. */
struct sym_query {
  const char *name;
  void *found;
};

static int in_self(const void *p) {
  Dl_info self, other;
  return dladdr((void *)&in_self, &self) && dladdr(p, &other) && self.dli_fbase == other.dli_fbase;
}

static int sym_query_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct sym_query *q = data;
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0; /* the program: in the global scope */
  void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return 0;
  void *p = dlsym(h, q->name);
  dlclose(h);
  if (p && !in_self(p)) {
    q->found = p;
    return 1;
  }
  return 0;
}

/* mpi_lookup finds name: after libiopred.so in the global scope (next),
 * anywhere in it, or in any loaded object. */
static void *mpi_lookup(const char *name, int next) {
  int was = iop_in;
  iop_in = 1;
  void *p = dlsym(next ? RTLD_NEXT : RTLD_DEFAULT, name);
  if (p && in_self(p)) p = NULL;
  if (!p) {
    struct sym_query q = {name, NULL};
    dl_iterate_phdr(sym_query_cb, &q);
    p = q.found;
  }
  iop_in = was;
  return p;
}

static void *mpi_sym(const char *name) { return mpi_lookup(name, 0); }

/* Runs at the first MPI call; racing first calls compute the same values. */
static void mpi_setup(void) {
  if (IOP_LIKELY(atomic_load_explicit(&mpi.ready, memory_order_acquire))) return;
  void *world = mpi_sym("ompi_mpi_comm_world");
  if (world) {
    mpi.impl = IMPL_OMPI;
    mpi.comm_world = (mh)world;
    mpi.byte = (mh)mpi_sym("ompi_mpi_byte");
    mpi.status_ignore = 0;
    mpi.status_size = 24; /* int source, tag, error, _cancelled; size_t _ucount */
    mpi.req_size = sizeof(void *);
    mpi.f_status_ignore = mpi_sym("mpi_fortran_status_ignore_");
    mpi.f_statuses_ignore = mpi_sym("mpi_fortran_statuses_ignore_");
  } else {
    mpi.impl = IMPL_MPICH;
    mpi.comm_world = 0x44000000;
    mpi.byte = 0x4c00010d;
    mpi.status_ignore = 1;
    mpi.status_size = 20; /* int count_lo, count_hi_and_cancelled, source, tag, error */
    mpi.req_size = sizeof(int);
    mpi.f08_status_ignore[0] = mpi_sym("MPIR_F08_MPI_STATUS_IGNORE_OBJ");
    mpi.f08_statuses_ignore[0] = mpi_sym("MPIR_F08_MPI_STATUSES_IGNORE_OBJ");
    void **p = mpi_sym("MPI_F08_STATUS_IGNORE"), **q = mpi_sym("MPI_F08_STATUSES_IGNORE");
    mpi.f08_status_ignore[1] = p ? *p : NULL;
    mpi.f08_statuses_ignore[1] = q ? *q : NULL;
  }
  mpi.type_size = (int (*)(mh, int *))mpi_sym("PMPI_Type_size");
  mpi.byte_offset = (int (*)(mh, moff, moff *))mpi_sym("PMPI_File_get_byte_offset");
  mpi.position = (int (*)(mh, moff *))mpi_sym("PMPI_File_get_position");
  mpi.position_shared = (int (*)(mh, moff *))mpi_sym("PMPI_File_get_position_shared");
  mpi.get_count = (int (*)(const void *, mh, int *))mpi_sym("PMPI_Get_count");
  mpi.comm_rank = (int (*)(mh, int *))mpi_sym("PMPI_Comm_rank");
  mpi.file_f2c = (mh(*)(int))mpi_sym("PMPI_File_f2c");
  mpi.type_f2c = (mh(*)(int))mpi_sym("PMPI_Type_f2c");
  mpi.status_f2c = (int (*)(const int *, void *))mpi_sym("PMPI_Status_f2c");
  mpi.request_f2c = (mh(*)(int))mpi_sym("PMPI_Request_f2c");
  atomic_store_explicit(&mpi.ready, 1, memory_order_release);
}

static _Atomic int64_t mpi_seq;
static inline int64_t next_seq(void) { return atomic_fetch_add_explicit(&mpi_seq, 1, memory_order_relaxed) + 1; }

/* ---- small tables under a spin lock: open files and pending requests ---- */

typedef atomic_int spin_t;
static inline void lock(spin_t *l) {
  while (atomic_exchange_explicit(l, 1, memory_order_acquire))
    while (atomic_load_explicit(l, memory_order_relaxed)) __builtin_ia32_pause();
}
static inline void unlock(spin_t *l) { atomic_store_explicit(l, 0, memory_order_release); }

#define TOMB ((uintptr_t)-1)
static inline size_t hash_handle(uintptr_t h) { return (size_t)((h * 0x9e3779b97f4a7c15ull) >> 40); }

struct mfile {
  uintptr_t fh; /* 0 free, TOMB removed */
  uint32_t file;
  int amode;
  int64_t split_off, split_size, split_seq; /* the pending split collective */
};
#define MFILES 1024
static struct mfile mfiles[MFILES];
static spin_t mfiles_lock;

/* Returns the slot of fh (creating it when add), or NULL. Lock held. */
static struct mfile *mfile_slot(uintptr_t fh, int add) {
  struct mfile *free_slot = NULL;
  for (size_t i = hash_handle(fh) & (MFILES - 1), n = 0; n < MFILES; i = (i + 1) & (MFILES - 1), n++) {
    struct mfile *m = &mfiles[i];
    if (m->fh == fh) return m;
    if (m->fh == TOMB && !free_slot) free_slot = m;
    if (m->fh == 0) {
      if (!free_slot) free_slot = m;
      break;
    }
  }
  if (!add || !free_slot) return NULL;
  memset(free_slot, 0, sizeof *free_slot);
  free_slot->fh = fh;
  return free_slot;
}

static uint32_t mfile_id(mh fh, int *amode) {
  lock(&mfiles_lock);
  struct mfile *m = mfile_slot(fh, 0);
  uint32_t id = m ? m->file : 0;
  if (amode) *amode = m ? m->amode : 0;
  unlock(&mfiles_lock);
  return id;
}

struct mreq {
  uintptr_t req; /* 0 free, TOMB removed */
  uint32_t file;
  int64_t offset, size, seq;
};
#define MREQS 4096
static struct mreq mreqs[MREQS];
static spin_t mreqs_lock;
static _Atomic int mreqs_pending; /* requests of ours not yet completed */

static void mreq_add(uintptr_t req, uint32_t file, int64_t offset, int64_t size, int64_t seq) {
  lock(&mreqs_lock);
  struct mreq *free_slot = NULL;
  for (size_t i = hash_handle(req) & (MREQS - 1), n = 0; n < MREQS; i = (i + 1) & (MREQS - 1), n++) {
    struct mreq *m = &mreqs[i];
    if (m->req == req) { /* a stale entry: the handle was reused */
      free_slot = m;
      atomic_fetch_sub(&mreqs_pending, 1);
      break;
    }
    if (m->req == TOMB && !free_slot) free_slot = m;
    if (m->req == 0) {
      if (!free_slot) free_slot = m;
      break;
    }
  }
  if (free_slot) {
    *free_slot = (struct mreq){req, file, offset, size, seq};
    atomic_fetch_add(&mreqs_pending, 1);
  }
  unlock(&mreqs_lock);
}

/* Finds req; with take, removes it. Returns 1 and fills *out when found. */
static int mreq_find(uintptr_t req, struct mreq *out, int take) {
  int found = 0;
  lock(&mreqs_lock);
  for (size_t i = hash_handle(req) & (MREQS - 1), n = 0; n < MREQS; i = (i + 1) & (MREQS - 1), n++) {
    struct mreq *m = &mreqs[i];
    if (m->req == 0) break;
    if (m->req == req) {
      *out = *m;
      found = 1;
      if (take) {
        m->req = TOMB;
        atomic_fetch_sub(&mreqs_pending, 1);
      }
      break;
    }
  }
  unlock(&mreqs_lock);
  return found;
}

/* The C handle of a Fortran request: MPICH's are the same integers. */
static inline uintptr_t fortran_request(int f) {
  if (mpi.impl == IMPL_MPICH) return (uintptr_t)(unsigned)f;
  return mpi.request_f2c ? mpi.request_f2c(f) : 0;
}

static inline uintptr_t load_req(const void *reqs, int i) {
  if (mpi.req_size == sizeof(int)) return (uintptr_t)(unsigned)((const int *)reqs)[i];
  return ((const uintptr_t *)reqs)[i];
}

/* ---- recording ---- */

/* mpi_begin starts recording an MPI call; 0 means pass it through (iopred
 * is not recording, or this call is made inside another MPI-IO call). */
static inline int mpi_begin(struct iop_call *c, int op) {
  if (iop_mpi_parent || !iop_begin(c, op, IOP_MPIIO)) return 0;
  mpi_setup();
  c->parent = 0;
  c->record = 1;
  return 1;
}

/* Where a data call starts, in bytes. */
enum { AT_EXPLICIT, AT_INDIVIDUAL, AT_SHARED };

static void mpi_pre_data(struct iop_call *c, mh fh, int where, moff off, int count, mh dt) {
  int amode = 0;
  c->file = mfile_id(fh, &amode);
  int tsize = 0;
  if (mpi.type_size && mpi.type_size(dt, &tsize) == 0 && count > 0) c->size = (int64_t)count * tsize;
  if (amode & MODE_SEQUENTIAL) return; /* positions are erroneous on such files */
  int ok = 1;
  if (where == AT_INDIVIDUAL) ok = mpi.position && mpi.position(fh, &off) == 0;
  if (where == AT_SHARED) ok = mpi.position_shared && mpi.position_shared(fh, &off) == 0;
  moff bytes;
  if (ok && mpi.byte_offset && mpi.byte_offset(fh, off, &bytes) == 0) c->offset = bytes;
}

/* The bytes a completed status reports, or fallback when it cannot say. */
static int64_t status_bytes(const void *st, int64_t fallback) {
  int n = 0;
  if (!st || !mpi.get_count || !mpi.byte || mpi.get_count(st, mpi.byte, &n) != 0 || n == MPI_UNDEFINED_VAL || n < 0)
    return fallback;
  return n;
}

static inline void *status_for(void *st, void *own) {
  return (uintptr_t)st == mpi.status_ignore ? own : st;
}

/* Records one more event from the current call (the second and later
 * requests a Waitall completes). */
static void mpi_record(const struct iop_call *c) {
  uint32_t ctx = iop_capture();
  struct iop_event *e = iop_ring_reserve();
  if (!e) return;
  e->start_ns = c->start_ns;
  e->end_ns = c->end_ns;
  e->offset = c->offset;
  e->size = c->size;
  e->ret = c->ret;
  e->bytes = c->bytes;
  e->aux = c->aux;
  e->file = c->file;
  e->ctx = ctx;
  e->err = 0;
  e->op = c->op;
  e->kind = IOP_KIND_EVENT;
  e->layer = c->layer;
  e->seq = c->seq;
  e->parent = c->parent;
  iop_ring_commit();
}

/* Brackets the real call: the POSIX calls inside see iop_in clear and
 * this call's seq as their parent. */
#define MPI_REAL_CALL(c, expr)                                            \
  do {                                                                   \
    (c).seq = next_seq();                                                \
    iop_mpi_parent = (c).seq;                                            \
    (c).start_ns = iop_clock();                                            \
    iop_in = 0;                                                          \
    r = expr;                                                            \
    iop_in = 1;                                                          \
    (c).end_ns = iop_clock();                                              \
    (c).err = errno;                                                     \
    iop_mpi_parent = 0;                                                  \
    (c).ret = r;                                                         \
  } while (0)

#define MPI_FINISH(c)  \
  do {                 \
    iop_end(&(c));     \
    errno = (c).err;   \
    return r;          \
  } while (0)

#define MPI_REAL(name, params)                                            \
  static int(*real_##name) params;                                       \
  static inline int(*mpi_real_##name(void)) params {                     \
    if (IOP_UNLIKELY(!real_##name)) real_##name = (int(*) params)mpi_lookup(#name, 1); \
    return real_##name;                                                  \
  }

#define MPI_GET_REAL(name)                     \
  int r;                                       \
  __typeof__(real_##name) real = mpi_real_##name(); \
  if (IOP_UNLIKELY(!real)) return MPI_ERR_FALLBACK; \
  struct iop_call c

/* ---- blocking data ---- */

static void data_done(struct iop_call *c, int r, const void *st) {
  c->bytes = r == 0 ? status_bytes(st, c->size) : 0;
}

#define MPI_WRAP_AT(name, stem)                                                        \
  MPI_REAL(name, (mh, moff, void *, int, mh, void *))                                  \
  IOP_EXPORT int name(mh fh, moff off, void *buf, int count, mh dt, void *st) {        \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh, off, buf, count, dt, st);       \
    mpi_pre_data(&c, fh, AT_EXPLICIT, off, count, dt);                                 \
    char own[STATUS_MAX];                                                              \
    void *s = status_for(st, own);                                                     \
    MPI_REAL_CALL(c, real(fh, off, buf, count, dt, s));                                \
    data_done(&c, r, s);                                                               \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_AT(name, stem)

#define MPI_WRAP_FPX(name, stem, where)                                                \
  MPI_REAL(name, (mh, void *, int, mh, void *))                                        \
  IOP_EXPORT int name(mh fh, void *buf, int count, mh dt, void *st) {                  \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh, buf, count, dt, st);            \
    mpi_pre_data(&c, fh, where, 0, count, dt);                                         \
    char own[STATUS_MAX];                                                              \
    void *s = status_for(st, own);                                                     \
    MPI_REAL_CALL(c, real(fh, buf, count, dt, s));                                     \
    data_done(&c, r, s);                                                               \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_FP(name, stem, where)
#define MPI_WRAP_FP(name, stem) MPI_WRAP_FPX(name, stem, AT_INDIVIDUAL)
#define MPI_WRAP_SH(name, stem) MPI_WRAP_FPX(name, stem, AT_SHARED)

/* ---- nonblocking data: recorded when issued, completed by MPI_Wait & co ---- */

static void issued(struct iop_call *c, int r, const void *req) {
  c->bytes = 0;
  if (r == 0 && req) mreq_add(load_req(req, 0), c->file, c->offset, c->size, c->seq);
}

#define MPI_WRAP_IAT(name, stem)                                                       \
  MPI_REAL(name, (mh, moff, void *, int, mh, void *))                                  \
  IOP_EXPORT int name(mh fh, moff off, void *buf, int count, mh dt, void *req) {       \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh, off, buf, count, dt, req);      \
    mpi_pre_data(&c, fh, AT_EXPLICIT, off, count, dt);                                 \
    MPI_REAL_CALL(c, real(fh, off, buf, count, dt, req));                              \
    issued(&c, r, req);                                                                \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_IAT(name, stem)

#define MPI_WRAP_IFPX(name, stem, where)                                               \
  MPI_REAL(name, (mh, void *, int, mh, void *))                                        \
  IOP_EXPORT int name(mh fh, void *buf, int count, mh dt, void *req) {                 \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh, buf, count, dt, req);           \
    mpi_pre_data(&c, fh, where, 0, count, dt);                                         \
    MPI_REAL_CALL(c, real(fh, buf, count, dt, req));                                   \
    issued(&c, r, req);                                                                \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_IFP(name, stem, where)
#define MPI_WRAP_IFP(name, stem) MPI_WRAP_IFPX(name, stem, AT_INDIVIDUAL)
#define MPI_WRAP_ISH(name, stem) MPI_WRAP_IFPX(name, stem, AT_SHARED)

/* ---- split collectives: the begin is recorded like an issue, the end
 * like a completion ---- */

static void split_begun(struct iop_call *c, mh fh, int r) {
  c->bytes = 0;
  if (r != 0) return;
  lock(&mfiles_lock);
  struct mfile *m = mfile_slot(fh, 0);
  if (m) {
    m->split_off = c->offset;
    m->split_size = c->size;
    m->split_seq = c->seq;
  }
  unlock(&mfiles_lock);
}

#define MPI_WRAP_BAT(name, stem)                                                       \
  MPI_REAL(name, (mh, moff, void *, int, mh))                                          \
  IOP_EXPORT int name(mh fh, moff off, void *buf, int count, mh dt) {                  \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh, off, buf, count, dt);           \
    mpi_pre_data(&c, fh, AT_EXPLICIT, off, count, dt);                                 \
    MPI_REAL_CALL(c, real(fh, off, buf, count, dt));                                   \
    split_begun(&c, fh, r);                                                            \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_BAT(name, stem)

#define MPI_WRAP_BFPX(name, stem, where)                                               \
  MPI_REAL(name, (mh, void *, int, mh))                                                \
  IOP_EXPORT int name(mh fh, void *buf, int count, mh dt) {                            \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh, buf, count, dt);                \
    mpi_pre_data(&c, fh, where, 0, count, dt);                                         \
    MPI_REAL_CALL(c, real(fh, buf, count, dt));                                        \
    split_begun(&c, fh, r);                                                            \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_BFP(name, stem, where)
#define MPI_WRAP_BFP(name, stem) MPI_WRAP_BFPX(name, stem, AT_INDIVIDUAL)
#define MPI_WRAP_BSH(name, stem) MPI_WRAP_BFPX(name, stem, AT_SHARED)

static void split_pre_end(struct iop_call *c, mh fh) {
  lock(&mfiles_lock);
  struct mfile *m = mfile_slot(fh, 0);
  if (m) {
    c->file = m->file;
    c->offset = m->split_off;
    c->size = m->split_size;
    c->aux = m->split_seq; /* moved to parent once this call has its seq */
    m->split_seq = 0;
  }
  unlock(&mfiles_lock);
}

#define MPI_WRAP_END(name, stem)                                                       \
  MPI_REAL(name, (mh, void *, void *))                                                 \
  IOP_EXPORT int name(mh fh, void *buf, void *st) {                                    \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh, buf, st);                       \
    split_pre_end(&c, fh);                                                             \
    char own[STATUS_MAX];                                                              \
    void *s = status_for(st, own);                                                     \
    MPI_REAL_CALL(c, real(fh, buf, s));                                                \
    c.parent = c.aux;                                                                  \
    c.aux = 0;                                                                         \
    data_done(&c, r, s);                                                               \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_END(name, stem)

/* ---- files ---- */

/* The trace's path for an MPI file name: without ROMIO's "ufs:"-style
 * prefix, made absolute. */
static uint32_t mpi_path_id(const char *name, size_t len) {
  char path[4096];
  if (!name) return 0;
  const char *colon = memchr(name, ':', len < 16 ? len : 16);
  if (colon && colon - name >= 2) {
    len -= (size_t)(colon + 1 - name);
    name = colon + 1;
  }
  size_t n = 0;
  if (len == 0 || name[0] != '/') {
    if (syscall(SYS_getcwd, path, sizeof path) > 0) {
      n = strlen(path);
      if (n + 1 < sizeof path && (n == 0 || path[n - 1] != '/')) path[n++] = '/';
    }
    while (len >= 2 && name[0] == '.' && name[1] == '/') {
      name += 2;
      len -= 2;
    }
  }
  if (n + len >= sizeof path) len = sizeof path - 1 - n;
  memcpy(path + n, name, len);
  path[n + len] = 0;
  return iop_file_lookup(path);
}

static void opened(struct iop_call *c, int r, const char *name, size_t len, int amode, mh fh) {
  c->aux = amode;
  c->file = mpi_path_id(name, len);
  if (r != 0 || !c->file) return;
  lock(&mfiles_lock);
  struct mfile *m = mfile_slot(fh, 1);
  if (m) {
    m->file = c->file;
    m->amode = amode;
  }
  unlock(&mfiles_lock);
}

#define MPI_WRAP_OPEN(name, stem)                                                      \
  MPI_REAL(name, (mh, const char *, int, mh, mh *))                                    \
  IOP_EXPORT int name(mh comm, const char *fname, int amode, mh info, mh *fh) {        \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(comm, fname, amode, info, fh);     \
    MPI_REAL_CALL(c, real(comm, fname, amode, info, fh));                              \
    opened(&c, r, fname, fname ? strlen(fname) : 0, amode, fh ? *fh : 0);              \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_OPEN(name, stem)

static void closing(struct iop_call *c, mh fh) { c->file = mfile_id(fh, NULL); }
static void closed(mh fh, int r) {
  if (r != 0) return;
  lock(&mfiles_lock);
  struct mfile *m = mfile_slot(fh, 0);
  if (m) m->fh = TOMB;
  unlock(&mfiles_lock);
}

#define MPI_WRAP_CLOSE(name, stem)                                                     \
  MPI_REAL(name, (mh *))                                                               \
  IOP_EXPORT int name(mh *fh) {                                                        \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh);                                \
    mh was = fh ? *fh : 0;                                                             \
    closing(&c, was);                                                                  \
    MPI_REAL_CALL(c, real(fh));                                                        \
    closed(was, r);                                                                    \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_CLOSE(name, stem)

#define MPI_WRAP_DELETE(name, stem)                                                    \
  MPI_REAL(name, (const char *, mh))                                                   \
  IOP_EXPORT int name(const char *fname, mh info) {                                    \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fname, info);                       \
    MPI_REAL_CALL(c, real(fname, info));                                               \
    c.file = mpi_path_id(fname, fname ? strlen(fname) : 0);                            \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_DELETE(name, stem)

#define MPI_WRAP_SIZE(name, stem)                                                      \
  MPI_REAL(name, (mh, moff))                                                           \
  IOP_EXPORT int name(mh fh, moff size) {                                              \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh, size);                          \
    c.file = mfile_id(fh, NULL);                                                       \
    c.size = size;                                                                     \
    MPI_REAL_CALL(c, real(fh, size));                                                  \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_SIZE(name, stem)

#define MPI_WRAP_SYNC(name, stem)                                                      \
  MPI_REAL(name, (mh))                                                                 \
  IOP_EXPORT int name(mh fh) {                                                         \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh);                                \
    c.file = mfile_id(fh, NULL);                                                       \
    MPI_REAL_CALL(c, real(fh));                                                        \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_SYNC(name, stem)

/* A seek is recorded at the byte offset it set, as lseek is: the one it
 * was given with MPI_SEEK_SET (other ranks may move a shared pointer
 * before iopred could read it back), else the position read after it. */
static void sought(struct iop_call *c, mh fh, int r, moff off, int whence, int shared) {
  int amode = 0;
  c->file = mfile_id(fh, &amode);
  c->aux = whence;
  moff pos = off, bytes;
  if (r != 0 || (amode & MODE_SEQUENTIAL)) return;
  if (whence != SEEK_SET_VAL) {
    int (*get)(mh, moff *) = shared ? mpi.position_shared : mpi.position;
    if (!get || get(fh, &pos) != 0) return;
  }
  if (mpi.byte_offset && mpi.byte_offset(fh, pos, &bytes) == 0) c->offset = bytes;
}

#define MPI_WRAP_SEEKX(name, stem, shared)                                             \
  MPI_REAL(name, (mh, moff, int))                                                      \
  IOP_EXPORT int name(mh fh, moff off, int whence) {                                   \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh, off, whence);                   \
    MPI_REAL_CALL(c, real(fh, off, whence));                                           \
    sought(&c, fh, r, off, whence, shared);                                                 \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_SEEK(name, stem, shared)
#define MPI_WRAP_SEEK(name, stem) MPI_WRAP_SEEKX(name, stem, 0)
#define MPI_WRAP_SEEKSH(name, stem) MPI_WRAP_SEEKX(name, stem, 1)

/* A view is recorded with its displacement as the offset. */
#define MPI_WRAP_VIEW(name, stem)                                                      \
  MPI_REAL(name, (mh, moff, mh, mh, const char *, mh))                                 \
  IOP_EXPORT int name(mh fh, moff disp, mh etype, mh ftype, const char *rep, mh info) { \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(fh, disp, etype, ftype, rep, info); \
    c.file = mfile_id(fh, NULL);                                                       \
    c.offset = disp;                                                                   \
    MPI_REAL_CALL(c, real(fh, disp, etype, ftype, rep, info));                         \
    MPI_FINISH(c);                                                                     \
  }                                                                                    \
  FORTRAN_VIEW(name, stem)

/* ---- completions ----
 * A completion call is recorded only when it completes requests of ours:
 * one event per such request, the first with the call's own seq. Other
 * calls (message passing) cost one load of a counter. */

struct completion {
  int n;
  struct mreq *mine; /* per request index: the issue it completes (req 0 = not ours) */
  struct mreq small[16];
};

/* Snapshots which of reqs[0..n) are ours; returns how many. */
static int completion_scan(struct completion *cp, int n, const void *reqs, int fortran) {
  cp->n = n;
  cp->mine = n <= 16 ? cp->small : malloc((size_t)n * sizeof *cp->mine);
  if (!cp->mine) return 0;
  int found = 0;
  for (int i = 0; i < n; i++) {
    cp->mine[i].req = 0;
    uintptr_t h = fortran ? fortran_request(((const int *)reqs)[i]) : load_req(reqs, i);
    if (h && mreq_find(h, &cp->mine[i], 0)) found++;
  }
  return found;
}

static void completion_free(struct completion *cp) {
  if (cp->mine && cp->mine != cp->small) free(cp->mine);
}

/* Records the completion of request index i, whose status is st. */
static void completed(struct iop_call *c, struct completion *cp, int i, const void *st, int *first) {
  if (i < 0 || i >= cp->n || !cp->mine[i].req) return;
  struct mreq m;
  if (!mreq_find(cp->mine[i].req, &m, 1)) return;
  struct iop_call e = *c;
  e.file = m.file;
  e.offset = m.offset;
  e.size = m.size;
  e.parent = m.seq;
  e.bytes = status_bytes(st, m.size);
  if (!*first) e.seq = next_seq();
  *first = 0;
  mpi_record(&e);
}

static inline const void *status_at(const void *sts, int i) { return (const char *)sts + (size_t)i * mpi.status_size; }

/* The statuses the call fills: the caller's, or ours when it ignores them. */
static void *statuses_for(void *sts, int n, void *own, size_t own_cap, void **heap) {
  *heap = NULL;
  if ((uintptr_t)sts != mpi.status_ignore) return sts;
  size_t need = (size_t)(n > 0 ? n : 1) * mpi.status_size;
  if (need <= own_cap) return own;
  return *heap = malloc(need);
}

#define COMPLETION_PROLOGUE(name, count, reqs, passcall)                   \
  MPI_GET_REAL(name);                                                      \
  if (IOP_LIKELY(atomic_load_explicit(&mreqs_pending, memory_order_relaxed) == 0) || \
      !mpi_begin(&c, IOP_OP_##name))                                       \
    return passcall;                                                       \
  struct completion cp;                                                    \
  if (!(reqs) || completion_scan(&cp, (count), (reqs), 0) == 0) {             \
    if (reqs) completion_free(&cp);                                        \
    c.record = 0;                                                          \
    iop_end(&c);                                                           \
    return passcall;                                                       \
  }                                                                        \
  c.record = 0; /* the events are written by completed() */                \
  int first = 1

#define MPI_WRAP_WAIT(name, stem)                                                      \
  MPI_REAL(name, (void *, void *))                                                     \
  IOP_EXPORT int name(void *req, void *st) {                                           \
    COMPLETION_PROLOGUE(name, 1, req, real(req, st));                                  \
    char own[STATUS_MAX];                                                              \
    void *s = status_for(st, own);                                                     \
    MPI_REAL_CALL(c, real(req, s));                                                    \
    if (r == 0) completed(&c, &cp, 0, s, &first);                                      \
    completion_free(&cp);                                                              \
    MPI_FINISH(c);                                                                     \
  }

#define MPI_WRAP_TEST(name, stem)                                                      \
  MPI_REAL(name, (void *, int *, void *))                                              \
  IOP_EXPORT int name(void *req, int *flag, void *st) {                                \
    COMPLETION_PROLOGUE(name, 1, req, real(req, flag, st));                            \
    char own[STATUS_MAX];                                                              \
    void *s = status_for(st, own);                                                     \
    MPI_REAL_CALL(c, real(req, flag, s));                                              \
    if (r == 0 && flag && *flag) completed(&c, &cp, 0, s, &first);                     \
    completion_free(&cp);                                                              \
    MPI_FINISH(c);                                                                     \
  }

#define MPI_WRAP_WAITALL(name, stem)                                                   \
  MPI_REAL(name, (int, void *, void *))                                                \
  IOP_EXPORT int name(int n, void *reqs, void *sts) {                                  \
    COMPLETION_PROLOGUE(name, n, reqs, real(n, reqs, sts));                            \
    char own[16 * STATUS_MAX];                                                         \
    void *heap;                                                                        \
    void *s = statuses_for(sts, n, own, sizeof own, &heap);                            \
    if (!s) s = sts;                                                                   \
    MPI_REAL_CALL(c, real(n, reqs, s));                                                \
    for (int i = 0; i < n; i++)                                                        \
      completed(&c, &cp, i, (uintptr_t)s == mpi.status_ignore ? NULL : status_at(s, i), &first); \
    free(heap);                                                                        \
    completion_free(&cp);                                                              \
    MPI_FINISH(c);                                                                     \
  }

#define MPI_WRAP_TESTALL(name, stem)                                                   \
  MPI_REAL(name, (int, void *, int *, void *))                                         \
  IOP_EXPORT int name(int n, void *reqs, int *flag, void *sts) {                       \
    COMPLETION_PROLOGUE(name, n, reqs, real(n, reqs, flag, sts));                      \
    char own[16 * STATUS_MAX];                                                         \
    void *heap;                                                                        \
    void *s = statuses_for(sts, n, own, sizeof own, &heap);                            \
    if (!s) s = sts;                                                                   \
    MPI_REAL_CALL(c, real(n, reqs, flag, s));                                          \
    if (flag && *flag)                                                                 \
      for (int i = 0; i < n; i++)                                                      \
        completed(&c, &cp, i, (uintptr_t)s == mpi.status_ignore ? NULL : status_at(s, i), &first); \
    free(heap);                                                                        \
    completion_free(&cp);                                                              \
    MPI_FINISH(c);                                                                     \
  }

#define MPI_WRAP_WAITANY(name, stem)                                                   \
  MPI_REAL(name, (int, void *, int *, void *))                                         \
  IOP_EXPORT int name(int n, void *reqs, int *idx, void *st) {                         \
    COMPLETION_PROLOGUE(name, n, reqs, real(n, reqs, idx, st));                        \
    char own[STATUS_MAX];                                                              \
    void *s = status_for(st, own);                                                     \
    MPI_REAL_CALL(c, real(n, reqs, idx, s));                                           \
    if (r == 0 && idx) completed(&c, &cp, *idx, s, &first);                            \
    completion_free(&cp);                                                              \
    MPI_FINISH(c);                                                                     \
  }

#define MPI_WRAP_TESTANY(name, stem)                                                   \
  MPI_REAL(name, (int, void *, int *, int *, void *))                                  \
  IOP_EXPORT int name(int n, void *reqs, int *idx, int *flag, void *st) {              \
    COMPLETION_PROLOGUE(name, n, reqs, real(n, reqs, idx, flag, st));                  \
    char own[STATUS_MAX];                                                              \
    void *s = status_for(st, own);                                                     \
    MPI_REAL_CALL(c, real(n, reqs, idx, flag, s));                                     \
    if (r == 0 && flag && *flag && idx) completed(&c, &cp, *idx, s, &first);           \
    completion_free(&cp);                                                              \
    MPI_FINISH(c);                                                                     \
  }

#define MPI_WRAP_SOMEX(name, stem)                                                     \
  MPI_REAL(name, (int, void *, int *, int *, void *))                                  \
  IOP_EXPORT int name(int n, void *reqs, int *outcount, int *idxs, void *sts) {        \
    COMPLETION_PROLOGUE(name, n, reqs, real(n, reqs, outcount, idxs, sts));            \
    char own[16 * STATUS_MAX];                                                         \
    void *heap;                                                                        \
    void *s = statuses_for(sts, n, own, sizeof own, &heap);                            \
    if (!s) s = sts;                                                                   \
    MPI_REAL_CALL(c, real(n, reqs, outcount, idxs, s));                                \
    if (r == 0 && outcount && idxs)                                                    \
      for (int k = 0; k < *outcount && *outcount != MPI_UNDEFINED_VAL; k++)            \
        completed(&c, &cp, idxs[k], (uintptr_t)s == mpi.status_ignore ? NULL : status_at(s, k), &first); \
    free(heap);                                                                        \
    completion_free(&cp);                                                              \
    MPI_FINISH(c);                                                                     \
  }
#define MPI_WRAP_WAITSOME(name, stem) MPI_WRAP_SOMEX(name, stem)
#define MPI_WRAP_TESTSOME(name, stem) MPI_WRAP_SOMEX(name, stem)

/* A request freed before completion will never be waited for: forget it,
 * so that its handle, once reused for another request, is not taken for
 * ours. Nothing is recorded. */
#define MPI_WRAP_REQFREE(name, stem)                                                   \
  MPI_REAL(name, (void *))                                                             \
  IOP_EXPORT int name(void *req) {                                                     \
    int (*real)(void *) = mpi_real_##name();                                           \
    if (IOP_UNLIKELY(!real)) return MPI_ERR_FALLBACK;                                  \
    struct mreq m;                                                                     \
    if (atomic_load_explicit(&mreqs_pending, memory_order_relaxed) > 0 && req &&       \
        atomic_load_explicit(&mpi.ready, memory_order_acquire))                        \
      mreq_find(load_req(req, 0), &m, 1);                                              \
    return real(req);                                                                  \
  }
#define FORTRAN_EXTRA_REQFREE(name, stem)

/* ---- MPI itself ---- */

static void mpi_started(int r) {
  int rank;
  if (r == 0 && mpi.comm_rank && mpi.comm_rank(mpi.comm_world, &rank) == 0) iop_mpi_rank = rank;
}

#define MPI_WRAP_INIT(name, stem)                                                      \
  MPI_REAL(name, (int *, char ***))                                                    \
  IOP_EXPORT int name(int *argc, char ***argv) {                                       \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(argc, argv);                        \
    MPI_REAL_CALL(c, real(argc, argv));                                                \
    mpi_started(r);                                                                    \
    MPI_FINISH(c);                                                                     \
  }

#define MPI_WRAP_INITT(name, stem)                                                     \
  MPI_REAL(name, (int *, char ***, int, int *))                                        \
  IOP_EXPORT int name(int *argc, char ***argv, int required, int *provided) {          \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real(argc, argv, required, provided);    \
    c.aux = required;                                                                  \
    MPI_REAL_CALL(c, real(argc, argv, required, provided));                            \
    mpi_started(r);                                                                    \
    MPI_FINISH(c);                                                                     \
  }

/* ---- the whole-job summary at MPI_Finalize ----
 * Before MPI shuts down, every rank condenses its I/O into a partial
 * summary (Go: analyzer/job) and the partials travel up a binomial tree
 * to rank 0 with MPI's own point-to-point calls on a private duplicate of
 * MPI_COMM_WORLD: at step s = 1, 2, 4, ..., a rank with bit s set sends
 * its partial (ranks r .. r+s-1 merged) to rank r-s and is done; the
 * others receive from r+s, if any, and merge. Rank 0 ends with the
 * partial of the whole job and writes the summary beside its trace. Each
 * message is bounded (analyzer/job's bounds), so rank 0's memory and time
 * do not grow with the events of the job, and its steps with log2(ranks).
 *
 * The duplicate communicator is made with the nonblocking MPI_Comm_idup
 * and a deadline: a rank that is not traced (the library preloaded in some
 * ranks only) never joins, and the others give up the summary instead of
 * waiting in MPI_Finalize forever. A rank whose partial cannot be made
 * still takes its place in the tree, sending an empty message, so no rank
 * waits for a message that never comes. IOPRED_JOB=0 turns the summary
 * off. The idup given up stays pending; both Open MPI and MPICH finalize
 * regardless (tests/mpi TestJobPartlyTraced). */
extern int iopGoJobStart(int rank);
extern int iopGoJobAbsorb(char *p, long n);
extern int iopGoJobEncode(char **out, long *n);
extern int iopGoJobWrite(long long entered_ns, long long merge_ns, long received);

#define JOB_TAG_LEN 0x10b1
#define JOB_TAG_DATA 0x10b2
#define JOB_WAIT_MS 30000 /* how long ranks wait for each other to join */

static struct {
  int (*comm_idup)(mh, mh *, mh *);
  int (*comm_free)(mh *);
  int (*comm_size)(mh, int *);
  int (*test)(mh *, int *, void *);
  int (*send)(const void *, int, mh, int, int, mh);
  int (*recv)(void *, int, mh, int, int, mh, void *);
  int (*set_errhandler)(mh, mh);
  mh errors_return;
} pmpi;

static int job_setup(void) {
  pmpi.comm_idup = (int (*)(mh, mh *, mh *))mpi_sym("PMPI_Comm_idup");
  pmpi.comm_free = (int (*)(mh *))mpi_sym("PMPI_Comm_free");
  pmpi.comm_size = (int (*)(mh, int *))mpi_sym("PMPI_Comm_size");
  pmpi.test = (int (*)(mh *, int *, void *))mpi_sym("PMPI_Test");
  pmpi.send = (int (*)(const void *, int, mh, int, int, mh))mpi_sym("PMPI_Send");
  pmpi.recv = (int (*)(void *, int, mh, int, int, mh, void *))mpi_sym("PMPI_Recv");
  pmpi.set_errhandler = (int (*)(mh, mh))mpi_sym("PMPI_Comm_set_errhandler");
  pmpi.errors_return = mpi.impl == IMPL_OMPI ? (mh)mpi_sym("ompi_mpi_errors_return") : 0x54000001;
  return pmpi.set_errhandler && pmpi.errors_return && pmpi.comm_idup && pmpi.comm_free && pmpi.comm_size && pmpi.test && pmpi.send && pmpi.recv && mpi.comm_rank;
}

/* job_join makes the private communicator, or gives up at the deadline
 * (IOPRED_JOB_WAIT_MS, default 30 s). */
static int job_join(mh *comm) {
  mh req = 0;
  char st[STATUS_MAX];
  long wait_ms = JOB_WAIT_MS;
  const char *v = getenv("IOPRED_JOB_WAIT_MS");
  if (v && *v) {
    char *end;
    long w = strtol(v, &end, 10);
    if (*end == 0 && w >= 0) wait_ms = w;
    else iop_warn("IOPRED_JOB_WAIT_MS is not a number of milliseconds; using 30000");
  }
  if (pmpi.comm_idup(mpi.comm_world, comm, &req) != 0) return 0;
  int64_t deadline = iop_now() + (int64_t)wait_ms * 1000000;
  for (long spins = 0;; spins++) {
    int done = 0;
    if (pmpi.test(&req, &done, st) != 0) return 0;
    /* A failure on the private communicator must come back as an error
     * code, not abort the job. */
    if (done) return pmpi.set_errhandler(*comm, pmpi.errors_return) == 0;
    if (iop_now() > deadline) {
      iop_warn("job summary skipped: not every rank joined within IOPRED_JOB_WAIT_MS (is the library preloaded in every rank?)");
      return 0;
    }
    if (spins > 1000) {
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
  }
}

static void job_at_finalize(void) {
  const char *v = getenv("IOPRED_JOB");
  if (v && strcmp(v, "0") == 0) return;
  if (!job_setup()) return;
  int64_t entered = iop_now();
  int rank, size;
  if (mpi.comm_rank(mpi.comm_world, &rank) != 0 || pmpi.comm_size(mpi.comm_world, &size) != 0) return;
  mh comm = 0;
  if (!job_join(&comm)) return;

  /* This rank's partial: every event so far handed to Go first. From
   * here on, "ok" says whether this rank's partial is whole; a rank
   * whose partial is not sends an empty message. */
  int go = iop_flush_pending();
  int ok = 0;
  if (go) {
    iop_lock_drain();
    ok = iopGoJobStart(rank);
    iop_unlock_drain();
  }
  int64_t merge_ns = 0;
  long received = 0;
  char st[STATUS_MAX];
  for (int step = 1; step < size; step <<= 1) {
    if (rank & step) {
      char *buf = NULL;
      long len = 0;
      if (ok && !iopGoJobEncode(&buf, &len)) len = 0;
      long long n = len;
      pmpi.send(&n, (int)sizeof n, mpi.byte, rank - step, JOB_TAG_LEN, comm);
      if (n > 0) pmpi.send(buf, (int)n, mpi.byte, rank - step, JOB_TAG_DATA, comm);
      free(buf);
      ok = 0;
      break;
    }
    if (rank + step >= size) continue;
    long long n = 0;
    if (pmpi.recv(&n, (int)sizeof n, mpi.byte, rank + step, JOB_TAG_LEN, comm, st) != 0) n = 0;
    if (n <= 0 || n >= INT32_MAX) {
      ok = 0; /* a rank's partial is missing: the summary would lie */
      continue;
    }
    /* The message must be taken even when there is no room for it: a
     * receive too small for it fails (errors return on this
     * communicator) but matches it. */
    char *other = malloc((size_t)n);
    char sink;
    if (!other || pmpi.recv(other, (int)n, mpi.byte, rank + step, JOB_TAG_DATA, comm, st) != 0) {
      if (!other) pmpi.recv(&sink, 1, mpi.byte, rank + step, JOB_TAG_DATA, comm, st);
      ok = 0;
    }
    received += (long)n;
    int64_t t = iop_now();
    if (ok) ok = iopGoJobAbsorb(other, (long)n);
    merge_ns += iop_now() - t;
    free(other);
  }
  if (rank == 0) {
    if (ok) {
      iopGoJobWrite((long long)entered, (long long)merge_ns, received);
    } else if (go) {
      iop_warn("job summary not written: a rank's partial summary is missing (IOPRED_DEBUG=1 says why)");
    }
  }
  pmpi.comm_free(&comm);
}

#define MPI_WRAP_FINI(name, stem)                                                      \
  MPI_REAL(name, (void))                                                               \
  IOP_EXPORT int name(void) {                                                          \
    MPI_GET_REAL(name);                                                                \
    if (!mpi_begin(&c, IOP_OP_##name)) return real();                                  \
    job_at_finalize();                                                                 \
    MPI_REAL_CALL(c, real());                                                          \
    MPI_FINISH(c);                                                                     \
  }

/* ---- Fortran entry points (Open MPI; see the top of this file) ----
 * Every Fortran argument is a pointer; handles are MPI_Fint (int),
 * converted with PMPI_*_f2c; strings come with a hidden length after the
 * last argument. Each stem gives two symbols: mpi_<stem>_ (mpif.h and
 * use mpi) and ompi_<stem>_f (what the mpi_f08 bindings call). */

typedef int fint;

/* The Fortran status the call fills, and the bytes it reports. */
static inline int fstatus_ignored(const void *st) {
  return !st || st == mpi.f_status_ignore || (st && (st == mpi.f08_status_ignore[0] || st == mpi.f08_status_ignore[1]));
}
static inline fint *fstatus_for(fint *st, fint *own) { return fstatus_ignored(st) ? own : st; }
static void fdata_done(struct iop_call *c, int r, const fint *fst) {
  c->bytes = 0;
  if (r != 0) return;
  char cst[STATUS_MAX];
  c->bytes = mpi.status_f2c && mpi.status_f2c(fst, cst) == 0 ? status_bytes(cst, c->size) : c->size;
}

/* fortran_begin: record this call here (Open MPI), or let the real
 * Fortran function reach the C wrappers (MPICH). */
static inline int fortran_begin(struct iop_call *c, int op, int impl) {
  if (iop_mpi_parent || iop_state != IOP_ACTIVE || iop_in) return 0;
  mpi_setup();
  /* MPICH has no PMPI_Type_f2c: its datatypes are the same integers. */
  if (mpi.impl != impl || !mpi.file_f2c || (impl == IMPL_OMPI && !mpi.type_f2c)) return 0;
  return mpi_begin(c, op);
}

#define FREAL(sym, params)                                                  \
  static void(*freal_##sym) params;                                        \
  static inline void(*f_real_##sym(void)) params {                         \
    if (IOP_UNLIKELY(!freal_##sym)) freal_##sym = (void(*) params)mpi_lookup(#sym, 1); \
    return freal_##sym;                                                    \
  }

/* FBOTH defines the two exported symbols of a stem around one body. */
#define FBOTH(op, stem, params, args, body)                                 \
  FBODY(mpi_##stem##_, op, IMPL_OMPI, params, args, body)                  \
  FBODY(ompi_##stem##_f, op, IMPL_OMPI, params, args, body)

/* FALL3 adds MPICH's mpi_f08 entry point, for the calls whose f08
 * binding goes to PMPI_ (its data calls go to the C MPI_ names); there
 * the error argument is optional (NULL when absent). */
#define FALL3(op, stem, params, args, body)                                 \
  FBOTH(op, stem, params, args, body)                                      \
  FBODY(mpi_##stem##_f08_, op, IMPL_MPICH, params, args, body)

#define FBODY(sym, op, impl, params, args, body)                            \
  FREAL(sym, params)                                                       \
  IOP_EXPORT void sym params {                                             \
    void(*real) params = f_real_##sym();                                   \
    if (IOP_UNLIKELY(!real)) {                                             \
      if (ierr) *ierr = MPI_ERR_FALLBACK;                                  \
      return;                                                              \
    }                                                                      \
    struct iop_call c;                                                     \
    if (!fortran_begin(&c, op, impl)) {                                          \
      real args;                                                           \
      return;                                                              \
    }                                                                      \
    int r;                                                                 \
    body;                                                                  \
    iop_end(&c);                                                           \
    errno = c.err;                                                         \
  }

#define FCALL(args)                                                         \
  do {                                                                     \
    c.seq = next_seq();                                                    \
    iop_mpi_parent = c.seq;                                                \
    c.start_ns = iop_clock();                                                \
    iop_in = 0;                                                            \
    real args;                                                             \
    iop_in = 1;                                                            \
    c.end_ns = iop_clock();                                                  \
    c.err = errno;                                                         \
    iop_mpi_parent = 0;                                                    \
    r = ierr ? *ierr : 0;                                                  \
    c.ret = r;                                                             \
  } while (0)


#define FORTRAN_AT(name, stem)                                                                   \
  FBOTH(IOP_OP_##name, stem, (fint *fh, moff *off, void *buf, fint *count, fint *dt, fint *st, fint *ierr),     \
        (fh, off, buf, count, dt, st, ierr), ({                                                  \
          mpi_pre_data(&c, mpi.file_f2c(*fh), AT_EXPLICIT, *off, *count, mpi.type_f2c(*dt));     \
          fint own[16];                                                                          \
          fint *s = fstatus_for(st, own);                                                        \
          FCALL((fh, off, buf, count, dt, s, ierr));                                             \
          fdata_done(&c, r, s);                                                                  \
        }))

#define FORTRAN_FP(name, stem, where)                                                            \
  FBOTH(IOP_OP_##name, stem, (fint *fh, void *buf, fint *count, fint *dt, fint *st, fint *ierr),                \
        (fh, buf, count, dt, st, ierr), ({                                                       \
          mpi_pre_data(&c, mpi.file_f2c(*fh), where, 0, *count, mpi.type_f2c(*dt));              \
          fint own[16];                                                                          \
          fint *s = fstatus_for(st, own);                                                        \
          FCALL((fh, buf, count, dt, s, ierr));                                                  \
          fdata_done(&c, r, s);                                                                  \
        }))

/* Fortran requests are completed through Fortran MPI_WAIT & co, which
 * Open MPI sends to PMPI_Wait: their Fortran entry points are wrapped
 * below and find the request by its C handle. */
static void fissued(struct iop_call *c, int r, const fint *req) {
  c->bytes = 0;
  if (r == 0 && req) mreq_add(fortran_request(*req), c->file, c->offset, c->size, c->seq);
}
#define FORTRAN_IAT(name, stem)                                                                  \
  FBOTH(IOP_OP_##name, stem, (fint *fh, moff *off, void *buf, fint *count, fint *dt, fint *req, fint *ierr),    \
        (fh, off, buf, count, dt, req, ierr), ({                                                 \
          mpi_pre_data(&c, mpi.file_f2c(*fh), AT_EXPLICIT, *off, *count, mpi.type_f2c(*dt));     \
          FCALL((fh, off, buf, count, dt, req, ierr));                                           \
          fissued(&c, r, req);                                                                   \
        }))

#define FORTRAN_IFP(name, stem, where)                                                           \
  FBOTH(IOP_OP_##name, stem, (fint *fh, void *buf, fint *count, fint *dt, fint *req, fint *ierr),               \
        (fh, buf, count, dt, req, ierr), ({                                                      \
          mpi_pre_data(&c, mpi.file_f2c(*fh), where, 0, *count, mpi.type_f2c(*dt));              \
          FCALL((fh, buf, count, dt, req, ierr));                                                \
          fissued(&c, r, req);                                                                   \
        }))

#define FORTRAN_BAT(name, stem)                                                                  \
  FBOTH(IOP_OP_##name, stem, (fint *fh, moff *off, void *buf, fint *count, fint *dt, fint *ierr),               \
        (fh, off, buf, count, dt, ierr), ({                                                      \
          mh cfh = mpi.file_f2c(*fh);                                                            \
          mpi_pre_data(&c, cfh, AT_EXPLICIT, *off, *count, mpi.type_f2c(*dt));                   \
          FCALL((fh, off, buf, count, dt, ierr));                                                \
          split_begun(&c, cfh, r);                                                               \
        }))

#define FORTRAN_BFP(name, stem, where)                                                           \
  FBOTH(IOP_OP_##name, stem, (fint *fh, void *buf, fint *count, fint *dt, fint *ierr),                          \
        (fh, buf, count, dt, ierr), ({                                                           \
          mh cfh = mpi.file_f2c(*fh);                                                            \
          mpi_pre_data(&c, cfh, where, 0, *count, mpi.type_f2c(*dt));                            \
          FCALL((fh, buf, count, dt, ierr));                                                     \
          split_begun(&c, cfh, r);                                                               \
        }))

#define FORTRAN_END(name, stem)                                                                  \
  FBOTH(IOP_OP_##name, stem, (fint *fh, void *buf, fint *st, fint *ierr), (fh, buf, st, ierr), ({               \
          split_pre_end(&c, mpi.file_f2c(*fh));                                                  \
          fint own[16];                                                                          \
          fint *s = fstatus_for(st, own);                                                        \
          FCALL((fh, buf, s, ierr));                                                             \
          c.parent = c.aux;                                                                      \
          c.aux = 0;                                                                             \
          fdata_done(&c, r, s);                                                                  \
        }))

#define FORTRAN_OPEN(name, stem)                                                                 \
  FALL3(IOP_OP_##name, stem, (fint *comm, const char *fname, fint *amode, fint *info, fint *fh, fint *ierr, size_t len), \
        (comm, fname, amode, info, fh, ierr, len), ({                                            \
          FCALL((comm, fname, amode, info, fh, ierr, len));                                      \
          size_t n = (unsigned)len;                                                              \
          while (n > 0 && fname[n - 1] == ' ') n--;                                              \
          opened(&c, r, fname, n, *amode, r == 0 ? mpi.file_f2c(*fh) : 0);                       \
        }))

#define FORTRAN_CLOSE(name, stem)                                                                \
  FALL3(IOP_OP_##name, stem, (fint *fh, fint *ierr), (fh, ierr), ({                                             \
          mh was = mpi.file_f2c(*fh);                                                            \
          closing(&c, was);                                                                      \
          FCALL((fh, ierr));                                                                     \
          closed(was, r);                                                                        \
        }))

#define FORTRAN_DELETE(name, stem)                                                               \
  FALL3(IOP_OP_##name, stem, (const char *fname, fint *info, fint *ierr, size_t len), (fname, info, ierr, len), ({ \
          FCALL((fname, info, ierr, len));                                                       \
          size_t n = (unsigned)len;                                                              \
          while (n > 0 && fname[n - 1] == ' ') n--;                                              \
          c.file = mpi_path_id(fname, n);                                                        \
        }))

#define FORTRAN_SIZE(name, stem)                                                                 \
  FALL3(IOP_OP_##name, stem, (fint *fh, moff *size, fint *ierr), (fh, size, ierr), ({                           \
          c.file = mfile_id(mpi.file_f2c(*fh), NULL);                                            \
          c.size = *size;                                                                        \
          FCALL((fh, size, ierr));                                                               \
        }))

#define FORTRAN_SYNC(name, stem)                                                                 \
  FALL3(IOP_OP_##name, stem, (fint *fh, fint *ierr), (fh, ierr), ({                                             \
          c.file = mfile_id(mpi.file_f2c(*fh), NULL);                                            \
          FCALL((fh, ierr));                                                                     \
        }))

#define FORTRAN_SEEK(name, stem, shared)                                                         \
  FALL3(IOP_OP_##name, stem, (fint *fh, moff *off, fint *whence, fint *ierr), (fh, off, whence, ierr), ({       \
          FCALL((fh, off, whence, ierr));                                                        \
          sought(&c, mpi.file_f2c(*fh), r, *off, *whence, shared);                                     \
        }))

#define FORTRAN_VIEW(name, stem)                                                                 \
  FALL3(IOP_OP_##name, stem, (fint *fh, moff *disp, fint *etype, fint *ftype, const char *rep, fint *info, fint *ierr, size_t len), \
        (fh, disp, etype, ftype, rep, info, ierr, len), ({                                       \
          c.file = mfile_id(mpi.file_f2c(*fh), NULL);                                            \
          c.offset = *disp;                                                                      \
          FCALL((fh, disp, etype, ftype, rep, info, ierr, len));                                 \
        }))

/* ---- Fortran completions and start/end of MPI (Open MPI) ---- */

#define FSTATUS_INTS 6 /* Open MPI's MPI_STATUS_SIZE */

static void fcompleted(struct iop_call *c, struct completion *cp, int i, const fint *fst, int *first) {
  char cst[STATUS_MAX];
  const void *st = fst && mpi.status_f2c && mpi.status_f2c(fst, cst) == 0 ? cst : NULL;
  completed(c, cp, i, st, first);
}

/* The Fortran statuses a call fills: the caller's, or ours. */
static fint *fstatuses_for(fint *sts, int n, fint *own, size_t own_ints, fint **heap) {
  *heap = NULL;
  if (sts && sts != mpi.f_statuses_ignore && sts != mpi.f08_statuses_ignore[0] && sts != mpi.f08_statuses_ignore[1])
    return sts;
  size_t need = (size_t)(n > 0 ? n : 1) * FSTATUS_INTS;
  if (need <= own_ints) return own;
  return *heap = malloc(need * sizeof(fint));
}

/* A completion call with none of our requests: passed on unrecorded. */
#define FPASS(args)      \
  do {                   \
    c.record = 0;        \
    iop_in = 0;          \
    real args;           \
    iop_in = 1;          \
    c.err = errno;       \
    r = ierr ? *ierr : 0; \
  } while (0)

#define FSCAN(count, reqs)                                                   \
  struct completion cp;                                                      \
  cp.mine = NULL;                                                            \
  int scanned = atomic_load_explicit(&mreqs_pending, memory_order_relaxed) > 0; \
  int mine = scanned ? completion_scan(&cp, (count), (reqs), 1) : 0;         \
  int first = 1;                                                             \
  c.record = 0

#define FSCAN_DONE() \
  if (scanned) completion_free(&cp)

#define FORTRAN_EXTRA_WAIT(name, stem)                                                           \
  FALL3(IOP_OP_##name, stem, (fint *req, fint *st, fint *ierr), (req, st, ierr), ({              \
          FSCAN(1, req);                                                                         \
          fint own[FSTATUS_INTS];                                                                \
          fint *s = fstatus_for(st, own);                                                        \
          if (!mine) FPASS((req, st, ierr));                                                     \
          else {                                                                                 \
            FCALL((req, s, ierr));                                                               \
            if (r == 0) fcompleted(&c, &cp, 0, s, &first);                                       \
          }                                                                                      \
          FSCAN_DONE();                                                                          \
        }))

#define FORTRAN_EXTRA_TEST(name, stem)                                                           \
  FALL3(IOP_OP_##name, stem, (fint *req, fint *flag, fint *st, fint *ierr), (req, flag, st, ierr), ({ \
          FSCAN(1, req);                                                                         \
          fint own[FSTATUS_INTS];                                                                \
          fint *s = fstatus_for(st, own);                                                        \
          if (!mine) FPASS((req, flag, st, ierr));                                               \
          else {                                                                                 \
            FCALL((req, flag, s, ierr));                                                         \
            if (r == 0 && *flag) fcompleted(&c, &cp, 0, s, &first);                              \
          }                                                                                      \
          FSCAN_DONE();                                                                          \
        }))

#define FORTRAN_EXTRA_WAITALL(name, stem)                                                        \
  FALL3(IOP_OP_##name, stem, (fint *n, fint *reqs, fint *sts, fint *ierr), (n, reqs, sts, ierr), ({ \
          FSCAN(*n, reqs);                                                                       \
          fint own[16 * FSTATUS_INTS], *heap = NULL;                                             \
          fint *s = mine ? fstatuses_for(sts, *n, own, 16 * FSTATUS_INTS, &heap) : NULL;         \
          if (!mine || !s) FPASS((n, reqs, sts, ierr));                                          \
          else {                                                                                 \
            FCALL((n, reqs, s, ierr));                                                           \
            if (r == 0)                                                                          \
              for (int i = 0; i < *n; i++) fcompleted(&c, &cp, i, s + i * FSTATUS_INTS, &first); \
          }                                                                                      \
          free(heap);                                                                            \
          FSCAN_DONE();                                                                          \
        }))

#define FORTRAN_EXTRA_TESTALL(name, stem)                                                        \
  FALL3(IOP_OP_##name, stem, (fint *n, fint *reqs, fint *flag, fint *sts, fint *ierr), (n, reqs, flag, sts, ierr), ({ \
          FSCAN(*n, reqs);                                                                       \
          fint own[16 * FSTATUS_INTS], *heap = NULL;                                             \
          fint *s = mine ? fstatuses_for(sts, *n, own, 16 * FSTATUS_INTS, &heap) : NULL;         \
          if (!mine || !s) FPASS((n, reqs, flag, sts, ierr));                                    \
          else {                                                                                 \
            FCALL((n, reqs, flag, s, ierr));                                                     \
            if (r == 0 && *flag)                                                                 \
              for (int i = 0; i < *n; i++) fcompleted(&c, &cp, i, s + i * FSTATUS_INTS, &first); \
          }                                                                                      \
          free(heap);                                                                            \
          FSCAN_DONE();                                                                          \
        }))

/* Fortran indexes count from 1. */
#define FORTRAN_EXTRA_WAITANY(name, stem)                                                        \
  FALL3(IOP_OP_##name, stem, (fint *n, fint *reqs, fint *idx, fint *st, fint *ierr), (n, reqs, idx, st, ierr), ({ \
          FSCAN(*n, reqs);                                                                       \
          fint own[FSTATUS_INTS];                                                                \
          fint *s = fstatus_for(st, own);                                                        \
          if (!mine) FPASS((n, reqs, idx, st, ierr));                                            \
          else {                                                                                 \
            FCALL((n, reqs, idx, s, ierr));                                                      \
            if (r == 0) fcompleted(&c, &cp, *idx - 1, s, &first);                                \
          }                                                                                      \
          FSCAN_DONE();                                                                          \
        }))

#define FORTRAN_EXTRA_TESTANY(name, stem)                                                        \
  FALL3(IOP_OP_##name, stem, (fint *n, fint *reqs, fint *idx, fint *flag, fint *st, fint *ierr), (n, reqs, idx, flag, st, ierr), ({ \
          FSCAN(*n, reqs);                                                                       \
          fint own[FSTATUS_INTS];                                                                \
          fint *s = fstatus_for(st, own);                                                        \
          if (!mine) FPASS((n, reqs, idx, flag, st, ierr));                                      \
          else {                                                                                 \
            FCALL((n, reqs, idx, flag, s, ierr));                                                \
            if (r == 0 && *flag) fcompleted(&c, &cp, *idx - 1, s, &first);                       \
          }                                                                                      \
          FSCAN_DONE();                                                                          \
        }))

#define FORTRAN_EXTRA_SOME(name, stem)                                                           \
  FALL3(IOP_OP_##name, stem, (fint *n, fint *reqs, fint *outcount, fint *idxs, fint *sts, fint *ierr), (n, reqs, outcount, idxs, sts, ierr), ({ \
          FSCAN(*n, reqs);                                                                       \
          fint own[16 * FSTATUS_INTS], *heap = NULL;                                             \
          fint *s = mine ? fstatuses_for(sts, *n, own, 16 * FSTATUS_INTS, &heap) : NULL;         \
          if (!mine || !s) FPASS((n, reqs, outcount, idxs, sts, ierr));                          \
          else {                                                                                 \
            FCALL((n, reqs, outcount, idxs, s, ierr));                                           \
            if (r == 0 && *outcount != MPI_UNDEFINED_VAL)                                        \
              for (int k = 0; k < *outcount; k++) fcompleted(&c, &cp, idxs[k] - 1, s + k * FSTATUS_INTS, &first); \
          }                                                                                      \
          free(heap);                                                                            \
          FSCAN_DONE();                                                                          \
        }))
#define FORTRAN_EXTRA_WAITSOME(name, stem) FORTRAN_EXTRA_SOME(name, stem)
#define FORTRAN_EXTRA_TESTSOME(name, stem) FORTRAN_EXTRA_SOME(name, stem)

#define FORTRAN_EXTRA_INIT(name, stem)                                                           \
  FALL3(IOP_OP_##name, stem, (fint *ierr), (ierr), ({                                            \
          FCALL((ierr));                                                                         \
          mpi_started(r);                                                                        \
        }))

#define FORTRAN_EXTRA_INITT(name, stem)                                                          \
  FALL3(IOP_OP_##name, stem, (fint *required, fint *provided, fint *ierr), (required, provided, ierr), ({ \
          c.aux = *required;                                                                     \
          FCALL((required, provided, ierr));                                                     \
          mpi_started(r);                                                                        \
        }))

#define FORTRAN_EXTRA_FINI(name, stem) \
  FALL3(IOP_OP_##name, stem, (fint *ierr), (ierr), ({ job_at_finalize(); FCALL((ierr)); }))

/* The data and file shapes define their Fortran entry points inline. */
#define FORTRAN_EXTRA_AT(name, stem)
#define FORTRAN_EXTRA_FP(name, stem)
#define FORTRAN_EXTRA_SH(name, stem)
#define FORTRAN_EXTRA_IAT(name, stem)
#define FORTRAN_EXTRA_IFP(name, stem)
#define FORTRAN_EXTRA_ISH(name, stem)
#define FORTRAN_EXTRA_BAT(name, stem)
#define FORTRAN_EXTRA_BFP(name, stem)
#define FORTRAN_EXTRA_BSH(name, stem)
#define FORTRAN_EXTRA_END(name, stem)
#define FORTRAN_EXTRA_OPEN(name, stem)
#define FORTRAN_EXTRA_CLOSE(name, stem)
#define FORTRAN_EXTRA_DELETE(name, stem)
#define FORTRAN_EXTRA_SIZE(name, stem)
#define FORTRAN_EXTRA_SYNC(name, stem)
#define FORTRAN_EXTRA_SEEK(name, stem)
#define FORTRAN_EXTRA_SEEKSH(name, stem)
#define FORTRAN_EXTRA_VIEW(name, stem)

#define MPI_CALL(name, shape, stem) MPI_WRAP_##shape(name, stem) FORTRAN_EXTRA_##shape(name, stem)
#include "mpiio.def.h"
#undef MPI_CALL

/* Prefetching (prefetch.c): the hooks the file table calls on reads, and
 * the counters Go writes into the trace's footer. */
#ifndef IOP_PREFETCH_H
#define IOP_PREFETCH_H

#include <stdint.h>

/* The counters, in the order iop_pf_counter takes them. */
enum {
  IOP_PF_READS,      /* reads seen while prefetching was on */
  IOP_PF_COVERED,    /* reads whose every byte had been advised */
  IOP_PF_PREFETCHED, /* bytes advised */
  IOP_PF_USED,       /* advised bytes a later read fell on */
  IOP_PF_WASTED,     /* advised bytes no read used by close or exit */
  IOP_PF_CALLS,      /* posix_fadvise calls */
  IOP_PF_MISSES,     /* predictions that did not come true */
  IOP_PF_CAPPED,     /* predictions left out by the per-process bound */
  IOP_PF_NCOUNTERS
};

struct iop_pf;

/* Nonzero when IOPRED_PREFETCH=1 (read at start; 0 in a child of _Fork). */
extern IOP_HIDDEN int iop_pf_on;

IOP_HIDDEN void iop_pf_config(void);
IOP_HIDDEN void iop_pf_load_tables(void);
IOP_HIDDEN int iop_pf_table_files(void);
IOP_HIDDEN void iop_pf_read(struct iop_pf **slot, int fd, uint32_t file, int64_t off, int64_t n, int64_t start_ns, int64_t end_ns);
IOP_HIDDEN void iop_pf_close(struct iop_pf *p);
IOP_HIDDEN void iop_pf_finish(struct iop_pf *p);
IOP_HIDDEN uint64_t iop_pf_counter(int which);
IOP_HIDDEN int iop_pf_install(uint32_t file, const int64_t *off, const int64_t *size, int64_t n);
IOP_HIDDEN void iop_files_pf_finish(void);
IOP_HIDDEN void iop_pf_forget(struct iop_pf *p);
IOP_HIDDEN void iop_pf_after_fork(int safe);
IOP_HIDDEN void iop_pf_spill_counters(_Atomic uint32_t *on, _Atomic uint64_t *counters);
IOP_HIDDEN void *iop_arena_alloc(size_t n);

#endif

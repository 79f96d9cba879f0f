/* The events' clock, inlined into every wrapper. It has a header of its
 * own so that profiles (callgrind attributes inlined code to the file it
 * comes from) show its cost apart from the guards'. Included by iop.h. */
#ifndef IOP_CLOCK_H
#define IOP_CLOCK_H

/* iop_clock is the events' clock: CLOCK_MONOTONIC ns as iop_now gives
 * them, read from the TSC (about 15 ns) and scaled by this thread's copy
 * of a calibration against CLOCK_MONOTONIC that iop_clock_renew renews
 * every 2 ms. Its error and the conditions it needs are in core.c; with
 * IOPRED_TSC=0, or a TSC the kernel does not use as its clock, window
 * stays 0 and every read goes to iop_now. Monotonic per thread. */
struct iop_clock_cal {
  uint64_t tsc0;   /* TSC at the anchor */
  uint64_t window; /* ticks after tsc0 the anchor is good for; 0: none */
  uint64_t mult;   /* ns per tick, 32.32 fixed point */
  int64_t ns0;     /* CLOCK_MONOTONIC ns at the anchor */
  int64_t last;    /* the last value returned on this thread */
};
extern IOP_HIDDEN IOP_TLS struct iop_clock_cal iop_cal;
IOP_HIDDEN int64_t iop_clock_renew(void);

static inline uint64_t iop_rdtsc(void) {
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
}

static inline __attribute__((always_inline)) int64_t iop_clock(void) {
  struct iop_clock_cal *c = &iop_cal;
  uint64_t t = iop_rdtsc(), d = t - c->tsc0;
  if (IOP_UNLIKELY(d >= c->window)) return iop_clock_renew();
  int64_t v = c->ns0 + (int64_t)((d * c->mult) >> 32);
  c->last = v;
  return v;
}

#endif

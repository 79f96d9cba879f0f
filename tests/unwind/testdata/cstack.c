/* C cases for the unwinder, built with gcc -O2 -fomit-frame-pointer:
 * deep recursion, mutual recursion, frames with variable-length arrays
 * (CFA on rbp), realigned frames (CFA read through rbp), every depth
 * limit, skip counts, captures from signal handlers (on the normal and on
 * an alternate stack, and from a profiling timer that interrupts arbitrary
 * code, including the unwinder itself), and four threads at once.
 * Usage: cstack CASE; exit status 0 when every comparison agreed. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <time.h>

#include "harness.h"

static volatile int sink;
static int capture_max = 64;
static const char *capture_tag = "";

#define NOINLINE __attribute__((noinline, noclone))

NOINLINE static int leaf(int k) {
  compare_stacks(capture_tag, capture_max);
  return k + sink;
}

/* Non-tail recursion: the work after the call keeps each frame alive. */
NOINLINE static int deep(int k) {
  if (k == 0) return leaf(k);
  int r = deep(k - 1);
  sink = r;
  return r * 3 + k;
}

NOINLINE static int odd(int k);
NOINLINE static int even(int k) {
  if (k == 0) return leaf(k);
  int r = odd(k - 1);
  return r ^ (k << 1);
}
NOINLINE static int odd(int k) {
  volatile char pad[40]; /* a different frame size from even() */
  pad[k % 40] = (char)k;
  if (k == 0) return leaf(pad[0]);
  int r = even(k - 1);
  return r + pad[k % 40];
}

/* A variable-length array makes gcc keep a frame pointer: CFA = rbp+16. */
NOINLINE static int vla(int k) {
  volatile char buf[k + 16];
  buf[k] = 1;
  if (k == 0) return leaf(buf[0]);
  return vla(k - 1) + buf[k];
}

/* An over-aligned local makes gcc realign the stack: the CFA comes from a
 * DWARF expression that reads the saved value through rbp. */
NOINLINE static int realigned(int k) {
  volatile char big[64] __attribute__((aligned(64)));
  big[k & 63] = (char)k;
  if (k == 0) return leaf(big[0]);
  return realigned(k - 1) + big[k & 63];
}

/* Mixed: each kind of frame calls the next. */
NOINLINE static int mixed(int k) {
  switch (k % 4) {
  case 0: return k == 0 ? leaf(0) : vla(1) + mixed(k - 1);
  case 1: return realigned(1) + mixed(k - 1);
  case 2: return even(2) + mixed(k - 1);
  default: return deep(2) + mixed(k - 1);
  }
}

static void run_shapes(const char *tag) {
  capture_tag = tag;
  deep(100);
  even(51);
  even(50);
  vla(20);
  realigned(20);
  mixed(30);
}

/* ---- signals ---- */

static void on_signal(int sig) {
  (void)sig;
  compare_stacks(capture_tag, capture_max);
}

NOINLINE static int raise_deep(int k) {
  if (k == 0) {
    raise(SIGUSR1);
    return 0;
  }
  int r = raise_deep(k - 1);
  sink = r;
  return r + k;
}

static volatile sig_atomic_t ticks;
static timer_t tick_timer;
static long tick_period_ns = 50000;
/* Each handler runs libunwind too, which makes two system calls a frame;
 * where those are slow (some virtual machines) a handler outlasts the
 * period and the program would only ever run handlers: the handler then
 * stretches the period to four times its own duration (timer_settime is
 * async-signal-safe). The duration is the thread's CPU time: on a loaded
 * machine a handler preempted for 50 ms of wall time stretched the period
 * to 200 ms, and 2,000 samples took longer than the test waits. */
static void on_tick(int sig) {
  (void)sig;
  struct timespec a, b;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  ticks++;
  compare_stacks("timer", capture_max);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  long ns = (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
  if (ns * 2 > tick_period_ns && ns < 100000000L) {
    tick_period_ns = ns * 4;
    struct itimerspec its = {{0, tick_period_ns}, {0, tick_period_ns}};
    timer_settime(tick_timer, 0, &its, NULL);
  }
}

NOINLINE static long spin(int k) {
  long acc = 0;
  if (k > 0) acc = spin(k - 1);
  for (int i = 0; i < 200; i++) acc += i * sink;
  return acc + k;
}

/* ---- lying call-frame information ---- */

/* Hand-written functions whose CFI is wrong on purpose, each calling
 * cb(): a CFA 100 MB above the stack, a CFA based on an rbp that holds
 * garbage, and a return-address slot that holds garbage. The walk must
 * stop inside them without faulting. (Each keeps the stack 16-byte
 * aligned at its call, as the ABI requires.) */
__asm__(".text\n"
        ".type bogus_big_cfa,@function\n"
        "bogus_big_cfa:\n"
        ".cfi_startproc\n"
        "  sub $8, %rsp\n"
        ".cfi_def_cfa_offset 100000016\n"
        "  call *%rdi\n"
        "  add $8, %rsp\n"
        ".cfi_def_cfa_offset 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size bogus_big_cfa, .-bogus_big_cfa\n"
        ".type bogus_rbp_cfa,@function\n"
        "bogus_rbp_cfa:\n"
        ".cfi_startproc\n"
        "  push %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "  mov $0xdead0000, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "  call *%rdi\n"
        "  pop %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size bogus_rbp_cfa, .-bogus_rbp_cfa\n"
        ".type bogus_ra,@function\n"
        "bogus_ra:\n"
        ".cfi_startproc\n"
        "  push $0x1234\n"
        "  call *%rdi\n"
        "  add $8, %rsp\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size bogus_ra, .-bogus_ra\n");
void bogus_big_cfa(void (*cb)(void));
void bogus_rbp_cfa(void (*cb)(void));
void bogus_ra(void (*cb)(void));

static int bogus_frames;
static uintptr_t bogus_pcs[64];
NOINLINE static void bogus_capture(void) { bogus_frames = iop_backtrace(bogus_pcs, 64, 0); }

/* check_bogus expects frame 0 in bogus_capture, frame 1 in the bogus
 * function, and the walk to end there (or one frame further, at the
 * garbage return address). */
static void check_bogus(const char *name, void (*fn)(void (*)(void)), int max_frames) {
  bogus_frames = -1;
  fn(bogus_capture);
  int ok = bogus_frames >= 2 && bogus_frames <= max_frames &&
           bogus_pcs[1] > (uintptr_t)fn && bogus_pcs[1] < (uintptr_t)fn + 32;
  atomic_fetch_add(&harness_checks, 1);
  if (!ok) {
    atomic_fetch_add(&harness_failures, 1);
    printf("bogus %s: %d frames, frame 1 at %#lx (function at %p)\n", name, bogus_frames,
           (unsigned long)bogus_pcs[1], (void *)fn);
  }
}

/* libc work for the timer to interrupt: its hand-written string
 * functions, printf's internals, qsort calling back into us, malloc. */
static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}
NOINLINE static void libc_work(int k) {
  char text[512];
  int nums[64];
  for (int i = 0; i < 64; i++) nums[i] = (i * 7919 + k) % 101;
  qsort(nums, 64, sizeof nums[0], cmp_int);
  snprintf(text, sizeof text, "%d %g %s %x", k, k / 3.0, "frames", nums[k % 64]);
  char *p = malloc(100 + (size_t)(k % 4000));
  if (p) {
    memset(p, k, 100);
    memcpy(p + 1, text, strlen(text) < 99 ? strlen(text) : 99);
    sink += p[k % 100];
    free(p);
  }
}

/* ---- coroutine stacks ---- */

/* makecontext stacks, one from malloc and one from mmap with an
 * inaccessible guard page right above it: neither is a thread's stack, so
 * the walk is bounded by the readable pages above sp. */
static ucontext_t co_main, co_ctx;
static void errno_probe(void);
static void co_body(void) {
  errno_probe();
  capture_tag = "coroutine";
  deep(12);
  even(9);
  vla(5);
}
static void run_coroutine(char *stack, size_t size) {
  getcontext(&co_ctx);
  co_ctx.uc_stack.ss_sp = stack;
  co_ctx.uc_stack.ss_size = size;
  co_ctx.uc_link = &co_main;
  makecontext(&co_ctx, co_body, 0);
  swapcontext(&co_main, &co_ctx);
}

/* ---- errno, and stack probing under seccomp ---- */

/* The slow paths make system calls (stack probing on a thread's first
 * capture and on coroutine stacks); a capture must leave errno as it found
 * it, since a signal handler may make it. The calls fail, and set errno,
 * when seccomp refuses process_vm_readv and the unwinder falls back to
 * mincore: the "seccomp" case installs such a filter first. */
static void errno_probe(void) {
  uintptr_t pcs[16];
  errno = 4242;
  iop_backtrace(pcs, 16, 0);
  atomic_fetch_add(&harness_checks, 1);
  if (errno != 4242) {
    atomic_fetch_add(&harness_failures, 1);
    printf("errno: %d after a capture, was 4242\n", errno);
  }
}
static void *errno_thread(void *arg) {
  (void)arg;
  errno_probe();
  capture_tag = "seccomp-thread";
  deep(10);
  return NULL;
}

static int refuse_process_vm_readv(void) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* ---- threads ---- */

static atomic_int threads_stop;
static void *thread_main(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < 300 || !atomic_load(&threads_stop); i++) {
    deep(20 + (int)id * 7 + i % 13);
    even(30 + (int)id);
    realigned(5 + (int)id);
  }
  return NULL;
}

/* Before iop_unwind_init (here: from a constructor, as another library's
 * constructor might call an interposed function) a capture returns 0
 * frames and touches nothing. */
static int preinit_frames = -1;
__attribute__((constructor)) static void before_init(void) {
  uintptr_t pcs[8];
  preinit_frames = iop_backtrace(pcs, 8, 0);
}

int main(int argc, char **argv) {
  iop_unwind_init();
  const char *c = argc > 1 ? argv[1] : "all";
  int all = strcmp(c, "all") == 0;
  if (all || !strcmp(c, "preinit")) {
    atomic_fetch_add(&harness_checks, 1);
    if (preinit_frames != 0) {
      atomic_fetch_add(&harness_failures, 1);
      printf("preinit: %d frames before iop_unwind_init\n", preinit_frames);
    }
    /* And a second init is harmless. */
    iop_unwind_init();
    capture_tag = "preinit";
    deep(3);
  }
  if (all || !strcmp(c, "shapes")) run_shapes("shapes");
  if (all || !strcmp(c, "maxes")) {
    static const int maxes[] = {1, 2, 3, 5, 8, 16, 33, 100, 200, 256};
    for (unsigned i = 0; i < sizeof maxes / sizeof maxes[0]; i++) {
      capture_max = maxes[i];
      run_shapes("maxes");
    }
    capture_max = 64;
  }
  if (all || !strcmp(c, "skip")) {
    /* skip = s drops exactly the first s frames of the skip = 0 capture. */
    uintptr_t full[64], part[64];
    int n = iop_backtrace(full, 64, 0);
    for (int s = 0; s <= n + 1; s++) {
      int m = iop_backtrace(part, 64, s);
      int ok = m == (n > s ? n - s : 0);
      for (int i = 1; ok && i < m; i++) ok = part[i] == full[i + s];
      atomic_fetch_add(&harness_checks, 1);
      if (!ok) {
        atomic_fetch_add(&harness_failures, 1);
        printf("skip %d: %d frames of %d\n", s, m, n);
      }
    }
    if (iop_backtrace(part, 0, 0) != 0) atomic_fetch_add(&harness_failures, 1);
  }
  if (all || !strcmp(c, "signal")) {
    signal(SIGUSR1, on_signal);
    capture_tag = "signal";
    for (int i = 0; i < 20; i++) raise_deep(i);
  }
  if (all || !strcmp(c, "altstack")) {
    static char altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    capture_tag = "altstack";
    for (int i = 0; i < 20; i++) raise_deep(i);
  }
  if (all || !strcmp(c, "timer")) {
    /* SIGPROF lands anywhere: in our code, in libc, in the unwinders. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tick;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    /* A high-resolution timer, so that thousands of samples land at
     * arbitrary instructions in a second. */
    timer_t timer;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGPROF;
    timer_create(CLOCK_MONOTONIC, &sev, &timer);
    tick_timer = timer;
    struct itimerspec its = {{0, 50000}, {0, 50000}};
    timer_settime(timer, 0, &its, NULL);
    capture_tag = "timer-main";
    /* 20,000 samples, or at least 2,000 within 15 s where handlers are
     * slow (see on_tick), or what 60 s gave on a starved machine (the
     * test needs captures that agree, not a count). */
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int k = 0; ticks < 20000; k++) {
      spin(30);
      run_shapes("timer-main");
      for (int j = 0; j < 50; j++) libc_work(k + j);
      clock_gettime(CLOCK_MONOTONIC, &now);
      if (ticks >= 2000 && now.tv_sec - start.tv_sec >= 15) break;
      if (now.tv_sec - start.tv_sec >= 60) break;
    }
    timer_delete(timer);
    printf("timer: %d samples in handlers\n", (int)ticks);
  }
  if (all || !strcmp(c, "coroutine")) {
    size_t size = 64 << 10;
    char *heap = malloc(size);
    run_coroutine(heap, size);
    free(heap);
    char *map = mmap(NULL, size + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return 1;
    mprotect(map + size, 4096, PROT_NONE);
    run_coroutine(map, size);
    munmap(map, size + 4096);
  }
  if (!strcmp(c, "seccomp")) { /* not in "all": the filter stays for the process */
    if (refuse_process_vm_readv() != 0) {
      printf("seccomp: cannot install the filter\n");
      return 1;
    }
    pthread_t th;
    pthread_create(&th, NULL, errno_thread, NULL);
    pthread_join(th, NULL);
    char *heap = malloc(64 << 10);
    run_coroutine(heap, 64 << 10);
    free(heap);
  }
  if (all || !strcmp(c, "bogus")) {
    check_bogus("big cfa", bogus_big_cfa, 2);
    check_bogus("rbp cfa", bogus_rbp_cfa, 2);
    /* The garbage return address is stored, then the walk stops. */
    check_bogus("garbage ra", bogus_ra, 3);
  }
  if (all || !strcmp(c, "threads")) {
    /* Four threads at once, with profiling signals landing in all of them
     * (the first capture of a thread may happen inside a handler). */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_tick;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    timer_t timer;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGPROF;
    timer_create(CLOCK_MONOTONIC, &sev, &timer);
    struct itimerspec its = {{0, 100000}, {0, 100000}};
    timer_settime(timer, 0, &its, NULL);
    pthread_t th[4];
    capture_tag = "threads";
    for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, thread_main, (void *)i);
    /* Until 3,000 samples have landed in any thread, or 30 s at most. */
    for (int ms = 0; ticks < 3000 && ms < 30000; ms++) usleep(1000);
    atomic_store(&threads_stop, 1);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    timer_delete(timer);
    printf("threads: %d samples in handlers\n", (int)ticks);
  }
  return report(c);
}

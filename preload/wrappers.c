/* The interposers. Every fixed-argument wrapper is generated from one
 * line of calls.def.h by IOP_WRAPPER below; the few whose optional argument
 * depends on another argument (open, openat, fcntl), rewind (void), and
 * the process calls (fork, exec) are written out at the end. */
#include "iop.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/close_range.h>

/* The real function is found on first use, so that a call arriving before
 * the library's constructor (from another library's constructor) works. A
 * function the C library lacks fails as it would without iopred. */
#define IOP_REAL(R, name, params)                                          \
  static R(*real_##name) params;                                           \
  static inline R(*iop_real_##name(void)) params {                         \
    if (IOP_UNLIKELY(!real_##name))                                        \
      real_##name = (R(*) params)iop_resolve(#name);                       \
    return real_##name;                                                    \
  }

/* Each wrapper is defined under an internal name and exported under the
 * function's own symbol name, so that header redirections (fscanf to
 * __isoc99_fscanf, open to open64) cannot rename it. */
#define IOP_DEFINE(R, name, params) \
  IOP_EXPORT R iop_w_##name params __asm__(#name); \
  IOP_EXPORT R iop_w_##name params

#define IOP_MISSING(R) \
  do { errno = ENOSYS; return (R)-1; } while (0)

#define CALL(layer, R, name, params, args, pre, post)                      \
  IOP_REAL(R, name, params)                                                \
  IOP_DEFINE(R, name, params) {                                            \
    R(*real) params = real_##name;                                         \
    if (IOP_UNLIKELY(!real) && !(real = iop_real_##name())) IOP_MISSING(R); \
    struct iop_call c;                                                     \
    if (!iop_enter(&c, IOP_OP_##name, layer)) return real args;            \
    pre;                                                                   \
    c.start_ns = iop_clock();                                              \
    iop_in = 0;                                                            \
    R r = real args;                                                       \
    iop_in = 1;                                                            \
    c.end_ns = iop_clock();                                              \
    int *errp = &errno;                                                    \
    c.err = *errp;                                                         \
    c.ret = iop_ret(r);                                                    \
    c.failed = iop_failed(r);                                              \
    post;                                                                  \
    iop_end(&c);                                                           \
    *errp = c.err;                                                         \
    return r;                                                              \
  }

#define VCALL(layer, R, name, params, lastarg, vname, vargs, pre, post)     \
  IOP_DEFINE(R, name, params) {                                            \
    R(*real) VPARAMS_##vname = iop_real_##vname();                         \
    if (IOP_UNLIKELY(!real)) IOP_MISSING(R);                               \
    va_list ap;                                                            \
    va_start(ap, lastarg);                                                 \
    struct iop_call c;                                                     \
    if (!iop_enter(&c, IOP_OP_##name, layer)) {                            \
      R r = real vargs;                                                    \
      va_end(ap);                                                          \
      return r;                                                            \
    }                                                                      \
    pre;                                                                   \
    c.start_ns = iop_clock();                                              \
    iop_in = 0;                                                            \
    R r = real vargs;                                                      \
    iop_in = 1;                                                            \
    c.end_ns = iop_clock();                                                  \
    c.err = errno;                                                         \
    c.ret = iop_ret(r);                                                    \
    c.failed = iop_failed(r);                                              \
    va_end(ap);                                                            \
    post;                                                                  \
    iop_end(&c);                                                           \
    errno = c.err;                                                         \
    return r;                                                              \
  }

/* Parameter lists of the va_list twins that VCALL forwards to. */
#define VPARAMS_vfprintf (FILE *, const char *, va_list)
#define VPARAMS___vfprintf_chk (FILE *, int, const char *, va_list)
#define VPARAMS_vfscanf (FILE *, const char *, va_list)
#define VPARAMS___isoc99_vfscanf (FILE *, const char *, va_list)

#include "calls.def.h"
#undef CALL
#undef VCALL

/* ---- open and openat: the mode argument exists only with O_CREAT or
 * O_TMPFILE ---- */
static inline mode_t iop_open_mode(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

#define OPEN_WRAPPER(name)                                                 \
  IOP_REAL(int, name, (const char *, int, ...))                            \
  IOP_DEFINE(int, name, (const char *path, int flags, ...)) {             \
    va_list ap;                                                            \
    va_start(ap, flags);                                                   \
    mode_t mode = iop_open_mode(flags, ap);                                \
    va_end(ap);                                                            \
    int (*real)(const char *, int, ...) = iop_real_##name();               \
    if (IOP_UNLIKELY(!real)) IOP_MISSING(int);                             \
    struct iop_call c;                                                     \
    if (!iop_begin(&c, IOP_OP_##name, IOP_POSIX)) return real(path, flags, mode); \
    c.start_ns = iop_clock();                                              \
    iop_app_fd_enter();                                                    \
    iop_in = 0;                                                            \
    int r = real(path, flags, mode);                                       \
    iop_in = 1;                                                            \
    iop_app_fd_leave();                                                    \
    c.end_ns = iop_clock();                                                  \
    c.err = errno;                                                         \
    c.ret = r;                                                             \
    c.failed = r < 0;                                                      \
    iop_post_open(&c, AT_FDCWD, path, flags, r);                           \
    iop_end(&c);                                                           \
    errno = c.err;                                                         \
    return r;                                                              \
  }

#define OPENAT_WRAPPER(name)                                               \
  IOP_REAL(int, name, (int, const char *, int, ...))                       \
  IOP_DEFINE(int, name, (int dirfd, const char *path, int flags, ...)) {  \
    va_list ap;                                                            \
    va_start(ap, flags);                                                   \
    mode_t mode = iop_open_mode(flags, ap);                                \
    va_end(ap);                                                            \
    int (*real)(int, const char *, int, ...) = iop_real_##name();          \
    if (IOP_UNLIKELY(!real)) IOP_MISSING(int);                             \
    struct iop_call c;                                                     \
    if (!iop_begin(&c, IOP_OP_##name, IOP_POSIX)) return real(dirfd, path, flags, mode); \
    c.start_ns = iop_clock();                                              \
    iop_app_fd_enter();                                                    \
    iop_in = 0;                                                            \
    int r = real(dirfd, path, flags, mode);                                \
    iop_in = 1;                                                            \
    iop_app_fd_leave();                                                    \
    c.end_ns = iop_clock();                                                  \
    c.err = errno;                                                         \
    c.ret = r;                                                             \
    c.failed = r < 0;                                                      \
    iop_post_open(&c, dirfd, path, flags, r);                              \
    iop_end(&c);                                                           \
    errno = c.err;                                                         \
    return r;                                                              \
  }

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

/* ---- fcntl: only F_DUPFD and F_DUPFD_CLOEXEC concern iopred; the third
 * argument is passed on as the widest type it can have ---- */
#define FCNTL_WRAPPER(name)                                                \
  IOP_REAL(int, name, (int, int, ...))                                     \
  IOP_DEFINE(int, name, (int fd, int cmd, ...)) {                         \
    va_list ap;                                                            \
    va_start(ap, cmd);                                                     \
    void *arg = va_arg(ap, void *);                                        \
    va_end(ap);                                                            \
    int (*real)(int, int, ...) = iop_real_##name();                        \
    if (IOP_UNLIKELY(!real)) IOP_MISSING(int);                             \
    struct iop_call c;                                                     \
    if ((cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC) ||                      \
        !iop_begin(&c, IOP_OP_##name, IOP_POSIX))                          \
      return real(fd, cmd, arg);                                           \
    c.start_ns = iop_clock();                                              \
    iop_app_fd_enter();                                                    \
    iop_in = 0;                                                            \
    int r = real(fd, cmd, arg);                                            \
    iop_in = 1;                                                            \
    iop_app_fd_leave();                                                    \
    c.end_ns = iop_clock();                                                  \
    c.err = errno;                                                         \
    c.ret = r;                                                             \
    c.failed = r < 0;                                                      \
    iop_post_dup(&c, fd, r);                                               \
    iop_end(&c);                                                           \
    errno = c.err;                                                         \
    return r;                                                              \
  }

FCNTL_WRAPPER(fcntl)
FCNTL_WRAPPER(fcntl64)

/* ---- rewind returns nothing ---- */
IOP_REAL(void, rewind, (FILE *))
IOP_DEFINE(void, rewind, (FILE *fp)) {
  void (*real)(FILE *) = iop_real_rewind();
  if (IOP_UNLIKELY(!real)) return;
  struct iop_call c;
  if (!iop_begin(&c, IOP_OP_rewind, IOP_STDIO)) {
    real(fp);
    return;
  }
  iop_pre_stream(&c, fp, 0);
  c.start_ns = iop_clock();
  iop_in = 0;
  real(fp);
  iop_in = 1;
  c.end_ns = iop_clock();
  c.err = errno;
  iop_post_stream(&c, fp, -3);
  iop_end(&c);
  errno = c.err;
}

/* iop_resolve_wrapped looks up the real function of every wrapper here
 * (core.c's iop_resolve_all says why it is done at start). */
IOP_HIDDEN void iop_resolve_wrapped(void) {
#define CALL(layer, R, name, ...) (void)iop_real_##name();
#define VCALL(layer, R, name, params, lastarg, vname, ...) (void)iop_real_##vname();
#include "calls.def.h"
#undef CALL
#undef VCALL
  (void)iop_real_open();
  (void)iop_real_open64();
  (void)iop_real_openat();
  (void)iop_real_openat64();
  (void)iop_real_fcntl();
  (void)iop_real_fcntl64();
  (void)iop_real_rewind();
  iop_stream_pos_resolve();
}

/* The interposed functions: one line each, expanded by the including file.
 *
 * CALL(layer, return type, name, parameters, arguments, pre, post)
 *   pre runs before the real call, post after it with the result in r;
 *   both are expressions over the parameters and the call state c.
 * VCALL(layer, return type, name, parameters, last named parameter,
 *       v-function, its arguments, pre, post)
 *   a variadic function forwarded to its va_list twin (fprintf ->
 *   vfprintf); ap names the va_list.
 *
 * The variadic open and fcntl families are in wrappers.c: their optional
 * argument depends on another argument's value.
 *
 * Not wrapped on purpose: mmap, munmap, sigaction, pthread functions and
 * the malloc family (the Go runtime and dlsym use them). */

#define P IOP_POSIX
#define S IOP_STDIO
#define CUR (-1)

/* ---- POSIX: opening and closing ---- */
CALL(P, int, __open_2, (const char *path, int flags), (path, flags), iop_app_fd_enter(), (iop_app_fd_leave(), iop_post_open(&c, AT_FDCWD, path, flags, r)))
CALL(P, int, __open64_2, (const char *path, int flags), (path, flags), iop_app_fd_enter(), (iop_app_fd_leave(), iop_post_open(&c, AT_FDCWD, path, flags, r)))
CALL(P, int, __openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags), iop_app_fd_enter(), (iop_app_fd_leave(), iop_post_open(&c, dirfd, path, flags, r)))
CALL(P, int, __openat64_2, (int dirfd, const char *path, int flags), (dirfd, path, flags), iop_app_fd_enter(), (iop_app_fd_leave(), iop_post_open(&c, dirfd, path, flags, r)))
CALL(P, int, creat, (const char *path, mode_t mode), (path, mode), iop_app_fd_enter(), (iop_app_fd_leave(), iop_post_open(&c, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, r)))
CALL(P, int, creat64, (const char *path, mode_t mode), (path, mode), iop_app_fd_enter(), (iop_app_fd_leave(), iop_post_open(&c, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, r)))
CALL(P, int, close, (int fd), (fd), (void)0, iop_post_close(&c, fd, r))
CALL(P, int, close_range, (unsigned lo, unsigned hi, int flags), (lo, hi, flags), (void)0, (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC)) ? iop_drop_fds(lo, hi) : (void)0)

/* ---- POSIX: data at the file's current offset ---- */
CALL(P, ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n), iop_pre_fd(&c, fd, n, CUR), iop_post_rw(&c, fd, r, 0))
CALL(P, ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n), iop_pre_fd(&c, fd, n, CUR), iop_post_rw(&c, fd, r, 0))
CALL(P, ssize_t, __read_chk, (int fd, void *buf, size_t n, size_t buflen), (fd, buf, n, buflen), iop_pre_fd(&c, fd, n, CUR), iop_post_rw(&c, fd, r, 0))
CALL(P, ssize_t, readv, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), iop_pre_fd(&c, fd, iop_iov_size(iov, cnt), CUR), iop_post_rw(&c, fd, r, 0))
CALL(P, ssize_t, writev, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), iop_pre_fd(&c, fd, iop_iov_size(iov, cnt), CUR), iop_post_rw(&c, fd, r, 0))

/* ---- POSIX: data at an explicit offset ---- */
CALL(P, ssize_t, pread, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off), iop_pre_fd(&c, fd, n, off), iop_post_rw(&c, fd, r, 1))
CALL(P, ssize_t, pread64, (int fd, void *buf, size_t n, off64_t off), (fd, buf, n, off), iop_pre_fd(&c, fd, n, off), iop_post_rw(&c, fd, r, 1))
CALL(P, ssize_t, __pread_chk, (int fd, void *buf, size_t n, off_t off, size_t buflen), (fd, buf, n, off, buflen), iop_pre_fd(&c, fd, n, off), iop_post_rw(&c, fd, r, 1))
CALL(P, ssize_t, __pread64_chk, (int fd, void *buf, size_t n, off64_t off, size_t buflen), (fd, buf, n, off, buflen), iop_pre_fd(&c, fd, n, off), iop_post_rw(&c, fd, r, 1))
CALL(P, ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off), iop_pre_fd(&c, fd, n, off), iop_post_rw(&c, fd, r, 1))
CALL(P, ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t off), (fd, buf, n, off), iop_pre_fd(&c, fd, n, off), iop_post_rw(&c, fd, r, 1))
CALL(P, ssize_t, preadv, (int fd, const struct iovec *iov, int cnt, off_t off), (fd, iov, cnt, off), iop_pre_fd(&c, fd, iop_iov_size(iov, cnt), off), iop_post_rw(&c, fd, r, 1))
CALL(P, ssize_t, preadv64, (int fd, const struct iovec *iov, int cnt, off64_t off), (fd, iov, cnt, off), iop_pre_fd(&c, fd, iop_iov_size(iov, cnt), off), iop_post_rw(&c, fd, r, 1))
CALL(P, ssize_t, pwritev, (int fd, const struct iovec *iov, int cnt, off_t off), (fd, iov, cnt, off), iop_pre_fd(&c, fd, iop_iov_size(iov, cnt), off), iop_post_rw(&c, fd, r, 1))
CALL(P, ssize_t, pwritev64, (int fd, const struct iovec *iov, int cnt, off64_t off), (fd, iov, cnt, off), iop_pre_fd(&c, fd, iop_iov_size(iov, cnt), off), iop_post_rw(&c, fd, r, 1))
/* The v2 calls use the current offset when off is -1. */
CALL(P, ssize_t, preadv2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags), (fd, iov, cnt, off, flags), iop_pre_fd(&c, fd, iop_iov_size(iov, cnt), off), iop_post_rw(&c, fd, r, off != -1))
CALL(P, ssize_t, preadv64v2, (int fd, const struct iovec *iov, int cnt, off64_t off, int flags), (fd, iov, cnt, off, flags), iop_pre_fd(&c, fd, iop_iov_size(iov, cnt), off), iop_post_rw(&c, fd, r, off != -1))
CALL(P, ssize_t, pwritev2, (int fd, const struct iovec *iov, int cnt, off_t off, int flags), (fd, iov, cnt, off, flags), iop_pre_fd(&c, fd, iop_iov_size(iov, cnt), off), iop_post_rw(&c, fd, r, off != -1))
CALL(P, ssize_t, pwritev64v2, (int fd, const struct iovec *iov, int cnt, off64_t off, int flags), (fd, iov, cnt, off, flags), iop_pre_fd(&c, fd, iop_iov_size(iov, cnt), off), iop_post_rw(&c, fd, r, off != -1))
CALL(P, ssize_t, copy_file_range, (int fd_in, off64_t *off_in, int fd_out, off64_t *off_out, size_t n, unsigned flags), (fd_in, off_in, fd_out, off_out, n, flags), iop_pre_fd(&c, fd_in, n, off_in ? *off_in : CUR), iop_post_copy(&c, fd_in, off_in != NULL, fd_out, off_out != NULL, r))

/* ---- POSIX: offsets, sync, size, descriptors ---- */
CALL(P, off_t, lseek, (int fd, off_t off, int whence), (fd, off, whence), (void)0, iop_post_seek(&c, fd, r, whence))
CALL(P, off64_t, lseek64, (int fd, off64_t off, int whence), (fd, off, whence), (void)0, iop_post_seek(&c, fd, r, whence))
CALL(P, int, fsync, (int fd), (fd), (void)0, iop_post_fdmeta(&c, fd, r))
CALL(P, int, fdatasync, (int fd), (fd), (void)0, iop_post_fdmeta(&c, fd, r))
CALL(P, int, ftruncate, (int fd, off_t len), (fd, len), c.size = len, iop_post_fdmeta(&c, fd, r))
CALL(P, int, ftruncate64, (int fd, off64_t len), (fd, len), c.size = len, iop_post_fdmeta(&c, fd, r))
CALL(P, int, dup, (int fd), (fd), iop_app_fd_enter(), (iop_app_fd_leave(), iop_post_dup(&c, fd, r)))
CALL(P, int, dup2, (int fd, int fd2), (fd, fd2), (void)0, iop_post_dup(&c, fd, r))
CALL(P, int, dup3, (int fd, int fd2, int flags), (fd, fd2, flags), (void)0, iop_post_dup(&c, fd, r))

/* ---- POSIX: metadata (glibc 2.33+ names, then the older __xstat ones) ---- */
CALL(P, int, stat, (const char *path, struct stat *st), (path, st), (void)0, iop_post_path(&c, AT_FDCWD, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, lstat, (const char *path, struct stat *st), (path, st), (void)0, iop_post_path(&c, AT_FDCWD, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, stat64, (const char *path, struct stat64 *st), (path, st), (void)0, iop_post_path(&c, AT_FDCWD, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, lstat64, (const char *path, struct stat64 *st), (path, st), (void)0, iop_post_path(&c, AT_FDCWD, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, fstat, (int fd, struct stat *st), (fd, st), (void)0, iop_post_fdmeta(&c, fd, r))
CALL(P, int, fstat64, (int fd, struct stat64 *st), (fd, st), (void)0, iop_post_fdmeta(&c, fd, r))
CALL(P, int, fstatat, (int dirfd, const char *path, struct stat *st, int flags), (dirfd, path, st, flags), (void)0, iop_post_path(&c, dirfd, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, fstatat64, (int dirfd, const char *path, struct stat64 *st, int flags), (dirfd, path, st, flags), (void)0, iop_post_path(&c, dirfd, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, statx, (int dirfd, const char *path, int flags, unsigned mask, struct statx *st), (dirfd, path, flags, mask, st), (void)0, iop_post_path(&c, dirfd, path, r, r == 0 && S_ISREG(st->stx_mode)))
CALL(P, int, __xstat, (int ver, const char *path, struct stat *st), (ver, path, st), (void)0, iop_post_path(&c, AT_FDCWD, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, __lxstat, (int ver, const char *path, struct stat *st), (ver, path, st), (void)0, iop_post_path(&c, AT_FDCWD, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, __xstat64, (int ver, const char *path, struct stat64 *st), (ver, path, st), (void)0, iop_post_path(&c, AT_FDCWD, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, __lxstat64, (int ver, const char *path, struct stat64 *st), (ver, path, st), (void)0, iop_post_path(&c, AT_FDCWD, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, __fxstat, (int ver, int fd, struct stat *st), (ver, fd, st), (void)0, iop_post_fdmeta(&c, fd, r))
CALL(P, int, __fxstat64, (int ver, int fd, struct stat64 *st), (ver, fd, st), (void)0, iop_post_fdmeta(&c, fd, r))
CALL(P, int, __fxstatat, (int ver, int dirfd, const char *path, struct stat *st, int flags), (ver, dirfd, path, st, flags), (void)0, iop_post_path(&c, dirfd, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, __fxstatat64, (int ver, int dirfd, const char *path, struct stat64 *st, int flags), (ver, dirfd, path, st, flags), (void)0, iop_post_path(&c, dirfd, path, r, r == 0 && S_ISREG(st->st_mode)))
CALL(P, int, unlink, (const char *path), (path), (void)0, iop_post_path(&c, AT_FDCWD, path, r, 1))
CALL(P, int, unlinkat, (int dirfd, const char *path, int flags), (dirfd, path, flags), (void)0, iop_post_path(&c, dirfd, path, r, !(flags & AT_REMOVEDIR)))
CALL(P, int, rename, (const char *from, const char *to), (from, to), (void)0, iop_post_path(&c, AT_FDCWD, to, r, 1))
CALL(P, int, renameat, (int fromdir, const char *from, int todir, const char *to), (fromdir, from, todir, to), (void)0, iop_post_path(&c, todir, to, r, 1))

/* ---- stdio: streams ---- */
CALL(S, FILE *, fopen, (const char *path, const char *mode), (path, mode), iop_app_fd_enter(), (iop_app_fd_leave(), iop_post_fopen(&c, path, mode, r)))
CALL(S, FILE *, fopen64, (const char *path, const char *mode), (path, mode), iop_app_fd_enter(), (iop_app_fd_leave(), iop_post_fopen(&c, path, mode, r)))
CALL(S, FILE *, fdopen, (int fd, const char *mode), (fd, mode), (void)0, iop_post_fopen(&c, NULL, mode, r))
CALL(S, FILE *, freopen, (const char *path, const char *mode, FILE *fp), (path, mode, fp), (iop_app_fd_enter(), c.aux = fp ? fileno(fp) : -1), (iop_app_fd_leave(), iop_post_fopen(&c, path, mode, r)))
CALL(S, FILE *, freopen64, (const char *path, const char *mode, FILE *fp), (path, mode, fp), (iop_app_fd_enter(), c.aux = fp ? fileno(fp) : -1), (iop_app_fd_leave(), iop_post_fopen(&c, path, mode, r)))
CALL(S, int, fclose, (FILE *fp), (fp), iop_pre_stream(&c, fp, 0), iop_post_fclose(&c, (int)c.aux, r))
CALL(S, int, fflush, (FILE *fp), (fp), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -1))

/* ---- stdio: data ---- */
CALL(S, size_t, fread, (void *p, size_t size, size_t n, FILE *fp), (p, size, n, fp), iop_pre_stream(&c, fp, (int64_t)(size * n)), iop_post_stream(&c, fp, (int64_t)(r * size)))
CALL(S, size_t, __fread_chk, (void *p, size_t plen, size_t size, size_t n, FILE *fp), (p, plen, size, n, fp), iop_pre_stream(&c, fp, (int64_t)(size * n)), iop_post_stream(&c, fp, (int64_t)(r * size)))
CALL(S, size_t, fwrite, (const void *p, size_t size, size_t n, FILE *fp), (p, size, n, fp), iop_pre_stream(&c, fp, (int64_t)(size * n)), iop_post_stream(&c, fp, (int64_t)(r * size)))
CALL(S, int, fputs, (const char *s, FILE *fp), (s, fp), iop_pre_stream(&c, fp, (int64_t)strlen(s)), iop_post_stream(&c, fp, r >= 0 ? c.size : 0))
CALL(S, int, fputc, (int ch, FILE *fp), (ch, fp), iop_pre_stream(&c, fp, 1), iop_post_stream(&c, fp, r != EOF))
CALL(S, int, putc, (int ch, FILE *fp), (ch, fp), iop_pre_stream(&c, fp, 1), iop_post_stream(&c, fp, r != EOF))
CALL(S, int, vfprintf, (FILE *fp, const char *fmt, va_list ap), (fp, fmt, ap), iop_pre_stream(&c, fp, 0), (c.size = r > 0 ? r : 0, iop_post_stream(&c, fp, c.size)))
CALL(S, int, __vfprintf_chk, (FILE *fp, int flag, const char *fmt, va_list ap), (fp, flag, fmt, ap), iop_pre_stream(&c, fp, 0), (c.size = r > 0 ? r : 0, iop_post_stream(&c, fp, c.size)))
VCALL(S, int, fprintf, (FILE *fp, const char *fmt, ...), fmt, vfprintf, (fp, fmt, ap), iop_pre_stream(&c, fp, 0), (c.size = r > 0 ? r : 0, iop_post_stream(&c, fp, c.size)))
VCALL(S, int, __fprintf_chk, (FILE *fp, int flag, const char *fmt, ...), fmt, __vfprintf_chk, (fp, flag, fmt, ap), iop_pre_stream(&c, fp, 0), (c.size = r > 0 ? r : 0, iop_post_stream(&c, fp, c.size)))
CALL(S, char *, fgets, (char *s, int n, FILE *fp), (s, n, fp), iop_pre_stream(&c, fp, n), iop_post_stream(&c, fp, r ? (int64_t)strlen(s) : 0))
CALL(S, char *, __fgets_chk, (char *s, size_t size, int n, FILE *fp), (s, size, n, fp), iop_pre_stream(&c, fp, n), iop_post_stream(&c, fp, r ? (int64_t)strlen(s) : 0))
CALL(S, int, fgetc, (FILE *fp), (fp), iop_pre_stream(&c, fp, 1), iop_post_stream(&c, fp, r != EOF))
CALL(S, int, getc, (FILE *fp), (fp), iop_pre_stream(&c, fp, 1), iop_post_stream(&c, fp, r != EOF))
/* The _unlocked forms: GNU programs (coreutils' sort, head, tail, tr, od,
 * md5sum...) call these instead, through gnulib's unlocked-io.h. */
CALL(S, size_t, fread_unlocked, (void *p, size_t size, size_t n, FILE *fp), (p, size, n, fp), iop_pre_stream(&c, fp, (int64_t)(size * n)), iop_post_stream(&c, fp, (int64_t)(r * size)))
CALL(S, size_t, __fread_unlocked_chk, (void *p, size_t plen, size_t size, size_t n, FILE *fp), (p, plen, size, n, fp), iop_pre_stream(&c, fp, (int64_t)(size * n)), iop_post_stream(&c, fp, (int64_t)(r * size)))
CALL(S, size_t, fwrite_unlocked, (const void *p, size_t size, size_t n, FILE *fp), (p, size, n, fp), iop_pre_stream(&c, fp, (int64_t)(size * n)), iop_post_stream(&c, fp, (int64_t)(r * size)))
CALL(S, int, fputs_unlocked, (const char *s, FILE *fp), (s, fp), iop_pre_stream(&c, fp, (int64_t)strlen(s)), iop_post_stream(&c, fp, r >= 0 ? c.size : 0))
CALL(S, int, fputc_unlocked, (int ch, FILE *fp), (ch, fp), iop_pre_stream(&c, fp, 1), iop_post_stream(&c, fp, r != EOF))
CALL(S, char *, fgets_unlocked, (char *s, int n, FILE *fp), (s, n, fp), iop_pre_stream(&c, fp, n), iop_post_stream(&c, fp, r ? (int64_t)strlen(s) : 0))
CALL(S, int, fgetc_unlocked, (FILE *fp), (fp), iop_pre_stream(&c, fp, 1), iop_post_stream(&c, fp, r != EOF))
CALL(S, int, fflush_unlocked, (FILE *fp), (fp), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -1))
/* scanf consumes an amount of input only the stream position tells. */
CALL(S, int, vfscanf, (FILE *fp, const char *fmt, va_list ap), (fp, fmt, ap), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -2))
CALL(S, int, __isoc99_vfscanf, (FILE *fp, const char *fmt, va_list ap), (fp, fmt, ap), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -2))
VCALL(S, int, fscanf, (FILE *fp, const char *fmt, ...), fmt, vfscanf, (fp, fmt, ap), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -2))
VCALL(S, int, __isoc99_fscanf, (FILE *fp, const char *fmt, ...), fmt, __isoc99_vfscanf, (fp, fmt, ap), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -2))

/* ---- stdio: positioning (recorded with the resulting position) ---- */
CALL(S, int, fseek, (FILE *fp, long off, int whence), (fp, off, whence), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -3))
CALL(S, int, fseeko, (FILE *fp, off_t off, int whence), (fp, off, whence), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -3))
CALL(S, int, fseeko64, (FILE *fp, off64_t off, int whence), (fp, off, whence), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -3))
CALL(S, long, ftell, (FILE *fp), (fp), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -3))
CALL(S, off_t, ftello, (FILE *fp), (fp), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -3))
CALL(S, off64_t, ftello64, (FILE *fp), (fp), iop_pre_stream(&c, fp, 0), iop_post_stream(&c, fp, -3))

#undef P
#undef S
#undef CUR

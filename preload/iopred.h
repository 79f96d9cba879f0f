/* iopred.h: the C interface of libiopred.so.
 *
 * A program runs under iopred either with LD_PRELOAD=libiopred.so (no
 * change to the program) or linked with -liopred. Either way it may call
 * these functions; a program that only might run under iopred can look
 * them up with dlsym(RTLD_DEFAULT, "iopred_flush") and skip them when
 * they are absent.
 *
 * All functions are safe to call from any thread. They return quickly
 * and never change errno. */
#ifndef IOPRED_H
#define IOPRED_H

#ifdef __cplusplus
extern "C" {
#endif

/* iopred_enabled returns 1 when this process is being recorded, 0 when
 * iopred is loaded but passive (IOPRED_DISABLE=1, a forked child, a
 * process that holds another Go runtime, or after exit began). */
int iopred_enabled(void);

/* iopred_flush writes every event recorded so far to the trace file and
 * closes the current compressed frame, so that the trace on disk is
 * complete up to this call even if the process is killed right after.
 * Returns 1 when it flushed, 0 when there was nothing to flush. */
int iopred_flush(void);

#ifdef __cplusplus
}
#endif

#endif /* IOPRED_H */

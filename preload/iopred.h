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

/* iopred_enabled returns 1 when this process is being recorded (a child
 * that forked without exec is, into its spill file), 0 when iopred is
 * loaded but passive (IOPRED_DISABLE=1, a process that holds another Go
 * runtime, or after exit began). */
int iopred_enabled(void);

/* iopred_flush writes every event recorded so far to the trace file and
 * closes the current compressed frame, so that the trace on disk is
 * complete up to this call even if the process is killed right after.
 * Returns 1 when it flushed, 0 when there was nothing to flush. In a
 * child that forked without exec every call is in its spill file as soon
 * as it returns: iopred_flush returns 1 at once. */
int iopred_flush(void);

/* Kinds of operation in a prediction. */
enum iopred_op {
  IOPRED_OP_OTHER = 0,
  IOPRED_OP_READ = 1,  /* read, pread, readv, fread, fgets, fscanf, ... */
  IOPRED_OP_WRITE = 2, /* write, pwrite, writev, fwrite, fprintf, ... */
  IOPRED_OP_OPEN = 3,  /* open, openat, creat, fopen, ... */
  IOPRED_OP_CLOSE = 4, /* close, fclose */
  IOPRED_OP_SEEK = 5,  /* lseek, fseek, ftell, rewind */
  IOPRED_OP_SYNC = 6,  /* fsync, fdatasync, fflush */
  IOPRED_OP_META = 7   /* stat family, ftruncate, unlink, rename */
};

/* One predicted operation. */
struct iopred_prediction {
  int op;              /* enum iopred_op */
  int fd;              /* a descriptor the program has open on the file, or -1 */
  long long offset;    /* byte offset it will start at, or -1 when unknown or none */
  long long size;      /* bytes it will request, 0 for calls without a size */
  double delay_s;      /* expected seconds from the end of the last recorded call until it starts */
  double probability;  /* the model's confidence in this step, 0 to 1 */
  const char *call;    /* the function, e.g. "pwrite" (static storage) */
  const char *path;    /* the file, or NULL (valid until the process exits) */
  unsigned long long ctx; /* the context id of the call site, as in the trace */
  unsigned int fallback;  /* IOPRED_FROM_* bits: the fields taken from a simple
                             baseline instead of the model's tables, because the
                             baseline has been right more often at this point
                             of the program; 0 when all came from the model */
};

/* Bits of iopred_prediction.fallback: which rule gave a field. */
enum iopred_fallback {
  IOPRED_FROM_NEXT_CONTEXT = 1, /* the call: the one that most often followed the previous call */
  IOPRED_FROM_PREVIOUS_FILE = 2, /* path and fd: the previous call's file */
  IOPRED_FROM_CONTIGUOUS = 4,   /* offset: where the previous call on the file ended */
  IOPRED_FROM_LAST_SIZE = 8,    /* size: the size of the previous call on the file */
  IOPRED_FROM_LAST_GAP = 16     /* delay_s: the gap between the two previous calls */
};

/* iopred_predict writes the model's prediction of the next operations of
 * this process, soonest first, into out[0..max-1] and returns how many it
 * wrote: 0 when it has none (nothing learned yet, or iopred passive).
 * Every call recorded before iopred_predict is seen by the model. The
 * first entry is the next operation; later entries follow the most likely
 * path through what the model has learned.
 *
 * With IOPRED_MODEL=path, a model saved by an earlier run of the program
 * is loaded at start, so predictions are available from the first call.
 *
 * In a child that forked without exec it returns 0 ("no prediction") at
 * once: the model lives in the parent's Go runtime, whose threads do not
 * survive fork, and the child's records go to its spill file, which no
 * model reads while the child runs. */
int iopred_predict(struct iopred_prediction *out, int max);

/* Which requests make the bandwidth signal of iopred_period. */
enum iopred_period_mode {
  IOPRED_PERIOD_WRITE = 1,
  IOPRED_PERIOD_READ = 2,
  IOPRED_PERIOD_BOTH = 3
};

/* The periodicity of this process's I/O (FTIO's method, online mode). */
struct iopred_period_result {
  int found;            /* 1 when a dominant period was found */
  double period_s;      /* the period, when found */
  double freq_hz;       /* 1 / period_s */
  double confidence;    /* FTIO's confidence in it, 0 to 1 */
  double t_start;       /* the window analysed, in seconds since the process started */
  double t_end;
  int n_samples;        /* samples of the bandwidth signal (rate chosen from the events, at most 65536) */
  double window_s;      /* the online window: 0 while the whole history is used;
                           3 periods once a period was found 3 times in a row */
  int found_in_a_row;   /* evaluations in a row that found a period */
};

/* iopred_period analyses the bandwidth of this process's own recorded
 * I/O so far (mode: enum iopred_period_mode) and fills *out. It returns 1
 * when a period was found, 0 when none was (out still says which window
 * was analysed), -1 when iopred is passive or mode is unknown. Each call
 * is one online evaluation: after three that find a period, the window
 * shrinks to three periods, so the answer follows a changing period. The
 * newest 32768 requests of each mode are kept. In a child that forked
 * without exec it returns -1 at once, for the reason iopred_predict gives
 * no prediction there. */
int iopred_period(struct iopred_period_result *out, int mode);

#ifdef __cplusplus
}
#endif

#endif /* IOPRED_H */

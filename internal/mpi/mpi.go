// Package mpi runs an analysis across the ranks of an MPI job without
// linking iopred with MPI: the MPI library is loaded with dlopen only when
// a command asks for it (--mpi), so the plain iopred binary runs where no
// MPI is installed. One binary serves Open MPI and MPICH, whose ABIs
// differ: Open MPI's communicators and datatypes are pointers to exported
// objects (ompi_mpi_comm_world, ompi_mpi_byte), MPICH's are integer
// constants. Every handle is passed as a register-sized value, which the
// x86-64 and AArch64 calling conventions accept for both.
//
// Only the few collectives an analysis needs are here: gathering each
// rank's bytes at rank 0. Every call must come from the goroutine that
// called Init, which Init locks to its OS thread (MPI_THREAD_SINGLE).
package mpi

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

typedef uintptr_t mh;

struct mpi_lib {
	void *lib;
	int ompi;
	mh world, byte;
	int (*init)(int *, char ***);
	int (*finalize)(void);
	int (*comm_rank)(mh, int *);
	int (*comm_size)(mh, int *);
	int (*gather)(const void *, int, mh, void *, int, mh, int, mh);
	int (*gatherv)(const void *, int, mh, void *, const int *, const int *, mh, int, mh);
	int (*bcast)(void *, int, mh, int, mh);
	int (*abort_)(mh, int);
	int (*ibarrier)(mh, void *);
	int (*test)(void *, int *, void *);
	void *status_ignore;
};

static struct mpi_lib L;

// mpi_open loads name and finds what the analysis calls; 0 on success,
// else 1 when the library is missing, 2 when a function is.
static int mpi_open(const char *name) {
	L.lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
	if (!L.lib) return 1;
	void *w = dlsym(L.lib, "ompi_mpi_comm_world");
	if (w) {
		L.ompi = 1;
		L.world = (mh)w;
		L.byte = (mh)dlsym(L.lib, "ompi_mpi_byte");
		L.status_ignore = (void *)0; // Open MPI's MPI_STATUS_IGNORE
	} else {
		L.ompi = 0;
		L.world = 0x44000000; // MPICH's MPI_COMM_WORLD
		L.byte = 0x4c00010d;  // MPICH's MPI_BYTE
		L.status_ignore = (void *)1; // MPICH's MPI_STATUS_IGNORE
	}
	L.init = dlsym(L.lib, "MPI_Init");
	L.finalize = dlsym(L.lib, "MPI_Finalize");
	L.comm_rank = dlsym(L.lib, "MPI_Comm_rank");
	L.comm_size = dlsym(L.lib, "MPI_Comm_size");
	L.gather = dlsym(L.lib, "MPI_Gather");
	L.gatherv = dlsym(L.lib, "MPI_Gatherv");
	L.bcast = dlsym(L.lib, "MPI_Bcast");
	L.abort_ = dlsym(L.lib, "MPI_Abort");
	L.ibarrier = dlsym(L.lib, "MPI_Ibarrier");
	L.test = dlsym(L.lib, "MPI_Test");
	if (!L.byte || !L.init || !L.finalize || !L.comm_rank || !L.comm_size || !L.gather || !L.gatherv || !L.bcast || !L.abort_ ||
	    !L.ibarrier || !L.test)
		return 2;
	return 0;
}

static const char *mpi_dlerror(void) { return dlerror(); }
static int mpi_is_ompi(void) { return L.ompi; }
static int mpi_init(void) { return L.init(NULL, NULL); }
static int mpi_finalize(void) { return L.finalize(); }
static int mpi_rank(int *r) { return L.comm_rank(L.world, r); }
static int mpi_size(int *n) { return L.comm_size(L.world, n); }
static int mpi_gather(const void *s, int n, void *r) { return L.gather(s, n, L.byte, r, n, L.byte, 0, L.world); }
static int mpi_gatherv(const void *s, int n, void *r, const int *counts, const int *displs) {
	return L.gatherv(s, n, L.byte, r, counts, displs, L.byte, 0, L.world);
}
static int mpi_bcast(void *b, int n) { return L.bcast(b, n, L.byte, 0, L.world); }
static int mpi_abort(int code) { return L.abort_(L.world, code); }
// A request is a pointer (Open MPI) or an int (MPICH): 8 zeroed bytes
// hold either.
static int mpi_ibarrier(uint64_t *req) { *req = 0; return L.ibarrier(L.world, req); }
static int mpi_test(uint64_t *req, int *done) { return L.test(req, done, L.status_ignore); }
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
	"unsafe"
)

// Libraries are the MPI libraries Load tries, by soname: Open MPI's, then
// MPICH's (Debian's names).
var Libraries = []string{"libmpi.so.40", "libmpich.so.12"}

// World is MPI_COMM_WORLD of a running job.
type World struct {
	rank, size int
	impl       string
	done       bool
}

// Init loads the MPI library and initialises MPI. The library is the one
// IOPRED_MPI_LIB names, else the one the launcher's environment points to
// (Open MPI's mpirun and PMIx set OMPI_* and PMIX_RANK, MPICH's Hydra sets
// PMI_RANK), else the first of Libraries that loads. It locks the calling
// goroutine to its OS thread: every other call must come from it.
func Init() (*World, error) {
	runtime.LockOSThread()
	names := candidates()
	var tried []string
	loaded := false
	for _, name := range names {
		cs := C.CString(name)
		rc := C.mpi_open(cs)
		C.free(unsafe.Pointer(cs))
		switch rc {
		case 0:
			loaded = true
		case 1:
			tried = append(tried, C.GoString(C.mpi_dlerror())) // names the library
			continue
		default:
			return nil, fmt.Errorf("mpi: %s lacks MPI_Init, MPI_Gatherv or another function iopred calls", name)
		}
		break
	}
	if !loaded {
		return nil, fmt.Errorf("mpi: no MPI library could be loaded (set IOPRED_MPI_LIB to its path): %s", strings.Join(tried, "; "))
	}
	w := &World{impl: "MPICH"}
	if C.mpi_is_ompi() != 0 {
		w.impl = "Open MPI"
		// Open MPI's handlers for SIGSEGV, SIGBUS, SIGFPE and SIGABRT
		// would take the signals Go's runtime turns into panics.
		if _, set := os.LookupEnv("OMPI_MCA_opal_signal"); !set {
			os.Setenv("OMPI_MCA_opal_signal", "")
		}
	}
	if rc := C.mpi_init(); rc != 0 {
		return nil, fmt.Errorf("mpi: MPI_Init failed (error %d)", int(rc))
	}
	var r, n C.int
	if rc := C.mpi_rank(&r); rc != 0 {
		return nil, fmt.Errorf("mpi: MPI_Comm_rank failed (error %d)", int(rc))
	}
	if rc := C.mpi_size(&n); rc != 0 {
		return nil, fmt.Errorf("mpi: MPI_Comm_size failed (error %d)", int(rc))
	}
	w.rank, w.size = int(r), int(n)
	return w, nil
}

func candidates() []string {
	if lib := os.Getenv("IOPRED_MPI_LIB"); lib != "" {
		return []string{lib}
	}
	_, ompi := os.LookupEnv("OMPI_COMM_WORLD_SIZE")
	_, pmix := os.LookupEnv("PMIX_RANK")
	_, pmi := os.LookupEnv("PMI_RANK")
	if pmi && !ompi && !pmix {
		return []string{Libraries[1], Libraries[0]}
	}
	return Libraries
}

// Rank is this process's rank in MPI_COMM_WORLD.
func (w *World) Rank() int { return w.rank }

// Size is the number of ranks.
func (w *World) Size() int { return w.size }

// Implementation names the MPI library loaded: "Open MPI" or "MPICH".
func (w *World) Implementation() string { return w.impl }

// chunk bounds the bytes one rank sends in one MPI_Gatherv (an int count).
const chunk = 1 << 30

// Gather sends b to rank 0, which returns every rank's bytes in rank
// order; the other ranks return nil. Every rank must call it.
func (w *World) Gather(b []byte) ([][]byte, error) {
	if w.done {
		return nil, errors.New("mpi: gather after Finalize")
	}
	// The ranks that finish first wait here without spinning: MPI's
	// collectives poll, and would burn a core each while the slowest rank
	// still reads its traces.
	if err := w.Wait(); err != nil {
		return nil, err
	}
	// Every rank learns the largest message, so that all take part in the
	// same number of rounds of at most chunk bytes each.
	var mine [8]byte
	binary.LittleEndian.PutUint64(mine[:], uint64(len(b)))
	lens := make([]byte, 8*w.size)
	if rc := C.mpi_gather(unsafe.Pointer(&mine[0]), 8, unsafe.Pointer(&lens[0])); rc != 0 {
		return nil, fmt.Errorf("mpi: MPI_Gather failed (error %d)", int(rc))
	}
	var longest [8]byte
	sizes := make([]int, w.size)
	if w.rank == 0 {
		m := 0
		for i := range sizes {
			sizes[i] = int(binary.LittleEndian.Uint64(lens[8*i:]))
			m = max(m, sizes[i])
		}
		binary.LittleEndian.PutUint64(longest[:], uint64(m))
	}
	if rc := C.mpi_bcast(unsafe.Pointer(&longest[0]), 8); rc != 0 {
		return nil, fmt.Errorf("mpi: MPI_Bcast failed (error %d)", int(rc))
	}
	rounds := (int(binary.LittleEndian.Uint64(longest[:])) + chunk - 1) / chunk
	var out [][]byte
	if w.rank == 0 {
		out = make([][]byte, w.size)
		for i := range out {
			out[i] = make([]byte, sizes[i])
		}
	}
	counts := make([]C.int, w.size)
	displs := make([]C.int, w.size)
	var pad [1]byte
	for k := range rounds {
		lo := k * chunk
		part := b[min(lo, len(b)):min(lo+chunk, len(b))]
		var recv []byte
		if w.rank == 0 {
			total := 0
			for i, n := range sizes {
				c := max(0, min(n-lo, chunk))
				counts[i], displs[i] = C.int(c), C.int(total)
				total += c
			}
			recv = make([]byte, max(total, 1))
		}
		send := unsafe.Pointer(&pad[0])
		if len(part) > 0 {
			send = unsafe.Pointer(&part[0])
		}
		var rp unsafe.Pointer
		if recv != nil {
			rp = unsafe.Pointer(&recv[0])
		}
		var cp, dp *C.int
		if w.rank == 0 {
			cp, dp = &counts[0], &displs[0]
		}
		if rc := C.mpi_gatherv(send, C.int(len(part)), rp, cp, dp); rc != 0 {
			return nil, fmt.Errorf("mpi: MPI_Gatherv failed (error %d)", int(rc))
		}
		if w.rank == 0 {
			for i := range out {
				copy(out[i][lo:], recv[displs[i]:displs[i]+counts[i]])
			}
		}
	}
	return out, nil
}

// Wait returns when every rank has called it (MPI_Ibarrier), sleeping
// between tests rather than spinning as MPI's blocking calls do.
func (w *World) Wait() error {
	var req C.uint64_t
	if rc := C.mpi_ibarrier(&req); rc != 0 {
		return fmt.Errorf("mpi: MPI_Ibarrier failed (error %d)", int(rc))
	}
	pause := 50 * time.Microsecond
	for {
		var done C.int
		if rc := C.mpi_test(&req, &done); rc != 0 {
			return fmt.Errorf("mpi: MPI_Test failed (error %d)", int(rc))
		}
		if done != 0 {
			return nil
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}

// Decide returns rank 0's v on every rank (MPI_Bcast): a choice only rank
// 0 can make, which the other ranks must follow into the next collective.
func (w *World) Decide(v bool) (bool, error) {
	if err := w.Wait(); err != nil {
		return false, err
	}
	var b [1]byte
	if v {
		b[0] = 1
	}
	if rc := C.mpi_bcast(unsafe.Pointer(&b[0]), 1); rc != 0 {
		return false, fmt.Errorf("mpi: MPI_Bcast failed (error %d)", int(rc))
	}
	return b[0] == 1, nil
}

// Finalize ends MPI; the World is of no further use.
func (w *World) Finalize() error {
	if w.done {
		return nil
	}
	w.done = true
	// MPI_Finalize synchronises the ranks too: the others wait for rank 0
	// to write its output without spinning.
	if err := w.Wait(); err != nil {
		return err
	}
	if rc := C.mpi_finalize(); rc != 0 {
		return fmt.Errorf("mpi: MPI_Finalize failed (error %d)", int(rc))
	}
	return nil
}

// Abort ends every rank of the job with code (MPI_Abort): a rank that
// cannot go on must not leave the others waiting in a collective.
func (w *World) Abort(code int) {
	C.mpi_abort(C.int(code))
}

// Package main is libiopred.so: the C interposers in this directory record
// every I/O call into per-thread rings, and this Go side receives the
// recorded events in batches on one background thread, writes the
// process's trace and runs its model.
//
// Build with `make` (go build -buildmode=c-shared); see ../README.md.
package main

/*
#cgo CFLAGS: -O2 -Wall -Wno-unused-function
#cgo LDFLAGS: -ldl -lpthread
#include "iop.h"
*/
import "C"

import (
	"cmp"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"unsafe"

	_ "iopred/preload/internal/early" // GOMAXPROCS(1) before the other packages initialise
)

// Version is written into every trace header.
const Version = "0.1.0"

func init() {
	// GOMAXPROCS is set to 1 by preload/internal/early, before the other
	// packages initialise.
	//
	initPrefetch()
	// Package initialisers run last in the runtime's start: from now on
	// C threads may call into Go.
	C.iop_go_ready_set()
}

func main() {}

// sess is the process's session; only the consumer thread and callers of
// the C API touch it, always under the C side's drain mutex.
var sess *session

//export iopGoIngest
func iopGoIngest(evs *C.struct_iop_event, n C.int) {
	defer recoverInto("ingest")
	if sess == nil {
		sess = newSession()
	}
	if n == 0 {
		sess.tick()
		return
	}
	sess.ingest(unsafe.Slice(evs, int(n)))
}

//export iopGoFinish
func iopGoFinish(reason C.int) {
	defer recoverInto("finish")
	if sess == nil {
		return
	}
	switch reason {
	case 0:
		sess.finish("exit")
	case 1:
		sess.finish("exec")
	default:
		sess.flush()
	}
}

//export iopGoFrameOpen
func iopGoFrameOpen() C.int {
	if sess != nil && sess.w != nil && sess.w.FrameOpen() {
		return 1
	}
	return 0
}

// recoverInto keeps a failure of iopred from ever reaching the
// application: the session stops recording and says why, once (with the
// Go stack when IOPRED_DEBUG=1, for a bug report).
func recoverInto(where string) {
	if r := recover(); r != nil {
		if os.Getenv("IOPRED_DEBUG") == "1" {
			os.Stderr.Write(debug.Stack())
		}
		if sess != nil {
			sess.fail(fmt.Errorf("internal error in %s: %v", where, r))
		} else {
			fmt.Fprintf(os.Stderr, "iopred: internal error in %s: %v\n", where, r)
		}
	}
}

// batchEvent is the Go view of one C event.
type batchEvent = C.struct_iop_event

// sortBatch orders a batch by start time, stably. A batch drained from
// one thread's ring is in order already, which one pass checks.
func sortBatch(b []batchEvent) {
	byStart := func(x, y batchEvent) int { return cmp.Compare(x.start_ns, y.start_ns) }
	if !slices.IsSortedFunc(b, byStart) {
		slices.SortStableFunc(b, byStart)
	}
}

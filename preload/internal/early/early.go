// Package early sets up the library's Go runtime before the other
// packages initialise.
//
// Go initialises a package as soon as its imports are: this one imports
// nothing but the runtime, so it runs among the first, while the
// preload package's own initialiser runs last. Settings made here save
// the work the other initialisers would do under the defaults: with two
// processors, the runtime starts more threads and fills a second
// processor's span caches, which runtime.GOMAXPROCS(1) then has to hand
// back (a stop of the world and fresh memory for the span sets: some 70
// page faults in a process that does one I/O call).
//
// It also opens the library's descriptor gate (preload/files.c): the
// program's calls that create descriptors wait there while the runtime
// starts, because the runtime opens files of its own as it starts (the
// transparent huge page size, the cgroup CPU limits). Those opens are
// over before any package initialises; the other packages' initialisers
// open nothing, so the program need not wait for them too (some
// milliseconds on the first open of every traced process: the runtime's
// own start is about a third of the time to the end of the last
// initialiser here). The gate opens earlier still when the library finds
// the runtime's variable runtime.gomaxprocs set (preload/files.c); this
// initialiser opens it otherwise.
package early

/*
// Defined in preload/files.c, linked into the same library.
extern void iop_fd_gate_go_started(void);
*/
import "C"

import "runtime"

func init() {
	// The library shares the process with an application that owns the
	// machine: one Go thread at a time is plenty for trace writing.
	runtime.GOMAXPROCS(1)
	// Nothing reads heap profiles in the library: do not sample
	// allocations (each sample unwinds the stack and records a bucket).
	runtime.MemProfileRate = 0
	C.iop_fd_gate_go_started()
}

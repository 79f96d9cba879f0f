package main

/*
#include <stdlib.h>
#include "iop.h"
#include "prefetch.h"
*/
import "C"

import (
	"bytes"
	"fmt"
	"os"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"

	"iopred/tracefmt"
)

// Prefetching (IOPRED_PREFETCH=1) happens on the C side, on the thread
// that reads (prefetch.c says why). Go's part is the hand-over of what it
// knows before the reads come: with IOPRED_MODEL, each file's read
// sequence from the previous run, saved beside the model, which the C
// detector follows where a read repeats one of that run. The grammar's
// offset tables cannot play that part: past 24 distinct offsets on a
// transition they fall back to sequential access, and a run whose reads
// look random has hundreds.

// Bounds of the saved read sequences: per file and over all files.
const (
	readsPerFile  = 1 << 16
	readsPerModel = 1 << 20
)

// readLog is the read sequence of each file in this run.
type readLog struct {
	Files map[string]*fileReads `msgpack:"files"`
	total int
}

// fileReads is one file's reads: offsets and sizes, in order.
type fileReads struct {
	Off  []int64 `msgpack:"off"`
	Size []int64 `msgpack:"size"`
}

// prefetchState is the process's prefetching, nil when it is off.
type prefetchState struct {
	log        *readLog // nil without IOPRED_MODEL
	tableFiles int
}

var prefetch *prefetchState

// readsPath is where the read sequences go beside the model.
func readsPath() string {
	if p := modelPath(); p != "" {
		return p + ".reads"
	}
	return ""
}

// initPrefetch runs in the package's initialiser, on the thread the Go
// runtime starts on while the program goes on: it hands the previous
// run's read sequences to the C side before most programs have opened
// their first file (a session starts only at the first recorded event,
// and a short program's reads can be over before its trace is created).
func initPrefetch() {
	if C.iop_pf_on == 0 || C.iop_cfg.disabled != 0 {
		return
	}
	prefetch = &prefetchState{}
	p := readsPath()
	if p == "" {
		return
	}
	prefetch.log = &readLog{Files: map[string]*fileReads{}}
	b, err := readPrivate(p)
	if os.IsNotExist(err) {
		return
	}
	var prev readLog
	if err == nil {
		err = msgpack.NewDecoder(bytes.NewReader(b)).Decode(&prev)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "iopred: %s: %v; prefetching without the previous run's reads\n", p, err)
		return
	}
	for path, f := range prev.Files {
		if f == nil || len(f.Off) < 2 || len(f.Off) != len(f.Size) || len(f.Off) > readsPerFile {
			continue
		}
		cpath, err := goCString(path)
		if err != nil {
			continue
		}
		id := C.iop_file_lookup(cpath)
		if id == 0 {
			continue
		}
		if C.iop_pf_install(id, (*C.int64_t)(unsafe.Pointer(&f.Off[0])), (*C.int64_t)(unsafe.Pointer(&f.Size[0])), C.int64_t(len(f.Off))) != 0 {
			prefetch.tableFiles++
		}
	}
}

// noteRead adds a read to this run's sequences.
func (p *prefetchState) noteRead(e *tracefmt.Event) {
	l := p.log
	if l == nil || !tracefmt.IsRead(e.Op) || e.Errno != 0 || e.Offset < 0 || e.Bytes <= 0 || e.Path == "" || l.total >= readsPerModel {
		return
	}
	f := l.Files[e.Path]
	if f == nil {
		f = &fileReads{}
		l.Files[e.Path] = f
	}
	if len(f.Off) >= readsPerFile {
		return
	}
	f.Off = append(f.Off, e.Offset)
	f.Size = append(f.Size, e.Bytes)
	l.total++
}

// save writes this run's read sequences beside the model.
func (p *prefetchState) save() error {
	if p == nil || p.log == nil || len(p.log.Files) == 0 {
		return nil
	}
	// Sorted keys: the same run writes the same bytes.
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(p.log); err != nil {
		return err
	}
	return writePrivate(readsPath(), buf.Bytes())
}

// counters are the footer's prefetch figures; every open file's unused
// ranges are written off first.
func (p *prefetchState) counters() *tracefmt.Prefetch {
	if p == nil {
		return nil
	}
	C.iop_files_pf_finish()
	c := func(i C.int) uint64 { return uint64(C.iop_pf_counter(i)) }
	return &tracefmt.Prefetch{
		Reads:           c(C.IOP_PF_READS),
		Covered:         c(C.IOP_PF_COVERED),
		PrefetchedBytes: c(C.IOP_PF_PREFETCHED),
		UsedBytes:       c(C.IOP_PF_USED),
		WastedBytes:     c(C.IOP_PF_WASTED),
		Calls:           c(C.IOP_PF_CALLS),
		Misses:          c(C.IOP_PF_MISSES),
		Capped:          c(C.IOP_PF_CAPPED),
		TableFiles:      p.tableFiles,
	}
}

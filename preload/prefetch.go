package main

/*
#include <stdlib.h>
#include "iop.h"
#include "prefetch.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"slices"

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
	log *readLog // nil without IOPRED_MODEL
}

var prefetch *prefetchState

// readsPath is where the read sequences go beside the model.
func readsPath() string {
	if p := modelPath(); p != "" {
		return p + ".reads"
	}
	return ""
}

// initPrefetch runs in the package's initialiser. The previous run's
// read sequences are already installed: the library's constructor read
// them before the program's main (prefetch.c, iop_pf_load_tables), so
// that the program's first open need not wait for the Go runtime's
// initialisers. Go keeps this run's sequences, to save them at exit.
func initPrefetch() {
	if C.iop_pf_on == 0 || C.iop_cfg.disabled != 0 {
		return
	}
	prefetch = &prefetchState{}
	if readsPath() != "" {
		prefetch.log = &readLog{Files: map[string]*fileReads{}}
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
	b, err := encodeReadLog(p.log)
	if err != nil {
		return err
	}
	return writePrivate(readsPath(), b)
}

// The read sequences are written with msgpack's element calls, not its
// reflection (encoding a run's 512 reads by reflection cost 0.5 million
// instructions at exit, callgrind), and read by the library's
// constructor in C (prefetch.c), before the Go runtime can. The bytes are
// those the reflective encoder wrote for readLog, a map {"files": {path:
// {"off": [...], "size": [...]}}} with every number an int64 of nine
// bytes, but for the paths' order: sorted, so that the same run writes
// the same bytes (msgpack's SetSortMapKeys sorts only maps of strings to
// strings or bools, and left these in Go's map order).

// encodeReadLog is the msgpack encoding of l, the same for the same run.
func encodeReadLog(l *readLog) ([]byte, error) {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	paths := make([]string, 0, len(l.Files))
	for path := range l.Files {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	err := errors.Join(e.EncodeMapLen(1), e.EncodeString("files"), e.EncodeMapLen(len(paths)))
	for _, path := range paths {
		f := l.Files[path]
		if err = errors.Join(err, e.EncodeString(path)); f == nil {
			err = errors.Join(err, e.EncodeNil())
			continue
		}
		err = errors.Join(err, e.EncodeMapLen(2))
		for _, field := range []struct {
			key string
			v   []int64
		}{{"off", f.Off}, {"size", f.Size}} {
			err = errors.Join(err, e.EncodeString(field.key))
			if field.v == nil {
				err = errors.Join(err, e.EncodeNil())
				continue
			}
			err = errors.Join(err, e.EncodeArrayLen(len(field.v)))
			for _, n := range field.v {
				err = errors.Join(err, e.EncodeInt64(n))
			}
		}
	}
	return buf.Bytes(), err
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
		TableFiles:      int(C.iop_pf_table_files()),
	}
}

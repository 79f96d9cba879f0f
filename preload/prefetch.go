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
	"fmt"
	"os"
	"slices"
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
	var prev *readLog
	if err == nil {
		prev, err = decodeReadLog(b)
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
	b, err := encodeReadLog(p.log)
	if err != nil {
		return err
	}
	return writePrivate(readsPath(), b)
}

// The read sequences are written and read with msgpack's element calls,
// not its reflection: decoding a run's 512 reads by reflection cost 2.1
// million instructions (callgrind), paid in the package's initialiser,
// which a program's first open waits for when there are tables to
// install, and encoding them 0.5 million at its exit. The bytes are
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

// decodeReadLog reads what encodeReadLog wrote (any msgpack integer
// encoding; keys it does not know are skipped). An error says where the
// bytes stopped making sense.
func decodeReadLog(b []byte) (*readLog, error) {
	d := msgpack.NewDecoder(bytes.NewReader(b))
	l := &readLog{Files: map[string]*fileReads{}}
	n, err := d.DecodeMapLen()
	if err != nil {
		return nil, fmt.Errorf("reads file: %w", err)
	}
	for i := 0; i < n; i++ {
		key, err := d.DecodeString()
		if err != nil {
			return nil, fmt.Errorf("reads file, key %d: %w", i, err)
		}
		if key != "files" {
			if err := d.Skip(); err != nil {
				return nil, fmt.Errorf("reads file, %q: %w", key, err)
			}
			continue
		}
		nfiles, err := d.DecodeMapLen()
		if err != nil {
			return nil, fmt.Errorf("reads file, files: %w", err)
		}
		for j := 0; j < nfiles; j++ {
			path, err := d.DecodeString()
			if err != nil {
				return nil, fmt.Errorf("reads file, file %d: %w", j, err)
			}
			f, err := decodeFileReads(d, len(b))
			if err != nil {
				return nil, fmt.Errorf("reads file, %s: %w", path, err)
			}
			l.Files[path] = f
		}
	}
	return l, nil
}

// decodeFileReads reads one file's {"off": [...], "size": [...]}, or nil,
// from a file of size bytes.
func decodeFileReads(d *msgpack.Decoder, size int) (*fileReads, error) {
	n, err := d.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, err // a nil map: no reads
	}
	f := &fileReads{}
	for i := 0; i < n; i++ {
		key, err := d.DecodeString()
		if err != nil {
			return nil, err
		}
		var dst *[]int64
		switch key {
		case "off":
			dst = &f.Off
		case "size":
			dst = &f.Size
		default:
			if err := d.Skip(); err != nil {
				return nil, err
			}
			continue
		}
		m, err := d.DecodeArrayLen()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if m < 0 {
			continue
		}
		// Each number takes a byte at least: a length beyond the bytes
		// left fails at their end, without a huge allocation first.
		*dst = make([]int64, 0, min(m, size))
		for k := 0; k < m; k++ {
			v, err := d.DecodeInt64()
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", key, k, err)
			}
			*dst = append(*dst, v)
		}
	}
	return f, nil
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

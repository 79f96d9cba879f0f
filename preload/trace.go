package main

/*
#include "iop.h"
IOP_HIDDEN int iop_module_in(uintptr_t pc, uint64_t epoch, char *path, int cap, uintptr_t *bias);
IOP_HIDDEN uint64_t iop_ctx_epoch(uint32_t ctx);
IOP_HIDDEN uint64_t iop_unwind_epoch(void);
IOP_HIDDEN int iop_dynsym_name(uintptr_t pc, char *name, int cap);
IOP_HIDDEN uint64_t iop_dropped(void);
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"iopred/tracefmt"
)

// session owns the process's trace: created at the first recorded event,
// closed with a footer at exit (or before an exec).
type session struct {
	w      *tracefmt.Writer
	f      *traceFile
	anchor int64 // CLOCK_MONOTONIC ns of the header's time anchor
	failed bool

	files  map[uint32]string // C file ids already defined in the trace, with their paths
	ctxs   map[uint32]uint64 // C context slots -> stable context ids
	sym    *symbolizer
	ops    []string         // op code -> name
	layers []tracefmt.Layer // op code -> layer
	// The latest event's file and context: a loop's events repeat them,
	// and entries of files and ctxs never change once made.
	lastFile, lastSlot uint32
	lastPath           string
	lastCtx            uint64
	events             uint64
	bytes              uint64
	ev                 tracefmt.Event

	// Forked children (children.go).
	dir, host     string
	forked        bool // the process forked: look for its children's spills
	childWarned   bool
	lastChildScan time.Time
}

func newSession() *session {
	s := &session{
		files:  make(map[uint32]string),
		ctxs:   make(map[uint32]uint64),
		sym:    newSymbolizer(),
		ops:    make([]string, C.IOP_OP_MAX),
		layers: make([]tracefmt.Layer, C.IOP_OP_MAX),
	}
	for i := range s.ops {
		s.ops[i] = canonicalOp(C.GoString(C.iop_op_name(C.int(i))))
		s.layers[i] = tracefmt.LayerOf(s.ops[i])
	}
	s.anchor = int64(C.iop_t0_mono)
	if err := s.open(time.Unix(0, int64(C.iop_t0_unix))); err != nil {
		s.fail(err)
	}
	return s
}

// rankFromEnv finds the MPI rank before MPI itself can tell: from
// IOPRED_RANK, then the launchers' variables.
func rankFromEnv() *int {
	for _, name := range []string{"IOPRED_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"} {
		if v := os.Getenv(name); v != "" {
			if r, err := strconv.Atoi(v); err == nil && r >= 0 {
				return &r
			}
		}
	}
	return nil
}

func (s *session) open(now time.Time) error {
	dir := C.GoString(&C.iop_cfg.dir[0])
	exe, _ := os.Executable()
	host := hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	rank := rankFromEnv()
	if err := startAnonymizing(); err != nil {
		return err
	}
	// Concatenation rather than fmt: fmt's first use costs a short-lived
	// process more than the name is worth.
	base := filepath.Base(exe) + "." + host + "." + strconv.Itoa(os.Getpid())
	if anon != nil {
		base = anon.Token(filepath.Base(exe)) + "." + anon.Token(host) + "." + strconv.Itoa(os.Getpid())
	}
	if rank != nil {
		base += ".r" + strconv.Itoa(*rank)
	}
	s.dir, s.host = dir, host
	if err := os.MkdirAll(dir, dirMode()); err != nil {
		return fmt.Errorf("cannot create trace directory: %w", err)
	}
	// The same pid can write twice: after an exec of a traced program.
	var f *traceFile
	var err error
	for i := 0; i < 100; i++ {
		name := base
		if i > 0 {
			name += "." + strconv.Itoa(i)
		}
		f, err = createTraceFile(filepath.Join(dir, name+tracefmt.FileSuffix))
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("cannot create trace: %w", err)
	}
	args := os.Args
	hdr := tracefmt.Header{
		Version:      tracefmt.FormatVersion,
		Program:      exe,
		Args:         args,
		Host:         host,
		PID:          os.Getpid(),
		PPID:         os.Getppid(),
		Rank:         rank,
		StartUnixNs:  now.UnixNano(),
		StartMonoNs:  s.anchor,
		ContextDepth: int(C.iop_cfg.ctx_depth),
		Library:      "iopred " + Version,
	}
	w, err := tracefmt.NewWriter(f, anonHeader(hdr), tracefmt.WriterOptions{
		FrameBytes: int(C.iop_cfg.flush_bytes),
		FrameAge:   time.Duration(C.iop_cfg.flush_ms) * time.Millisecond,
	})
	if err != nil {
		return err
	}
	s.f, s.w = f, w
	startJob(hdr)
	return nil
}

// fail stops recording: iopred never lets its own trouble reach the
// application, and says so once.
func (s *session) fail(err error) {
	if s.failed {
		return
	}
	s.failed = true
	fmt.Fprintf(os.Stderr, "iopred: recording stopped: %v\n", err)
}

func (s *session) ingest(batch []batchEvent) {
	if s.failed {
		return
	}
	sortBatch(batch)
	for i := range batch {
		if err := s.write(&batch[i]); err != nil {
			s.fail(err)
			return
		}
	}
	s.tick()
}

func (s *session) tick() {
	if s.failed || s.w == nil {
		return
	}
	now := time.Now()
	if err := s.w.Tick(now); err != nil {
		s.fail(err)
	}
	if s.forked && now.Sub(s.lastChildScan) >= childScanEvery {
		s.convertChildren()
	}
}

func (s *session) write(c *batchEvent) error {
	switch c.kind {
	case C.IOP_KIND_FORK:
		s.forked = true
		return s.w.Proc(tracefmt.Proc{Op: "fork", TimeNs: int64(c.start_ns) - s.anchor, Child: int(c.aux)})
	case C.IOP_KIND_EXEC:
		return s.w.Proc(tracefmt.Proc{Op: "exec", TimeNs: int64(c.start_ns) - s.anchor})
	}
	file := uint32(c.file)
	path := s.lastPath
	if file != s.lastFile || file == 0 {
		var known bool
		path, known = s.files[file]
		if file != 0 && !known {
			path = C.GoString(C.iop_file_path(C.uint32_t(file)))
			if err := s.w.File(tracefmt.File{ID: file, Path: anonPath(path)}); err != nil {
				return err
			}
			s.files[file] = path
		}
		if file != 0 {
			s.lastFile, s.lastPath = file, path
		}
	}
	ctx := uint64(0)
	if slot := uint32(c.ctx); slot != 0 && slot == s.lastSlot {
		ctx = s.lastCtx
	} else if slot != 0 {
		var ok bool
		if ctx, ok = s.ctxs[slot]; !ok {
			def := s.context(slot)
			if err := s.w.Context(anonContext(def)); err != nil {
				return err
			}
			ctx = def.ID
			s.ctxs[slot] = ctx
		}
		s.lastSlot, s.lastCtx = slot, ctx
	}
	e := &s.ev
	*e = tracefmt.Event{
		Op:      s.ops[c.op],
		FileID:  file,
		Offset:  int64(c.offset),
		Size:    int64(c.size),
		Ret:     int64(c.ret),
		Bytes:   int64(c.bytes),
		StartNs: int64(c.start_ns) - s.anchor,
		EndNs:   int64(c.end_ns) - s.anchor,
		Tid:     int32(c.tid),
		Ctx:     ctx,
		Errno:   int32(c.err),
		Aux:     int64(c.aux),
		Seq:     int64(c.seq),
		Parent:  int64(c.parent),
	}
	e.Layer = s.layers[c.op]
	s.events++
	s.bytes += uint64(e.Bytes)
	if err := s.w.Event(e); err != nil {
		return err
	}
	e.Path = path
	observe(e)
	observePeriod(e)
	observeJob(e)
	if prefetch != nil {
		prefetch.noteRead(e)
	}
	return nil
}

// context symbolises a context slot's return addresses.
func (s *session) context(slot uint32) tracefmt.Context {
	var pcs [64]C.uintptr_t
	n := int(C.iop_ctx_pcs(C.uint32_t(slot), &pcs[0], C.int(len(pcs))))
	epoch := uint64(C.iop_ctx_epoch(C.uint32_t(slot)))
	frames := make([]tracefmt.Frame, 0, n)
	for _, pc := range pcs[:n] {
		frames = append(frames, s.sym.frame(uintptr(pc), epoch))
	}
	return tracefmt.Context{ID: contextID(frames), Frames: frames}
}

func (s *session) flush() {
	if s.failed || s.w == nil {
		return
	}
	if err := s.w.Flush(); err != nil {
		s.fail(err)
	}
}

func (s *session) finish(reason string) {
	if s.failed || s.w == nil {
		return
	}
	if s.forked && reason == "exit" {
		s.convertChildren()
	}
	if err := saveModel(); err != nil {
		fmt.Fprintf(os.Stderr, "iopred: IOPRED_MODEL: %v\n", err)
	}
	if err := prefetch.save(); err != nil {
		fmt.Fprintf(os.Stderr, "iopred: %s: %v\n", readsPath(), err)
	}
	err := s.w.Close(tracefmt.Footer{
		Reason:   reason,
		EndNs:    int64(C.iop_now()) - s.anchor,
		Events:   s.events,
		Bytes:    s.bytes,
		Dropped:  uint64(C.iop_dropped()),
		Model:    modelSummary(),
		Prefetch: prefetch.counters(),
	})
	// No fsync: the page cache outlives the process, and a sync at exit
	// would cost the program milliseconds.
	if err != nil {
		s.fail(err)
	}
}

// moduleBuf receives module paths from C. One buffer serves every call
// (symbolisation runs under the drain mutex): a buffer per call would be
// a fresh 4 KiB of heap, which the C side fills, each time.
var moduleBuf [4096]C.char

// moduleOf names the object that held pc in an unload epoch (see
// preload/context.c): its path ("" for the program), its load bias, and
// whether it has been unloaded since.
func moduleOf(pc uintptr, epoch uint64) (path string, bias uintptr, gone, ok bool) {
	buf := &moduleBuf
	var b C.uintptr_t
	r := C.iop_module_in(C.uintptr_t(pc), C.uint64_t(epoch), &buf[0], C.int(len(buf)), &b)
	if r == 0 {
		return "", 0, false, false
	}
	return C.GoString((*C.char)(unsafe.Pointer(&buf[0]))), uintptr(b), r == 2, true
}

// currentEpoch is the unwinder's unload epoch now: the one to name
// addresses taken outside a context slot with.
func currentEpoch() uint64 { return uint64(C.iop_unwind_epoch()) }

// dynsymName is the dynamic function symbol holding pc in its loaded
// module, "" when none does.
func dynsymName(pc uintptr) string {
	buf := &moduleBuf
	if C.iop_dynsym_name(C.uintptr_t(pc), &buf[0], C.int(len(buf))) != 2 {
		return ""
	}
	return C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
}

// hostname is the node's name from uname(2): os.Hostname would read it
// through a descriptor of its own, which the program could see.
func hostname() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "unknown"
	}
	b := make([]byte, 0, len(u.Nodename))
	for _, c := range u.Nodename {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

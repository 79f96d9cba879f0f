package spill

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"iopred/tracefmt"
)

// Options adjust Convert.
type Options struct {
	// Symbolize turns a return address into a frame. The converting
	// process passes its own symboliser: a forked child shares the
	// parent's modules. Without one, a frame holds the bare address.
	Symbolize func(pc uint64) tracefmt.Frame
	// Args is the process's argument vector when the converter knows it
	// (a forked child's is its parent's).
	Args []string
	// Library names the library version in the trace's header.
	Library string
	// Writer sets the trace's frame bounds.
	Writer tracefmt.WriterOptions
}

// Convert writes the spill as an iopred trace to w: the header (pid,
// ppid, and the fork time as its anchor), the files and contexts as
// events first use them, every event in start order, and a footer whose
// reason is "exit" or "exec" when the process marked its end, else
// "ended" (it left by _exit or a signal, which run no exit handlers).
func Convert(sp *Spill, w io.Writer, opt Options) error {
	h := sp.Header
	lib := opt.Library
	if lib == "" {
		lib = "iopred spill v1"
	}
	hdr := tracefmt.Header{
		Version:      tracefmt.FormatVersion,
		Program:      h.Program,
		Args:         opt.Args,
		Host:         h.Host,
		PID:          h.PID,
		PPID:         h.PPID,
		StartUnixNs:  h.StartUnixNs,
		StartMonoNs:  h.StartMonoNs,
		ContextDepth: h.ContextDepth,
		Library:      lib,
		ForkUnixNs:   h.StartUnixNs,
	}
	tw, err := tracefmt.NewWriter(w, hdr, opt.Writer)
	if err != nil {
		return err
	}
	ops := make([]string, len(h.Ops))
	for i, o := range h.Ops {
		ops[i] = CanonicalOp(o)
	}
	files := map[uint32]bool{}
	ctxs := map[uint32]uint64{}
	var events, moved uint64
	end := int64(0)
	ev := tracefmt.Event{}
	for i := range sp.Events {
		e := &sp.Events[i]
		end = max(end, e.EndNs-h.StartMonoNs)
		switch e.Kind {
		case KindFork:
			if err := tw.Proc(tracefmt.Proc{Op: "fork", TimeNs: e.StartNs - h.StartMonoNs, Child: int(e.Aux)}); err != nil {
				return err
			}
			continue
		case KindExec:
			if err := tw.Proc(tracefmt.Proc{Op: "exec", TimeNs: e.StartNs - h.StartMonoNs}); err != nil {
				return err
			}
			continue
		}
		op := "op" + strconv.Itoa(int(e.Op))
		if int(e.Op) < len(ops) && ops[e.Op] != "" && ops[e.Op] != "?" {
			op = ops[e.Op]
		}
		if e.File != 0 && !files[e.File] {
			path, ok := sp.Files[e.File]
			if !ok {
				path = "(file " + strconv.Itoa(int(e.File)) + ", its name lost)"
			}
			if err := tw.File(tracefmt.File{ID: e.File, Path: path}); err != nil {
				return err
			}
			files[e.File] = true
		}
		var ctx uint64
		if e.Ctx != 0 {
			id, ok := ctxs[e.Ctx]
			if !ok {
				pcs := sp.Contexts[e.Ctx]
				frames := make([]tracefmt.Frame, 0, len(pcs))
				for _, pc := range pcs {
					if opt.Symbolize != nil {
						frames = append(frames, opt.Symbolize(pc))
					} else {
						frames = append(frames, tracefmt.Frame{Offset: pc})
					}
				}
				if len(frames) > 0 {
					c := tracefmt.Context{ID: tracefmt.ContextID(frames), Frames: frames}
					if err := tw.Context(c); err != nil {
						return err
					}
					id = c.ID
				}
				ctxs[e.Ctx] = id
			}
			ctx = id
		}
		ev = tracefmt.Event{
			Op: op, Layer: tracefmt.LayerOf(op), FileID: e.File,
			Offset: e.Offset, Size: e.Size, Ret: e.Ret, Bytes: e.Bytes,
			StartNs: e.StartNs - h.StartMonoNs, EndNs: e.EndNs - h.StartMonoNs,
			Tid: e.Tid, Ctx: ctx, Errno: e.Errno, Aux: e.Aux, Seq: e.Seq, Parent: e.Parent,
		}
		if err := tw.Event(&ev); err != nil {
			return err
		}
		events++
		moved += uint64(max(e.Bytes, 0))
	}
	reason := "ended"
	switch h.State {
	case 1:
		reason = "exit"
	case 2:
		reason = "exec"
	}
	if h.EndMonoNs > 0 {
		end = max(end, h.EndMonoNs-h.StartMonoNs)
	}
	return tw.Close(tracefmt.Footer{Reason: reason, EndNs: end, Events: events, Bytes: moved, Dropped: h.Dropped, Prefetch: h.Prefetch})
}

// Format reads spill files as traces: every iopred command takes a
// directory's *.iopspill files or a file named on the command line.
var Format = tracefmt.Format{
	Name:     "iopred spill",
	Suffixes: []string{Suffix},
	Sniff:    func(head []byte) bool { return len(head) >= 8 && string(head[:8]) == "IOPSPILL" },
	Open:     open,
}

func init() { tracefmt.RegisterFormat(Format) }

// stream is a converted spill; a fault the spill held comes after its
// last record.
type stream struct {
	*tracefmt.Reader
	fault error
}

func open(path, proc string) (tracefmt.Stream, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sp, fault := Parse(data, path)
	if sp == nil {
		return nil, fault
	}
	var buf bytes.Buffer
	if err := Convert(sp, &buf, Options{}); err != nil {
		return nil, err
	}
	r, err := tracefmt.NewReader(&buf, path)
	if err != nil {
		return nil, err
	}
	// A file cut short is a truncated trace to every command (a warning);
	// other faults are errors.
	if e, ok := fault.(*Error); ok && e.Truncated {
		fault = &tracefmt.TruncatedError{File: e.File, Offset: e.Offset, Reason: e.Reason}
	}
	return &stream{Reader: r, fault: fault}, nil
}

func (s *stream) Next() (tracefmt.Record, error) {
	rec, err := s.Reader.Next()
	if err == io.EOF && s.fault != nil {
		return rec, s.fault
	}
	return rec, err
}

func (s *stream) Each(fn func(tracefmt.Record) error) error {
	for {
		rec, err := s.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

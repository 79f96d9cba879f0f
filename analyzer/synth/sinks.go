package synth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"iopred/internal/safefile"
	"iopred/tracefmt"
)

// anchorNs is the monotonic clock anchor written in every synthetic
// trace's header; all processes share it so that their times line up.
const anchorNs = int64(1_000_000_000)

// TraceSet is a Sink writing one iopred trace per process into Dir, named
// synth.<host>.<pid>.r<rank>.iopred.zst with pid 10000+rank.
type TraceSet struct {
	Dir  string
	Host string // default "synth"

	f      *safefile.File
	bw     *bufio.Writer
	w      *tracefmt.Writer
	events uint64
	bytes  uint64
	offset int64
	last   int64
}

// BeginProcess closes the previous process's trace and starts the next.
func (s *TraceSet) BeginProcess(p int) error {
	if err := s.Close(); err != nil {
		return err
	}
	host := s.Host
	if host == "" {
		host = "synth"
	}
	pid := 10000 + p
	name := filepath.Join(s.Dir, fmt.Sprintf("synth.%s.%d.r%d%s", host, pid, p, tracefmt.FileSuffix))
	f, err := safefile.Create(name, 0o666)
	if err != nil {
		return err
	}
	rank := p
	s.f, s.bw = f, bufio.NewWriterSize(f, 1<<20)
	s.w, err = tracefmt.NewWriter(s.bw, tracefmt.Header{Program: "synth", Host: host, PID: pid, Rank: &rank,
		StartUnixNs: anchorNs, StartMonoNs: anchorNs, Library: "iopred synth"}, tracefmt.WriterOptions{})
	if err != nil {
		f.Close()
		return err
	}
	s.events, s.bytes, s.offset, s.last = 0, 0, 0, 0
	return s.w.File(tracefmt.File{ID: 1, Path: fmt.Sprintf("/synth/out.%d", p)})
}

// Request writes one event.
func (s *TraceSet) Request(p int, r Request) error {
	op := "read"
	if r.Write {
		op = "write"
	}
	e := tracefmt.Event{Op: op, FileID: 1, Offset: s.offset, Size: r.Bytes, Ret: r.Bytes, Bytes: r.Bytes,
		StartNs: int64(math.Round(r.Start * 1e9)), EndNs: int64(math.Round(r.End * 1e9)), Tid: int32(10000 + p)}
	s.offset += r.Bytes
	s.events++
	s.bytes += uint64(r.Bytes)
	s.last = max(s.last, e.EndNs)
	return s.w.Event(&e)
}

// Close finishes the current trace, if any.
func (s *TraceSet) Close() error {
	if s.w == nil {
		return nil
	}
	err := s.w.Close(tracefmt.Footer{Reason: "exit", EndNs: s.last, Events: s.events, Bytes: s.bytes})
	if ferr := s.bw.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		err = s.f.Commit()
	} else {
		s.f.Close()
	}
	s.w, s.f, s.bw = nil, nil, nil
	return err
}

// FTIOLines is a Sink writing FTIO's JSON lines: one line per mode for
// every Flush requests, as TMIO flushes incrementally. Each request is
// its own entry (bandwidth = bytes / duration).
type FTIOLines struct {
	W     io.Writer
	Flush int // requests per line; default 4096

	pending map[string]*ftioArrays
	count   int
}

type ftioArrays struct {
	bw, start, end []float64
}

// BeginProcess needs no action: FTIO lines carry no rank.
func (s *FTIOLines) BeginProcess(int) error { return nil }

// Request buffers one request and writes the lines when Flush are pending.
func (s *FTIOLines) Request(_ int, r Request) error {
	if s.pending == nil {
		s.pending = map[string]*ftioArrays{}
	}
	mode := "read_sync"
	if r.Write {
		mode = "write_sync"
	}
	a := s.pending[mode]
	if a == nil {
		a = &ftioArrays{}
		s.pending[mode] = a
	}
	bw := 0.0
	if r.End > r.Start {
		bw = float64(r.Bytes) / (r.End - r.Start)
	}
	a.bw, a.start, a.end = append(a.bw, bw), append(a.start, r.Start), append(a.end, r.End)
	s.count++
	flush := s.Flush
	if flush <= 0 {
		flush = 4096
	}
	if s.count >= flush {
		return s.Close()
	}
	return nil
}

// Close writes the pending lines.
func (s *FTIOLines) Close() error {
	for _, mode := range []string{"read_sync", "write_sync"} {
		a := s.pending[mode]
		if a == nil || len(a.bw) == 0 {
			continue
		}
		line, err := json.Marshal(map[string]any{mode: map[string]any{
			"number_of_ranks": 0,
			"bandwidth":       map[string][]float64{"b_rank_avr": a.bw, "t_rank_s": a.start, "t_rank_e": a.end},
		}})
		if err != nil {
			return err
		}
		if _, err := s.W.Write(append(line, '\n')); err != nil {
			return err
		}
		a.bw, a.start, a.end = a.bw[:0], a.start[:0], a.end[:0]
	}
	s.count = 0
	return nil
}

// WriteTraces generates the job c describes as one iopred trace per
// process in dir, and returns the paths of the traces in dir in
// tracefmt.Discover's order.
func WriteTraces(dir string, c Config) ([]string, error) {
	set := &TraceSet{Dir: dir}
	if _, err := Generate(c, set); err != nil {
		set.Close()
		return nil, err
	}
	if err := set.Close(); err != nil {
		return nil, err
	}
	return tracefmt.Discover(dir)
}

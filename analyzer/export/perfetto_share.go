package export

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"iopred/internal/msgcheck"
)

// PerfettoPart is what one share of a job's traces (those from First on,
// Traces of them) puts in the Perfetto document of all of them: their
// events and figures. Written in order by WritePerfettoParts, the parts of
// consecutive shares make the document Perfetto writes, byte for byte, so
// that the shares can be rendered by different processes (the ranks of an
// MPI job).
type PerfettoPart struct {
	First  int `msgpack:"first"`
	Traces int `msgpack:"traces"`
	// Start is the job's start, the earliest of every trace's anchors.
	Start int64 `msgpack:"start"`
	// Events are the share's trace events, each preceded by ",\n".
	Events []byte `msgpack:"events"`
	Stats  Stats  `msgpack:"stats"`
}

// PerfettoShare renders traces[lo:hi] as they appear in the document of
// all the traces (pids lo+1 to hi, times from the job's start, which every
// trace's header is read for), on opt.Jobs goroutines. A trace that cannot
// be opened is an error, as in Perfetto; one that cannot be read to its
// end is a problem in the part's Stats.
func PerfettoShare(traces []string, lo, hi int, opt PerfettoOptions) (*PerfettoPart, error) {
	if lo < 0 || hi > len(traces) || lo > hi {
		return nil, fmt.Errorf("export: share %d to %d of %d traces", lo, hi, len(traces))
	}
	start, err := jobStart(traces)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	// Not the document's first event: every event is preceded by its
	// comma, which WritePerfettoParts drops before the first.
	p := &perfetto{out: bufio.NewWriterSize(&buf, 256<<10), opt: opt}
	part := &PerfettoPart{First: lo, Traces: hi - lo, Start: start}
	if err := p.traces(traces[lo:hi], lo, start, &part.Stats); err != nil {
		return nil, err
	}
	if p.err != nil {
		return nil, p.err
	}
	if err := p.out.Flush(); err != nil {
		return nil, err
	}
	part.Events = buf.Bytes()
	return part, nil
}

// Encode is the part's wire form (msgpack).
func (pp *PerfettoPart) Encode() ([]byte, error) { return msgcheck.Marshal(pp) }

// DecodePerfettoPart reads a part that Encode wrote, in another process.
func DecodePerfettoPart(b []byte) (*PerfettoPart, error) {
	var pp PerfettoPart
	if err := msgcheck.Unmarshal(b, &pp); err != nil {
		return nil, fmt.Errorf("export: perfetto part: %w", err)
	}
	if pp.First < 0 || pp.Traces < 0 {
		return nil, fmt.Errorf("export: perfetto part of %d traces from %d", pp.Traces, pp.First)
	}
	return &pp, nil
}

// WritePerfettoParts writes the document of the job whose consecutive
// shares made parts (from the first trace on, in order) and returns the
// figures of all of them: what Perfetto writes and returns for the whole
// job with the same options.
func WritePerfettoParts(w io.Writer, parts []*PerfettoPart, opt PerfettoOptions) (Stats, error) {
	var st Stats
	next := 0
	for _, pp := range parts {
		if pp.First != next {
			return st, fmt.Errorf("export: the part of traces from %d follows traces up to %d", pp.First, next-1)
		}
		if pp.Start != parts[0].Start {
			return st, fmt.Errorf("export: the part of traces from %d puts the job's start at %d, the first part at %d", pp.First, pp.Start, parts[0].Start)
		}
		next += pp.Traces
	}
	var start int64
	if len(parts) > 0 {
		start = parts[0].Start
	}
	p := &perfetto{out: bufio.NewWriterSize(w, 256<<10), opt: opt, first: true}
	p.head(start)
	for _, pp := range parts {
		ev := pp.Events
		if p.first && len(ev) > 0 {
			ev = bytes.TrimPrefix(ev, []byte(",\n"))
			p.first = false
		}
		if p.err == nil {
			_, p.err = p.out.Write(ev)
		}
		st.add(&pp.Stats)
	}
	p.str("\n]}\n")
	if p.err != nil {
		return st, p.err
	}
	return st, p.out.Flush()
}

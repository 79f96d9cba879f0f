// Package job builds the whole-job view of an MPI job: its
// application-level bandwidth signal and the FTIO period of that signal,
// the global PLFS access patterns across ranks, each rank's prediction
// accuracy and the job's counts.
//
// Each rank condenses its own events into a Partial of bounded size (a
// Builder does it as the events come). Partials of neighbouring rank
// ranges merge into the partial of their union, in rank order, along a
// binomial tree: at MPI_Finalize, libiopred.so sends them between the ranks
// with MPI's own point-to-point calls, and rank 0 turns the last one into
// a Summary written next to the traces. `iopred summary` builds the same
// partials from the traces and merges them along the same tree, so the
// view offline is the view the job wrote.
package job

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/vmihailenco/msgpack/v5"

	"iopred/analyzer/pathfilter"
	"iopred/internal/msgcheck"
	"iopred/predictor/pattern"
	"iopred/tracefmt"
)

// Bounds on what one rank keeps, and on what a merged partial keeps, so
// that memory and messages stay bounded whatever the job does.
const (
	// MaxStreams is the number of (file, reads or writes) streams a rank
	// keeps runs for; the requests of further streams are only counted.
	MaxStreams = 64
	// MaxRunsPerStream bounds the strided runs one rank keeps per stream.
	MaxRunsPerStream = 256
	// MaxRunsPerFile bounds the runs a merged partial keeps per stream
	// over all its ranks; past it, the runs with the fewest requests go.
	MaxRunsPerFile = 1 << 16
	// MaxRanks bounds the ranks a partial may claim to cover.
	MaxRanks = 1 << 24
)

// Counts are the job's totals. Reads and writes count the application's
// own data calls once (tracefmt.DataFlow): the POSIX calls an MPI-IO call
// makes underneath are left out, a nonblocking MPI-IO call counts at its
// completion. Calls on the paths the builder's filter excludes (the
// system's and the MPI runtime's files) count only in ExcludedEvents and
// ExcludedBytes.
type Counts struct {
	Events       uint64 `msgpack:"e" json:"events"`
	POSIX        uint64 `msgpack:"px" json:"posix_events"`
	Stdio        uint64 `msgpack:"sd" json:"stdio_events"`
	MPIIO        uint64 `msgpack:"mp" json:"mpiio_events"`
	Reads        uint64 `msgpack:"r" json:"reads"`
	Writes       uint64 `msgpack:"w" json:"writes"`
	BytesRead    int64  `msgpack:"br" json:"bytes_read"`
	BytesWritten int64  `msgpack:"bw" json:"bytes_written"`
	Failed       uint64 `msgpack:"f" json:"failed_calls"`
	// IONs sums the durations of the reads and writes; MaxRankIONs is the
	// largest sum of one rank, the rank that spent longest in I/O.
	IONs        int64 `msgpack:"io" json:"io_ns"`
	MaxRankIONs int64 `msgpack:"mio" json:"max_rank_io_ns"`
	MaxIORank   int   `msgpack:"mior" json:"max_io_rank"`
	// ExcludedEvents are the calls on excluded paths; ExcludedBytes the
	// bytes they read and wrote.
	ExcludedEvents uint64 `msgpack:"xe" json:"excluded_events"`
	ExcludedBytes  int64  `msgpack:"xb" json:"excluded_bytes"`
}

func (c *Counts) add(o *Counts) {
	if o.MaxRankIONs > c.MaxRankIONs {
		c.MaxRankIONs, c.MaxIORank = o.MaxRankIONs, o.MaxIORank
	}
	c.Events += o.Events
	c.POSIX += o.POSIX
	c.Stdio += o.Stdio
	c.MPIIO += o.MPIIO
	c.Reads += o.Reads
	c.Writes += o.Writes
	c.BytesRead += o.BytesRead
	c.BytesWritten += o.BytesWritten
	c.Failed += o.Failed
	c.IONs += o.IONs
	c.ExcludedEvents += o.ExcludedEvents
	c.ExcludedBytes += o.ExcludedBytes
}

// Stream holds the strided runs of the requests of one file, reads or
// writes, of the partial's ranks (pattern.Run with the rank as id). A
// run's physical offsets count the bytes its rank moved on the file before
// it, in that direction: PLFS's data dropping of the rank.
type Stream struct {
	Path     string        `msgpack:"p" json:"path"`
	Write    bool          `msgpack:"w" json:"write"`
	Requests int64         `msgpack:"n" json:"requests"`
	Runs     []pattern.Run `msgpack:"r" json:"runs"`
	// Overflow counts the requests whose runs were not kept (bounds).
	Overflow int64 `msgpack:"o" json:"overflow"`
}

// Partial is the condensed view of ranks FirstRank .. FirstRank+Ranks-1.
type Partial struct {
	FirstRank int    `msgpack:"r0"`
	Ranks     int    `msgpack:"nr"`
	Program   string `msgpack:"prog"`
	// StartUnixNs is the wall-clock start of the earliest of the ranks'
	// traces (their time anchors), 0 when unknown: the job's start.
	StartUnixNs int64  `msgpack:"t0"`
	Counts      Counts `msgpack:"c"`
	// Write and Read are the bandwidth signals (bytes per bin, rounded to
	// whole bytes).
	Write Histogram `msgpack:"wh"`
	Read  Histogram `msgpack:"rh"`
	// Streams are sorted by path, reads first. Requests of streams past
	// MaxStreams in a rank count in DroppedRequests.
	Streams         []Stream `msgpack:"s"`
	DroppedRequests int64    `msgpack:"dr"`
	// Accuracy is each rank's context score (predictor.Model.ContextScore:
	// the share of its calls whose context the model predicted), -1 where
	// no model ran or nothing was scored; Steps and Score add up the
	// ranks'.
	Accuracy []float32 `msgpack:"a"`
	Steps    uint64    `msgpack:"st"`
	Score    float64   `msgpack:"sc"`
}

// Merge returns the partial of a's ranks followed by b's: b must start
// where a ends.
func Merge(a, b *Partial) (*Partial, error) {
	if a.FirstRank+a.Ranks != b.FirstRank {
		return nil, fmt.Errorf("job: cannot merge ranks %s with ranks %s: not adjacent", a.rankRange(), b.rankRange())
	}
	if a.Ranks+b.Ranks > MaxRanks {
		return nil, fmt.Errorf("job: more than %d ranks", MaxRanks)
	}
	out := &Partial{FirstRank: a.FirstRank, Ranks: a.Ranks + b.Ranks, Program: a.Program, Counts: a.Counts,
		StartUnixNs: a.StartUnixNs}
	if out.Program == "" {
		out.Program = b.Program
	}
	if b.StartUnixNs > 0 && (out.StartUnixNs == 0 || b.StartUnixNs < out.StartUnixNs) {
		out.StartUnixNs = b.StartUnixNs
	}
	out.Counts.add(&b.Counts)
	for _, h := range []struct{ dst, x, y *Histogram }{{&out.Write, &a.Write, &b.Write}, {&out.Read, &a.Read, &b.Read}} {
		if err := h.dst.Merge(h.x); err != nil {
			return nil, err
		}
		if err := h.dst.Merge(h.y); err != nil {
			return nil, err
		}
	}
	out.Streams = mergeStreams(a.Streams, b.Streams)
	out.DroppedRequests = a.DroppedRequests + b.DroppedRequests
	out.Accuracy = append(append(make([]float32, 0, len(a.Accuracy)+len(b.Accuracy)), a.Accuracy...), b.Accuracy...)
	out.Steps, out.Score = a.Steps+b.Steps, a.Score+b.Score
	return out, nil
}

func (p *Partial) rankRange() string {
	return fmt.Sprintf("%d..%d", p.FirstRank, p.FirstRank+p.Ranks-1)
}

func streamLess(a, b *Stream) bool {
	if a.Path != b.Path {
		return a.Path < b.Path
	}
	return !a.Write && b.Write
}

// mergeStreams joins two sorted stream lists; the same stream's runs are
// concatenated (a's ranks first), within MaxRunsPerFile.
func mergeStreams(a, b []Stream) []Stream {
	out := make([]Stream, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && streamLess(&a[i], &b[j])):
			out = append(out, cloneStream(&a[i]))
			i++
		case i == len(a) || streamLess(&b[j], &a[i]):
			out = append(out, cloneStream(&b[j]))
			j++
		default:
			s := cloneStream(&a[i])
			s.Requests += b[j].Requests
			s.Overflow += b[j].Overflow
			s.Runs = append(s.Runs, b[j].Runs...)
			s.bound()
			out = append(out, s)
			i++
			j++
		}
	}
	return out
}

func cloneStream(s *Stream) Stream {
	c := *s
	c.Runs = append([]pattern.Run(nil), s.Runs...)
	return c
}

// bound drops the runs of fewest requests past MaxRunsPerFile, keeping the
// others in their order.
func (s *Stream) bound() {
	if len(s.Runs) <= MaxRunsPerFile {
		return
	}
	idx := make([]int, len(s.Runs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return s.Runs[idx[x]].Count > s.Runs[idx[y]].Count })
	keep := make([]bool, len(s.Runs))
	for _, i := range idx[:MaxRunsPerFile] {
		keep[i] = true
	}
	kept := s.Runs[:0]
	for i, r := range s.Runs {
		if keep[i] {
			kept = append(kept, r)
		} else {
			s.Overflow += r.Count
		}
	}
	s.Runs = kept
}

// MergeTree merges the partials of ranks 0..len(parts)-1 (parts[i] covers
// rank i) along the binomial tree libiopred.so uses at MPI_Finalize: at
// step s = 1, 2, 4, ..., the partial at position r (a multiple of 2s)
// absorbs the one at r+s. The result is the one a job with these ranks
// writes.
func MergeTree(parts []*Partial) (*Partial, error) {
	if len(parts) == 0 {
		return nil, errors.New("job: no partials to merge")
	}
	parts = append([]*Partial(nil), parts...)
	for step := 1; step < len(parts); step *= 2 {
		for r := 0; r+step < len(parts); r += 2 * step {
			m, err := Merge(parts[r], parts[r+step])
			if err != nil {
				return nil, err
			}
			parts[r] = m
		}
	}
	return parts[0], nil
}

// Encode serialises the partial (MessagePack) for the wire.
func (p *Partial) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	enc.UseCompactFloats(true) // whole bytes per bin: compact integers
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode reads a partial that Encode wrote and checks that it is one
// (another rank's message: never trusted to be well formed).
func Decode(b []byte) (*Partial, error) {
	if err := msgcheck.Check(b); err != nil {
		return nil, fmt.Errorf("job: partial: %w", err)
	}
	p := new(Partial)
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("job: partial: %w", err)
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("job: partial: %w", err)
	}
	return p, nil
}

func (p *Partial) check() error {
	switch {
	case p.FirstRank < 0 || p.Ranks < 1 || p.Ranks > MaxRanks || p.FirstRank > MaxRanks:
		return fmt.Errorf("ranks %d..%d out of range", p.FirstRank, p.FirstRank+p.Ranks-1)
	case len(p.Accuracy) != p.Ranks:
		return fmt.Errorf("%d accuracies for %d ranks", len(p.Accuracy), p.Ranks)
	case p.StartUnixNs < 0:
		return fmt.Errorf("job start %d ns", p.StartUnixNs)
	}
	for _, h := range []*Histogram{&p.Write, &p.Read} {
		if !h.Empty() {
			if err := h.check(); err != nil {
				return err
			}
		}
		for _, v := range h.Bins {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("histogram bin %v is not a byte count", v)
			}
		}
	}
	for i := range p.Streams {
		s := &p.Streams[i]
		if i > 0 && !streamLess(&p.Streams[i-1], s) {
			return fmt.Errorf("streams out of order at %q", s.Path)
		}
		if len(s.Runs) > MaxRunsPerFile {
			return fmt.Errorf("stream %q holds %d runs, more than %d", s.Path, len(s.Runs), MaxRunsPerFile)
		}
		for _, r := range s.Runs {
			if r.Count < 1 || r.Length < 1 {
				return fmt.Errorf("stream %q: run of %d entries of %d bytes", s.Path, r.Count, r.Length)
			}
			if r.ID < int64(p.FirstRank) || r.ID >= int64(p.FirstRank+p.Ranks) {
				return fmt.Errorf("stream %q: run of rank %d outside ranks %s", s.Path, r.ID, p.rankRange())
			}
		}
	}
	if math.IsNaN(p.Score) || p.Score < 0 || p.Score > float64(p.Steps) {
		return fmt.Errorf("context score %v over %d steps", p.Score, p.Steps)
	}
	for _, a := range p.Accuracy {
		if math.IsNaN(float64(a)) || a > 1 || (a < 0 && a != -1) {
			return fmt.Errorf("accuracy %v is not a share", a)
		}
	}
	return nil
}

// Builder condenses one rank's events, in trace order, into its Partial.
type Builder struct {
	program  string
	t0Unix   int64 // wall-clock ns at the trace's time anchor
	filter   *pathfilter.Filter
	excluded map[string]bool // the filter's answer by path
	// the previous path asked about and the answer: a loop's events
	// repeat their file
	lastPath     string
	lastExcluded bool
	flow         tracefmt.DataFlow
	counts       Counts
	write        Histogram
	read         Histogram
	streams      map[streamKey]*rankStream
	dropped      int64
	rankIONs     int64
	files        map[uint32]string // path by file id, for the files copies wrote
}

type streamKey struct {
	path  string
	write bool
}

type rankStream struct {
	requests int64
	moved    int64
	runs     *pattern.RunBuilder
}

// defaultFilter is the filter of every builder but those of
// NewFilteredBuilder; it is never modified.
var defaultFilter = pathfilter.Default()

// NewBuilder starts the partial of the process whose trace has header h.
// It leaves out the calls on the paths pathfilter.Default excludes.
func NewBuilder(h tracefmt.Header) *Builder {
	return NewFilteredBuilder(h, defaultFilter)
}

// NewFilteredBuilder is NewBuilder with the calls on the paths f excludes
// left out (none when f is nil).
func NewFilteredBuilder(h tracefmt.Header, f *pathfilter.Filter) *Builder {
	return &Builder{program: h.Program, t0Unix: h.StartUnixNs, filter: f, excluded: map[string]bool{},
		streams: map[streamKey]*rankStream{}, files: map[uint32]string{}}
}

// File learns a file's path from the trace's file record: a
// copy_file_range names the file it wrote by id only.
func (b *Builder) File(f *tracefmt.File) { b.files[f.ID] = f.Path }

// copyOut counts the bytes a copy_file_range (how cp and cat copy) wrote:
// its event names the file it read, and Aux the id of the file it wrote
// (0 for a descriptor iopred does not know, a pipe). The offset written
// is not recorded, so the write joins the signal but no access stream.
func (b *Builder) copyOut(e *tracefmt.Event) {
	id, ok := tracefmt.CopyTarget(e)
	if !ok || e.Errno != 0 || e.Bytes <= 0 {
		return
	}
	out, ok := b.files[id]
	if !ok || b.excludes(out) {
		return
	}
	dur := max(e.EndNs-e.StartNs, 0)
	b.counts.Writes++
	b.counts.BytesWritten += e.Bytes
	b.write.Add(b.t0Unix+e.StartNs, b.t0Unix+e.StartNs+dur, e.Bytes)
}

// excludes tells whether the filter leaves path out, asking it once per
// path.
func (b *Builder) excludes(path string) bool {
	if b.filter == nil || path == "" {
		return false
	}
	if path == b.lastPath {
		return b.lastExcluded
	}
	x, ok := b.excluded[path]
	if !ok {
		x = b.filter.Excludes(path)
		b.excluded[path] = x
	}
	b.lastPath, b.lastExcluded = path, x
	return x
}

// Add takes the next event of the trace (Path filled in).
func (b *Builder) Add(e *tracefmt.Event) {
	c := &b.counts
	// The flow sees every event, so that a nonblocking call's completion
	// finds its start whatever the paths.
	dir := b.flow.Of(e)
	if dir == tracefmt.Read {
		b.copyOut(e)
	}
	if b.excludes(e.Path) {
		c.ExcludedEvents++
		if dir != tracefmt.NoData && e.Errno == 0 && e.Bytes > 0 {
			c.ExcludedBytes += e.Bytes
		}
		return
	}
	c.Events++
	switch e.Layer {
	case tracefmt.LayerPOSIX:
		c.POSIX++
	case tracefmt.LayerStdio:
		c.Stdio++
	case tracefmt.LayerMPIIO:
		c.MPIIO++
	}
	if e.Errno != 0 {
		c.Failed++
	}
	if dir == tracefmt.NoData || e.Errno != 0 || e.Bytes <= 0 {
		return
	}
	write := dir == tracefmt.Write
	dur := max(e.EndNs-e.StartNs, 0)
	b.rankIONs += dur
	if write {
		c.Writes++
		c.BytesWritten += e.Bytes
		b.write.Add(b.t0Unix+e.StartNs, b.t0Unix+e.StartNs+dur, e.Bytes)
	} else {
		c.Reads++
		c.BytesRead += e.Bytes
		b.read.Add(b.t0Unix+e.StartNs, b.t0Unix+e.StartNs+dur, e.Bytes)
	}
	if e.Offset == tracefmt.NoOffset || e.Path == "" {
		return
	}
	k := streamKey{e.Path, write}
	s := b.streams[k]
	if s == nil {
		if len(b.streams) >= MaxStreams {
			b.dropped++
			return
		}
		s = &rankStream{runs: pattern.NewRunBuilder(0, MaxRunsPerStream)}
		b.streams[k] = s
	}
	s.requests++
	s.runs.Add(e.Offset, e.Bytes, s.moved)
	s.moved += e.Bytes
}

// Partial returns the rank's partial so far. steps and score are the
// model's (predictor.Model.ContextScore); model says whether a model ran.
func (b *Builder) Partial(rank int, model bool, steps uint64, score float64) *Partial {
	p := &Partial{FirstRank: rank, Ranks: 1, Program: b.program, StartUnixNs: max(b.t0Unix, 0), Counts: b.counts,
		DroppedRequests: b.dropped, Accuracy: []float32{-1}}
	p.Counts.IONs, p.Counts.MaxRankIONs, p.Counts.MaxIORank = b.rankIONs, b.rankIONs, rank
	p.Write = wholeBytes(cloneHistogram(&b.write))
	p.Read = wholeBytes(cloneHistogram(&b.read))
	for k, s := range b.streams {
		runs := s.runs.Runs()
		for i := range runs {
			runs[i].ID = int64(rank)
		}
		p.Streams = append(p.Streams, Stream{Path: k.path, Write: k.write, Requests: s.requests, Runs: runs, Overflow: s.runs.Overflow()})
	}
	sort.Slice(p.Streams, func(i, j int) bool { return streamLess(&p.Streams[i], &p.Streams[j]) })
	if model && steps > 0 {
		p.Steps, p.Score = steps, score
		p.Accuracy[0] = float32(score / float64(steps))
	}
	return p
}

// release hands the builder's signal arrays to the next builder's (the
// partials hold copies); the builder is not used after.
func (b *Builder) release() {
	b.write.release()
	b.read.release()
}

func cloneHistogram(h *Histogram) Histogram {
	c := *h
	c.Bins = append([]float64(nil), h.Bins...)
	return c
}

// wholeBytes rounds each bin to whole bytes: a partial carries integers,
// which encode in a few bytes each (most bins of a bursty signal are 0),
// at the cost of at most half a byte per bin.
func wholeBytes(h Histogram) Histogram {
	for i, v := range h.Bins {
		h.Bins[i] = math.Round(v)
	}
	return h
}

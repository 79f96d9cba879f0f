// Package patterns reports the access patterns of traced programs the way
// Pattern PLFS indexes them: per file, the local patterns of each process,
// the global patterns across processes, how much smaller the index gets and
// how many requests the patterns cover.
package patterns

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"iopred/internal/msgcheck"
	"iopred/internal/ordered"
	"iopred/predictor/pattern"
	"iopred/tracefmt"
)

// RawEntryBytes is the size of one raw index entry (logical offset, length,
// physical offset, id; 4 x 8 bytes), against which the patterns are
// measured as in the paper's Figure 1.
const RawEntryBytes = 32

// Report holds the patterns of every file the traces touched.
type Report struct {
	Files    []File   `json:"files"`
	Warnings []string `json:"warnings,omitempty"`
}

// File holds the patterns of one path.
type File struct {
	Path     string `json:"path"`
	Requests int64  `json:"requests"` // data events (reads and writes) on the file
	// RawIndexBytes is RawEntryBytes per request; EncodedIndexBytes the
	// msgpack size of the smaller of the two pattern indexes: every local
	// entry, or the global patterns plus the strided runs that joined none.
	RawIndexBytes     int64   `json:"raw_index_bytes"`
	EncodedIndexBytes int64   `json:"encoded_index_bytes"`
	IndexForm         string  `json:"index_form"` // "local" or "global"
	CompressionRatio  float64 `json:"compression_ratio"`
	// Coverage is the share of requests inside patterns repeated at least
	// twice (r >= 2).
	Coverage float64  `json:"coverage"`
	Local    []Local  `json:"local"`
	Global   []Global `json:"global"`
}

// Local is the pattern index of one process's reads or writes of a file, in
// time order. Physical offsets count the bytes the process moved on the
// file before each request (its PLFS data dropping).
type Local struct {
	ID       int64    `json:"id"` // the process's position in the trace list
	Trace    string   `json:"trace"`
	PID      int      `json:"pid"`
	Rank     *int     `json:"rank"`
	Kind     string   `json:"kind"` // "read" or "write"
	Requests int64    `json:"requests"`
	Patterns []string `json:"patterns"` // logical offsets in the paper's notation
	// Tree is the multi-level pattern tree of the logical offsets (Figure
	// 18), when nested loops give one of a few top-level nodes: the zoned
	// read 0,4K,...,60K,256K,... prints as "0: {(4096)^15 (200704)^1}^n".
	Tree    string          `json:"tree,omitempty"`
	Entries []pattern.Entry `json:"entries"`
}

// Trees with more top-level nodes than this describe irregular access,
// which the flat patterns show better.
const maxTreeNodes = 8

// Global is a global pattern of one kind (reads or writes) of a file.
type Global struct {
	Kind    string          `json:"kind"`
	Pattern string          `json:"pattern"`
	Entry   *pattern.Global `json:"entry"`
}

type streamKey struct {
	path  string
	id    int64
	write bool
}

// stream is one process's reads or writes of a file, kept as detectors
// over its logical offsets, lengths and physical offsets and as strided
// runs: memory that follows the patterns, not the requests.
type stream struct {
	logical, length, physical *pattern.Detector
	runs                      *pattern.RunBuilder
	requests                  int64
	moved                     int64
}

type procInfo struct {
	trace string
	pid   int
	rank  *int
}

// Analyze reads the traces and builds the report with the given detector
// window (pattern.DefaultWindow when 0). A truncated trace counts with the
// records read and adds a warning; the error returned is the first other
// read error (the report still holds what could be read).
func Analyze(traces []string, window int) (*Report, error) {
	return AnalyzeJobs(traces, window, 1)
}

// AnalyzeJobs is Analyze reading jobs traces at once, each on its own
// goroutine (its streams are its own); the report is the same whatever
// jobs. Each trace's streams are condensed into their patterns as soon as
// it is read, and the traces are taken in order at most a few ahead of
// the one whose patterns are collected.
func AnalyzeJobs(traces []string, window, jobs int) (*Report, error) {
	return Combine(traces, []*Share{ReadShare(traces, 0, len(traces), window, jobs)})
}

// Share is the patterns of a contiguous share of the traces, each
// trace's streams condensed: what one rank of an analysis spread over MPI
// ranks sends to the one that combines them (Encode, DecodeShare).
type Share struct {
	first int
	procs []procInfo
	errs  []shareError // by trace, nil for none
	done  []*doneStream
}

// shareError is a trace's reading error as a share keeps it: its
// message, and whether it was a truncation (a warning, not the error).
type shareError struct {
	Msg       string `msgpack:"m"`
	Truncated bool   `msgpack:"t"`
}

// ReadShare reads traces lo to hi-1 on jobs goroutines.
func ReadShare(traces []string, lo, hi, window, jobs int) *Share {
	if window <= 0 {
		window = pattern.DefaultWindow
	}
	sh := &Share{first: lo, procs: make([]procInfo, hi-lo), errs: make([]shareError, hi-lo)}
	ordered.Each(hi-lo, jobs, func(i int) traceStreams {
		return readTrace(int64(lo+i), traces[lo+i], window)
	}, func(i int, t traceStreams) {
		sh.procs[i] = t.proc
		sort.Slice(t.streams, func(a, b int) bool { return keyLess(t.streams[a].key, t.streams[b].key) })
		sh.done = append(sh.done, t.streams...)
		if t.err != nil {
			var te *tracefmt.TruncatedError
			sh.errs[i] = shareError{Msg: t.err.Error(), Truncated: errors.As(t.err, &te)}
		}
	})
	return sh
}

func keyLess(a, b streamKey) bool {
	if a.path != b.path {
		return a.path < b.path
	}
	if a.id != b.id {
		return a.id < b.id
	}
	return !a.write && b.write
}

// Combine builds the report of the traces from the shares that cover
// them, in order.
func Combine(traces []string, shares []*Share) (*Report, error) {
	rep := &Report{}
	var firstErr error
	procs := make([]procInfo, 0, len(traces))
	done := map[streamKey]*doneStream{}
	for _, sh := range shares {
		if sh.first != len(procs) {
			return nil, fmt.Errorf("patterns: the share of traces from %d follows traces up to %d", sh.first, len(procs)-1)
		}
		procs = append(procs, sh.procs...)
		for _, d := range sh.done {
			if d.key.id < int64(sh.first) || d.key.id >= int64(len(procs)) {
				return nil, fmt.Errorf("patterns: a stream of trace %d in the share of traces %d to %d", d.key.id, sh.first, len(procs)-1)
			}
			done[d.key] = d
		}
		for _, e := range sh.errs {
			if e.Msg == "" {
				continue
			}
			rep.Warnings = append(rep.Warnings, e.Msg)
			if !e.Truncated && firstErr == nil {
				firstErr = errors.New(e.Msg)
			}
		}
	}
	if len(procs) != len(traces) {
		return nil, fmt.Errorf("patterns: the shares cover %d traces of %d", len(procs), len(traces))
	}
	keys := make([]streamKey, 0, len(done))
	for k := range done {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	var cur *File
	runs := map[bool]*pattern.RunGroups{false: {}, true: {}}
	var entries []pattern.Entry
	flush := func() error {
		if cur == nil {
			return nil
		}
		err := finishFile(cur, entries, runs)
		rep.Files = append(rep.Files, *cur)
		cur, entries, runs = nil, nil, map[bool]*pattern.RunGroups{false: {}, true: {}}
		return err
	}
	for _, k := range keys {
		if cur == nil || cur.Path != k.path {
			if err := flush(); err != nil {
				return rep, err
			}
			cur = &File{Path: k.path, Local: []Local{}, Global: []Global{}}
		}
		d := done[k]
		p := procs[k.id]
		loc := d.local
		loc.Trace, loc.PID, loc.Rank = p.trace, p.pid, p.rank
		cur.Requests += loc.Requests
		cur.Coverage += float64(d.covered) // divided by Requests in finishFile
		cur.Local = append(cur.Local, loc)
		entries = append(entries, loc.Entries...)
		runs[k.write].Append(d.runs)
		delete(done, k)
	}
	if err := flush(); err != nil {
		return rep, err
	}
	return rep, firstErr
}

// The wire form of a share (MessagePack).
type (
	wireShare struct {
		First   int          `msgpack:"f"`
		Procs   []wireProc   `msgpack:"p"`
		Errs    []shareError `msgpack:"e"`
		Streams []wireStream `msgpack:"s"`
	}
	wireProc struct {
		Trace string `msgpack:"t"`
		PID   int    `msgpack:"p"`
		Rank  *int   `msgpack:"r"`
	}
	wireStream struct {
		Path    string            `msgpack:"path"`
		ID      int64             `msgpack:"id"`
		Write   bool              `msgpack:"w"`
		Local   Local             `msgpack:"l"`
		Covered int64             `msgpack:"c"`
		Runs    pattern.RunGroups `msgpack:"r"`
	}
)

// Encode serialises the share (MessagePack).
func (sh *Share) Encode() ([]byte, error) {
	w := wireShare{First: sh.first, Errs: sh.errs}
	for _, p := range sh.procs {
		w.Procs = append(w.Procs, wireProc{p.trace, p.pid, p.rank})
	}
	for _, d := range sh.done {
		w.Streams = append(w.Streams, wireStream{Path: d.key.path, ID: d.key.id, Write: d.key.write, Local: d.local, Covered: d.covered, Runs: d.runs})
	}
	return msgcheck.Marshal(&w)
}

// DecodeShare reads a share Encode wrote (another process's message,
// checked before use).
func DecodeShare(b []byte) (*Share, error) {
	var w wireShare
	if err := msgcheck.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("patterns: share: %w", err)
	}
	if w.First < 0 || len(w.Errs) != len(w.Procs) {
		return nil, fmt.Errorf("patterns: share: %d errors for %d traces from %d", len(w.Errs), len(w.Procs), w.First)
	}
	sh := &Share{first: w.First, errs: w.Errs}
	for _, p := range w.Procs {
		sh.procs = append(sh.procs, procInfo{p.Trace, p.PID, p.Rank})
	}
	for _, x := range w.Streams {
		if x.ID < int64(w.First) || x.ID >= int64(w.First+len(w.Procs)) {
			return nil, fmt.Errorf("patterns: share: a stream of trace %d outside its %d traces from %d", x.ID, len(w.Procs), w.First)
		}
		if x.Local.Patterns == nil && len(x.Local.Entries) > 0 {
			return nil, fmt.Errorf("patterns: share: %s: entries without patterns", x.Path)
		}
		sh.done = append(sh.done, &doneStream{key: streamKey{x.Path, x.ID, x.Write}, local: x.Local, covered: x.Covered, runs: x.Runs})
	}
	return sh, nil
}

// doneStream is a stream condensed once its trace is read: its local
// patterns and its strided runs.
type doneStream struct {
	key     streamKey
	local   Local // but the process's trace, pid and rank
	covered int64 // requests in patterns repeated at least twice
	runs    pattern.RunGroups
}

// traceStreams is what one trace gave: its process and its streams.
type traceStreams struct {
	proc    procInfo
	streams []*doneStream
	err     error
}

// condense turns a stream into its patterns.
func condense(k streamKey, s *stream) *doneStream {
	idx := indexOf(k.id, s)
	loc := Local{ID: k.id, Kind: "read", Requests: s.requests, Entries: idx}
	if k.write {
		loc.Kind = "write"
	}
	if tr := s.logical.Tree(4); tr.Depth() >= 2 && len(tr.Nodes) <= maxTreeNodes {
		loc.Tree = tr.String()
	}
	d := &doneStream{key: k}
	for i := range idx {
		loc.Patterns = append(loc.Patterns, idx[i].Logical.String())
		if idx[i].Logical.Reps >= 2 {
			d.covered += idx[i].Len()
		}
	}
	d.local = loc
	d.runs = s.runs.FinishGroups()
	return d
}

// finishFile completes a file's figures; runs are its streams' strided
// runs by kind, merged into global patterns (pattern.MergeGroups) without
// making them all.
func finishFile(f *File, entries []pattern.Entry, runs map[bool]*pattern.RunGroups) error {
	if f.Requests > 0 {
		f.Coverage /= float64(f.Requests)
	}
	f.RawIndexBytes = RawEntryBytes * f.Requests
	local, err := (&pattern.Index{Entries: entries}).EncodedSize()
	if err != nil {
		return err
	}
	global := pattern.Index{}
	var rest pattern.RunsSize
	for _, write := range []bool{false, true} {
		g := pattern.MergeGroups(*runs[write], rest.Add)
		global.Globals = append(global.Globals, g...)
		kind := "read"
		if write {
			kind = "write"
		}
		for i := range g {
			f.Global = append(f.Global, Global{Kind: kind, Pattern: g[i].String(), Entry: &g[i]})
		}
	}
	gsize, err := global.EncodedSizeWith(&rest)
	if err != nil {
		return err
	}
	f.EncodedIndexBytes, f.IndexForm = int64(local), "local"
	if len(global.Globals) > 0 && gsize < local {
		f.EncodedIndexBytes, f.IndexForm = int64(gsize), "global"
	}
	if f.EncodedIndexBytes > 0 {
		f.CompressionRatio = float64(f.RawIndexBytes) / float64(f.EncodedIndexBytes)
	}
	return nil
}

// readTrace reads the data events of one trace: per file, its reads and
// its writes apart, in time order, the bytes each moved; each stream
// condensed into its patterns at the end.
func readTrace(id int64, path string, window int) (t traceStreams) {
	t.proc.trace = path
	r, err := tracefmt.Open(path)
	if err != nil {
		t.err = err
		return t
	}
	defer r.Close()
	if tr, ok := r.(*tracefmt.Reader); ok {
		// Each event is done with before the next is read (the streams
		// keep its path, a string, and numbers): one shared event.
		tr.ReuseEvents()
	}
	h := r.Header()
	t.proc.pid, t.proc.rank = h.PID, h.Rank
	streams := map[streamKey]*stream{}
	defer func() {
		for k, s := range streams {
			t.streams = append(t.streams, condense(k, s))
		}
	}()
	var flow tracefmt.DataFlow
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return t
		}
		if err != nil {
			t.err = err
			return t
		}
		e := rec.Event
		if e == nil || e.Errno != 0 {
			continue
		}
		// The application's accesses: not the POSIX calls an MPI-IO call
		// made underneath (they repeat its bytes, or an aggregator's), and
		// a nonblocking MPI-IO call's at its completion.
		dir := flow.Of(e)
		if dir == tracefmt.NoData || e.Offset == tracefmt.NoOffset || e.Bytes <= 0 || e.Path == "" {
			continue
		}
		write := dir == tracefmt.Write
		k := streamKey{path: e.Path, id: id, write: write}
		s := streams[k]
		if s == nil {
			s = &stream{logical: pattern.NewDetector(window), length: pattern.NewDetector(window),
				physical: pattern.NewDetector(window), runs: pattern.NewRunBuilder(id, 0)}
			streams[k] = s
		}
		s.logical.Add(e.Offset)
		s.length.Add(e.Bytes)
		s.physical.Add(s.moved)
		s.runs.Add(e.Offset, e.Bytes, s.moved)
		s.requests++
		s.moved += e.Bytes
	}
}

// indexOf is pattern.BuildIndex over the stream's detectors: the
// logical offsets' units, and the lengths and physical offsets detected
// over the positions of each.
func indexOf(id int64, s *stream) []pattern.Entry {
	units := s.logical.Units()
	entries := make([]pattern.Entry, len(units))
	var at int64
	for i, u := range units {
		n := u.Len()
		entries[i] = pattern.Entry{ID: id, Logical: u, Length: s.length.Segment(at, n), Physical: s.physical.Segment(at, n)}
		at += n
	}
	return entries
}

// String is a one-line description used in warnings and tests.
func (f *File) String() string {
	return fmt.Sprintf("%s: %d requests, ratio %.1f, coverage %.3f", f.Path, f.Requests, f.CompressionRatio, f.Coverage)
}

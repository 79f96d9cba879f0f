package darshan

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"iopred/tracefmt"
)

// Format is how tracefmt reads a Darshan log: as one trace per rank that
// has records ("<log>#r0", "<log>#r1", ...) and one more, "<log>#shared"
// (rank unknown), for the files Darshan reduced to one record for all
// ranks; a log of one process is one trace. A rank's trace holds
//
//   - a Counters record for each of its POSIX, MPI-IO and STDIO records
//     (the shared trace: for each shared record, Procs set to the job's
//     process count);
//   - an event for each DXT segment, in order of start: POSIX segments
//     as "read" and "write", MPI-IO segments as "MPI_File_read_at" and
//     "MPI_File_write_at" (DXT does not record which call of the family
//     made them; "MPI_File_read" and "MPI_File_write" when DXT_MPIIO 1
//     left the offset unknown). Times count from the job start, which the
//     header's StartUnixNs and StartMonoNs both give, so that the ranks
//     of one log and the logs of several jobs share a clock. MPI-IO events
//     are numbered (Seq) and a POSIX event that lies within one of them in
//     time (and thread, when DXT recorded threads) names it as Parent, as
//     iopred records the calls an MPI-IO call makes: the analyses then
//     count its bytes once;
//   - a footer at the job's run time.
//
// A log cut short ends its traces with a *tracefmt.TruncatedError, a
// module that ran out of memory with one whose Offset is -1, a corrupt
// region with the *Error.
var Format = tracefmt.Format{
	Name:      "darshan",
	Suffixes:  []string{".darshan"},
	Sniff:     Sniff,
	Processes: processes,
	Open:      openStream,
}

func init() { tracefmt.RegisterFormat(Format) }

// Sniff reports whether head, the first bytes of a file, start a Darshan 3
// log: a version string "3.xx", then the magic number in either byte
// order.
func Sniff(head []byte) bool {
	if len(head) < 16 || head[0] != '3' || head[1] != '.' {
		return false
	}
	return binary.LittleEndian.Uint64(head[8:]) == magic || binary.BigEndian.Uint64(head[8:]) == magic
}

// sharedProc names the trace of the records shared by all ranks.
const sharedProc = "shared"

// view is a log with its records grouped by trace.
type view struct {
	path  string
	log   *Log
	err   error // Read's
	procs []string
	by    map[string]*proc
}

// proc is one trace's part of a log.
type proc struct {
	name    string
	rank    *int // nil for the shared trace
	records []*Record
	lustre  []*Lustre
	dxt     []*DXTFile

	once   sync.Once
	order  []segRef // the DXT segments in order of start
	parent []int64  // Seq of each order entry's enclosing MPI-IO segment, or its own Seq
}

// segRef is one DXT segment of a proc: dxt[file], the idx-th of its
// writes then reads.
type segRef struct {
	key  uint64 // the start time, as timeKey orders it
	tie  uint64 // orders segments that start together
	file int32
	idx  int32
}

// timeKey maps a time to an integer of the same order (NaN last), which
// compares faster than the float.
func timeKey(t float64) uint64 {
	if t != t {
		return math.MaxUint64
	}
	b := math.Float64bits(t)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// The last log read stays in memory: a command opens a log's traces one
// after another, and each would read the whole log again.
var cache tracefmt.FileCache[*view]

// load reads the log at path, or returns the one read last if the file
// has not changed. The view is nil when the log cannot be read at all.
func load(path string) (*view, error) {
	return cache.Get(path, func(path string) (*view, error) {
		l, err := Open(path)
		if l == nil {
			return nil, err
		}
		return group(path, l, err), err
	})
}

// group sorts a log's records into traces.
func group(path string, l *Log, err error) *view {
	v := &view{path: path, log: l, err: err, by: map[string]*proc{}}
	get := func(rank int64) *proc {
		name := sharedProc
		if rank >= 0 {
			name = "r" + strconv.FormatInt(rank, 10)
		}
		p := v.by[name]
		if p == nil {
			p = &proc{name: name}
			if rank >= 0 && rank <= math.MaxInt32 {
				r := int(rank)
				p.rank = &r
			}
			v.by[name] = p
			v.procs = append(v.procs, name)
		}
		return p
	}
	for _, r := range l.Records {
		p := get(r.Rank)
		p.records = append(p.records, r)
	}
	for _, r := range l.Lustre {
		p := get(r.Rank)
		p.lustre = append(p.lustre, r)
	}
	for _, d := range l.DXT {
		p := get(d.Rank)
		p.dxt = append(p.dxt, d)
	}
	sort.Slice(v.procs, func(i, j int) bool {
		a, b := v.by[v.procs[i]], v.by[v.procs[j]]
		switch {
		case a.rank == nil || b.rank == nil:
			return b.rank == nil && a.rank != nil
		}
		return *a.rank < *b.rank
	})
	return v
}

func processes(path string) ([]string, error) {
	v, err := load(path)
	if v == nil {
		return nil, err
	}
	if len(v.procs) <= 1 {
		return nil, nil
	}
	return v.procs, nil
}

func openStream(path, name string) (tracefmt.Stream, error) {
	v, err := load(path)
	if v == nil {
		return nil, err
	}
	var p *proc
	switch {
	case name != "":
		if p = v.by[name]; p == nil {
			return nil, fmt.Errorf("%s: no process %q in this Darshan log (it holds %s)", path, name, procList(v.procs))
		}
	case len(v.procs) == 1:
		p = v.by[v.procs[0]]
	case len(v.procs) == 0:
		p = &proc{name: "r0"} // a log without records: a trace of the job alone
	default:
		return nil, fmt.Errorf("%s: a Darshan log of %d processes: name one as %s#%s, or give the log to Discover", path, len(v.procs), path, v.procs[0])
	}
	return newStream(v, p), nil
}

func procList(procs []string) string {
	if len(procs) > 6 {
		return strings.Join(procs[:6], ", ") + fmt.Sprintf(" and %d more", len(procs)-6)
	}
	return strings.Join(procs, ", ")
}

// traceHeader returns the iopred header of one of the log's traces: rank nil
// for the shared trace.
func (l *Log) traceHeader(rank *int, host string) tracefmt.Header {
	h := tracefmt.Header{Version: tracefmt.FormatVersion, Rank: rank, Host: host,
		JobID: strconv.FormatInt(l.Job.JobID, 10), Procs: int(min(max(l.Job.NProcs, 0), math.MaxInt32))}
	if f := strings.Fields(l.Job.Exe); len(f) > 0 {
		h.Program, h.Args = f[0], f
	}
	h.StartUnixNs = l.Job.Start.UnixNano()
	h.StartMonoNs = h.StartUnixNs
	h.Source = "darshan log format " + l.Version
	if v := l.Job.Metadata["lib_ver"]; v != "" {
		h.Source = "darshan " + v + ", log format " + l.Version
	}
	h.Shared = rank == nil && l.Job.NProcs > 1
	j := &tracefmt.SourceJob{UID: l.Job.UID, CommandLine: l.Job.Exe, StartUnixNs: l.Job.Start.UnixNano(),
		EndUnixNs: l.Job.End.UnixNano(), RunNs: int64(l.Runtime()), FormatVersion: l.Version, Library: l.Job.Metadata["lib_ver"]}
	for _, m := range l.Modules {
		name := m.Name()
		if m.Partial {
			name += " (partial)"
		}
		j.Modules = append(j.Modules, name)
	}
	h.Job = j
	return h
}

// stream produces one trace's records.
type stream struct {
	v       *view
	p       *proc
	files   map[uint64]uint32
	threads map[uint64]int32
	queue   []tracefmt.Record // records to return, from head on
	head    int
	next    int // into p.records, then into p.order
	phase   int
	events  uint64
	bytes   uint64
}

const (
	phaseCounters = iota
	phaseEvents
	phaseFooter
	phaseEnd
)

func newStream(v *view, p *proc) tracefmt.Stream {
	host := ""
	for _, d := range p.dxt {
		if d.Hostname != "" {
			host = d.Hostname
			break
		}
	}
	s := &stream{v: v, p: p, files: map[uint64]uint32{}, threads: map[uint64]int32{}}
	p.once.Do(p.sortSegments)
	h := v.log.traceHeader(p.rank, host)
	if err := v.endError(); err != io.EOF {
		h.Partial = err.Error()
	}
	return tracefmt.NewRecordStream(h, s.record, nil)
}

// record returns the trace's next record.
func (s *stream) record() (tracefmt.Record, error) {
	for s.head == len(s.queue) {
		switch s.phase {
		case phaseCounters:
			if s.next == len(s.p.records)+len(s.p.lustre) {
				s.phase, s.next = phaseEvents, 0
				continue
			}
			var c *tracefmt.Counters
			var id uint64
			if s.next < len(s.p.records) {
				r := s.p.records[s.next]
				c, id = s.v.log.counters(r), r.ID
			} else {
				r := s.p.lustre[s.next-len(s.p.records)]
				c, id = s.v.log.lustreCounters(r), r.ID
			}
			s.next++
			c.FileID = s.file(id)
			s.queue = append(s.queue, tracefmt.Record{Kind: tracefmt.KindCounters, Counters: c})
		case phaseEvents:
			if s.next == len(s.p.order) {
				s.phase = phaseFooter
				continue
			}
			e := s.event(s.next)
			s.next++
			s.queue = append(s.queue, tracefmt.Record{Kind: tracefmt.KindEvent, Event: e})
		case phaseFooter:
			s.phase = phaseEnd
			f := &tracefmt.Footer{Reason: "exit", EndNs: int64(s.v.log.Runtime()), Events: s.events, Bytes: s.bytes}
			s.queue = append(s.queue, tracefmt.Record{Kind: tracefmt.KindFooter, Footer: f})
		default:
			return tracefmt.Record{}, s.v.endError()
		}
	}
	rec := s.queue[s.head]
	if s.head++; s.head == len(s.queue) {
		s.queue, s.head = s.queue[:0], 0
	}
	return rec, nil
}

// file returns the trace's id of a Darshan record id, defining it (in the
// queue, before the record that uses it) the first time.
func (s *stream) file(id uint64) uint32 {
	if f, ok := s.files[id]; ok {
		return f
	}
	f := uint32(len(s.files) + 1)
	s.files[id] = f
	s.queue = append(s.queue, tracefmt.Record{Kind: tracefmt.KindFile, File: &tracefmt.File{ID: f, Path: s.v.log.Path(id)}})
	return f
}

// endError is what a trace ends with: io.EOF, or what the log lacks.
func (v *view) endError() error {
	var e *Error
	if errors.As(v.err, &e) {
		if e.Truncated {
			return &tracefmt.TruncatedError{File: v.path, Offset: e.Offset, Reason: e.Region + " region: " + e.Err.Error()}
		}
		return e
	}
	if v.err != nil {
		return v.err
	}
	var lost []string
	for _, m := range v.log.Modules {
		if m.Partial {
			lost = append(lost, m.Name())
		}
	}
	if len(lost) > 0 {
		return &tracefmt.TruncatedError{File: v.path, Offset: -1,
			Reason: "Darshan ran out of memory for " + strings.Join(lost, ", ") + ": what it could not record is missing"}
	}
	return io.EOF
}

// sortSegments orders the proc's DXT segments by start and links each
// POSIX segment to the MPI-IO segment it happened within.
func (p *proc) sortSegments() {
	// Each file's writes, and its reads, are one run, usually in order
	// already (DXT appends calls as they come): the runs are sorted (at
	// the cost of a check when they are) and merged, fewer comparisons
	// than sorting all segments at once.
	var runs [][]segRef
	for fi, d := range p.dxt {
		// Among segments that start together: a call before the calls it
		// makes, then the log's order.
		tie := uint64(fi) << 31
		if d.Module != ModDXTMPIIO {
			tie |= 1 << 62
		}
		add := func(part []Segment, base int) {
			if len(part) == 0 {
				return
			}
			run := make([]segRef, len(part))
			for i, s := range part {
				run[i] = segRef{timeKey(s.Start), tie | uint64(base+i), int32(fi), int32(base + i)}
			}
			slices.SortFunc(run, compareRefs)
			runs = append(runs, run)
		}
		add(d.Writes, 0)
		add(d.Reads, len(d.Writes))
	}
	p.order = mergeRuns(runs)

	type call struct {
		start, end float64
		thread     uint64
		seq        int64
	}
	var calls []call // MPI-IO segments in order of start
	p.parent = make([]int64, len(p.order))
	for i, ref := range p.order {
		if p.dxt[ref.file].Module == ModDXTMPIIO {
			s := p.segment(ref)
			calls = append(calls, call{s.Start, s.End, s.Thread, int64(len(calls) + 1)})
			p.parent[i] = int64(len(calls))
		}
	}
	if len(calls) == 0 {
		return
	}
	for i, ref := range p.order {
		if p.dxt[ref.file].Module == ModDXTMPIIO {
			continue
		}
		s := p.segment(ref)
		// The latest MPI-IO call started at or before this one; a few
		// earlier ones too, for calls of other threads in between.
		k := sort.Search(len(calls), func(k int) bool { return calls[k].start > s.Start }) - 1
		for n := 0; k >= 0 && n < 64; k, n = k-1, n+1 {
			c := calls[k]
			if c.start <= s.Start && s.End <= c.end && (c.thread == 0 || s.Thread == 0 || c.thread == s.Thread) {
				p.parent[i] = -c.seq // negative: a parent, not the segment's own number
				break
			}
		}
	}
}

func compareRefs(a, b segRef) int {
	if a.key != b.key {
		return cmp.Compare(a.key, b.key)
	}
	return cmp.Compare(a.tie, b.tie)
}

// mergeRuns merges sorted runs into one sorted slice, pairwise.
func mergeRuns(runs [][]segRef) []segRef {
	for len(runs) > 1 {
		var next [][]segRef
		for i := 0; i+1 < len(runs); i += 2 {
			a, b := runs[i], runs[i+1]
			m := make([]segRef, 0, len(a)+len(b))
			for len(a) > 0 && len(b) > 0 {
				if compareRefs(b[0], a[0]) < 0 {
					m, b = append(m, b[0]), b[1:]
				} else {
					m, a = append(m, a[0]), a[1:]
				}
			}
			next = append(next, append(append(m, a...), b...))
		}
		if len(runs)%2 == 1 {
			next = append(next, runs[len(runs)-1])
		}
		runs = next
	}
	if len(runs) == 0 {
		return nil
	}
	return runs[0]
}

// segment returns the segment a reference names.
func (p *proc) segment(ref segRef) *Segment {
	d := p.dxt[ref.file]
	if int(ref.idx) < len(d.Writes) {
		return &d.Writes[ref.idx]
	}
	return &d.Reads[int(ref.idx)-len(d.Writes)]
}

// event converts the i-th segment of the proc's order.
func (s *stream) event(i int) *tracefmt.Event {
	ref := s.p.order[i]
	d := s.p.dxt[ref.file]
	seg := s.p.segment(ref)
	write := int(ref.idx) < len(d.Writes)
	e := &tracefmt.Event{FileID: s.file(d.ID), Offset: seg.Offset, Size: seg.Length, Bytes: seg.Length,
		StartNs: seconds(seg.Start), EndNs: seconds(seg.End)}
	if e.Offset < 0 {
		e.Offset = tracefmt.NoOffset
	}
	if seg.Thread != 0 {
		t, ok := s.threads[seg.Thread]
		if !ok {
			t = int32(len(s.threads) + 1)
			s.threads[seg.Thread] = t
		}
		e.Tid = t
	}
	if d.Module == ModDXTMPIIO {
		e.Op = "MPI_File_read"
		if write {
			e.Op = "MPI_File_write"
		}
		if e.Offset != tracefmt.NoOffset {
			e.Op += "_at"
		}
		e.Seq = s.p.parent[i]
	} else {
		e.Op, e.Ret = "read", seg.Length
		if write {
			e.Op = "write"
		}
		if p := s.p.parent[i]; p < 0 {
			e.Parent = -p
		}
	}
	s.events++
	if seg.Length > 0 {
		s.bytes += uint64(seg.Length)
	}
	return e
}

// lustreCounters converts a file's Lustre layout to a Counters record of
// layer tracefmt.LayerLustre (FileID unset).
func (l *Log) lustreCounters(r *Lustre) *tracefmt.Counters {
	c := &tracefmt.Counters{Layer: tracefmt.LayerLustre, Source: "darshan LUSTRE v" + strconv.FormatUint(uint64(l.Module(ModLustre).Version), 10),
		Ints: map[string]int64{"LUSTRE_STRIPE_SIZE": r.StripeSize(), "LUSTRE_STRIPE_COUNT": r.StripeCount(),
			"LUSTRE_COMPONENTS": int64(len(r.Components))}}
	if r.Rank < 0 {
		c.Procs = int(min(max(l.Job.NProcs, 1), math.MaxInt32))
	}
	for i, o := range r.OSTs {
		c.Ints["LUSTRE_OST_ID_"+strconv.Itoa(i)] = o
	}
	return c
}

// OSTs are the Lustre OSTs the job's files lie on, each once, ascending:
// the job's footprint on the file system, which the server side (AID)
// otherwise has to infer from the servers' logs. Nil when the log has no
// LUSTRE record.
func (l *Log) OSTs() []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, r := range l.Lustre {
		for _, o := range r.OSTs {
			if !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
	}
	slices.Sort(out)
	return out
}

// seconds converts DXT's seconds to nanoseconds.
func seconds(t float64) int64 {
	ns := math.Round(t * 1e9)
	if ns != ns || ns > math.MaxInt64/2 || ns < math.MinInt64/2 {
		return 0 // a corrupt time: NaN or far out of range
	}
	return int64(ns)
}

// counters converts a counter record to iopred's Counters (FileID unset).
func (l *Log) counters(r *Record) *tracefmt.Counters {
	c := &tracefmt.Counters{Calls: map[string]uint64{}, Source: fmt.Sprintf("darshan %s v%d", r.Module, r.Version),
		Ints: map[string]int64{}, Floats: map[string]float64{}}
	if r.Rank < 0 {
		c.Procs = int(min(max(l.Job.NProcs, 1), math.MaxInt32))
	}
	var prefix string
	var calls [][2]string // call family, counter
	switch r.Module {
	case ModPOSIX:
		c.Layer, prefix = tracefmt.LayerPOSIX, "POSIX_"
		calls = [][2]string{{"open", "OPENS"}, {"read", "READS"}, {"write", "WRITES"}, {"seek", "SEEKS"},
			{"stat", "STATS"}, {"mmap", "MMAPS"}, {"fsync", "FSYNCS"}, {"fdatasync", "FDSYNCS"},
			{"rename", "RENAME_SOURCES"}, {"fopen", "FOPENS"}, {"fread", "FREADS"}, {"fwrite", "FWRITES"}, {"fseek", "FSEEKS"}}
	case ModMPIIO:
		c.Layer, prefix = tracefmt.LayerMPIIO, "MPIIO_"
		calls = [][2]string{{"MPI_File_open", "INDEP_OPENS"}, {"MPI_File_open", "COLL_OPENS"},
			{"MPI_File_read", "INDEP_READS"}, {"MPI_File_write", "INDEP_WRITES"},
			{"MPI_File_read_all", "COLL_READS"}, {"MPI_File_write_all", "COLL_WRITES"},
			{"MPI_File_read_all_begin", "SPLIT_READS"}, {"MPI_File_write_all_begin", "SPLIT_WRITES"},
			{"MPI_File_iread", "NB_READS"}, {"MPI_File_iwrite", "NB_WRITES"}, {"MPI_File_sync", "SYNCS"},
			{"MPI_File_set_info", "HINTS"}, {"MPI_File_set_view", "VIEWS"}}
	case ModSTDIO:
		c.Layer, prefix = tracefmt.LayerStdio, "STDIO_"
		calls = [][2]string{{"fopen", "OPENS"}, {"fdopen", "FDOPENS"}, {"fread", "READS"}, {"fwrite", "WRITES"},
			{"fseek", "SEEKS"}, {"fflush", "FLUSHES"}}
	case ModH5F:
		// The libraries above MPI-IO: their own layers, whose bytes the
		// layers beneath also count.
		c.Layer, prefix = "h5f", "H5F_"
		calls = [][2]string{{"H5Fopen", "OPENS"}, {"H5Fflush", "FLUSHES"}}
	case ModH5D:
		c.Layer, prefix = "h5d", "H5D_"
		calls = [][2]string{{"H5Dopen", "OPENS"}, {"H5Dread", "READS"}, {"H5Dwrite", "WRITES"}, {"H5Dflush", "FLUSHES"}}
	case ModPnetCDFFile:
		c.Layer, prefix = "pnetcdf_file", "PNETCDF_FILE_"
		calls = [][2]string{{"ncmpi_create", "CREATES"}, {"ncmpi_open", "OPENS"}, {"ncmpi_sync", "SYNCS"}}
	case ModPnetCDFVar:
		c.Layer, prefix = "pnetcdf_var", "PNETCDF_VAR_"
		calls = [][2]string{{"ncmpi_inq_varid", "OPENS"}, {"ncmpi_get_var", "INDEP_READS"}, {"ncmpi_put_var", "INDEP_WRITES"},
			{"ncmpi_get_var_all", "COLL_READS"}, {"ncmpi_put_var_all", "COLL_WRITES"}, {"ncmpi_iget_var", "NB_READS"},
			{"ncmpi_iput_var", "NB_WRITES"}}
	}
	for _, cc := range calls {
		if n, ok := r.Int(prefix + cc[1]); ok && n > 0 {
			c.Calls[cc[0]] += uint64(n)
		}
	}
	c.BytesRead, _ = r.Int(prefix + "BYTES_READ")
	c.BytesWritten, _ = r.Int(prefix + "BYTES_WRITTEN")
	c.BytesRead, c.BytesWritten = max(c.BytesRead, 0), max(c.BytesWritten, 0)
	ns := func(name string) int64 {
		f, _ := r.Float(prefix + name)
		if !(f > 0) || f > 1e9 {
			return 0 // unset (-1), NaN, or beyond any job's length
		}
		return int64(f * 1e9)
	}
	c.ReadNs, c.WriteNs, c.MetaNs = ns("F_READ_TIME"), ns("F_WRITE_TIME"), ns("F_META_TIME")
	for i, n := range r.set.ints {
		if v := r.Ints[i]; v != 0 {
			c.Ints[n] = v
		}
	}
	for i, n := range r.set.floats {
		if v := r.Floats[i]; v != 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
			c.Floats[n] = v
		}
	}
	if len(c.Calls) == 0 {
		c.Calls = nil
	}
	return c
}

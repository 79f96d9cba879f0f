// Package summary condenses iopred traces into what a user asks first:
// per process, how many calls, how long, how many bytes; per file, which
// calls and how much time; which code paths (contexts) did the I/O.
//
// The system's and the MPI runtime's files (pathfilter.Default) are left
// out and counted on their own unless Options.AllPaths; MPI_Init and
// MPI_Finalize are the MPI runtime's start-up and shut-down, never I/O
// time. Times are relative to the job's start: the earliest trace's.
package summary

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"iopred/analyzer/job"
	"iopred/analyzer/pathfilter"
	"iopred/tracefmt"
)

// Report is the summary of one or more traces (a job directory).
type Report struct {
	// StartUnixNs is the job's start, the earliest trace's time anchor
	// (wall-clock ns); the processes' StartNs count from it.
	StartUnixNs int64 `json:"start_unix_ns"`
	// Excluded counts what the path filter left out (nothing with
	// Options.AllPaths, which AllPaths records).
	Excluded  pathfilter.Tally `json:"excluded"`
	AllPaths  bool             `json:"all_paths"`
	Processes []Process        `json:"processes"`
	Files     []FileStats      `json:"files"`
	Contexts  []ContextStats   `json:"top_contexts"` // by time in I/O, longest first
	// Job is the whole-job view when the traces are an MPI job's (they
	// carry ranks): what the job wrote at MPI_Finalize (job.FromTraces).
	Job         *job.Summary `json:"job,omitempty"`
	JobWarnings []string     `json:"job_warnings,omitempty"`
	// Modules are the per-layer totals of the traces' per-file counters
	// (a Darshan log's modules); Notes say where the figures come from.
	Modules []ModuleStats `json:"modules,omitempty"`
	// Application is what the application moved, each byte once: for
	// each file, the highest layer that saw it (MPI-IO, else POSIX),
	// plus stdio; Layers are each layer's own view beside it (the POSIX
	// calls an MPI-IO call makes count in POSIX's view, not again in the
	// application's), in the order MPI-IO, POSIX, stdio.
	Application LayerIO `json:"application"`
	// Source is the job as the traces' source recorded it (a Darshan
	// log's job record), nil for iopred's own traces.
	Source *SourceJob   `json:"source_job,omitempty"`
	Layers []LayerTotal `json:"layers,omitempty"`
	// OSTs are the Lustre OSTs the job's files lie on, ascending, when
	// the source recorded the layouts: the job's footprint on the file
	// system.
	OSTs []int64 `json:"osts,omitempty"`
	// LustreOnly are the layouts of the files the source kept a layout
	// of but no I/O record (Darshan's LUSTRE module records every file a
	// rank opened on Lustre), by path.
	LustreOnly []LustreFile `json:"lustre_only,omitempty"`
	Notes      []string     `json:"notes,omitempty"`
	// Regions are the spans of the application's own work the traces
	// record (a DFTracer trace's functions, epochs, steps), by category
	// and name, longest in total first.
	Regions []RegionStats `json:"regions,omitempty"`
	// Prefetch sums the processes' prefetch counters, nil when no process
	// prefetched.
	Prefetch *tracefmt.Prefetch `json:"prefetch,omitempty"`
}

// RegionStats are the regions of one category and name over the traces.
type RegionStats struct {
	Category  string `json:"category"`
	Name      string `json:"name"`
	Count     uint64 `json:"count"`
	TotalNs   int64  `json:"total_ns"`
	MaxNs     int64  `json:"max_ns"`
	Processes int    `json:"processes"`
	// FirstNs and LastEndNs are the first region's start and the last
	// one's end, from the job's start.
	FirstNs   int64 `json:"first_ns"`
	LastEndNs int64 `json:"last_end_ns"`
}

// prefetchTotal sums the processes' prefetch counters.
func prefetchTotal(procs []Process) *tracefmt.Prefetch {
	var t *tracefmt.Prefetch
	for _, p := range procs {
		q := p.Prefetch
		if q == nil {
			continue
		}
		if t == nil {
			t = &tracefmt.Prefetch{}
		}
		t.Reads += q.Reads
		t.Covered += q.Covered
		t.PrefetchedBytes += q.PrefetchedBytes
		t.UsedBytes += q.UsedBytes
		t.WastedBytes += q.WastedBytes
		t.Calls += q.Calls
		t.Misses += q.Misses
		t.Capped += q.Capped
		t.TableFiles += q.TableFiles
	}
	return t
}

// SourceJob is the job as another tool recorded it: a Darshan log's job
// id, process count, uid, command line, start, end and run time in
// Darshan's convention, log version, modules, and whether it is partial.
type SourceJob struct {
	JobID   string `json:"job_id"`
	Procs   int    `json:"processes"`
	Program string `json:"executable"`
	// Args are the arguments after the executable.
	Args   []string `json:"args,omitempty"`
	Source string   `json:"source"`
	tracefmt.SourceJob
	// Partial says what the source lacks; empty when complete.
	Partial string `json:"partial,omitempty"`
}

// LayerIO is what the calls of one interface layer moved: that layer's
// own view of a process's, a file's or the job's I/O, whether or not a
// call of a higher layer made them.
type LayerIO struct {
	Calls        uint64 `json:"calls"`
	BytesRead    int64  `json:"bytes_read"`
	BytesWritten int64  `json:"bytes_written"`
}

// LayerTotal is one layer's view summed over the job.
type LayerTotal struct {
	Layer string `json:"layer"`
	LayerIO
}

// Layers is a per-layer view, by layer name ("mpiio", "posix", "stdio").
type Layers map[string]*LayerIO

// add counts calls and bytes in layer l.
func (ls *Layers) add(l tracefmt.Layer, calls uint64, read, written int64) {
	if *ls == nil {
		*ls = Layers{}
	}
	v := (*ls)[string(l)]
	if v == nil {
		v = &LayerIO{}
		(*ls)[string(l)] = v
	}
	v.Calls += calls
	v.BytesRead += read
	v.BytesWritten += written
}

// Process summarises one trace.
type Process struct {
	Trace   string `json:"trace"`
	Program string `json:"program"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	PPID    int    `json:"ppid"`
	Rank    *int   `json:"rank"`
	// ForkUnixNs is when a child that forked without exec was forked (0
	// for a process that started from an exec).
	ForkUnixNs int64  `json:"fork_unix_ns,omitempty"`
	Events     uint64 `json:"events"`
	// Calls counts the calls the application made itself: not the POSIX
	// calls an MPI-IO call made, nor MPI_Init and MPI_Finalize.
	Calls       uint64 `json:"calls"`
	StartUnixNs int64  `json:"start_unix_ns"` // the trace's time anchor (wall clock)
	StartNs     int64  `json:"start_ns"`      // the same, since the job's start
	DurationNs  int64  `json:"duration_ns"`   // from the time anchor to the footer, or to the last event's end
	IONs        int64  `json:"io_ns"`         // summed durations of its calls but MPI_Init and MPI_Finalize
	// MPIStartNs and MPIEndNs are the time in MPI_Init (or
	// MPI_Init_thread) and MPI_Finalize: the runtime's start-up and
	// shut-down.
	MPIStartNs   int64  `json:"mpi_startup_ns"`
	MPIEndNs     int64  `json:"mpi_shutdown_ns"`
	BytesRead    int64  `json:"bytes_read"`
	BytesWritten int64  `json:"bytes_written"`
	Errors       uint64 `json:"failed_calls"`
	Dropped      uint64 `json:"dropped"`
	// Prefetch is what the library's prefetching did in the process
	// (IOPRED_PREFETCH=1), from the trace's footer.
	Prefetch *tracefmt.Prefetch `json:"prefetch,omitempty"`
	// Layers is the per-layer view of its I/O; BytesRead and
	// BytesWritten count each byte once.
	Layers   Layers `json:"layers,omitempty"`
	Complete bool   `json:"complete"` // the trace ended with a footer, and its source was not partial
	// Shared marks the trace of the files every process of the job
	// shared (a Darshan log's rank -1 records): not a process.
	Shared  bool   `json:"shared,omitempty"`
	Problem string `json:"error,omitempty"` // why the trace could not be read to its end
}

// FileStats summarises the calls on one path, over every process.
type FileStats struct {
	Path         string            `json:"path"` // "" for calls that name no file
	Calls        map[string]uint64 `json:"calls"`
	Events       uint64            `json:"events"`
	BytesRead    int64             `json:"bytes_read"`
	BytesWritten int64             `json:"bytes_written"`
	IONs         int64             `json:"io_ns"`
	Processes    int               `json:"processes"`
	// Layers is the per-layer view; BytesRead and BytesWritten count each
	// byte once (the highest layer's).
	Layers Layers `json:"layers,omitempty"`
	// Lustre is the file's Lustre layout when the source recorded it.
	Lustre *LustreLayout `json:"lustre,omitempty"`
}

// ContextStats summarises the calls made from one context (call stack).
// The same code path has the same id in every process of a program.
type ContextStats struct {
	ID        uint64            `json:"id"`
	Events    uint64            `json:"events"`
	IONs      int64             `json:"io_ns"`
	Bytes     int64             `json:"bytes"`
	Calls     map[string]uint64 `json:"calls"`
	Where     string            `json:"where"` // the innermost application frame, symbolised
	Frames    []tracefmt.Frame  `json:"frames"`
	Processes int               `json:"processes"`
}

// DefaultTop is how many contexts a report keeps unless told otherwise.
const DefaultTop = 10

// Options tune Summarize.
type Options struct {
	// Top is how many contexts the report keeps; all when negative.
	Top int
	// AllPaths keeps the calls on the paths pathfilter.Default excludes.
	AllPaths bool
	// Observer, when set, sees the traces as they are read.
	Observer Observer
	// Jobs is how many traces are read and decoded at once, each on its
	// own goroutine; 0 or 1 reads them one after another. The report,
	// and what the Observer sees, are the same whatever Jobs: the
	// records reach the summary and the Observer trace after trace, in
	// the order given.
	Jobs int
}

// Observer sees what Summarize reads, one trace after another: an
// analysis that needs more than the summary's figures computes them in
// the same pass.
type Observer interface {
	// Begin starts trace number proc, of header h.
	Begin(proc int, trace string, h tracefmt.Header)
	// Event is the next event of the trace that the summary counts (not
	// on an excluded path); dir is the direction of its own data
	// (tracefmt.DataFlow). e is valid during the call only: the summary
	// reads the next event into the same memory.
	Event(e *tracefmt.Event, dir tracefmt.Direction)
	// End closes the trace with its summary (whose StartNs is set only
	// once every trace is read).
	End(p *Process)
}

// CopyObserver is an Observer that also sees the other side of a
// copy_file_range: its event names the file it read, and Copied follows
// Event with the path of the file it wrote into (when that file is known
// and not excluded), whose bytes the summary counts as written.
type CopyObserver interface {
	Observer
	Copied(e *tracefmt.Event, path string)
}

type fileAcc struct {
	FileStats
	procs  map[int]bool
	shared int // processes a counters record shared by all ranks covers
	// traced marks the layers that events of some trace showed on this
	// path: their counters (a Darshan log's, beside its DXT) repeat them.
	traced map[tracefmt.Layer]bool
}

type regionAcc struct {
	RegionStats
	procs map[int]bool
	// first and lastEnd in wall-clock ns, set from the first region
	first, lastEnd int64
	seen           bool
}

// region adds one region of trace proc, whose anchor is at wall-clock
// anchorNs.
func (s *summarizer) region(proc int, anchorNs int64, g *tracefmt.Region) {
	if s.regions == nil {
		s.regions = map[[2]string]*regionAcc{}
	}
	k := [2]string{g.Category, g.Name}
	a := s.regions[k]
	if a == nil {
		a = &regionAcc{RegionStats: RegionStats{Category: g.Category, Name: g.Name}, procs: map[int]bool{}}
		s.regions[k] = a
	}
	d := max(g.EndNs-g.StartNs, 0)
	a.Count++
	a.TotalNs += d
	a.MaxNs = max(a.MaxNs, d)
	a.procs[proc] = true
	start, end := anchorNs+g.StartNs, anchorNs+g.StartNs+d
	if !a.seen || start < a.first {
		a.first = start
	}
	if !a.seen || end > a.lastEnd {
		a.lastEnd = end
	}
	a.seen = true
}

// regionStats are the regions' totals, longest first, times from the
// job's start.
func (s *summarizer) regionStats(jobStart int64) []RegionStats {
	var out []RegionStats
	for _, a := range s.regions {
		a.Processes = len(a.procs)
		a.FirstNs, a.LastEndNs = a.first-jobStart, a.lastEnd-jobStart
		out = append(out, a.RegionStats)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.TotalNs != b.TotalNs {
			return a.TotalNs > b.TotalNs
		}
		if a.Category != b.Category {
			return a.Category < b.Category
		}
		return a.Name < b.Name
	})
	return out
}

type ctxAcc struct {
	ContextStats
	procs map[int]bool
}

// Summarize reads every trace and summarises them. A trace that cannot be
// read to its end still counts with the records read so far; its
// Process.Problem says why. The error returned is the first
// *tracefmt.FormatError or I/O error met (nil when every trace was at
// worst truncated), so that callers can tell corrupt input from a killed
// process.
func Summarize(traces []string, opt Options) (*Report, error) {
	return Combine(traces, []*Partial{Read(traces, 0, len(traces), opt)}, opt)
}

// Read reads traces lo to hi-1 of traces into a Partial: one share of a
// summary spread over processes (the ranks of an MPI job), which Combine
// joins with the other shares. The Observer sees the share's traces,
// numbered by their place in traces.
func Read(traces []string, lo, hi int, opt Options) *Partial {
	s := &summarizer{files: map[string]*fileAcc{}, ctxs: map[uint64]*ctxAcc{}, excluded: map[string]bool{},
		obs: opt.Observer}
	if !opt.AllPaths {
		s.filter = pathfilter.Default()
	}
	part := &Partial{first: lo, s: s}
	share := traces[lo:hi]
	src := newSources(share, opt.Jobs, job.Options{AllPaths: opt.AllPaths})
	defer src.stop()
	// The job view's partial of each trace joins the merge as soon as the
	// trace is read, so that the partials do not pile up.
	part.job = job.NewResults(traces, lo, job.Options{AllPaths: opt.AllPaths, Jobs: opt.Jobs})
	for i, path := range share {
		p, err := s.trace(lo+i, path, src.open(i))
		part.procs = append(part.procs, p)
		var te *tracefmt.TruncatedError
		if err != nil && !errors.As(err, &te) && part.err == nil {
			part.err = err
		}
		part.job.Add(src.take(i))
	}
	return part
}

// Combine joins the Partials of every share of traces, in their order,
// into the summary Summarize gives. The partials are consumed.
func Combine(traces []string, parts []*Partial, opt Options) (*Report, error) {
	if len(parts) == 0 {
		return nil, errors.New("summary: no share of the traces")
	}
	all := parts[0]
	jobs := []*job.Results{all.job}
	for _, p := range parts[1:] {
		if p.first != all.first+len(all.procs) {
			return nil, fmt.Errorf("summary: the share of traces from %d follows traces up to %d", p.first, all.first+len(all.procs)-1)
		}
		all.merge(p)
		jobs = append(jobs, p.job)
	}
	if all.first != 0 || len(all.procs) != len(traces) {
		return nil, fmt.Errorf("summary: the shares cover traces %d to %d of %d", all.first, all.first+len(all.procs)-1, len(traces))
	}
	s := all.s
	rep := &Report{AllPaths: opt.AllPaths, Processes: all.procs}
	firstErr := all.err
	for _, p := range rep.Processes {
		if p.StartUnixNs > 0 && (rep.StartUnixNs == 0 || p.StartUnixNs < rep.StartUnixNs) {
			rep.StartUnixNs = p.StartUnixNs
		}
	}
	for i := range rep.Processes {
		if p := &rep.Processes[i]; p.StartUnixNs > 0 {
			p.StartNs = p.StartUnixNs - rep.StartUnixNs
		}
	}
	rep.Excluded = s.tally
	rep.Source = s.source
	rep.Notes = append(rep.Notes, s.notes...)
	rep.Regions = s.regionStats(rep.StartUnixNs)
	files, ctxs := s.files, s.ctxs
	s.cnt.finish(rep, files)
	rep.Application, rep.Layers = layerTotals(rep.Processes)
	rep.Prefetch = prefetchTotal(rep.Processes)
	for _, f := range files {
		f.Processes = max(len(f.procs), f.shared)
		rep.Files = append(rep.Files, f.FileStats)
	}
	sort.Slice(rep.Files, func(i, j int) bool {
		a, b := rep.Files[i], rep.Files[j]
		if a.IONs != b.IONs {
			return a.IONs > b.IONs
		}
		return a.Path < b.Path
	})
	for _, c := range ctxs {
		c.Processes = len(c.procs)
		rep.Contexts = append(rep.Contexts, c.ContextStats)
	}
	sort.Slice(rep.Contexts, func(i, j int) bool {
		a, b := rep.Contexts[i], rep.Contexts[j]
		if a.IONs != b.IONs {
			return a.IONs > b.IONs
		}
		return a.ID < b.ID
	})
	if opt.Top >= 0 && len(rep.Contexts) > opt.Top {
		rep.Contexts = rep.Contexts[:opt.Top]
	}
	for _, p := range rep.Processes {
		if p.Rank != nil && !s.cnt.countersOnly() {
			j, warnings, err := job.FromResults(traces, jobs)
			rep.Job, rep.JobWarnings = j, warnings
			if j == nil && err != nil {
				rep.JobWarnings = append(rep.JobWarnings, "no job view: "+err.Error())
			}
			break
		}
	}
	return rep, firstErr
}

// summarizer holds what Summarize accumulates over the traces.
type summarizer struct {
	files    map[string]*fileAcc
	ctxs     map[uint64]*ctxAcc
	filter   *pathfilter.Filter // nil: every path
	excluded map[string]bool    // the filter's answer by path
	tally    pathfilter.Tally
	obs      Observer
	cnt      countersAcc // the Counters records (Darshan without DXT)
	source   *SourceJob
	notes    []string // the headers' notes, each once
	regions  map[[2]string]*regionAcc
	// firstPartial is the first header's Partial that is not empty
	// (what a share tells the source of an earlier share).
	firstPartial string
	// the previous path asked about and the answer
	lastPath     string
	lastExcluded bool
}

// excludes tells whether the filter leaves path out, counting each
// excluded path once.
func (s *summarizer) excludes(path string) bool {
	if s.filter == nil || path == "" {
		return false
	}
	if path == s.lastPath {
		return s.lastExcluded
	}
	x, seen := s.excluded[path]
	if !seen {
		r, ok := s.filter.Match(path)
		if ok {
			s.tally.Add(r)
		}
		x = ok
		s.excluded[path] = x
	}
	s.lastPath, s.lastExcluded = path, x
	return x
}

// trace adds one trace to the files and contexts; proc numbers the trace.
func (s *summarizer) trace(proc int, path string, open func() (recordSource, error)) (p Process, err error) {
	p = Process{Trace: path}
	r, err := open()
	if err != nil {
		p.Problem = err.Error()
		return p, err
	}
	defer r.Close()
	h := r.Header()
	p.Program, p.Host, p.PID, p.Rank, p.StartUnixNs = h.Program, h.Host, h.PID, h.Rank, h.StartUnixNs
	p.PPID, p.ForkUnixNs, p.Shared = h.PPID, h.ForkUnixNs, h.Shared
	s.cnt.header(h)
	if h.Job != nil && s.source == nil {
		s.source = &SourceJob{JobID: h.JobID, Procs: h.Procs, Program: h.Program, Source: h.Source, SourceJob: *h.Job, Partial: h.Partial}
		if len(h.Args) > 1 {
			s.source.Args = h.Args[1:]
		}
	}
	for _, n := range h.Notes {
		if !slices.Contains(s.notes, n) {
			s.notes = append(s.notes, n)
		}
	}
	if h.Partial != "" && s.source != nil && s.source.Partial == "" {
		s.source.Partial = h.Partial
	}
	if s.firstPartial == "" {
		s.firstPartial = h.Partial
	}
	if s.obs != nil {
		s.obs.Begin(proc, path, h)
		defer func() { s.obs.End(&p) }()
	}
	files, ctxs := s.files, s.ctxs
	var lastEnd int64
	var flow tracefmt.DataFlow
	// The previous event's file, the layer last marked on it, and the
	// calls of one operation on it not yet added to its Calls: a loop's
	// events repeat them, and the maps need not be asked each time.
	var (
		lastF     *fileAcc
		lastLayer tracefmt.Layer
		callsOp   string
		callsN    uint64
	)
	flushCalls := func() {
		if callsN > 0 {
			lastF.Calls[callsOp] += callsN
			callsN = 0
		}
	}
	defer flushCalls()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			p.Problem = err.Error()
			if p.DurationNs == 0 {
				p.DurationNs = lastEnd
			}
			return p, err
		}
		switch {
		case rec.Region != nil:
			s.region(proc, h.StartUnixNs, rec.Region)
		case rec.Counters != nil:
			// The module totals are the source's own, every file in; the
			// tables leave the excluded paths out, as they do events.
			s.cnt.add(proc, rec.Counters, s.excludes(rec.Counters.Path))
		case rec.Event != nil:
			e := rec.Event
			s.cnt.events++
			dur := e.EndNs - e.StartNs
			lastEnd = max(lastEnd, e.EndNs)
			dir := flow.Of(e)
			var read, written int64
			switch dir {
			case tracefmt.Read:
				read = max(e.Bytes, 0)
			case tracefmt.Write:
				written = max(e.Bytes, 0)
			}
			if s.excludes(e.Path) {
				s.tally.Events++
				s.tally.Bytes += read + written
				if e.Parent == 0 || e.Layer == tracefmt.LayerMPIIO {
					s.tally.IONs += dur
				}
				continue
			}
			p.Events++
			if e.Errno != 0 {
				p.Errors++
			}
			if s.obs != nil {
				s.obs.Event(e, dir)
			}
			switch {
			case tracefmt.IsMPIStart(e.Op):
				p.MPIStartNs += dur
				continue
			case tracefmt.IsMPIEnd(e.Op):
				p.MPIEndNs += dur
				continue
			}
			// A POSIX call made inside an MPI-IO call is counted as a call,
			// but its time is already the MPI-IO call's.
			if e.Parent != 0 && e.Layer != tracefmt.LayerMPIIO {
				dur = 0
			} else {
				p.Calls++
			}
			p.IONs += dur
			p.BytesRead += read
			p.BytesWritten += written
			f := lastF
			if f == nil || e.Path != f.Path {
				flushCalls()
				f = fileOf(files, e.Path)
				f.procs[proc] = true
				lastF, lastLayer = f, ""
			}
			// Each layer's own view: a POSIX call under an MPI-IO call
			// moved its bytes in POSIX's view, though not again in the
			// application's.
			lread, lwritten := read, written
			if e.Parent != 0 && e.Layer != tracefmt.LayerMPIIO && e.Bytes > 0 {
				switch {
				case tracefmt.IsRead(e.Op):
					lread = e.Bytes
				case tracefmt.IsWrite(e.Op):
					lwritten = e.Bytes
				}
			}
			p.Layers.add(e.Layer, 1, lread, lwritten)
			f.Layers.add(e.Layer, 1, lread, lwritten)
			if e.Layer != lastLayer {
				if f.traced == nil {
					f.traced = map[tracefmt.Layer]bool{}
				}
				f.traced[e.Layer] = true
				lastLayer = e.Layer
			}
			if id, ok := tracefmt.CopyTarget(e); ok && e.Bytes > 0 {
				// The bytes read also land in the output file.
				if out, ok := r.Files()[id]; ok && !s.excludes(out.Path) {
					p.BytesWritten += e.Bytes
					p.Layers.add(e.Layer, 0, 0, e.Bytes)
					o := fileOf(files, out.Path)
					o.BytesWritten += e.Bytes
					o.Layers.add(e.Layer, 0, 0, e.Bytes)
					o.procs[proc] = true
					if co, ok := s.obs.(CopyObserver); ok {
						co.Copied(e, out.Path)
					}
				}
			}
			if e.Op != callsOp {
				flushCalls()
				callsOp = e.Op
			}
			callsN++
			f.Events++
			f.BytesRead += read
			f.BytesWritten += written
			f.IONs += dur
			if e.Ctx != 0 {
				c := ctxs[e.Ctx]
				if c == nil {
					def := r.Contexts()[e.Ctx]
					c = &ctxAcc{ContextStats: ContextStats{ID: e.Ctx, Calls: map[string]uint64{}, Frames: def.Frames,
						Where: FormatFrame(InnermostAppFrame(def.Frames))}, procs: map[int]bool{}}
					ctxs[e.Ctx] = c
				}
				c.Events++
				c.IONs += dur
				c.Bytes += read + written
				c.Calls[e.Op]++
				c.procs[proc] = true
			}
		case rec.Footer != nil:
			p.DurationNs = rec.Footer.EndNs
			p.Dropped = rec.Footer.Dropped
			p.Prefetch = rec.Footer.Prefetch
		}
	}
	p.Complete = true
	if h.Partial != "" {
		// A copy of a partial source (iopred import) ends with a footer,
		// yet lacks what the source lacked.
		p.Complete, p.Problem = false, "partial: "+h.Partial
	}
	if p.DurationNs == 0 {
		p.DurationNs = lastEnd
	}
	return p, nil
}

// layerTotals sums the processes' figures: the application's, and each
// layer's view.
func layerTotals(procs []Process) (app LayerIO, layers []LayerTotal) {
	var sum Layers
	for _, p := range procs {
		app.BytesRead += p.BytesRead
		app.BytesWritten += p.BytesWritten
		app.Calls += p.Calls
		for l, v := range p.Layers {
			sum.add(tracefmt.Layer(l), v.Calls, v.BytesRead, v.BytesWritten)
		}
	}
	for l, v := range sum {
		layers = append(layers, LayerTotal{Layer: l, LayerIO: *v})
	}
	sort.Slice(layers, func(i, j int) bool { return layerOrder(layers[i].Layer) < layerOrder(layers[j].Layer) })
	return app, layers
}

// layerOrder orders layers from the application's down: the libraries
// above MPI-IO (HDF5, PnetCDF), MPI-IO, POSIX, stdio.
func layerOrder(l string) string {
	switch tracefmt.Layer(l) {
	case tracefmt.LayerMPIIO:
		return "1"
	case tracefmt.LayerPOSIX:
		return "2"
	case tracefmt.LayerStdio:
		return "3"
	}
	return "0" + l
}

func fileOf(files map[string]*fileAcc, path string) *fileAcc {
	f := files[path]
	if f == nil {
		f = &fileAcc{FileStats: FileStats{Path: path, Calls: map[string]uint64{}}, procs: map[int]bool{}}
		files[path] = f
	}
	return f
}

// systemLibs are path fragments of the libraries whose frames say nothing
// about where the application did its I/O.
var systemLibs = []string{"/libc.so", "/libc-", "/ld-linux", "/libpthread", "/libiopred", "/libstdc++",
	"/libgfortran", "/libpython", "/libmpi", "/libhdf5", "/libunwind", "/libdl", "/libm.so"}

// InnermostAppFrame returns the innermost frame (frames run from the
// innermost outwards) that belongs to the program or to a library that is
// not a system or runtime library; failing that, the innermost frame.
func InnermostAppFrame(frames []tracefmt.Frame) tracefmt.Frame {
	if len(frames) == 0 {
		return tracefmt.Frame{}
	}
	for _, f := range frames {
		sys := f.Module == "?" || f.Module == ""
		for _, s := range systemLibs {
			if strings.Contains(f.Module, s) {
				sys = true
				break
			}
		}
		if !sys {
			return f
		}
	}
	return frames[0]
}

// FormatFrame prints a frame as module+0xoffset (function).
func FormatFrame(f tracefmt.Frame) string {
	if f.Module == "" && f.Offset == 0 {
		return "-"
	}
	s := filepath.Base(f.Module) + "+0x" + strconv.FormatUint(f.Offset, 16)
	if f.Function != "" {
		s += " (" + f.Function + ")"
	}
	return s
}

package job

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vmihailenco/msgpack/v5"

	"iopred/analyzer/pathfilter"
	"iopred/internal/msgcheck"
	"iopred/predictor"
	"iopred/tracefmt"
)

// CutOp is the process event libiopred.so writes into a rank's trace when
// it takes the rank's partial at MPI_Finalize: the partial holds exactly
// the events before it.
const CutOp = "job"

// FileSuffix ends the name of the job summary rank 0 writes: the name of
// its trace with this in place of tracefmt.FileSuffix.
const FileSuffix = ".job.json"

// FromTraces computes the job summary of the ranks' traces offline, as the
// job computed it at MPI_Finalize: each rank's partial from its events up
// to the cut (all of them when the job never reached MPI_Finalize), its
// model's accuracy by replaying the predictor over the same events, and
// the merge along the same tree. Traces without a rank are left out;
// every rank from 0 to the highest must have exactly one trace, a missing
// one counts as a rank without I/O and is reported in the warnings. A
// trace that cannot be read to its end counts with the records read, with
// a warning; the error returned beside the summary is then the first that
// was not a truncation (corrupt input rather than a killed process).
func FromTraces(paths []string) (*Summary, []string, error) {
	return FromTracesWith(paths, Options{})
}

// Options change what FromTracesWith reads.
type Options struct {
	// AllPaths keeps the calls on the paths pathfilter.Default excludes.
	AllPaths bool
	// Processes takes traces without a rank, when none has one, for ranks
	// 0, 1, ... in the order given: the job view of a program's
	// processes (a single process, or the processes of a workflow).
	Processes bool
	// NoAccuracy skips replaying each rank's model: the summary then
	// reports no accuracy, and costs a fraction of the time (`iopred
	// period` needs only the signal).
	NoAccuracy bool
	// Jobs is how many traces are read at once (each on its own
	// goroutine); 0 or 1 reads them one after another. The summary is
	// the same whatever Jobs: the partials are merged in rank order
	// after every trace is read.
	Jobs int
}

// FromTracesWith is FromTraces with options.
func FromTracesWith(paths []string, opt Options) (*Summary, []string, error) {
	plan, err := NewPlan(paths, opt)
	if err != nil {
		return nil, nil, err
	}
	return plan.Summarize([]*Results{plan.Read(0, len(paths))})
}

// Plan is how the job view of a set of traces is read: as an MPI job's
// ranks, or as processes taken for ranks 0, 1, ... (Options.Processes,
// when no trace has a rank). Its traces can be read in shares, by
// different processes (an analysis spread over MPI ranks), and the
// shares' Results combined into the summary FromTracesWith gives.
type Plan struct {
	paths     []string
	opt       Options
	filter    *pathfilter.Filter
	processes bool
}

// NewPlan looks at the traces' headers to choose how they are read.
func NewPlan(paths []string, opt Options) (*Plan, error) {
	p := &Plan{paths: paths, opt: opt, filter: defaultFilter}
	if opt.AllPaths {
		p.filter = nil
	}
	if opt.Processes {
		ranked := false
		for _, path := range paths {
			r, err := tracefmt.Open(path)
			if err != nil {
				return nil, err
			}
			ranked = r.Header().Rank != nil
			r.Close()
			if ranked {
				break
			}
		}
		p.processes = !ranked
	}
	return p, nil
}

// Read reads the traces lo to hi-1 into their partials, on opt.Jobs
// goroutines.
func (p *Plan) Read(lo, hi int) *Results {
	paths := p.paths[lo:hi]
	if p.processes {
		return &Results{First: lo, res: readPartials(paths, p.opt.Jobs, func(i int, path string) rankResult {
			var res rankResult
			res.p, _, _, res.err = rankPartial(path, lo+i, p.filter, !p.opt.NoAccuracy)
			return res
		})}
	}
	return &Results{First: lo, res: readPartials(paths, p.opt.Jobs, func(_ int, path string) rankResult {
		var res rankResult
		res.p, res.rank, res.usedMPI, res.err = rankPartial(path, -1, p.filter, !p.opt.NoAccuracy)
		return res
	})}
}

// Summarize merges the Results of every share of the traces, in the order
// of the traces, into the job summary.
func (p *Plan) Summarize(parts []*Results) (*Summary, []string, error) {
	results, err := joinResults(len(p.paths), parts)
	if err != nil {
		return nil, nil, err
	}
	if p.processes {
		return fromProcesses(p.paths, results)
	}
	return fromRankResults(p.paths, results)
}

// Results are the partials read from a contiguous share of the traces,
// starting at trace First: what one process of an analysis spread over
// MPI ranks sends to the one that merges them (Encode, DecodeResults).
type Results struct {
	First int
	res   []rankResult
}

// joinResults puts the shares' results in the order of the n traces; the
// shares must cover them exactly.
func joinResults(n int, parts []*Results) ([]rankResult, error) {
	if len(parts) == 1 && parts[0].First == 0 && len(parts[0].res) == n {
		return parts[0].res, nil
	}
	out := make([]rankResult, 0, n)
	for _, r := range parts {
		if r.First != len(out) {
			return nil, fmt.Errorf("job: the shares of the traces start at %d, not %d", r.First, len(out))
		}
		out = append(out, r.res...)
	}
	if len(out) != n {
		return nil, fmt.Errorf("job: the shares cover %d traces of %d", len(out), n)
	}
	return out, nil
}

// ResultsOf are the partials TraceReaders built, for traces first to
// first+len(readers)-1 (a nil reader for a trace left out).
func ResultsOf(first int, readers []*TraceReader) *Results {
	out := &Results{First: first, res: make([]rankResult, len(readers))}
	for i, t := range readers {
		if t != nil {
			out.res[i] = t.res
		} else {
			out.res[i] = rankResult{rank: -1}
		}
	}
	return out
}

// FromResults is FromTraceReaders over shares of the traces read
// elsewhere: the traces' ranks are their own.
func FromResults(paths []string, parts []*Results) (*Summary, []string, error) {
	results, err := joinResults(len(paths), parts)
	if err != nil {
		return nil, nil, err
	}
	return fromRankResults(paths, results)
}

// wireResult is a rankResult as MessagePack carries it.
type wireResult struct {
	Partial []byte `msgpack:"p"`
	Rank    int    `msgpack:"r"`
	UsedMPI bool   `msgpack:"m"`
	// Err is the reading's error message; Truncated, when the error was
	// a truncation, its details (what the merge tells from other errors).
	Err       string                   `msgpack:"e"`
	Truncated *tracefmt.TruncatedError `msgpack:"t"`
}

// wireError is an error read back from another process: its message, and
// the truncation it was, if any.
type wireError struct {
	msg       string
	truncated *tracefmt.TruncatedError
}

func (e *wireError) Error() string { return e.msg }

func (e *wireError) Unwrap() error {
	if e.truncated == nil {
		return nil
	}
	return e.truncated
}

// Encode serialises the results (MessagePack).
func (r *Results) Encode() ([]byte, error) {
	w := struct {
		First int          `msgpack:"f"`
		Res   []wireResult `msgpack:"r"`
	}{First: r.First, Res: make([]wireResult, len(r.res))}
	for i, x := range r.res {
		o := &w.Res[i]
		o.Rank, o.UsedMPI = x.rank, x.usedMPI
		if x.p != nil {
			b, err := x.p.Encode()
			if err != nil {
				return nil, err
			}
			o.Partial = b
		}
		if x.err != nil {
			o.Err = x.err.Error()
			var te *tracefmt.TruncatedError
			if errors.As(x.err, &te) {
				o.Truncated = te
			}
		}
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(&w); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeResults reads results Encode wrote (another process's message:
// each partial is checked as Decode checks it).
func DecodeResults(b []byte) (*Results, error) {
	if err := msgcheck.Check(b); err != nil {
		return nil, fmt.Errorf("job: results: %w", err)
	}
	var w struct {
		First int          `msgpack:"f"`
		Res   []wireResult `msgpack:"r"`
	}
	if err := msgpack.NewDecoder(bytes.NewReader(b)).Decode(&w); err != nil {
		return nil, fmt.Errorf("job: results: %w", err)
	}
	if w.First < 0 {
		return nil, fmt.Errorf("job: results: first trace %d", w.First)
	}
	out := &Results{First: w.First, res: make([]rankResult, len(w.Res))}
	for i, x := range w.Res {
		r := rankResult{rank: x.Rank, usedMPI: x.UsedMPI}
		if x.Partial != nil {
			p, err := Decode(x.Partial)
			if err != nil {
				return nil, err
			}
			r.p = p
		}
		if x.Err != "" || x.Truncated != nil {
			r.err = &wireError{msg: x.Err, truncated: x.Truncated}
		}
		out.res[i] = r
	}
	return out, nil
}

// fromRankResults merges the partials read from the traces at paths.
func fromRankResults(paths []string, results []rankResult) (*Summary, []string, error) {
	var warnings []string
	var firstErr error
	byRank := map[int]*Partial{}
	where := map[int]string{}
	top := -1
	mpi := map[int]bool{}
	for i, path := range paths {
		p, rank, usedMPI, err := results[i].p, results[i].rank, results[i].usedMPI, results[i].err
		results[i] = rankResult{} // the merge below keeps what it needs
		if err != nil {
			warnings = append(warnings, err.Error())
			var te *tracefmt.TruncatedError
			if !errors.As(err, &te) && firstErr == nil {
				firstErr = err
			}
		}
		if p == nil || rank < 0 {
			continue
		}
		// A rank may have traced more than one process (mpirun running a
		// script that starts the program): the job's is the one that
		// called MPI.
		if other, dup := where[rank]; dup {
			switch {
			case mpi[rank] && !usedMPI:
				continue
			case usedMPI && !mpi[rank]:
			default:
				return nil, warnings, fmt.Errorf("%s and %s are both rank %d: give the traces of one job", other, path, rank)
			}
		}
		byRank[rank], where[rank], mpi[rank] = p, path, usedMPI
		top = max(top, rank)
	}
	if top < 0 {
		return nil, warnings, errors.New("job: no trace has a rank: not an MPI job (set IOPRED_RANK to give one)")
	}
	if top >= MaxRanks {
		return nil, warnings, fmt.Errorf("job: rank %d is past the bound of %d ranks", top, MaxRanks)
	}
	parts := make([]*Partial, top+1)
	var missing []string
	for r := range parts {
		if parts[r] = byRank[r]; parts[r] == nil {
			parts[r] = &Partial{FirstRank: r, Ranks: 1, Accuracy: []float32{-1}}
			missing = append(missing, fmt.Sprint(r))
		}
	}
	if len(missing) > 0 {
		warnings = append(warnings, fmt.Sprintf("no trace of rank %s: counted as ranks without I/O", strings.Join(missing, ", ")))
	}
	merged, err := MergeTree(parts)
	if err != nil {
		return nil, warnings, err
	}
	return Summarize(merged), warnings, firstErr
}

// fromProcesses is the job view of traces without ranks, trace i taken
// for rank i, from their partials.
func fromProcesses(paths []string, results []rankResult) (*Summary, []string, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("job: no trace")
	}
	if len(paths) > MaxRanks {
		return nil, nil, fmt.Errorf("job: %d processes, more than %d", len(paths), MaxRanks)
	}
	var warnings []string
	var firstErr error
	parts := make([]*Partial, len(paths))
	for i := range paths {
		p, err := results[i].p, results[i].err
		results[i] = rankResult{}
		if err != nil {
			warnings = append(warnings, err.Error())
			var te *tracefmt.TruncatedError
			if !errors.As(err, &te) && firstErr == nil {
				firstErr = err
			}
		}
		if p == nil {
			p = &Partial{FirstRank: i, Ranks: 1, Accuracy: []float32{-1}}
		}
		parts[i] = p
	}
	merged, err := MergeTree(parts)
	if err != nil {
		return nil, warnings, err
	}
	return Summarize(merged), warnings, firstErr
}

// rankResult is what rankPartial found in one trace.
type rankResult struct {
	p       *Partial
	rank    int
	usedMPI bool
	err     error
}

// readPartials calls read on every path, on up to jobs goroutines at
// once, and returns the results in the order of paths. A partial is
// bounded (MaxStreams, MaxRunsPerStream), so the results hold at most a
// bounded partial per trace, whatever the traces' sizes.
func readPartials(paths []string, jobs int, read func(i int, path string) rankResult) []rankResult {
	results := make([]rankResult, len(paths))
	if jobs <= 1 || len(paths) <= 1 {
		for i, path := range paths {
			results[i] = read(i, path)
		}
		return results
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(jobs, len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					return
				}
				results[i] = read(i, paths[i])
			}
		}()
	}
	wg.Wait()
	return results
}

// rankPartial reads one trace into its rank's partial, leaving out the
// paths filter excludes. The rank is the trace's (-1 for a trace without
// one), or as, when as >= 0. usedMPI says whether the process made MPI
// calls. replay runs the rank's model over the events for its accuracy.
func rankPartial(path string, as int, filter *pathfilter.Filter, replay bool) (p *Partial, rank int, usedMPI bool, err error) {
	return readTrace(path, as, filter, replay, true)
}

// readRank is rankPartial replaying the model whatever the trace's
// footer says.
func readRank(path string, as int, filter *pathfilter.Filter, replay bool) (p *Partial, rank int, usedMPI bool, err error) {
	return readTrace(path, as, filter, replay, false)
}

func readTrace(path string, as int, filter *pathfilter.Filter, replay, speculate bool) (p *Partial, rank int, usedMPI bool, err error) {
	r, err := tracefmt.Open(path)
	if err != nil {
		return nil, -1, false, err
	}
	defer r.Close()
	t := newTraceReader(path, r.Header(), as, filter, replay, speculate)
	if t.rank < 0 {
		return nil, -1, false, nil
	}
	t.End(r.Each(func(rec tracefmt.Record) error {
		t.Add(rec)
		return nil
	}))
	return t.res.p, t.res.rank, t.res.usedMPI, t.res.err
}

// TraceReader builds a trace's rank partial from its records as another
// analysis reads them, so that the trace is decoded once for both
// (summary.Summarize). FromTraceReaders then merges them as FromTraces
// merges the partials it reads itself.
type TraceReader struct {
	path      string
	as        int
	filter    *pathfilter.Filter
	replay    bool
	speculate bool // the replay is skipped: the final footer says no model ran
	rank      int  // -1: the trace has no rank, and no partial
	b         *Builder
	model     *predictor.Model
	cut       bool
	usedMPI   bool
	footer    *tracefmt.Footer
	res       rankResult
}

// NewTraceReader starts the partial of the trace at path, of header h,
// with opt's AllPaths and NoAccuracy (opt.Processes is not for it: a
// trace without a rank has no partial). Feed it the trace's records with
// Add, then End.
func NewTraceReader(path string, h tracefmt.Header, opt Options) *TraceReader {
	filter := defaultFilter
	if opt.AllPaths {
		filter = nil
	}
	return newTraceReader(path, h, -1, filter, !opt.NoAccuracy, true)
}

func newTraceReader(path string, h tracefmt.Header, as int, filter *pathfilter.Filter, replay, speculate bool) *TraceReader {
	t := &TraceReader{path: path, as: as, filter: filter, replay: replay, rank: -1}
	if as >= 0 {
		h.Rank = &as
	}
	if h.Rank == nil {
		t.res = rankResult{rank: -1}
		return t
	}
	t.rank = *h.Rank
	t.b = NewFilteredBuilder(h, filter)
	if replay && speculate {
		// The accuracy is reported only when the process ran a model,
		// which its last footer says: a trace that ends with a footer
		// without one needs no replay, the costliest part of reading
		// it. Should the reading stop short of that footer after all,
		// End reads the trace again with the model.
		if f, ok := tracefmt.FinalFooter(path); ok && f.Model == nil {
			t.speculate = true
		}
	}
	if replay && !t.speculate {
		t.model = predictor.New(predictor.Options{})
	}
	return t
}

// Add takes the trace's next record.
func (t *TraceReader) Add(rec tracefmt.Record) {
	if t.rank < 0 {
		return
	}
	if rec.Footer != nil {
		t.footer = rec.Footer
	}
	switch {
	case t.cut:
	case rec.Proc != nil && rec.Proc.Op == CutOp:
		t.cut = true
	case rec.Event != nil:
		t.b.Add(rec.Event)
		if t.model != nil {
			t.model.Observe(rec.Event)
		}
		t.usedMPI = t.usedMPI || rec.Event.Layer == tracefmt.LayerMPIIO
	}
}

// End closes the partial; readErr is the error that ended the reading
// (nil at a clean end).
func (t *TraceReader) End(readErr error) {
	if t.rank < 0 {
		return
	}
	if t.speculate && readErr != nil {
		p, rank, usedMPI, err := readTrace(t.path, t.as, t.filter, t.replay, false)
		t.res = rankResult{p: p, rank: rank, usedMPI: usedMPI, err: err}
		return
	}
	// A footer without a model summary: the process ran with
	// IOPRED_PREDICT=0, and reported no accuracy.
	ran := t.model != nil && (t.footer == nil || t.footer.Model != nil)
	var steps uint64
	var score float64
	if ran {
		steps, score = t.model.ContextScore()
	}
	t.res = rankResult{p: t.b.Partial(t.rank, ran, steps, score), rank: t.rank, usedMPI: t.usedMPI, err: readErr}
	t.b, t.model = nil, nil
}

// OpenFailed records that the trace could not be opened: err counts as
// its reading's error. The TraceReader stands for the trace in
// FromTraceReaders.
func OpenFailed(path string, err error) *TraceReader {
	return &TraceReader{path: path, rank: -1, res: rankResult{rank: -1, err: err}}
}

// FromTraceReaders is FromTraces over partials already read, one per path
// in the order of paths (nil for a trace left out).
func FromTraceReaders(paths []string, readers []*TraceReader) (*Summary, []string, error) {
	return FromResults(paths, []*Results{ResultsOf(0, readers)})
}

// SummaryPath is where rank 0 writes the job summary, beside its trace.
func SummaryPath(trace string) string {
	return strings.TrimSuffix(trace, tracefmt.FileSuffix) + FileSuffix
}

// Discover returns the job summaries in dir, sorted by name.
func Discover(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*"+FileSuffix))
	sort.Strings(m)
	return m, err
}

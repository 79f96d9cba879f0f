package job

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"iopred/analyzer/pathfilter"
	"iopred/internal/ordered"
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
// goroutines, merging them as it goes.
func (p *Plan) Read(lo, hi int) *Results {
	paths := p.paths[lo:hi]
	var counts map[int]int
	if !p.processes {
		counts = rankCounts(p.paths, p.opt.Jobs)
	}
	m := newMerger(lo, p.processes, counts)
	ordered.Each(len(paths), p.opt.Jobs, func(i int) rankResult {
		path := paths[i]
		var res rankResult
		if p.processes {
			res.p, _, _, res.err = rankPartial(path, lo+i, p.filter, !p.opt.NoAccuracy)
			res.rank = lo + i
		} else {
			res.p, res.rank, res.usedMPI, res.err = rankPartial(path, -1, p.filter, !p.opt.NoAccuracy)
		}
		return res
	}, func(_ int, r rankResult) { m.add(r) })
	return &Results{m: m}
}

// Summarize merges the Results of every share of the traces, in the order
// of the traces, into the job summary.
func (p *Plan) Summarize(parts []*Results) (*Summary, []string, error) {
	return summarizeShares(p.paths, p.processes, parts)
}

func summarizeShares(paths []string, processes bool, parts []*Results) (*Summary, []string, error) {
	root := newMerger(0, processes, nil)
	for _, r := range parts {
		if r.m.first != len(root.infos) {
			return nil, nil, fmt.Errorf("job: the share of traces from %d follows traces up to %d", r.m.first, len(root.infos)-1)
		}
		if r.m.processes != processes {
			return nil, nil, errors.New("job: shares of traces read as ranks and as processes")
		}
		root.absorb(r.m)
	}
	return root.finish(paths)
}

// Results are the job view's partials of a contiguous share of the
// traces, merged as far as the share allows: what one process of an
// analysis spread over MPI ranks sends to the one that merges the shares
// (Encode, DecodeResults).
type Results struct {
	m *merger
}

// NewResults starts the job view's share of the traces from lo, for an
// analysis that reads them itself and hands over each trace's
// TraceReader in turn (Add). The traces' ranks are their own; opt.Jobs
// reads the headers of all the paths at once, to learn which ranks have
// more than one trace.
func NewResults(paths []string, lo int, opt Options) *Results {
	return &Results{m: newMerger(lo, false, rankCounts(paths, opt.Jobs))}
}

// Add takes the next trace's partial (nil for a trace left out), whose
// reading has ended.
func (r *Results) Add(t *TraceReader) {
	if t == nil {
		r.m.add(rankResult{rank: -1})
		return
	}
	r.m.add(t.res)
	t.res = rankResult{}
}

// FromResults is the job summary of traces read in shares by NewResults
// and Add (the traces' ranks their own), the shares given in order.
func FromResults(paths []string, parts []*Results) (*Summary, []string, error) {
	return summarizeShares(paths, false, parts)
}

// Encode serialises the results (MessagePack).
func (r *Results) Encode() ([]byte, error) { return r.m.encode() }

// First is the first trace of the share.
func (r *Results) First() int { return r.m.first }

// DecodeResults reads results Encode wrote (another process's message:
// each partial is checked as Decode checks it).
func DecodeResults(b []byte) (*Results, error) {
	m, err := decodeMerger(b, nil)
	if err != nil {
		return nil, err
	}
	return &Results{m: m}, nil
}

// rankCounts returns how many of the traces each rank has, from their
// headers, read on up to jobs goroutines (a trace that cannot be opened
// counts for no rank).
func rankCounts(paths []string, jobs int) map[int]int {
	counts := map[int]int{}
	ordered.Each(len(paths), jobs, func(i int) int {
		r, err := tracefmt.Open(paths[i])
		if err != nil {
			return -1
		}
		defer r.Close()
		if h := r.Header(); h.Rank != nil {
			return *h.Rank
		}
		return -1
	}, func(_, rank int) {
		if rank >= 0 {
			counts[rank]++
		}
	})
	return counts
}

// rankResult is what rankPartial found in one trace.
type rankResult struct {
	p       *Partial
	rank    int
	usedMPI bool
	err     error
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
	if tr, ok := r.(*tracefmt.Reader); ok {
		// The partial (and the model) are done with each event before
		// the next is read: one shared event, no allocation per event.
		tr.ReuseEvents()
	}
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
	case rec.File != nil:
		t.b.File(rec.File)
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
	t.b.release()
	t.b, t.model = nil, nil
}

// OpenFailed records that the trace could not be opened: err counts as
// its reading's error. The TraceReader stands for the trace in
// FromTraceReaders.
func OpenFailed(path string, err error) *TraceReader {
	return &TraceReader{path: path, rank: -1, res: rankResult{rank: -1, err: err}}
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

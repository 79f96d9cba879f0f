package job

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"iopred/analyzer/pathfilter"
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
	filter := defaultFilter
	if opt.AllPaths {
		filter = nil
	}
	if opt.Processes {
		ranked := false
		for _, path := range paths {
			r, err := tracefmt.Open(path)
			if err != nil {
				return nil, nil, err
			}
			ranked = r.Header().Rank != nil
			r.Close()
			if ranked {
				break
			}
		}
		if !ranked {
			return fromProcesses(paths, filter, !opt.NoAccuracy, opt.Jobs)
		}
	}
	var warnings []string
	var firstErr error
	byRank := map[int]*Partial{}
	where := map[int]string{}
	top := -1
	mpi := map[int]bool{}
	results := readPartials(paths, opt.Jobs, func(_ int, path string) rankResult {
		var res rankResult
		res.p, res.rank, res.usedMPI, res.err = rankPartial(path, -1, filter, !opt.NoAccuracy)
		return res
	})
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
// for rank i.
func fromProcesses(paths []string, filter *pathfilter.Filter, replay bool, jobs int) (*Summary, []string, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("job: no trace")
	}
	if len(paths) > MaxRanks {
		return nil, nil, fmt.Errorf("job: %d processes, more than %d", len(paths), MaxRanks)
	}
	var warnings []string
	var firstErr error
	parts := make([]*Partial, len(paths))
	results := readPartials(paths, jobs, func(i int, path string) rankResult {
		var res rankResult
		res.p, _, _, res.err = rankPartial(path, i, filter, replay)
		return res
	})
	for i := range paths {
		p, err := results[i].p, results[i].err
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
	if replay {
		// The accuracy is reported only when the process ran a model,
		// which its last footer says: a trace that ends with a footer
		// without one needs no replay, the costliest part of reading
		// it. Should the reading stop short of that footer after all,
		// the trace is read again with the model.
		if f, ok := tracefmt.FinalFooter(path); ok && f.Model == nil {
			p, rank, usedMPI, err = readRank(path, as, filter, false)
			if err == nil {
				return p, rank, usedMPI, nil
			}
		}
	}
	return readRank(path, as, filter, replay)
}

// readRank is rankPartial, replaying the model over the events when told.
func readRank(path string, as int, filter *pathfilter.Filter, replay bool) (p *Partial, rank int, usedMPI bool, err error) {
	r, err := tracefmt.Open(path)
	if err != nil {
		return nil, -1, false, err
	}
	defer r.Close()
	h := r.Header()
	if as >= 0 {
		h.Rank = &as
	}
	if h.Rank == nil {
		return nil, -1, false, nil
	}
	b := NewFilteredBuilder(h, filter)
	var model *predictor.Model
	if replay {
		model = predictor.New(predictor.Options{})
	}
	cut := false
	readErr := r.Each(func(rec tracefmt.Record) error {
		switch {
		case cut:
		case rec.Proc != nil && rec.Proc.Op == CutOp:
			cut = true
		case rec.Event != nil:
			b.Add(rec.Event)
			if model != nil {
				model.Observe(rec.Event)
			}
			usedMPI = usedMPI || rec.Event.Layer == tracefmt.LayerMPIIO
		}
		return nil
	})
	// A footer without a model summary: the process ran with
	// IOPRED_PREDICT=0, and reported no accuracy.
	ran := model != nil && (r.Footer() == nil || r.Footer().Model != nil)
	var steps uint64
	var score float64
	if ran {
		steps, score = model.ContextScore()
	}
	return b.Partial(*h.Rank, ran, steps, score), *h.Rank, usedMPI, readErr
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

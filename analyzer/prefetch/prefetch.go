// Package prefetch evaluates next-read prediction on read traces, as the
// Pattern PLFS paper's prefetching study does (sections 4 and 5): the
// pattern predictor, a Markov predictor over fixed-size blocks trained on a
// first run, and plain sequential read-ahead. For each it counts the reads
// whose bytes had all been prefetched before the read happened, and the
// prefetched bytes that no read used.
package prefetch

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"iopred/predictor/pattern"
	"iopred/tracefmt"
)

// Options sets the predictors' parameters.
type Options struct {
	MarkovBlock int64 // block size of the Markov model; default 8 KiB, as the paper picked
	ReadAhead   int64 // bytes read-ahead prefetches past each read; default 128 KiB (Linux's default)
	Depth       int   // requests the pattern predictor prefetches ahead; default 1
	Window      int   // detector window; default pattern.DefaultWindow
}

func (o Options) withDefaults() Options {
	if o.MarkovBlock <= 0 {
		o.MarkovBlock = 8192
	}
	if o.ReadAhead <= 0 {
		o.ReadAhead = 128 << 10
	}
	if o.Depth <= 0 {
		o.Depth = 1
	}
	if o.Window <= 0 {
		o.Window = pattern.DefaultWindow
	}
	return o
}

// Result is one predictor's score.
type Result struct {
	Predictor string `json:"predictor"`
	Reads     int64  `json:"reads"`
	Predicted int64  `json:"predicted_reads"` // reads whose bytes were all prefetched before the read
	// PredictedFraction is Predicted/Reads.
	PredictedFraction float64 `json:"predicted_fraction"`
	PrefetchedBytes   int64   `json:"prefetched_bytes"` // bytes put in the prefetch cache
	UnusedBytes       int64   `json:"unused_bytes"`     // prefetched bytes no later read used
	// UnusedFraction is UnusedBytes/PrefetchedBytes: the share of predicted
	// bytes never read.
	UnusedFraction float64 `json:"unused_fraction"`
}

// Report is the outcome of an evaluation.
type Report struct {
	// Mode says how the Markov model was trained: "runs" (on the first
	// run, evaluated on the next) or "halves" (one run: on the first half of
	// each read stream, evaluated on the second half).
	Mode       string   `json:"mode"`
	Training   []string `json:"training"`
	Evaluation []string `json:"evaluation"`
	Streams    int      `json:"streams"` // (process, file) read streams evaluated
	// MarkovStates is the size of the trained Markov model (states with a
	// successor) at the end; the pattern predictor keeps at most
	// pattern.MaxStreamUnits patterns per stream.
	MarkovStates int      `json:"markov_states"`
	Results      []Result `json:"results"`
	Warnings     []string `json:"warnings,omitempty"`
}

// read is one read call: bytes [off, off+n).
type read struct{ off, n int64 }

// stream is the reads of one process on one file, in time order.
type stream struct {
	trace, path string
	reads       []read
}

// loadReads returns the read streams of the traces, in trace and path order.
func loadReads(traces []string, warn func(error)) ([]stream, error) {
	var out []stream
	var firstErr error
	for _, t := range traces {
		byPath := map[string]*stream{}
		r, err := tracefmt.Open(t)
		if err != nil {
			return nil, err
		}
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				warn(err)
				var te *tracefmt.TruncatedError
				if !errors.As(err, &te) && firstErr == nil {
					firstErr = err
				}
				break
			}
			e := rec.Event
			if e == nil || !tracefmt.IsRead(e.Op) || e.Errno != 0 || e.Offset == tracefmt.NoOffset || e.Bytes <= 0 || e.Path == "" {
				continue
			}
			s := byPath[e.Path]
			if s == nil {
				s = &stream{trace: t, path: e.Path}
				byPath[e.Path] = s
			}
			s.reads = append(s.reads, read{e.Offset, e.Bytes})
		}
		r.Close()
		paths := make([]string, 0, len(byPath))
		for p := range byPath {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			out = append(out, *byPath[p])
		}
	}
	return out, firstErr
}

// predictor sees each read after it completes and names the byte ranges to
// prefetch then.
type predictor interface {
	after(r read) []span
}

type patternPredictor struct {
	s     *pattern.Stream
	depth int
}

func (p *patternPredictor) after(r read) []span {
	p.s.Add(r.off, r.n)
	if !p.s.Certain() {
		return nil
	}
	offs, lens := p.s.PredictAccesses(p.depth)
	out := make([]span, len(offs))
	for i := range offs {
		out[i] = span{offs[i], offs[i] + lens[i]}
	}
	return out
}

type readAhead struct{ n int64 }

func (p readAhead) after(r read) []span { return []span{{r.off + r.n, r.off + r.n + p.n}} }

// markovModel is the transition table of section 4.3, per file: from the
// blocks of one read to the blocks of the next, the most frequent successor
// kept at hand.
type markovModel struct {
	block int64
	files map[string]map[blockRange]*successors
}

// blockRange is the blocks [first, last] a read touches.
type blockRange struct{ first, last int64 }

type successors struct {
	counts map[blockRange]int64
	best   blockRange
	bestN  int64
}

func newMarkov(block int64) *markovModel {
	return &markovModel{block: block, files: map[string]map[blockRange]*successors{}}
}

func (m *markovModel) blocks(r read) blockRange {
	return blockRange{r.off / m.block, (r.off + r.n - 1) / m.block}
}

func (m *markovModel) learn(path string, from, to blockRange) {
	f := m.files[path]
	if f == nil {
		f = map[blockRange]*successors{}
		m.files[path] = f
	}
	s := f[from]
	if s == nil {
		s = &successors{counts: map[blockRange]int64{}}
		f[from] = s
	}
	s.counts[to]++
	if c := s.counts[to]; c > s.bestN || (c == s.bestN && to.first < s.best.first) {
		s.best, s.bestN = to, c
	}
}

func (m *markovModel) predict(path string, from blockRange) (blockRange, bool) {
	if s := m.files[path][from]; s != nil {
		return s.best, true
	}
	return blockRange{}, false
}

// States is the number of (file, block range) states with a successor.
func (m *markovModel) states() int {
	n := 0
	for _, f := range m.files {
		n += len(f)
	}
	return n
}

type markovPredictor struct {
	m    *markovModel
	path string
	prev blockRange
	have bool
}

func (p *markovPredictor) after(r read) []span {
	b := p.m.blocks(r)
	if p.have {
		p.m.learn(p.path, p.prev, b)
	}
	p.prev, p.have = b, true
	if next, ok := p.m.predict(p.path, b); ok {
		return []span{{next.first * p.m.block, (next.last + 1) * p.m.block}}
	}
	return nil
}

// train runs the Markov predictor over the streams to fill its model.
func (m *markovModel) train(streams []stream) {
	for _, s := range streams {
		p := &markovPredictor{m: m, path: s.path}
		for _, r := range s.reads {
			p.after(r)
		}
	}
}

// score runs one predictor over reads: warm is history it sees unscored.
// The prefetched bytes wait in a cache until a read uses them: a read is
// predicted when the cache holds all its bytes; prefetched bytes count once
// each time they enter the cache, and those still unused at the end (never
// read after they were prefetched) are the unused bytes.
func score(p predictor, warm, eval []read, res *Result) {
	var cache intervals
	var prefetched, used int64
	for i, r := range warm {
		spans := p.after(r)
		if i == len(warm)-1 {
			// The last prefetches of the history are for the evaluation.
			for _, s := range spans {
				prefetched += s.hi - s.lo - cache.overlapRange(s.lo, s.hi)
				cache.add(s.lo, s.hi)
			}
		}
	}
	for _, r := range eval {
		res.Reads++
		if cache.covers(r.off, r.off+r.n) {
			res.Predicted++
		}
		used += cache.overlapRange(r.off, r.off+r.n)
		cache.remove(r.off, r.off+r.n)
		for _, s := range p.after(r) {
			prefetched += s.hi - s.lo - cache.overlapRange(s.lo, s.hi)
			cache.add(s.lo, s.hi)
		}
	}
	res.PrefetchedBytes += prefetched
	res.UnusedBytes += prefetched - used
}

// Predictor names, in report order.
const (
	Pattern       = "pattern"
	Markov        = "markov"
	MarkovInitial = "markov-initial"
	ReadAhead     = "readahead"
)

// Evaluate trains on training and evaluates on evaluation; with no
// training traces it splits every read stream of evaluation in halves
// (Mode "halves"). The Markov predictor is scored twice: with the model
// trained first (Markov) and, as a first run would see it, from an empty
// model (MarkovInitial); both keep learning during the evaluation. The
// pattern predictor needs no training: it learns each stream as it goes.
func Evaluate(training, evaluation []string, opt Options) (*Report, error) {
	opt = opt.withDefaults()
	rep := &Report{Training: training, Evaluation: evaluation}
	warn := func(err error) { rep.Warnings = append(rep.Warnings, err.Error()) }
	evalStreams, err := loadReads(evaluation, warn)
	if evalStreams == nil && err != nil {
		return nil, err
	}
	trained := newMarkov(opt.MarkovBlock)
	warm := make([][]read, len(evalStreams))
	eval := make([][]read, len(evalStreams))
	if len(training) > 0 {
		rep.Mode = "runs"
		trainStreams, terr := loadReads(training, warn)
		if trainStreams == nil && terr != nil {
			return nil, terr
		}
		if err == nil {
			err = terr
		}
		trained.train(trainStreams)
		for i, s := range evalStreams {
			eval[i] = s.reads
		}
	} else {
		rep.Mode = "halves"
		var halves []stream
		for i, s := range evalStreams {
			h := len(s.reads) / 2
			warm[i], eval[i] = s.reads[:h], s.reads[h:]
			halves = append(halves, stream{trace: s.trace, path: s.path, reads: warm[i]})
		}
		trained.train(halves)
	}
	rep.Streams = len(evalStreams)
	initial := newMarkov(opt.MarkovBlock)
	results := []Result{{Predictor: Pattern}, {Predictor: Markov}, {Predictor: MarkovInitial}, {Predictor: ReadAhead}}
	for i, s := range evalStreams {
		score(&patternPredictor{s: pattern.NewStream(opt.Window), depth: opt.Depth}, warm[i], eval[i], &results[0])
		// The trained model already saw the warm-up half.
		score(&markovPredictor{m: trained, path: s.path}, nil, eval[i], &results[1])
		score(&markovPredictor{m: initial, path: s.path}, nil, eval[i], &results[2])
		score(readAhead{opt.ReadAhead}, nil, eval[i], &results[3])
	}
	for i := range results {
		r := &results[i]
		if r.Reads > 0 {
			r.PredictedFraction = float64(r.Predicted) / float64(r.Reads)
		}
		if r.PrefetchedBytes > 0 {
			r.UnusedFraction = float64(r.UnusedBytes) / float64(r.PrefetchedBytes)
		}
	}
	rep.Results = results
	rep.MarkovStates = trained.states()
	return rep, err
}

// WriteText prints the report for people.
func WriteText(w io.Writer, rep *Report) error {
	var err error
	p := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, args...)
		}
	}
	for _, x := range rep.Warnings {
		p("warning: %s\n", x)
	}
	switch rep.Mode {
	case "runs":
		p("Markov model trained on the first run (%d traces), evaluated on the next (%d traces)\n", len(rep.Training), len(rep.Evaluation))
	default:
		p("one run given: the Markov model is trained on the first half of each read stream; every predictor is scored on the second half\n")
	}
	p("%d read streams (process, file); trained Markov model: %d states\n", rep.Streams, rep.MarkovStates)
	p("%-15s %10s %10s %10s %14s %10s\n", "predictor", "reads", "predicted", "fraction", "prefetched", "unused")
	for _, r := range rep.Results {
		p("%-15s %10d %10d %9.1f%% %14d %9.1f%%\n", r.Predictor, r.Reads, r.Predicted, 100*r.PredictedFraction, r.PrefetchedBytes, 100*r.UnusedFraction)
	}
	return err
}

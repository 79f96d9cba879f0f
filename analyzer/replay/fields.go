package replay

import (
	"math"

	"iopred/predictor"
	"iopred/tracefmt"
)

// FieldScore compares the model's prediction of one field of the next
// operation with the simplest rule a prefetcher could use instead.
type FieldScore struct {
	Field  string `json:"field"`  // context, file, offset, size, delay
	Metric string `json:"metric"` // what the figures measure
	// HigherIsBetter is false for errors.
	HigherIsBetter bool    `json:"higher_is_better"`
	Scored         int     `json:"scored"`
	Model          float64 `json:"model"`
	Baseline       string  `json:"baseline"` // the rule
	BaselineValue  float64 `json:"baseline_value"`
	// FromBaseline is the share of scored predictions for which the model
	// used the baseline's answer (predictor.Prediction.Fallback).
	FromBaseline float64 `json:"from_baseline"`
	// Steady is Model over the steady phase (see Report.Steady), and
	// SteadyBaseline the baseline's, when there is one.
	Steady         *float64 `json:"steady,omitempty"`
	SteadyBaseline *float64 `json:"steady_baseline,omitempty"`
	// DiffSE, for a field judged by a mean error (delay), is the standard
	// error of Model - BaselineValue: of the mean of the per-call
	// differences of the two errors, both taken on the same calls (see
	// WorseBeyondNoise).
	DiffSE float64 `json:"diff_se,omitempty"`
	// ModelOnly and BaselineOnly, for a field judged by hits, count the
	// calls that only the model and only the baseline got right: the
	// calls that tell the two apart (see SignP).
	ModelOnly    int `json:"model_only,omitempty"`
	BaselineOnly int `json:"baseline_only,omitempty"`
	// FirstRunBound, for context and size, is the share of calls that a
	// predictor starting without a model could get right at best: for
	// context, the calls whose context appeared before in the run; for
	// size, those whose size appeared before in the run, continues the
	// linear trend of the file's or the context's last two sizes, or is
	// the mean of the context's sizes (see sizeOracle). A size never seen
	// and off every trend (LAMMPS's formatted dumps) is data no rule
	// foresees. A model loaded from an earlier run (IOPRED_MODEL) is not
	// bound by it; SteadyFirstRunBound is the same over the steady phase.
	FirstRunBound       *float64 `json:"first_run_bound,omitempty"`
	SteadyFirstRunBound *float64 `json:"steady_first_run_bound,omitempty"`
}

// SignP is, for a field judged by hits, the chance that a model exactly
// as good as the baseline trails it by at least as many calls as this
// one does: of the calls only one of the two got right, a model as good
// gets each with probability 1/2, so the baseline's share is binomial
// (the exact one-sided sign test on the paired outcomes, which McNemar's
// test approximates). 1 when the model is not behind. A first run that
// trails by the one call the online choice of a fallback needs to prove
// it (1 of 1 such call: 0.5) is what chance gives a model exactly as
// good half of the time.
func (f FieldScore) SignP() float64 {
	b, n := f.BaselineOnly, f.ModelOnly+f.BaselineOnly
	if b <= f.ModelOnly {
		return 1
	}
	// P(X >= b) for X ~ Binomial(n, 1/2), each term from logarithms of
	// factorials.
	lf := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
	var p float64
	for k := b; k <= n; k++ {
		p += math.Exp(lf(n) - lf(k) - lf(n-k) - float64(n)*math.Ln2)
	}
	return min(p, 1)
}

// WorseBeyondNoise tells whether the model is worse than the baseline by
// more than z standard errors of the mean per-call difference (DiffSE),
// for a field judged by a mean error; for a field judged by hits, whether
// it is worse at all (see AtLeastBaseline).
//
// A delay is judged on wall-clock gaps, and a run recorded while other
// work loads the machine has gaps that the program did not make: one
// descheduling adds milliseconds to a microsecond gap. Model and baseline
// are scored on the same calls, so the difference of their errors
// is paired, but which of the two a stray gap favours is chance, and
// a few of them can put either ahead by a margin no predictor controls.
// The per-call differences measure that chance on the run itself: a model
// worse on the whole (a systematic lag) is worse by many standard errors
// over the hundreds of calls a run has, while a margin of a few standard
// errors is what the run's own stray gaps produce as often as the test
// asks (z = 3: 0.14% of runs one-sided, for a model exactly as good).
func (f FieldScore) WorseBeyondNoise(z float64) bool {
	if f.HigherIsBetter || f.DiffSE == 0 {
		return !f.AtLeastBaseline()
	}
	return f.Model-f.BaselineValue > z*f.DiffSE
}

// AtLeastBaseline tells whether the model is at least as good as the
// baseline on this field.
func (f FieldScore) AtLeastBaseline() bool {
	if f.HigherIsBetter {
		return f.Model >= f.BaselineValue
	}
	return f.Model <= f.BaselineValue
}

// SteadyPhase is the part of a run after its start-up: from the step after
// the last call whose context appeared for the first time, new contexts in
// the last tenth (shut-down) aside.
type SteadyPhase struct {
	From  int `json:"from_step"`
	Steps int `json:"steps"`
	// Context is the share of steps whose context the model's first
	// candidate named; Paper weighs k candidates 1/k each.
	Context float64 `json:"context_top1"`
	Paper   float64 `json:"context_paper"`
}

// fieldSums accumulates the per-field figures; the steady phase is found
// at the end from the snapshots taken at each new context.
type fieldSums struct {
	ctxModel, ctxBase     float64
	ctxFallback           int
	fileN                 int
	fileModel, fileBase   float64
	fileFallback          int
	offN                  int
	offModel, offBase     float64
	offFallback           int
	sizeN                 int
	sizeModel, sizeBase   float64
	sizeFallback          int
	sizePossible          int
	delayN                int
	delayModel, delayBase float64
	delayFallback         int
	// modelOnly and baseOnly count, per field judged by hits (context,
	// file, offset, size), the calls only the model, and only the
	// baseline, got right.
	modelOnly, baseOnly [4]int
	// delayDiffSq sums the squared per-call differences of the model's
	// and the baseline's errors (for FieldScore.DiffSE).
	delayDiffSq float64
	paper       float64
}

// snapshot is the running sums at the step a new context appeared: after
// the step and before it.
type snapshot struct {
	step         int
	sums, before fieldSums
}

// baselines keeps the simple rules' state.
type baselines struct {
	succ     map[ctxKey]*successors
	prevKey  ctxKey
	havePrev bool
	prevPath string
	lastSize map[string]int64
	lastGap  float64
	haveGap  bool
	sizes    sizeOracle
}

// sizeOracle decides, for FieldScore.FirstRunBound, which sizes a
// predictor without an earlier run's model could have named: a size that
// any data call of the run had before (a predictor may carry a size from
// one file or call to another, as the model's size for a newly opened
// file does), one that continues the linear trend of the last two sizes
// on the same file or in the same context (last + (last - prev)), and the
// rounded mean of the context's sizes so far (what the model names for a
// context whose sizes vary too much for its table).
type sizeOracle struct {
	seen   map[int64]struct{}
	full   bool
	byFile map[string]*sizeTrend
	byCtx  map[ctxKey]*sizeTrend
}

// maxKeptSizes bounds the distinct sizes the oracle keeps: past that
// every size counts as possible, so that the bound stays a bound while
// the evaluation's memory stays bounded.
const maxKeptSizes = 4096

// sizeTrend is the last two sizes of a file or context and their sum.
type sizeTrend struct {
	last, prev int64
	n          int
	sum        float64
}

func (h *sizeTrend) possible(size int64) bool {
	return h != nil && h.n >= 2 && (size == 2*h.last-h.prev || size == int64(h.sum/float64(h.n)+0.5))
}

func (h *sizeTrend) add(size int64) {
	h.prev, h.last = h.last, size
	h.n++
	h.sum += float64(size)
}

// observe tells whether a size was possible for the data call on path in
// context k, then records it.
func (o *sizeOracle) observe(path string, k ctxKey, size int64) bool {
	if o.seen == nil {
		o.seen, o.byFile, o.byCtx = map[int64]struct{}{}, map[string]*sizeTrend{}, map[ctxKey]*sizeTrend{}
	}
	f, c := o.byFile[path], o.byCtx[k]
	_, seen := o.seen[size]
	ok := seen || o.full || f.possible(size) || c.possible(size)
	if f == nil {
		f = &sizeTrend{}
		o.byFile[path] = f
	}
	if c == nil {
		c = &sizeTrend{}
		o.byCtx[k] = c
	}
	f.add(size)
	c.add(size)
	if !seen {
		if len(o.seen) >= maxKeptSizes {
			o.full = true
		} else {
			o.seen[size] = struct{}{}
		}
	}
	return ok
}

type ctxKey struct {
	ctx uint64
	op  string
}

// successors counts what followed one context, keeping the most frequent
// (the latest on ties, as the model's baseline does).
type successors struct {
	counts map[ctxKey]uint64
	best   ctxKey
	bestN  uint64
}

func (s *successors) add(k ctxKey) {
	n := s.counts[k] + 1
	s.counts[k] = n
	if n >= s.bestN {
		s.best, s.bestN = k, n
	}
}

// scoreFields scores the fields of the next operation e against the
// model's candidates and the baselines, then updates the baselines.
func (ev *Evaluator) scoreFields(e *tracefmt.Event, cands []predictor.Prediction, path string, gapNs float64, haveGap bool, paper float64) {
	b := &ev.base
	f := &ev.sums
	key := ctxKey{e.Ctx, e.Op}
	var top *predictor.Prediction
	if len(cands) > 0 {
		top = &cands[0]
	}
	f.paper += paper
	// Context.
	modelHit := top != nil && top.Ctx == e.Ctx && top.Op == e.Op
	if modelHit {
		f.ctxModel++
	}
	if top != nil && top.Fallback&predictor.FieldContext != 0 {
		f.ctxFallback++
	}
	baseHit := false
	if b.havePrev {
		if s := b.succ[b.prevKey]; s != nil && s.best == key {
			baseHit = true
		} else if s == nil && b.prevKey == key {
			// Nothing followed the previous call yet: it repeats.
			baseHit = true
		}
	}
	if baseHit {
		f.ctxBase++
	}
	f.discord(0, modelHit, baseHit)
	// File: the calls on a file, given none before (the first call).
	if path != "" && b.havePrev {
		f.fileN++
		if top != nil && top.Path == path {
			f.fileModel++
		}
		if top != nil && top.Fallback&predictor.FieldFile != 0 {
			f.fileFallback++
		}
		if b.prevPath == path {
			f.fileBase++
		}
		f.discord(1, top != nil && top.Path == path, b.prevPath == path)
	}
	isData := tracefmt.IsData(e.Op)
	// Size, given the file: the model's size for its likeliest call on the
	// file against the size of the file's latest data call.
	if isData && e.Size > 0 && path != "" && e.Offset != tracefmt.NoOffset {
		f.sizeN++
		modelHit := ev.model.NextSize(path) == e.Size
		if modelHit {
			f.sizeModel++
		}
		last, ok := b.lastSize[path]
		if ok && last == e.Size {
			f.sizeBase++
		}
		f.discord(3, modelHit, ok && last == e.Size)
		if b.sizes.observe(path, key, e.Size) {
			f.sizePossible++
		}
		if top != nil && top.Path == path && top.Fallback&predictor.FieldSize != 0 {
			f.sizeFallback++
		}
	}
	// Delay: the first candidate's against the last gap.
	if haveGap && top != nil {
		f.delayN++
		modelErr, baseErr := abs(float64(top.Delay)-gapNs), gapNs
		if b.haveGap {
			baseErr = abs(b.lastGap - gapNs)
		}
		f.delayModel += modelErr
		f.delayBase += baseErr
		f.delayDiffSq += (modelErr - baseErr) * (modelErr - baseErr)
		if top.Fallback&predictor.FieldDelay != 0 {
			f.delayFallback++
		}
	}
	if haveGap {
		b.lastGap, b.haveGap = gapNs, true
	}
	// Update the baselines.
	if b.havePrev {
		s := b.succ[b.prevKey]
		if s == nil {
			s = &successors{counts: map[ctxKey]uint64{}}
			b.succ[b.prevKey] = s
		}
		s.add(key)
	}
	if _, seen := b.succ[key]; !seen {
		// A context seen for the first time: a possible end of start-up.
		b.succ[key] = &successors{counts: map[ctxKey]uint64{}}
		ev.snaps = append(ev.snaps, snapshot{step: ev.events, sums: *f, before: ev.stepStart})
	}
	b.prevKey, b.havePrev = key, true
	if path != "" {
		b.prevPath = path
	}
	if isData && path != "" && e.Offset != tracefmt.NoOffset {
		b.lastSize[path] = e.Size
	}
}

// scoreOffset adds one offset outcome given the file (model and contiguous).
func (ev *Evaluator) scoreOffset(model, contiguous bool, fromBase bool) {
	f := &ev.sums
	f.offN++
	if model {
		f.offModel++
	}
	if contiguous {
		f.offBase++
	}
	if fromBase {
		f.offFallback++
	}
	f.discord(2, model, contiguous)
}

// discord counts a call of field i (0 context, 1 file, 2 offset, 3 size)
// that only one of the model and the baseline got right.
func (f *fieldSums) discord(i int, model, base bool) {
	switch {
	case model && !base:
		f.modelOnly[i]++
	case base && !model:
		f.baseOnly[i]++
	}
}

// steady finds the steady phase: it starts after the last new context that
// came before the last tenth of the steps, and ends before the first new
// context after that (the shut-down's calls), or at the end. It is nil
// when that leaves fewer than 20 steps or a tenth of the run. It returns
// the sums before and at its end.
func (ev *Evaluator) steady() (phase *SteadyPhase, start, end *fieldSums) {
	n := ev.events
	limit := n - n/10
	var at *snapshot
	last, stop := n, &ev.sums
	for i := range ev.snaps {
		sn := &ev.snaps[i]
		if sn.step <= limit {
			at = sn
		} else {
			last, stop = sn.step-1, &sn.before
			break
		}
	}
	if at == nil {
		return nil, nil, nil
	}
	// Snapshots hold the sums up to and including their step.
	steps := last - at.step
	if steps < 20 || steps < n/10 {
		return nil, nil, nil
	}
	return &SteadyPhase{
		From:    at.step + 1,
		Steps:   steps,
		Context: (stop.ctxModel - at.sums.ctxModel) / float64(steps),
		Paper:   (stop.paper - at.sums.paper) / float64(steps),
	}, &at.sums, stop
}

// fieldScores reports the per-field comparison.
func (ev *Evaluator) fieldScores() ([]FieldScore, *SteadyPhase) {
	f := &ev.sums
	steadyPhase, s, f2 := ev.steady()
	share := func(a float64, n int) float64 { return ratio(a, n) }
	out := []FieldScore{
		{Field: "context", Metric: "first candidate right", HigherIsBetter: true, Scored: ev.events,
			Model: share(f.ctxModel, ev.events), Baseline: "most frequent next context", BaselineValue: share(f.ctxBase, ev.events),
			FromBaseline: share(float64(f.ctxFallback), ev.events)},
		{Field: "file", Metric: "first candidate's file right", HigherIsBetter: true, Scored: f.fileN,
			Model: share(f.fileModel, f.fileN), Baseline: "file of the previous call", BaselineValue: share(f.fileBase, f.fileN),
			FromBaseline: share(float64(f.fileFallback), f.fileN)},
		{Field: "offset", Metric: "exact, given the file", HigherIsBetter: true, Scored: f.offN,
			Model: share(f.offModel, f.offN), Baseline: "contiguous", BaselineValue: share(f.offBase, f.offN),
			FromBaseline: share(float64(f.offFallback), f.offN)},
		{Field: "size", Metric: "exact, given the file", HigherIsBetter: true, Scored: f.sizeN,
			Model: share(f.sizeModel, f.sizeN), Baseline: "the file's last size", BaselineValue: share(f.sizeBase, f.sizeN),
			FromBaseline: share(float64(f.sizeFallback), f.sizeN)},
		{Field: "delay", Metric: "mean |error| (s)", HigherIsBetter: false, Scored: f.delayN,
			Model: share(f.delayModel, f.delayN) / 1e9, Baseline: "last inter-arrival", BaselineValue: share(f.delayBase, f.delayN) / 1e9,
			FromBaseline: share(float64(f.delayFallback), f.delayN), DiffSE: diffSE(f.delayModel-f.delayBase, f.delayDiffSq, f.delayN) / 1e9},
	}
	for i := range f.modelOnly {
		out[i].ModelOnly, out[i].BaselineOnly = f.modelOnly[i], f.baseOnly[i]
	}
	ctxBound := share(float64(ev.events-len(ev.snaps)), ev.events)
	sizeBound := share(float64(f.sizePossible), f.sizeN)
	out[0].FirstRunBound, out[3].FirstRunBound = &ctxBound, &sizeBound
	if steadyPhase != nil {
		steps := steadyPhase.Steps
		f := f2
		put := func(i int, model, base float64) {
			out[i].Steady, out[i].SteadyBaseline = &model, &base
		}
		put(0, (f.ctxModel-s.ctxModel)/float64(steps), (f.ctxBase-s.ctxBase)/float64(steps))
		if n := f.fileN - s.fileN; n > 0 {
			put(1, (f.fileModel-s.fileModel)/float64(n), (f.fileBase-s.fileBase)/float64(n))
		}
		if n := f.offN - s.offN; n > 0 {
			put(2, (f.offModel-s.offModel)/float64(n), (f.offBase-s.offBase)/float64(n))
		}
		// The steady phase has no new context: every call's is possible.
		one := 1.0
		out[0].SteadyFirstRunBound = &one
		if n := f.sizeN - s.sizeN; n > 0 {
			put(3, (f.sizeModel-s.sizeModel)/float64(n), (f.sizeBase-s.sizeBase)/float64(n))
			bound := float64(f.sizePossible-s.sizePossible) / float64(n)
			out[3].SteadyFirstRunBound = &bound
		}
		if n := f.delayN - s.delayN; n > 0 {
			put(4, (f.delayModel-s.delayModel)/float64(n)/1e9, (f.delayBase-s.delayBase)/float64(n)/1e9)
		}
	}
	return out, steadyPhase
}

// diffSE is the standard error of the mean of n paired differences whose
// sum is sum and sum of squares sumSq.
func diffSE(sum, sumSq float64, n int) float64 {
	if n < 2 {
		return 0
	}
	mean := sum / float64(n)
	variance := (sumSq - float64(n)*mean*mean) / float64(n-1)
	if variance <= 0 {
		return 0
	}
	return math.Sqrt(variance / float64(n))
}

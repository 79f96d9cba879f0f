package job

import (
	"math"
	"sync"

	"iopred/analyzer/ftio"
	"iopred/predictor/pattern"
)

// SummaryVersion is the version of the Summary JSON; it changes when a
// field changes meaning. Version 2: the counts, signal and patterns leave
// out the system's and the MPI runtime's files (pathfilter.Default), which
// excluded_events and excluded_bytes count; start_unix_ns is new.
const SummaryVersion = 2

// Summary is the whole-job view: what rank 0 writes at MPI_Finalize, and
// what `iopred summary` computes from the traces.
type Summary struct {
	Version int    `json:"version"`
	Program string `json:"program"`
	Ranks   int    `json:"ranks"`
	// StartUnixNs is when the job started: the wall-clock time of the
	// earliest rank's trace anchor (0 when unknown).
	StartUnixNs int64  `json:"start_unix_ns"`
	Counts      Counts `json:"counts"`
	// Signal is the application-level bandwidth: the bytes all ranks
	// moved, bin by bin.
	Signal Signal `json:"signal"`
	// Period is FTIO's analysis of the signal's writes, reads and both,
	// nil for a direction without enough samples.
	Period   Periods      `json:"period"`
	Patterns []FileGlobal `json:"patterns"`
	Accuracy Accuracy     `json:"accuracy"`
	// DroppedRequests were left out of the patterns: a rank used more
	// than MaxStreams file streams.
	DroppedRequests int64 `json:"dropped_requests"`
	// Cost is what building the summary cost the job; set only by the
	// library at MPI_Finalize.
	Cost *Cost `json:"cost,omitempty"`
}

// Signal is the job's bandwidth signal: bin i covers
// [StartUnixNs + i*WidthNs, StartUnixNs + (i+1)*WidthNs) of wall-clock
// time; Write and Read hold the bytes all ranks moved in each bin (times
// Fs for the bandwidth in bytes per second).
type Signal struct {
	StartUnixNs int64   `json:"start_unix_ns"`
	WidthNs     int64   `json:"width_ns"`
	Fs          float64 `json:"fs"`
	Write       []int64 `json:"write_bytes"`
	Read        []int64 `json:"read_bytes"`
}

// Periods are FTIO's results per direction.
type Periods struct {
	Write *Period `json:"write"`
	Read  *Period `json:"read"`
	Both  *Period `json:"both"`
}

// Period is FTIO's analysis of the job's signal. The signal is analysed
// at its own resolution (or the finest with at most MaxLadderSamples
// samples) and at each coarser one (bins merged in pairs) down to
// MinLadderSamples samples: a train of short bursts has harmonics as
// strong as its fundamental, and which one FTIO picks can change with the
// sampling frequency. The period reported is the one most resolutions
// agree on (within 1.5 frequency bins), as the finest of them found it;
// Resolutions lists every answer.
//
// The period chosen is then checked against its multiples in the time
// domain (fundamental): when the signal repeats at m times it and not at
// it, the period is m times FTIO's, Multiple is m and Fundamental is set.
type Period struct {
	ftio.Result
	Agreeing    int          `json:"resolutions_agreeing"`
	Resolutions []Resolution `json:"resolutions"`
	Multiple    int          `json:"multiple,omitempty"`
	// Autocorrelation of the smoothed signal at 1, 2, 3 and 4 times FTIO's
	// period (null where the signal is too short).
	Autocorrelation []*float64 `json:"autocorrelation,omitempty"`
}

// Resolution is FTIO's answer at one sampling frequency.
type Resolution struct {
	Fs         float64  `json:"fs"`
	NSamples   int      `json:"n_samples"`
	PeriodS    *float64 `json:"period_s"`
	Confidence float64  `json:"confidence"`
}

// MinLadderSamples and MaxLadderSamples bound the resolutions the period
// ladder tries: a period must span two samples, so the finest resolution
// finds periods down to 1/2048 of the job's I/O span; the coarsest, of 64
// samples, still sees a period that repeats twice in it (MinCycles) and
// smooths away the jitter that spreads a long run's peak over bins at the
// finer ones.
const (
	MinLadderSamples = 64
	MaxLadderSamples = 4096
)

// MinCycles is how often a period must repeat within the job's I/O span
// (ftio.Options.MinCycles): a job's start-up I/O and its end are no period.
const MinCycles = 2

// FileGlobal holds the PLFS patterns across ranks of one file's reads or
// writes: the global patterns (ids are ranks) and how many of the
// requests they and the local runs describe.
type FileGlobal struct {
	Path     string           `json:"path"`
	Kind     string           `json:"kind"` // "read" or "write"
	Requests int64            `json:"requests"`
	Globals  []pattern.Global `json:"globals"`
	// Strings are the global patterns in the paper's notation.
	Strings []string `json:"global_strings"`
	// InGlobals counts the requests the global patterns stand for; the
	// strided runs that joined none are LocalRuns, holding the rest but
	// Overflow (requests of runs past the bounds).
	InGlobals int64 `json:"in_globals"`
	LocalRuns int   `json:"local_runs"`
	Overflow  int64 `json:"overflow"`
}

// Accuracy is the prediction accuracy of the ranks' models: the share of
// calls whose context the model predicted before they came, weighted by
// its candidates' probabilities (predictor.Model.ContextScore).
type Accuracy struct {
	// Mean is over every scored call of all ranks; nil when none scored.
	Mean    *float64 `json:"mean"`
	Steps   uint64   `json:"scored_calls"`
	Min     *float64 `json:"min"`
	MinRank int      `json:"min_rank"`
	Max     *float64 `json:"max"`
	MaxRank int      `json:"max_rank"`
	// PerRank is each rank's accuracy, null where no model ran.
	PerRank []*float64 `json:"per_rank"`
}

// Cost is what the job summary cost at MPI_Finalize, measured on rank 0:
// from its entry into iopred's finalize step until the summary was
// computed (the waits for the other ranks included), the part of it spent
// merging partials, and the bytes of the partials it received.
type Cost struct {
	FinalizeNs    int64 `json:"finalize_ns"`
	MergeNs       int64 `json:"merge_ns"`
	ReceivedBytes int64 `json:"received_bytes"`
}

// Summarize turns the merged partial of a whole job into its summary.
func Summarize(p *Partial) *Summary {
	s := &Summary{Version: SummaryVersion, Program: p.Program, Ranks: p.Ranks, StartUnixNs: p.StartUnixNs,
		Counts: p.Counts, DroppedRequests: p.DroppedRequests}
	s.Signal, s.Period = signalOf(p)
	for i := range p.Streams {
		s.Patterns = append(s.Patterns, globalsOf(&p.Streams[i]))
	}
	s.Accuracy = accuracyOf(p)
	return s
}

// signalOf puts the write and read histograms on one grid and runs FTIO.
func signalOf(p *Partial) (Signal, Periods) {
	var both Histogram
	both.Merge(&p.Write)
	both.Merge(&p.Read)
	var sig Signal
	var per Periods
	if both.Empty() {
		return sig, per
	}
	w, r := cloneHistogram(&p.Write), cloneHistogram(&p.Read)
	onGrid := func(h *Histogram) []int64 {
		if h.Empty() {
			return nil
		}
		for h.WidthNs < both.WidthNs {
			h.coarsen()
		}
		out := make([]int64, len(both.Bins))
		for i, v := range h.Bins {
			out[h.First+int64(i)-both.First] = int64(math.Round(v))
		}
		return out
	}
	sig.Write, sig.Read = onGrid(&w), onGrid(&r)
	sig.StartUnixNs, sig.WidthNs, sig.Fs = both.First*both.WidthNs, both.WidthNs, 1e9/float64(both.WidthNs)
	return sig, PeriodsOf(sig)
}

// PeriodsOf runs FTIO on a bandwidth signal's writes, reads and both, as
// Summarize does on the traced calls' signal: at the signal's own bins and
// at each coarser resolution (periodOf). It serves signals built from
// elsewhere, such as a Darshan log's HEATMAP bins. Write and Read, when
// both present, must have the same length; a nil one has no period.
func PeriodsOf(sig Signal) Periods {
	var per Periods
	if sig.WidthNs <= 0 || (sig.Write == nil && sig.Read == nil) {
		return per
	}
	if sig.Write != nil && sig.Read != nil && len(sig.Write) != len(sig.Read) {
		return per
	}
	fs := 1e9 / float64(sig.WidthNs)
	t0 := float64(sig.StartUnixNs) / 1e9
	rate := func(bytes []int64) []float64 {
		if bytes == nil {
			return nil
		}
		x := make([]float64, len(bytes))
		for i, v := range bytes {
			x[i] = float64(v) * fs
		}
		return x
	}
	analyze := func(bytes, other []int64) *Period {
		if bytes == nil {
			return nil
		}
		return periodOf(rate(bytes), rate(other), t0, sig.WidthNs)
	}
	var sum []int64
	if sig.Write != nil && sig.Read != nil {
		sum = make([]int64, len(sig.Write))
		for i := range sum {
			sum[i] = sig.Write[i] + sig.Read[i]
		}
	}
	// With one direction only, both is that direction.
	per.Write, per.Read, per.Both = analyze(sig.Write, sig.Read), analyze(sig.Read, sig.Write), analyze(sum, nil)
	if sum == nil {
		per.Both = per.Write
		if per.Both == nil {
			per.Both = per.Read
		}
	}
	return per
}

// periodOf runs FTIO on the signal x (bytes/s in bins of width ns from
// t0 s) at its resolution and each coarser one, and picks the period most
// resolutions agree on. other, when not nil, is the other direction's
// signal on x's grid: a rhythm of x's bursts whose pauses it fills is a
// stream, not a period (ftio.Significance.JudgeStreaming).
func periodOf(x, other []float64, t0 float64, width int64) *Period {
	if x == nil {
		return nil
	}
	halfOf := func(v []float64) []float64 {
		half := make([]float64, (len(v)+1)/2)
		for i, s := range v {
			half[i/2] += s / 2
		}
		return half
	}
	halve := func() { x, width = halfOf(x), width*2 }
	for len(x) > MaxLadderSamples {
		halve()
		if other != nil {
			other = halfOf(other)
		}
	}
	// The rungs of the ladder are analysed at once (the finest costs
	// about half of all): after the traces are read in parallel, this is
	// the longest step left to one core. The ladder stops at the first
	// rung FTIO cannot analyse, as one rung after another would.
	type rung struct {
		x     []float64
		width int64
		res   ftio.Result
		err   error
	}
	var rungs []*rung
	for len(x) >= MinLadderSamples || rungs == nil {
		rungs = append(rungs, &rung{x: x, width: width})
		halve()
	}
	var wg sync.WaitGroup
	for _, r := range rungs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.res, r.err = ftio.AnalyzeSignal(r.x, t0, 1e9/float64(r.width), ftio.Options{MinCycles: MinCycles})
		}()
	}
	wg.Wait()
	var results []ftio.Result
	for _, r := range rungs {
		if r.err != nil {
			break
		}
		results = append(results, r.res)
	}
	if len(results) == 0 {
		return nil
	}
	results[0].FindPhases()
	p := &Period{Result: results[0]}
	for _, r := range results {
		p.Resolutions = append(p.Resolutions, Resolution{Fs: r.Fs, NSamples: r.NSamples, PeriodS: r.PeriodS, Confidence: r.Confidence})
	}
	// The frequency resolution of a window is 1/span at every sampling
	// frequency.
	span := results[0].TEnd - results[0].TStart
	best := -1
	for i, r := range results {
		if r.FreqHz == nil {
			continue
		}
		agree := 0
		for _, o := range results {
			if o.FreqHz != nil && math.Abs(*o.FreqHz-*r.FreqHz)*span <= 1.5 {
				agree++
			}
		}
		if agree > p.Agreeing {
			best, p.Agreeing = i, agree
		}
	}
	if best >= 0 {
		p.Result = results[best]
		p.Phases = results[0].Phases
		fine := &results[0]
		var r []float64
		p.Multiple, r = fundamental(fine.Signal, fine.Fs, *p.PeriodS)
		for _, c := range r {
			if math.IsNaN(c) {
				p.Autocorrelation = append(p.Autocorrelation, nil)
			} else {
				p.Autocorrelation = append(p.Autocorrelation, &c)
			}
		}
		// The spectrum's bin 2 fits twice in the span, but a job that
		// writes at its start and at its end only has it too: a period
		// must also be seen to repeat in the time domain, where the
		// autocorrelation at it needs two periods of signal (with the
		// jitter allowed).
		if math.IsNaN(r[0]) {
			// FTIO's period does not repeat; the bursts may still keep
			// a shorter one (reported as moderate).
			if s := testPeriod(fine, other, 0); s.Method == "bursts" && (s.Verdict == "moderate" || s.Verdict == "high") {
				p.Multiple = 0
				p.ApplySignificance(s, false)
				return p
			}
			p.PeriodS, p.FreqHz, p.Confidence, p.Verdict = nil, nil, 0, "not periodic (repeats fewer than twice)"
			p.Multiple = 0
			return p
		}
		if p.Multiple > 1 {
			p.Lengthen(p.Multiple)
			p.Fundamental = true
		}
		// FTIO's z-score says a bin stands out of the spectrum, which a
		// few bursts at random times also make; the period must beat
		// this job's own bursts placed at random.
		p.ApplySignificance(testPeriod(fine, other, *p.PeriodS), false)
	} else if fine := &results[0]; len(fine.Signal) > 0 {
		// FTIO's spectrum found none; the time domain may still show one
		// (reported as moderate).
		p.ApplySignificance(testPeriod(fine, other, 0), false)
	}
	return p
}

// testPeriod tests the period ftioS (0: none) of fine's signal
// (ftio.TestPeriod), other being the other direction's signal on its grid
// (nil: none), whose I/O in every pause of the bursts makes them a stream.
func testPeriod(fine *ftio.Result, other []float64, ftioS float64) ftio.Significance {
	s := ftio.TestPeriod(fine.Signal, fine.Fs, ftioS)
	if other != nil {
		s.JudgeStreaming(fine.Signal, other)
	}
	return s
}

// fundamental checks a period found in the spectrum against its
// multiples in the time domain. A train of short bursts every T seconds
// has spectral peaks at T, T/2, T/3, ... about equally high, and FTIO may
// pick a harmonic; but the signal, smoothed over an eighth of the period,
// correlates with itself shifted by T and not by T/2. It returns the
// smallest multiple m of period (1 to 4) whose autocorrelation reaches
// 60% of the best of them (a period repeats at its own multiples too, a
// little weaker or stronger by chance: the first strong one is the
// period), 1 unless that beats the period's own by 0.2,
// and the autocorrelations at 1 to 4 periods (within 3%, as periods
// jitter; NaN past half the signal).
func fundamental(x []float64, fs, period float64) (int, []float64) {
	const minFundamentalLag = 4
	lag := period * fs
	sm := ftio.Smooth(x, max(1, int(math.Round(lag/8))))
	r := make([]float64, 4)
	for m := range r {
		// Within 3%, as periods jitter.
		r[m] = sm.MaxAutocorrelation(int(math.Floor(float64(m+1)*lag*0.97)), int(math.Ceil(float64(m+1)*lag*1.03)))
	}
	best := math.Inf(-1)
	for _, c := range r {
		if !math.IsNaN(c) {
			best = math.Max(best, c)
		}
	}
	// A period of fewer than minFundamentalLag samples falls between
	// whole lags (2.5 bins of a Darshan heatmap): only its multiple
	// lands on one, and would win for that alone.
	if math.IsNaN(r[0]) || lag < minFundamentalLag {
		return 1, r
	}
	for m, c := range r {
		if !math.IsNaN(c) && c >= 0.6*best {
			if m > 0 && c-r[0] < 0.2 {
				return 1, r
			}
			return m + 1, r
		}
	}
	return 1, r
}

func globalsOf(st *Stream) FileGlobal {
	f := FileGlobal{Path: st.Path, Kind: "read", Requests: st.Requests, Overflow: st.Overflow}
	if st.Write {
		f.Kind = "write"
	}
	globals, rest := pattern.Merge(st.Runs)
	f.Globals = globals
	for i := range globals {
		f.Strings = append(f.Strings, globals[i].String())
		f.InGlobals += globals[i].Len()
	}
	f.LocalRuns = len(rest)
	return f
}

func accuracyOf(p *Partial) Accuracy {
	a := Accuracy{Steps: p.Steps, PerRank: make([]*float64, len(p.Accuracy))}
	if p.Steps > 0 {
		m := p.Score / float64(p.Steps)
		a.Mean = &m
	}
	for i, v := range p.Accuracy {
		if v < 0 {
			continue
		}
		x := float64(v)
		a.PerRank[i] = &x
		if a.Min == nil || x < *a.Min {
			a.Min, a.MinRank = &x, p.FirstRank+i
		}
		if a.Max == nil || x > *a.Max {
			a.Max, a.MaxRank = &x, p.FirstRank+i
		}
	}
	return a
}

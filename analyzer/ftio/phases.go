package ftio

import (
	"math"
	"sort"
)

// Phase is a stretch of a run with one period.
type Phase struct {
	StartS  float64 `json:"start_s"`
	EndS    float64 `json:"end_s"`
	PeriodS float64 `json:"period_s"`
	// Windows is how many analysis windows agreed on the period.
	Windows int `json:"windows"`
	// PValue is TestPeriod's on the phase's stretch (FindPhases).
	PValue float64 `json:"p_value,omitempty"`
	// Tempo says the phase is a stretch of one tempo of a drifting
	// rhythm of intervals (the burst test's, BurstTest.Phases) rather
	// than of short-time spectra; Bursts is then how many bursts it holds.
	Tempo  bool `json:"tempo,omitempty"`
	Bursts int  `json:"bursts,omitempty"`
}

// Phase analysis settings. A window must hold phaseCycles periods for its
// line to be told from its neighbours' (FTIO's own rule of thumb for a
// window: several repetitions); adjacent windows agree within phaseAgree.
const (
	phaseWindows = 5   // windows per run, before overlap
	phaseCycles  = 3   // least periods a window must hold
	phaseAgree   = 0.1 // relative tolerance between windows' periods
	// phaseHarmonics is how many harmonics a window's fundamental sums.
	phaseHarmonics = 4
)

// Phases finds where the period of x (bandwidth samples at fs Hz from t0
// s) changes: a short-time Fourier analysis, windows of an eighth of the
// run overlapping by half, each giving the period of its strongest line
// (refined between bins) among those it holds at least three times; then
// a change-point segmentation that joins adjacent windows whose periods
// agree within 10% and lets a lone window between two agreeing runs
// (a window straddling the change) join the longer. It returns the
// phases when there are at least two, each at least two windows long,
// and nil otherwise (one period throughout, or none).
//
// A wavelet scalogram would resolve short periods better in time, but
// a checkpoint interval changes a few times in a run, not continuously,
// and FTIO's users read the spectrum of a window; a window of an eighth
// of the run keeps the frequency resolution to 1/8 of the run's.
func Phases(x []float64, t0, fs float64) []Phase {
	n := len(x)
	w := n / phaseWindows
	if w < 32 {
		return nil
	}
	hop := w / 2
	type est struct {
		start, end int
		period     float64 // samples; 0: none
	}
	var ests []est
	for lo := 0; lo+w <= n; lo += hop {
		seg := x[lo : lo+w]
		p := spectrumShares(seg)
		// The fundamental of a train of short bursts is the bin whose
		// first harmonics together hold the most power; the strongest
		// single bin may be any harmonic.
		best, bin := 0.0, 0
		for k := phaseCycles; k <= len(p)/2; k++ {
			var v float64
			for h := 1; h <= phaseHarmonics && h*k <= len(p); h++ {
				v += p[h*k-1]
			}
			if v > best*1.0001 {
				best, bin = v, k
			}
		}
		e := est{start: lo, end: lo + w}
		// A line must stand out: its harmonics hold at least twice the
		// mean bin's share each.
		if bin > 0 && best*float64(len(p)) >= 2*phaseHarmonics {
			e.period = fundamentalOf(seg, float64(w)/refineBin(seg, bin))
		}
		ests = append(ests, e)
	}
	agree := func(a, b float64) bool {
		return a > 0 && b > 0 && math.Abs(a-b) <= phaseAgree*math.Max(a, b)
	}
	// Runs of agreeing windows.
	type seg struct {
		from, to int // window indices, inclusive
		periods  []float64
	}
	var segs []seg
	for i, e := range ests {
		if l := len(segs) - 1; l >= 0 && agree(median(segs[l].periods), e.period) {
			segs[l].to, segs[l].periods = i, append(segs[l].periods, e.period)
			continue
		}
		segs = append(segs, seg{from: i, to: i, periods: []float64{e.period}})
	}
	// Lone windows join a neighbour; runs that then agree merge.
	var merged []seg
	for i, s := range segs {
		if s.to == s.from && len(segs) > 1 {
			if len(merged) > 0 {
				merged[len(merged)-1].to = s.to
			} else if i+1 < len(segs) {
				segs[i+1].from = s.from
			}
			continue
		}
		if l := len(merged) - 1; l >= 0 && agree(median(merged[l].periods), median(s.periods)) {
			merged[l].to, merged[l].periods = s.to, append(merged[l].periods, s.periods...)
			continue
		}
		merged = append(merged, s)
	}
	var phases []Phase
	for _, s := range merged {
		p := median(s.periods)
		if p == 0 {
			continue // windows without a line: no phase there
		}
		if s.to-s.from < 1 {
			return nil
		}
		phases = append(phases, Phase{StartS: t0 + float64(ests[s.from].start)/fs, EndS: t0 + float64(ests[s.to].end)/fs,
			PeriodS: p / fs, Windows: s.to - s.from + 1})
	}
	if len(phases) < 2 {
		return nil
	}
	// Overlapping windows: a boundary lies in the middle of the overlap.
	for i := 1; i < len(phases); i++ {
		mid := (phases[i-1].EndS + phases[i].StartS) / 2
		phases[i-1].EndS, phases[i].StartS = mid, mid
	}
	phases[0].StartS = t0
	phases[len(phases)-1].EndS = t0 + float64(n)/fs
	return phases
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// maxPhaseSamples bounds the signal Phases works on: averaged down to
// it, short bursts span more of a sample and put their power in fewer
// harmonics, which a window of few periods then resolves.
const maxPhaseSamples = 2048

// FindPhases sets res.Phases from res.Signal (averaged down to at most
// maxPhaseSamples samples).
func (res *Result) FindPhases() {
	x, fs := res.Signal, res.Fs
	if f := (len(x) + maxPhaseSamples - 1) / maxPhaseSamples; f > 1 {
		y := make([]float64, len(x)/f)
		for i := range y {
			for _, v := range x[i*f : (i+1)*f] {
				y[i] += v / float64(f)
			}
		}
		x, fs = y, fs/float64(f)
	}
	phases := Phases(x, res.TStart, fs)
	// Each phase's period must be significant in its own stretch (the
	// windows' lines alone, a few periods each, are often chance: bursts
	// at random times gave "phases" in 13 of the corpus's runs).
	for i := range phases {
		ph := &phases[i]
		lo := max(0, int((ph.StartS-res.TStart)*fs))
		hi := min(len(x), int(math.Ceil((ph.EndS-res.TStart)*fs)))
		if hi-lo < 16 {
			return
		}
		s := testSpectrum(x[lo:hi], fs, ph.PeriodS)
		if s.PValue > Alpha || !s.Agrees {
			return
		}
		ph.PValue = s.PValue
	}
	if phases != nil {
		// The spectra's phases before a drifting tempo's
		// (ApplySignificance), which they find too.
		res.Phases = phases
	}
}

// fundamentalOf returns the multiple m·period (m = 1 to 6, the lag within
// half the window) at which x repeats: the smallest whose autocorrelation
// (x smoothed over a quarter of period) reaches 60% of the best multiple's.
// The harmonic sum still misses the fundamental when the window holds a
// fractional number of its periods, whose harmonics fall between bins.
func fundamentalOf(x []float64, period float64) float64 {
	w := max(1, int(math.Round(period/4)))
	var r []float64
	best := math.Inf(-1)
	for m := 1; m <= 6 && float64(m)*period*1.05 <= float64(len(x))/2; m++ {
		c := autocorrelationSmoothed(x, float64(m)*period, w)
		r = append(r, c)
		best = math.Max(best, c)
	}
	for m, c := range r {
		if c >= 0.6*best && c >= MinAutocorrelation {
			return float64(m+1) * period
		}
	}
	return period
}

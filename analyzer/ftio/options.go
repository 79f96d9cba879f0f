package ftio

import (
	"math"
	"sort"
)

// Window restricts src to the requests' parts within [start, end]
// seconds (each keeps its bandwidth over the part that overlaps): FTIO's
// time window. An end of +Inf or a start of -Inf leaves that side open.
func Window(src Source, start, end float64) Source {
	return func(fn func(Request) error) error {
		return src(func(r Request) error {
			if r.End < start || r.Start > end {
				return nil
			}
			r.Start, r.End = math.Max(r.Start, start), math.Min(r.End, end)
			return fn(r)
		})
	}
}

// TopFrequencies returns the n bins of the spectrum with the highest
// share of power (FTIO's --n), strongest first, with their z-scores;
// Confidence is left 0 (only candidates have one).
func (res *Result) TopFrequencies(n int) []Candidate {
	idx := make([]int, len(res.Spectrum))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return res.Spectrum[idx[a]] > res.Spectrum[idx[b]] })
	var out []Candidate
	for _, i := range idx[:min(n, len(idx))] {
		k := i + 1
		f := float64(k) * res.Fs / float64(res.NSamples)
		c := Candidate{FreqHz: f, PeriodS: 1 / f, Bin: k, Amplitude: res.Spectrum[i]}
		if i < len(res.Z) {
			c.Z = res.Z[i]
		}
		out = append(out, c)
	}
	return out
}

// Wave is one sinusoid of a Fourier fit: Amplitude·cos(2π·FreqHz·t + Phase)
// with t in seconds (the phase referred to t = 0).
type Wave struct {
	FreqHz    float64 `json:"freq_hz"`
	PeriodS   float64 `json:"period_s"`
	Amplitude float64 `json:"amplitude"` // bytes/s
	Phase     float64 `json:"phase"`     // radians
}

// Fit is a Fourier fit of the signal: its mean plus the n strongest
// waves, and how much of the signal's variance they explain (FTIO's
// Fourier fit, a model of the bandwidth to predict from).
type Fit struct {
	Mean  float64 `json:"mean"`
	Waves []Wave  `json:"waves"`
	// Explained is 1 - the residual's variance over the signal's.
	Explained float64 `json:"explained"`
}

// FourierFit fits res.Signal with its mean and the waves of the n
// strongest spectral bins.
func (res *Result) FourierFit(n int) Fit {
	x := res.Signal
	N := float64(len(x))
	var fit Fit
	if len(x) == 0 {
		return fit
	}
	for _, v := range x {
		fit.Mean += v / N
	}
	model := make([]float64, len(x))
	for i := range model {
		model[i] = fit.Mean
	}
	for _, c := range res.TopFrequencies(n) {
		var re, im float64
		for i, v := range x {
			a := 2 * math.Pi * float64(c.Bin) * float64(i) / N
			re += (v - fit.Mean) * math.Cos(a)
			im -= (v - fit.Mean) * math.Sin(a)
		}
		w := Wave{FreqHz: c.FreqHz, PeriodS: c.PeriodS, Amplitude: 2 * math.Hypot(re, im) / N}
		if 2*c.Bin == len(x) {
			w.Amplitude /= 2 // the Nyquist bin has no mirror
		}
		// Phase at the first sample, then referred to t = 0.
		w.Phase = math.Atan2(im, re) - 2*math.Pi*w.FreqHz*res.TStart
		for i := range model {
			t := res.TStart + float64(i)/res.Fs
			model[i] += w.Amplitude * math.Cos(2*math.Pi*w.FreqHz*t+w.Phase)
		}
		fit.Waves = append(fit.Waves, w)
	}
	var resid, total float64
	for i, v := range x {
		resid += (v - model[i]) * (v - model[i])
		total += (v - fit.Mean) * (v - fit.Mean)
	}
	if total > 0 {
		fit.Explained = 1 - resid/total
	}
	return fit
}

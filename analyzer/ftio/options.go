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

package ftio

import (
	"math"
	"testing"
)

// TestWindow proves the time window keeps the parts of requests inside
// it, with their bandwidth, and drops the rest.
func TestWindow(t *testing.T) {
	reqs := []Request{{0, 1, 10}, {2, 4, 20}, {5, 6, 30}, {3, 3, 0}}
	for _, tc := range []struct {
		name       string
		start, end float64
		want       []Request
	}{
		{"open", math.Inf(-1), math.Inf(1), reqs},
		{"from 3", 3, math.Inf(1), []Request{{3, 4, 20}, {5, 6, 30}, {3, 3, 0}}},
		{"0.5 to 2.5", 0.5, 2.5, []Request{{0.5, 1, 10}, {2, 2.5, 20}}},
		{"between requests", 1.2, 1.8, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []Request
			if err := Window(Slice(reqs), tc.start, tc.end)(func(r Request) error { got = append(got, r); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("%v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestTopFrequencies proves the top frequencies are the spectrum's
// strongest bins in order: a sum of two cosines gives their two
// frequencies, the stronger first.
func TestTopFrequencies(t *testing.T) {
	const n, fs = 1000, 100.0
	x := make([]float64, n)
	for i := range x {
		tt := float64(i) / fs
		x[i] = 10 + 3*math.Cos(2*math.Pi*2*tt) + 5*math.Cos(2*math.Pi*7*tt)
	}
	res, err := AnalyzeSignal(x, 0, fs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	top := res.TopFrequencies(2)
	if len(top) != 2 || math.Abs(top[0].FreqHz-7) > 1e-9 || math.Abs(top[1].FreqHz-2) > 1e-9 || top[0].Amplitude <= top[1].Amplitude {
		t.Errorf("top %+v, want 7 Hz then 2 Hz", top)
	}
}

// TestFourierFit proves the fit of a sum of two cosines (off the first
// sample's time) recovers their amplitudes and phases and explains the
// whole variance with both waves, part of it with one.
func TestFourierFit(t *testing.T) {
	const n, fs, t0 = 1000, 100.0, 3.37
	x := make([]float64, n)
	for i := range x {
		tt := t0 + float64(i)/fs
		x[i] = 10 + 3*math.Cos(2*math.Pi*2*tt+0.5) + 5*math.Cos(2*math.Pi*7*tt-1)
	}
	res, err := AnalyzeSignal(x, t0, fs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fit := res.FourierFit(2)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	wrap := func(p float64) float64 { return math.Remainder(p, 2*math.Pi) }
	if len(fit.Waves) != 2 || !near(fit.Mean, 10) || !near(fit.Explained, 1) ||
		!near(fit.Waves[0].Amplitude, 5) || !near(wrap(fit.Waves[0].Phase), -1) ||
		!near(fit.Waves[1].Amplitude, 3) || !near(wrap(fit.Waves[1].Phase), 0.5) {
		t.Errorf("fit %+v", fit)
	}
	if one := res.FourierFit(1); !(one.Explained > 0.7 && one.Explained < 0.8) {
		t.Errorf("one wave explains %g, want 25/34", one.Explained)
	}
}

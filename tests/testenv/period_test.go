package testenv

import (
	"math/rand/v2"
	"testing"
)

// Steady keeps the runs whose spectral line a DFT resolves and leaves out
// those whose jitter smears it: a program's deliberate second kind of
// interval and a rare stall do not count as jitter, intervals that
// wander do.
func TestSteady(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	times := func(n int, next func(i int) float64) []float64 {
		ts := []float64{0}
		for i := range n {
			ts = append(ts, ts[len(ts)-1]+next(i))
		}
		return ts
	}
	cases := []struct {
		name   string
		times  []float64
		steady bool
	}{
		{"regular", times(80, func(int) float64 { return 0.1 }), true},
		{"small jitter", times(80, func(int) float64 { return 0.1 * (1 + 0.03*rng.NormFloat64()) }), true},
		{"every fifth longer", times(48, func(i int) float64 {
			if i%5 == 4 {
				return 0.19
			}
			return 0.15
		}), true},
		{"one stall", times(80, func(i int) float64 {
			if i == 40 {
				return 0.3
			}
			return 0.1
		}), true},
		{"wandering", times(80, func(int) float64 { return 0.1 * (1 + 0.2*rng.NormFloat64()) }), false},
		{"starved", times(40, func(i int) float64 { return []float64{0.15, 0.6, 2.5}[i%3] }), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MeasureIntervals(t, c.times)
			if got := m.Steady(); got != c.steady {
				t.Errorf("Steady() = %v, want %v (jitter %.3f, line %.2f bins)", got, c.steady, m.Jitter, m.LineBins())
			}
		})
	}
}

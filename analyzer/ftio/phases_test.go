package ftio

import (
	"math"
	"testing"
)

// TestPhases proves a run whose checkpoint interval changes part-way is
// cut into phases at the change, each with its period, and that a run
// with one period throughout, or none, has no phases.
func TestPhases(t *testing.T) {
	const fs = 100.0
	train := func(x []float64, from, to int, period float64) {
		for s := float64(from); s < float64(to); s += period {
			x[int(s)] += 1e6
			x[int(s)+1] += 1e6
		}
	}
	changing := make([]float64, 2400)
	train(changing, 0, 1000, 25)    // 0.25 s for 10 s
	train(changing, 1000, 2400, 80) // then 0.8 s for 14 s
	steady := make([]float64, 2400)
	train(steady, 0, 2400, 40)
	for _, tc := range []struct {
		name    string
		x       []float64
		periods []float64
		change  float64 // s
	}{
		{"0.25 s then 0.8 s", changing, []float64{0.25, 0.8}, 10},
		{"0.4 s throughout", steady, nil, 0},
		{"no I/O rhythm", make([]float64, 2400), nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ph := Phases(tc.x, 0, fs)
			t.Logf("%+v", ph)
			if len(ph) != len(tc.periods) {
				t.Fatalf("%d phases, want %d", len(ph), len(tc.periods))
			}
			for i, p := range ph {
				if math.Abs(p.PeriodS-tc.periods[i]) > 0.03*tc.periods[i] {
					t.Errorf("phase %d: period %g s, want %g", i, p.PeriodS, tc.periods[i])
				}
			}
			if len(ph) == 2 && math.Abs(ph[0].EndS-tc.change) > 1.5 {
				t.Errorf("change at %g s, want %g within 1.5 s (a window is 3 s)", ph[0].EndS, tc.change)
			}
		})
	}
}

package ftio

import (
	"math"
	"math/rand/v2"
	"testing"
)

// burstSignal is a signal of n samples with bursts of width samples at
// the given starts.
func burstSignal(n, width int, starts []float64) []float64 {
	x := make([]float64, n)
	for _, s := range starts {
		for j := 0; j < width; j++ {
			if i := int(s) + j; i >= 0 && i < n {
				x[i] += 1e6
			}
		}
	}
	return x
}

// TestPeriodSignificance proves the verdicts: bursts at a rhythm (exact,
// or jittered by 10% of the period without drift) are significant and
// agree with the period given as FTIO's; the same number of bursts at
// random times (generated from other seeds than the surrogates') are not
// significant; a period FTIO gives that is three times the rhythm (a
// subharmonic) is corrected, as moderate, to the rhythm.
func TestPeriodSignificance(t *testing.T) {
	const n, fs = 4000, 100.0
	rhythm := func(period, jitter float64, seed uint64) []float64 {
		rng := rand.New(rand.NewPCG(seed, 1))
		var starts []float64
		for s := 10.0; s < n-10; s += period {
			starts = append(starts, s+jitter*period*(2*rng.Float64()-1))
		}
		return starts
	}
	random := func(count int, seed uint64) []float64 {
		rng := rand.New(rand.NewPCG(seed, 2))
		starts := make([]float64, count)
		for i := range starts {
			starts[i] = rng.Float64() * (n - 10)
		}
		return starts
	}
	for _, tc := range []struct {
		name    string
		x       []float64
		ftio    float64 // s
		verdict string
		period  float64 // s, 0: not checked
	}{
		{"exact rhythm of 2 s", burstSignal(n, 3, rhythm(200, 0, 1)), 2, "high", 2},
		{"rhythm of 1.25 s jittered 10%", burstSignal(n, 2, rhythm(125, 0.1, 2)), 1.25, "high", 1.25},
		{"rhythm of 2 s, FTIO says 6 s", burstSignal(n, 3, rhythm(200, 0, 3)), 6, "moderate", 2},
		{"20 bursts at random times", burstSignal(n, 3, random(20, 4)), 0.9, "not significant", 0},
		{"40 bursts at random times", burstSignal(n, 2, random(40, 5)), 1.7, "not significant", 0},
		{"12 bursts at random times", burstSignal(n, 5, random(12, 6)), 3.1, "not significant", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := TestPeriod(tc.x, fs, tc.ftio)
			t.Logf("%+v", s)
			if s.Verdict != tc.verdict {
				t.Errorf("verdict %q, want %q (%s)", s.Verdict, tc.verdict, s.Reason)
			}
			if tc.period > 0 && math.Abs(s.PeriodS-tc.period) > 0.02*tc.period {
				t.Errorf("period %g s, want %g", s.PeriodS, tc.period)
			}
			again := TestPeriod(tc.x, fs, tc.ftio)
			if again.PValue != s.PValue {
				t.Errorf("p-value %g then %g: not reproducible", s.PValue, again.PValue)
			}
		})
	}
}

// TestShuffleKeepsBursts proves a surrogate holds the signal's samples
// (bursts whole, idle samples in order) and only moves them.
func TestShuffleKeepsBursts(t *testing.T) {
	x := []float64{0, 5, 5, 0, 0, 9, 0, 1, 0, 7, 7, 7, 0, 0}
	bursts, gaps := segment(x)
	if len(bursts) != 3 {
		t.Fatalf("%d bursts, want 3", len(bursts))
	}
	out := make([]float64, len(x))
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 20; i++ {
		shuffle(out, x, bursts, gaps, rng)
		var sumIn, sumOut float64
		for j := range x {
			sumIn += x[j]
			sumOut += out[j]
		}
		if sumIn != sumOut {
			t.Fatalf("surrogate %v: sum %g, want %g", out, sumOut, sumIn)
		}
		// The burst of three 7s stays whole.
		found := false
		for j := 0; j+3 <= len(out); j++ {
			if out[j] == 7 && out[j+1] == 7 && out[j+2] == 7 {
				found = true
			}
		}
		if !found {
			t.Fatalf("surrogate %v: the burst 7 7 7 was cut", out)
		}
	}
}

package isoforest

import (
	"fmt"
	"math"
	"testing"
)

// TestAveragePath proves c(m) at known values: 0 and 1 for one and two
// points, 2(ln 2 + γ) - 4/3 for three, and c(256) ≈ 10.2448 as the
// isolation forest paper's normalisation.
func TestAveragePath(t *testing.T) {
	for _, tc := range []struct {
		m    int
		want float64
	}{{0, 0}, {1, 0}, {2, 1}, {3, 2*(math.Log(2)+0.5772156649015329) - 4.0/3}, {256, 10.2448}} {
		if got := averagePath(tc.m); math.Abs(got-tc.want) > 1e-4 {
			t.Errorf("c(%d) = %g, want %g", tc.m, got, tc.want)
		}
	}
}

// TestIsolatesTheOddPoint proves a far point scores lowest, below -0.65
// where a point inside the cluster scores above -0.55, that the same seed gives
// the same scores and another seed different ones.
func TestIsolatesTheOddPoint(t *testing.T) {
	var pts [][]float64
	for i := range 200 {
		pts = append(pts, []float64{float64(i%20) / 20, float64(i/20) / 10})
	}
	pts = append(pts, []float64{8, 8})
	for _, tc := range []struct{ trees, samples int }{{100, 0}, {50, 64}, {10, 500}} {
		t.Run(fmt.Sprintf("trees%d/samples%d", tc.trees, tc.samples), func(t *testing.T) {
			s := Fit(pts, Options{Trees: tc.trees, MaxSamples: tc.samples, Seed: 3}).ScoreSamples(pts)
			low := 0
			for i := range s {
				if s[i] < s[low] {
					low = i
				}
			}
			if low != len(pts)-1 || s[low] > -0.65 || s[105] < -0.55 {
				t.Errorf("lowest score at %d (%.3f); far point %.3f, a central one %.3f", low, s[low], s[len(pts)-1], s[105])
			}
			again := Fit(pts, Options{Trees: tc.trees, MaxSamples: tc.samples, Seed: 3}).ScoreSamples(pts)
			other := Fit(pts, Options{Trees: tc.trees, MaxSamples: tc.samples, Seed: 4}).ScoreSamples(pts)
			same, differ := true, false
			for i := range s {
				same = same && s[i] == again[i]
				differ = differ || s[i] != other[i]
			}
			if !same || !differ {
				t.Errorf("same seed repeats: %v; another seed differs: %v", same, differ)
			}
		})
	}
}

// TestConstantPoints proves points that cannot be split end in one leaf
// each tree: every score equal, no panic.
func TestConstantPoints(t *testing.T) {
	pts := [][]float64{{1, 1}, {1, 1}, {1, 1}, {1, 1}}
	s := Fit(pts, Options{Seed: 1}).ScoreSamples(pts)
	for i := range s {
		if s[i] != s[0] || math.IsNaN(s[i]) {
			t.Fatalf("scores %v", s)
		}
	}
}

package dtw

import (
	"math"
	"testing"
)

func TestAlign(t *testing.T) {
	tests := []struct {
		name     string
		x, y     []float64
		wantCost float64
		wantPath []Step
	}{
		{"identical", []float64{1, 2, 3}, []float64{1, 2, 3}, 0, []Step{{0, 0}, {1, 1}, {2, 2}}},
		{"shifted burst", []float64{0, 5, 0, 0}, []float64{0, 0, 5, 0}, 0, []Step{{0, 0}, {0, 1}, {1, 2}, {2, 3}, {3, 3}}},
		{"stretched", []float64{0, 4, 0}, []float64{0, 4, 4, 4, 0}, 0, []Step{{0, 0}, {1, 1}, {1, 2}, {1, 3}, {2, 4}}},
		{"one point", []float64{2}, []float64{1, 3}, 2, []Step{{0, 0}, {0, 1}}},
	}
	for _, tc := range tests {
		cost, path, err := Align(tc.x, tc.y)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(cost-tc.wantCost) > 1e-12 {
			t.Errorf("%s: cost %g, want %g", tc.name, cost, tc.wantCost)
		}
		if len(path) != len(tc.wantPath) {
			t.Fatalf("%s: path %v, want %v", tc.name, path, tc.wantPath)
		}
		for i := range path {
			if path[i] != tc.wantPath[i] {
				t.Fatalf("%s: path %v, want %v", tc.name, path, tc.wantPath)
			}
		}
	}
}

// TestAlignIsOptimal compares the cost with an exhaustive search over
// every monotone path on small random series.
func TestAlignIsOptimal(t *testing.T) {
	var best func(x, y []float64, i, j int) float64
	best = func(x, y []float64, i, j int) float64 {
		c := math.Abs(x[i] - y[j])
		if i == 0 && j == 0 {
			return c
		}
		m := math.Inf(1)
		if i > 0 {
			m = math.Min(m, best(x, y, i-1, j))
		}
		if j > 0 {
			m = math.Min(m, best(x, y, i, j-1))
		}
		if i > 0 && j > 0 {
			m = math.Min(m, best(x, y, i-1, j-1))
		}
		return c + m
	}
	seed := uint64(7)
	rnd := func() float64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return float64(seed>>40) / (1 << 24)
	}
	for range 20 {
		x, y := make([]float64, 1+int(rnd()*6)), make([]float64, 1+int(rnd()*6))
		for i := range x {
			x[i] = rnd()
		}
		for i := range y {
			y[i] = rnd()
		}
		cost, _, err := Align(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if want := best(x, y, len(x)-1, len(y)-1); math.Abs(cost-want) > 1e-12 {
			t.Fatalf("x=%v y=%v: cost %g, exhaustive %g", x, y, cost, want)
		}
	}
}

// TestProgressive: three copies of a burst at different shifts average to
// the burst at the first one's place, at full height.
func TestProgressive(t *testing.T) {
	a := []float64{0, 0, 6, 6, 0, 0, 0, 0}
	b := []float64{0, 0, 0, 6, 6, 0, 0, 0}
	c := []float64{0, 6, 6, 0, 0, 0, 0, 0}
	avg, err := Progressive([][]float64{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if math.Abs(avg[i]-a[i]) > 1e-12 {
			t.Fatalf("average %v, want %v", avg, a)
		}
	}
	if _, err := Progressive(nil); err == nil {
		t.Error("no series: no error")
	}
	if _, _, err := Align(nil, a); err == nil {
		t.Error("empty series: no error")
	}
}

package clique

import (
	"testing"
)

// fourSamples is the paper's Figure 11 situation: four samples with two
// common bursts near x=100 and x=400 (one sample drifted), a foreign burst
// in sample 2 near the second, and a lone burst of sample 3.
func fourSamples() []Point {
	return []Point{
		{0, 98, 0.90}, {1, 103, 0.88}, {2, 101, 0.93}, {3, 99, 0.91},
		{0, 402, 0.85}, {1, 396, 0.86}, {2, 405, 0.84}, {3, 418, 0.83},
		{2, 430, 0.55}, // foreign burst of sample 2, near but less alike
		{3, 700, 0.40}, // lone burst
	}
}

func TestFind(t *testing.T) {
	pts := fourSamples()
	tests := []struct {
		name  string
		p     Params
		want  [][]int // clusters' point indices
		wantX []float64
	}{
		{"two common bursts, the foreign one voted out",
			Params{Samples: 4, Width: 20, Height: 0.1, Gamma: 0.5, Kappa: 0.9},
			[][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}, []float64{100.25, 405.25}},
		{"kappa 1 with tiny units finds nothing",
			Params{Samples: 4, Width: 2, Height: 0.01, Gamma: 0.5, Kappa: 1},
			nil, nil},
		{"gamma 0.25 and kappa 0.25 make the foreign and the lone burst clusters",
			Params{Samples: 4, Width: 20, Height: 0.1, Gamma: 0.25, Kappa: 0.25},
			[][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8}, {9}}, []float64{100.25, 405.25, 430, 700}},
	}
	for _, tc := range tests {
		cs, err := Find(pts, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != len(tc.want) {
			t.Fatalf("%s: %d clusters %+v, want %d", tc.name, len(cs), cs, len(tc.want))
		}
		for i, c := range cs {
			if len(c.Points) != len(tc.want[i]) {
				t.Fatalf("%s: cluster %d = %v, want %v", tc.name, i, c.Points, tc.want[i])
			}
			for j := range c.Points {
				if c.Points[j] != tc.want[i][j] {
					t.Fatalf("%s: cluster %d = %v, want %v", tc.name, i, c.Points, tc.want[i])
				}
			}
			if d := c.X - tc.wantX[i]; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s: cluster %d at x=%g, want %g", tc.name, i, c.X, tc.wantX[i])
			}
		}
	}
}

// TestSweepPicksMostClustered: the unit too narrow for the drifted burst
// loses to one that holds it.
func TestSweepPicksMostClustered(t *testing.T) {
	r, err := Sweep(fourSamples(), 4, []float64{4, 30}, []float64{0.05, 0.2}, 0.5, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if r.Clustered != 8 || len(r.Clusters) != 2 {
		t.Fatalf("sweep kept %d points in %d clusters (width %g, height %g), want 8 in 2", r.Clustered, len(r.Clusters), r.Width, r.Height)
	}
}

func TestErrors(t *testing.T) {
	for _, p := range []Params{{Samples: 0, Width: 1, Height: 1}, {Samples: 2, Width: 0, Height: 1}, {Samples: 2, Width: 1, Height: 1, Gamma: 2}} {
		if _, err := Find(nil, p); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
	if _, err := Find([]Point{{Sample: 5}}, Params{Samples: 2, Width: 1, Height: 1}); err == nil {
		t.Error("point of sample 5 of 2: no error")
	}
}

func TestRange(t *testing.T) {
	r := Range(10, 40, 4)
	if len(r) != 4 || r[0] != 10 || r[3] != 40 || r[1] != 20 {
		t.Errorf("Range(10, 40, 4) = %v", r)
	}
	if r := Range(5, 5, 3); len(r) != 1 {
		t.Errorf("Range(5, 5, 3) = %v", r)
	}
}

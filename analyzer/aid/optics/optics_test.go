package optics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
)

type golden struct {
	Name        string      `json:"name"`
	MinSamples  int         `json:"min_samples"`
	Xi          float64     `json:"xi"`
	Points      [][]float64 `json:"points"`
	Order       []int       `json:"order"`
	Core        []*float64  `json:"core"`
	Reach       []*float64  `json:"reach"`
	Predecessor []int       `json:"predecessor"`
	Labels      []int       `json:"labels"`
}

func readGolden(t *testing.T, b []byte) []golden {
	t.Helper()
	var g []golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func val(p *float64) float64 {
	if p == nil {
		return math.Inf(1)
	}
	return *p
}

func near(a, b float64) bool {
	if math.IsInf(a, 1) || math.IsInf(b, 1) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b))
}

// TestGolden proves that Compute and Xi give what scikit-learn's OPTICS
// gives on the fixed inputs of testdata/golden.py: the same visiting
// order, distances, predecessors and cluster labels.
func TestGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range readGolden(t, b) {
		t.Run(c.Name, func(t *testing.T) {
			g, err := Compute(c.Points, c.MinSamples)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(g.Order) != fmt.Sprint(c.Order) {
				t.Errorf("order\n got %v\nwant %v", g.Order, c.Order)
			}
			for i := range c.Points {
				if !near(g.Core[i], val(c.Core[i])) || !near(g.Reach[i], val(c.Reach[i])) || g.Predecessor[i] != c.Predecessor[i] {
					t.Errorf("point %d: core %v reach %v pred %d, want %v %v %d", i, g.Core[i], g.Reach[i], g.Predecessor[i],
						val(c.Core[i]), val(c.Reach[i]), c.Predecessor[i])
				}
			}
			labels, _, err := Xi(g, c.MinSamples, c.Xi, 0)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(labels) != fmt.Sprint(c.Labels) {
				t.Errorf("labels\n got %v\nwant %v", labels, c.Labels)
			}
		})
	}
}

// TestGoldenCurrent re-runs the golden script with scikit-learn, when it
// is installed, and checks that the committed goldens are what it says
// now: the goldens cannot drift from the reference.
func TestGoldenCurrent(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import sklearn").Run(); err != nil {
		t.Skip("python3-sklearn is not installed")
	}
	cmd := exec.Command(py, "golden.py")
	cmd.Dir = "testdata"
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(out), bytes.TrimSpace(want)) {
		t.Error("testdata/golden.json differs from what golden.py gives now; regenerate it")
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		pts  [][]float64
		min  int
	}{
		{"minPts", [][]float64{{0, 0}}, 1},
		{"dims", [][]float64{{0, 0}, {1}}, 2},
		{"nan", [][]float64{{0, math.NaN()}}, 2},
	} {
		if _, err := Compute(c.pts, c.min); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	g, _ := Compute([][]float64{{0, 0}, {1, 1}}, 2)
	if _, _, err := Xi(g, 2, 1.5, 0); err == nil {
		t.Error("xi 1.5: no error")
	}
}

// TestResolution proves that a resolution keeps a group of nearly equal
// points one cluster where plain OPTICS splits it on rounding noise.
func TestResolution(t *testing.T) {
	var pts [][]float64
	rng := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		pts = append(pts, []float64{10.3 + 1e-3*rng.NormFloat64(), 12.08 + 1e-3*rng.NormFloat64()})
	}
	for i := range 20 {
		pts = append(pts, []float64{9 + 0.2*float64(i%5), 10 + 0.3*float64(i/5)})
	}
	count := func(res float64) int {
		g, err := ComputeResolution(pts, 5, res)
		if err != nil {
			t.Fatal(err)
		}
		lab, _, _ := Xi(g, 5, 0.05, 0)
		seen := map[int]bool{}
		for _, l := range lab[:40] {
			seen[l] = true
		}
		return len(seen)
	}
	if n := count(0.02); n != 1 {
		t.Errorf("with a resolution of 0.02 the tight group has %d labels, want 1", n)
	}
	if n := count(0); n < 2 {
		t.Errorf("without a resolution the tight group has %d labels; the test no longer shows the need", n)
	}
}

// ExampleXi clusters two tight groups among stray points; the labels are
// scikit-learn's for the same input (the point at (20, 0.2) is reached
// from (20, 0) within the second cluster's steep area).
func ExampleXi() {
	pts := [][]float64{{0, 0}, {0, 0.1}, {0.1, 0}, {0.1, 0.1}, {5, 5}, {5, 5.1}, {5.1, 5}, {5.1, 5.1}, {20, 0}, {20, 0.2}, {30, 30}}
	g, _ := Compute(pts, 3)
	labels, _, _ := Xi(g, 3, 0.05, 0)
	fmt.Println(labels)
	// Output: [0 0 0 0 1 1 1 1 -1 1 -1]
}

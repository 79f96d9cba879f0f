package lof

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
)

type golden struct {
	Cases []struct {
		Name   string      `json:"name"`
		K      int         `json:"k"`
		Points [][]float64 `json:"points"`
		LOF    []float64   `json:"lof"`
		// Novelty is novelty=True's factors of the same points.
		Novelty []float64 `json:"novelty"`
	} `json:"cases"`
}

func check(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(g.Cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	for _, c := range g.Cases {
		got, err := Scores(c.Points, c.K)
		if err != nil {
			t.Fatalf("%s k=%d: %v", c.Name, c.K, err)
		}
		for i := range got {
			if math.Abs(got[i]-c.LOF[i]) > 1e-9*math.Max(1, c.LOF[i]) {
				t.Fatalf("%s k=%d: LOF[%d] = %.15g, scikit-learn %.15g", c.Name, c.K, i, got[i], c.LOF[i])
			}
		}
		train, again, err := Novelty(c.Points, c.K)
		if err != nil {
			t.Fatalf("%s k=%d: %v", c.Name, c.K, err)
		}
		if len(c.Novelty) != len(again) {
			t.Fatalf("%s k=%d: %d novelty factors in the golden file, %d points", c.Name, c.K, len(c.Novelty), len(again))
		}
		for i := range again {
			if train[i] != got[i] || math.Abs(again[i]-c.Novelty[i]) > 1e-9*math.Max(1, c.Novelty[i]) {
				t.Fatalf("%s k=%d: novelty LOF[%d] = %.15g, scikit-learn %.15g", c.Name, c.K, i, again[i], c.Novelty[i])
			}
		}
	}
}

// TestGolden proves Scores is scikit-learn's LocalOutlierFactor on the
// committed point sets (IOSI-like runs, uniform points, two clusters and a
// far point, a 3-D line, two points), with k from 1 to 20 (clipped), and
// Novelty is its novelty=True scoring of the same points.
func TestGolden(t *testing.T) { check(t, filepath.Join("testdata", "golden.json")) }

// TestGoldenRegenerate re-runs testdata/golden.py with Debian's
// python3-sklearn (missing, it fails the test unless
// IOPRED_SKIP_MISSING_TOOLS=1) and checks Scores against its fresh output.
func TestGoldenRegenerate(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import sklearn").Run(); err != nil {
		// .ci/run installs them (tests/apt-packages.txt).
		if os.Getenv("IOPRED_SKIP_MISSING_TOOLS") == "1" {
			t.Skip("python3-sklearn not installed")
		}
		t.Fatalf("python3-sklearn not installed (.ci/run installs them): %v", err)
	}
	out := filepath.Join(t.TempDir(), "golden.json")
	if b, err := exec.Command(py, filepath.Join("testdata", "golden.py"), out).CombinedOutput(); err != nil {
		t.Fatalf("golden.py: %v\n%s", err, b)
	}
	check(t, out)
}

// TestOutliers: with the paper's rule (threshold 0: the mean factor) the
// two skewed runs of twelve are the outliers, and a fixed threshold
// keeps everything below it.
func TestOutliers(t *testing.T) {
	pts := [][]float64{{1500, 640}, {1480, 650}, {1520, 630}, {2400, 900}, {1490, 645}, {1510, 660},
		{1505, 620}, {1495, 655}, {1510, 1300}, {1515, 635}, {1485, 648}, {1498, 642}}
	s, err := Scores(pts, 5)
	if err != nil {
		t.Fatal(err)
	}
	out := Outliers(s, 0)
	for i, o := range out {
		if o != (i == 3 || i == 8) {
			t.Errorf("point %d (LOF %.2f): outlier %v", i, s[i], o)
		}
	}
	for i, o := range Outliers(s, 1e9) {
		if o {
			t.Errorf("point %d is an outlier above threshold 1e9", i)
		}
	}
}

func TestErrors(t *testing.T) {
	for name, pts := range map[string][][]float64{
		"one point": {{1, 2}},
		"ragged":    {{1, 2}, {3}},
		"NaN":       {{1, 2}, {math.NaN(), 1}},
		"empty":     {{}, {}},
	} {
		if _, err := Scores(pts, 2); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Scores([][]float64{{1}, {2}}, 0); err == nil {
		t.Error("k=0: no error")
	}
}

// TestNeighboursExact proves the sweep finds the brute-force neighbours,
// ties to the lower index, on grid points full of equal distances and
// equal first coordinates.
func TestNeighboursExact(t *testing.T) {
	var pts [][]float64
	for i := range 60 {
		pts = append(pts, []float64{float64(i * 7 % 5), float64(i * 11 % 9), float64(i % 3)})
	}
	for _, self := range []bool{false, true} {
		for _, k := range []int{1, 4, 20} {
			nb, dist, _ := neighbours(pts, k, self)
			for i := range pts {
				type c struct {
					d float64
					j int
				}
				var all []c
				for j := range pts {
					if j != i {
						s := 0.0
						for m := range pts[i] {
							s += (pts[i][m] - pts[j][m]) * (pts[i][m] - pts[j][m])
						}
						all = append(all, c{math.Sqrt(s), j})
					}
				}
				sort.SliceStable(all, func(a, b int) bool { return all[a].d < all[b].d })
				if self { // itself first, before points equal to it
					all = append([]c{{0, i}}, all...)
				}
				for m := range k {
					if nb[i][m] != all[m].j || dist[i][m] != all[m].d {
						t.Fatalf("self=%v k=%d point %d: neighbours %v, brute force %v", self, k, i, nb[i], all[:k])
					}
				}
			}
		}
	}
}

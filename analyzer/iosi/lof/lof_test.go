package lof

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

type golden struct {
	Cases []struct {
		Name   string      `json:"name"`
		K      int         `json:"k"`
		Points [][]float64 `json:"points"`
		LOF    []float64   `json:"lof"`
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
	}
}

// TestGolden proves Scores is scikit-learn's LocalOutlierFactor on the
// committed point sets (IOSI-like runs, uniform points, two clusters and a
// far point, a 3-D line, two points), with k from 1 to 20 (clipped).
func TestGolden(t *testing.T) { check(t, filepath.Join("testdata", "golden.json")) }

// TestGoldenRegenerate re-runs testdata/golden.py when Debian's
// python3-sklearn is installed and checks Scores against its fresh output.
func TestGoldenRegenerate(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import sklearn").Run(); err != nil {
		t.Skip("python3-sklearn not installed")
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

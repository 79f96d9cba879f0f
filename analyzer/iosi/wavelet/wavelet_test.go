package wavelet

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

type golden struct {
	PywtDmey  []float64 `json:"pywt_dmey"`
	MeyerDmey []float64 `json:"meyer_dmey"`
	Cases     []struct {
		N     int                                   `json:"n"`
		X     []float64                             `json:"x"`
		Banks map[string]map[string]goldenTransform `json:"banks"`
	} `json:"cases"`
}

type goldenTransform struct {
	Wavedec [][]float64 `json:"wavedec"`
	Waverec []float64   `json:"waverec"`
	Approx  []float64   `json:"approx"`
}

func loadGolden(t *testing.T, path string) golden {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(g.Cases) == 0 || len(g.PywtDmey) != DmeyLen {
		t.Fatalf("%s: incomplete golden file", path)
	}
	return g
}

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, pywt has %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); d > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %.17g, pywt %.17g (|diff| %.3g > %.3g)", what, i, got[i], want[i], d, tol)
		}
	}
}

// TestGolden proves the transform is pywt's: with pywt's own dmey table,
// every coefficient of wavedec, every value of waverec and the level-L
// approximation agree to rounding error, for lengths from 1 (many
// reflections of the symmetric extension) to 200, levels 1 to 3; and
// Dmey's taps computed from the Meyer function's definition agree with
// scipy's adaptive quadrature of the same integral.
func TestGolden(t *testing.T) {
	g := loadGolden(t, filepath.Join("testdata", "golden.json"))
	checkGolden(t, g)
}

func checkGolden(t *testing.T, g golden) {
	near(t, "Dmey().DecLo", Dmey().DecLo, g.MeyerDmey, 1e-12)
	banks := map[string]Bank{"pywt": NewBank(g.PywtDmey), "meyer": Dmey()}
	for _, c := range g.Cases {
		for name, per := range c.Banks {
			b := banks[name]
			for ls, want := range per {
				level, _ := strconv.Atoi(ls)
				id := name + " n=" + strconv.Itoa(c.N) + " level=" + ls
				a, err := Approx(c.X, b, level)
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				near(t, id+" approx", a, want.Approx, 1e-12)
				if want.Wavedec == nil {
					continue
				}
				coeffs, err := Wavedec(c.X, b, level)
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				if len(coeffs) != len(want.Wavedec) {
					t.Fatalf("%s: %d coefficient arrays, pywt %d", id, len(coeffs), len(want.Wavedec))
				}
				for i := range coeffs {
					near(t, id+" wavedec["+strconv.Itoa(i)+"]", coeffs[i], want.Wavedec[i], 1e-12)
				}
				rec, err := Waverec(coeffs, b)
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				near(t, id+" waverec", rec, want.Waverec, 1e-12)
			}
		}
	}
}

// TestGoldenRegenerate re-runs testdata/golden.py when Debian's pywt and
// scipy are installed and checks the Go code against its fresh output, so
// the committed file cannot drift from what the script computes.
func TestGoldenRegenerate(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import pywt, scipy").Run(); err != nil {
		t.Skip("python3-pywt or python3-scipy not installed")
	}
	out := filepath.Join(t.TempDir(), "golden.json")
	if b, err := exec.Command(py, filepath.Join("testdata", "golden.py"), out).CombinedOutput(); err != nil {
		t.Fatalf("golden.py: %v\n%s", err, b)
	}
	checkGolden(t, loadGolden(t, out))
}

// TestDmeyAgainstPywtTable bounds how far the computed filter is from
// pywt's (MATLAB's) tabulated dmey, and checks the properties the
// pipeline relies on: unit gain at zero frequency and near-orthonormality.
func TestDmeyAgainstPywtTable(t *testing.T) {
	g := loadGolden(t, filepath.Join("testdata", "golden.json"))
	h := Dmey().DecLo
	worst := 0.0
	sum, sq := 0.0, 0.0
	for i := range h {
		worst = max(worst, math.Abs(h[i]-g.PywtDmey[i]))
		sum += h[i]
		sq += h[i] * h[i]
	}
	if worst > 1e-3 {
		t.Errorf("computed dmey is %.3g from pywt's table, want <= 1e-3", worst)
	}
	if math.Abs(sum-math.Sqrt2) > 1e-14 {
		t.Errorf("taps sum to %.17g, want sqrt(2)", sum)
	}
	if math.Abs(sq-1) > 1e-3 {
		t.Errorf("taps' energy %.6g, want about 1", sq)
	}
}

// TestApproxKeepsConstants: a constant signal is its own approximation at
// every level up to 1e-4 relative (the symmetric extension of a constant is
// constant and the low-pass gain is one; the truncated filter's even and odd
// taps each sum to 1/sqrt(2) only to about 2e-5), which is why the
// approximation keeps I/O volume.
func TestApproxKeepsConstants(t *testing.T) {
	for _, n := range []int{1, 2, 7, 100, 1001} {
		x := make([]float64, n)
		for i := range x {
			x[i] = 3.5
		}
		for level := 1; level <= 4; level++ {
			a, err := Approx(x, Dmey(), level)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range a {
				if math.Abs(v-3.5) > 3.5e-4 {
					t.Fatalf("n=%d level=%d: a[%d] = %g, want 3.5", n, level, i, v)
				}
			}
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		run  func() error
	}{
		{"level 0", func() error { _, err := Wavedec([]float64{1, 2}, Dmey(), 0); return err }},
		{"empty signal", func() error { _, err := Approx(nil, Dmey(), 2); return err }},
		{"mismatched details", func() error { _, err := IDWT(make([]float64, 40), make([]float64, 39), Dmey()); return err }},
		{"too few coefficients", func() error { _, err := IDWT(make([]float64, 10), nil, Dmey()); return err }},
		{"no coefficients", func() error { _, err := Waverec(nil, Dmey()); return err }},
	}
	for _, tc := range tests {
		if err := tc.run(); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestMaxLevel(t *testing.T) {
	// pywt.dwt_max_level(n, 62) for these n.
	for _, c := range []struct{ n, want int }{{10, 0}, {61, 0}, {122, 1}, {1000, 4}, {65536, 10}} {
		if got := MaxLevel(c.n, DmeyLen); got != c.want {
			t.Errorf("MaxLevel(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

func BenchmarkApprox(b *testing.B) {
	x := make([]float64, 16384)
	for i := range x {
		x[i] = math.Sin(float64(i) / 50)
	}
	bank := Dmey()
	b.SetBytes(int64(8 * len(x)))
	for b.Loop() {
		if _, err := Approx(x, bank, 2); err != nil {
			b.Fatal(err)
		}
	}
}

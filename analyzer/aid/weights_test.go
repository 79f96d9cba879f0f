package aid

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFitRecoversWeights proves the fit: trials made from known
// non-decreasing weights give those weights back, and weights that would
// decrease come back flattened, never decreasing.
func TestFitRecoversWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		name string
		w    []float64
	}{
		{"rising", []float64{1, 1.2, 1.5, 2.5, 4}},
		{"flat then steep", []float64{1, 1, 1, 1, 6}},
	} {
		var b strings.Builder
		b.WriteString("io_time_s,f0,f1,f2,f3,f4\n")
		for range 300 {
			f := make([]float64, len(c.w))
			sum := 0.0
			for i := range f {
				f[i] = rng.ExpFloat64() * math.Pow(0.5, float64(i))
				sum += f[i]
			}
			y := 0.0
			for i := range f {
				f[i] /= sum
				y += c.w[i] * f[i]
			}
			fmt.Fprintf(&b, "%.9f,%.9f,%.9f,%.9f,%.9f,%.9f\n", 100*y, f[0], f[1], f[2], f[3], f[4])
		}
		// One trial alone on the system, the best: its time is w0.
		fmt.Fprintf(&b, "%.9f,1,0,0,0,0\n", 100*c.w[0])
		m, err := ReadMeasurements(strings.NewReader(b.String()), c.name)
		if err != nil {
			t.Fatal(err)
		}
		w, err := Fit(m)
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.w {
			if math.Abs(w.W[i]-c.w[i]/c.w[0]) > 0.02*c.w[i] {
				t.Errorf("%s: w = %.3f, want %.3f", c.name, w.W, c.w)
				break
			}
		}
	}
	// Decreasing truth: the fit stays non-decreasing.
	m := &Measurements{BandWidth: 30e6, F: [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.5, 0.5, 0}}, IOTime: []float64{1, 3, 2, 2}}
	w, _ := Fit(m)
	for i := 1; i < len(w.W); i++ {
		if w.W[i] < w.W[i-1]-1e-9 {
			t.Errorf("weights decrease: %v", w.W)
		}
	}
}

func TestReadMeasurementsErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"no header", "", "no header"},
		{"no bands", "io_time_s,x\n1,2\n", "band columns"},
		{"bad time", "io_time_s,f0\nx,1\n", "m.csv:2: io_time_s"},
		{"bad share", "io_time_s,f0\n1,1.5\n", "m.csv:2: f0"},
		{"short row", "io_time_s,f0,f1\n1,1\n", "m.csv:2: 2 fields"},
		{"no trial", "io_time_s,f0\n", "no trial"},
		{"bad band width", "# band_width=-3\nio_time_s,f0\n1,1\n", "m.csv:1: band_width"},
	} {
		_, err := ReadMeasurements(strings.NewReader(c.in), "m.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}

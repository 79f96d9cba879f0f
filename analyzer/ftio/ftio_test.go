package ftio

import (
	"iopred/tests/interop"
	"math"
	"path/filepath"
	"testing"
)

// interopDir is FTIO's example traces, kept in the repository.
func interopDir(t testing.TB) string { return interop.Path(t, "ftio") }

func analyzeFile(t testing.TB, name string, mode Mode) Result {
	src, err := FileSource([]string{filepath.Join(interopDir(t), name)}, mode, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func sig4(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 0.5e-4*math.Max(math.Abs(a), math.Abs(b))*2
}

// TestFTIOExamples proves agreement with FTIO's own answers on its example
// traces to four significant digits.
func TestFTIOExamples(t *testing.T) {
	tests := []struct {
		file       string
		mode       Mode
		n          int
		tStart     float64
		freq, conf float64
		others     []float64
	}{
		{"tmio-8ranks.jsonl", ModeWrite, 289, 0.05309, 0.519031, 0.6774, nil},
		{"tmio-8ranks.jsonl", ModeRead, 0, 0, 0.528302, 0.4728, []float64{2.150943}},
		{"custom-4ranks.json", ModeWrite, 0, 0, 0.372093, 1.0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.file+"/"+string(tc.mode), func(t *testing.T) {
			res := analyzeFile(t, tc.file, tc.mode)
			t.Logf("N=%d t0=%g verdict=%s cands=%+v", res.NSamples, res.TStart, res.Verdict, res.Candidates)
			if tc.n != 0 && res.NSamples != tc.n {
				t.Errorf("N = %d, want %d", res.NSamples, tc.n)
			}
			if tc.tStart != 0 && !sig4(res.TStart, tc.tStart) {
				t.Errorf("t_start = %g, want %g", res.TStart, tc.tStart)
			}
			if res.FreqHz == nil {
				t.Fatalf("no period found, want %g Hz", tc.freq)
			}
			if !sig4(*res.FreqHz, tc.freq) || !sig4(res.Confidence, tc.conf) {
				t.Errorf("dominant %g Hz confidence %g, want %g Hz confidence %g", *res.FreqHz, res.Confidence, tc.freq, tc.conf)
			}
			for _, f := range tc.others {
				found := false
				for _, c := range res.Candidates {
					found = found || sig4(c.FreqHz, f)
				}
				if !found {
					t.Errorf("no candidate at %g Hz", f)
				}
			}
		})
	}
}

package ftio

import (
	"math"
	"testing"
)

// TestMergeAutocorrelationFTIOExamples proves FTIO's own answers with
// --autocorrelation on its example traces (FTIO v0.0.9 run with Debian's
// NumPy 1.24 and SciPy 1.10 through tests/periodcorpus/ftio/run_ftio.py,
// "-e no --autocorrelation -v"): the periods between the
// autocorrelation's peaks, those its filter keeps, its period and
// confidence, and the merged period and confidence FTIO prints.
func TestMergeAutocorrelationFTIOExamples(t *testing.T) {
	tests := []struct {
		file             string
		candidates, kept []float64
		autoS, autoConf  float64
		periodS, conf    float64
	}{
		{"tmio-8ranks.jsonl", []float64{3.7, 1.9}, []float64{3.7}, 3.70, 1, 1.9267, 0.8925},
		{"custom-4ranks.json", []float64{2.7, 2.4, 2.7, 2.8, 2.6}, []float64{2.7, 2.7, 2.6}, 2.68, 0.9853, 2.6875, 0.9951},
		{"tmio-ior-384ranks.msgpack", []float64{0.4, 1.1, 8.3, 1.2, 19.2}, []float64{8.3, 19.2}, 9.80, 0.6170, 10.8429, 0.7556},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			res := analyzeFile(t, tc.file, ModeWrite)
			m := res.MergeAutocorrelation()
			a := m.Autocorrelation
			if !closeSlices(a.Candidates, tc.candidates, 1e-9) || !closeSlices(a.Kept, tc.kept, 1e-9) {
				t.Errorf("candidates %v kept %v, FTIO %v kept %v", a.Candidates, a.Kept, tc.candidates, tc.kept)
			}
			// FTIO prints the autocorrelation's period to 0.01 s and its
			// confidence to 0.01%.
			if a.PeriodS == nil || math.Abs(*a.PeriodS-tc.autoS) > 0.005 || math.Abs(a.Confidence-tc.autoConf) > 0.5e-4 {
				t.Errorf("autocorrelation %v s confidence %.5f, FTIO %.2f s %.4f", a.PeriodS, a.Confidence, tc.autoS, tc.autoConf)
			}
			if m.Source != "merged" || m.PeriodS == nil || math.Abs(*m.PeriodS-tc.periodS) > 0.5e-4 || math.Abs(m.Confidence-tc.conf) > 0.5e-4 {
				t.Errorf("merged (%s) %v s confidence %.5f, FTIO %.4f s %.4f", m.Source, m.PeriodS, m.Confidence, tc.periodS, tc.conf)
			}
			if m.CandidateAgreement == nil || *m.CandidateAgreement > 1 {
				t.Errorf("agreement of the kept candidates with the period: %v", m.CandidateAgreement)
			}
		})
	}
}

// The autocorrelation through the FFT equals the direct sum FTIO's NumPy
// correlate computes, at every lag, on lengths with and without small
// factors.
func TestFullAutocorrelationDirect(t *testing.T) {
	for _, n := range []int{7, 64, 97, 250} {
		x := make([]float64, n)
		seed := uint64(n)
		for i := range x {
			seed = seed*6364136223846793005 + 1442695040888963407
			x[i] = float64(seed>>40) / (1 << 24)
			if i%9 < 2 {
				x[i] += 3
			}
		}
		got := fullAutocorrelation(x)
		var mean, variance float64
		for _, v := range x {
			mean += v / float64(n)
		}
		for _, v := range x {
			variance += (v - mean) * (v - mean) / float64(n)
		}
		for k := range n {
			var c float64
			for i := 0; i+k < n; i++ {
				c += (x[i] - mean) * (x[i+k] - mean)
			}
			if want := c / variance / float64(n); math.Abs(got[k]-want) > 1e-9 {
				t.Fatalf("n %d lag %d: %g, want %g", n, k, got[k], want)
			}
		}
	}
	if fullAutocorrelation(make([]float64, 5)) != nil {
		t.Error("a constant signal has an autocorrelation")
	}
}

// The merge's other branches: without an autocorrelation estimate the
// DFT's period stands; without a DFT period the autocorrelation's is
// taken with a third of its confidence; a merged confidence below 0.2
// drops the period.
func TestMergeBranches(t *testing.T) {
	// Bursts of 3 samples every 20, at 10 Hz: both find 2 s.
	x := make([]float64, 400)
	for i := range x {
		if i%20 < 3 {
			x[i] = 1e6
		}
	}
	res, err := AnalyzeSignal(x, 0, 10, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.MergeAutocorrelation()
	if m.Source != "merged" || m.PeriodS == nil || math.Abs(*m.PeriodS-2) > 1e-9 {
		t.Fatalf("merged %s %v, want 2 s", m.Source, m.PeriodS)
	}
	if a := m.Autocorrelation; a.PeriodS == nil || math.Abs(*a.PeriodS-2) > 1e-9 || a.Confidence != 1 {
		t.Errorf("autocorrelation %v s confidence %g, want 2 s and 1", a.PeriodS, a.Confidence)
	}
	if want := (1 + res.Confidence + 1) / 3; math.Abs(m.Confidence-want) > 1e-12 {
		t.Errorf("confidence %g, want %g", m.Confidence, want)
	}
	noDFT := res
	noDFT.PeriodS, noDFT.FreqHz = nil, nil
	if m := noDFT.MergeAutocorrelation(); m.Source != "autocorrelation" || m.PeriodS == nil || math.Abs(m.Confidence-1.0/3) > 1e-12 {
		t.Errorf("without a DFT period: %s %v confidence %g, want the autocorrelation's with 1/3", m.Source, m.PeriodS, m.Confidence)
	}
	flat := res
	flat.Signal = make([]float64, 400)
	if m := flat.MergeAutocorrelation(); m.Source != "dft" || m.PeriodS == nil || *m.PeriodS != *res.PeriodS || m.Confidence != res.Confidence {
		t.Errorf("without an autocorrelation: %s %v confidence %g, want the DFT's", m.Source, m.PeriodS, m.Confidence)
	}
	weak := res
	weak.Confidence = -2 // drives the mean below 0.2
	if m := weak.MergeAutocorrelation(); m.PeriodS != nil {
		t.Errorf("merged confidence %g kept the period", m.Confidence)
	}
}

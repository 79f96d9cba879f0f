package testenv

import (
	"math"
	"testing"

	"iopred/analyzer/ftio"
)

// CheckPeriod runs FTIO over the write signal of the traces in dir and
// fails the test unless it finds a period within tol (a fraction) of want,
// the interval the test measured or configured. It returns the result.
func CheckPeriod(t testing.TB, dir string, opt ftio.Options, want, tol float64) ftio.Result {
	t.Helper()
	res, err := ftio.AnalyzeFiles([]string{dir}, ftio.ModeWrite, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.PeriodS == nil {
		t.Fatalf("no period found: %s, candidates %+v", res.Verdict, res.Candidates)
	}
	t.Logf("period %.5f s, want %.5f s, confidence %.3f, %d samples at %.4g Hz", *res.PeriodS, want, res.Confidence, res.NSamples, res.Fs)
	if math.Abs(*res.PeriodS-want)/want > tol {
		t.Errorf("period %.5f s, want %.5f s within %.0f%%", *res.PeriodS, want, 100*tol)
	}
	return res
}

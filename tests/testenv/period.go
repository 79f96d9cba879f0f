package testenv

import (
	"math"
	"sort"
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

// TypicalInterval returns the median interval between successive times
// (seconds) and logs it beside the mean: the period a program keeps is
// its typical interval, which a process descheduled once for a while (two
// cores shared by the program, the tracer and the test) does not move, as
// it moves the mean.
func TypicalInterval(t testing.TB, times []float64) float64 {
	t.Helper()
	if len(times) < 2 {
		t.Fatalf("%d times: no interval", len(times))
	}
	iv := make([]float64, len(times)-1)
	for i := range iv {
		iv[i] = times[i+1] - times[i]
	}
	sort.Float64s(iv)
	med := iv[len(iv)/2]
	t.Logf("intervals: median %.5f s, mean %.5f s, min %.5f s, max %.5f s", med,
		(times[len(times)-1]-times[0])/float64(len(iv)), iv[0], iv[len(iv)-1])
	return med
}

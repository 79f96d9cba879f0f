package ftio_test

import (
	"fmt"

	"iopred/analyzer/ftio"
)

// A burst of 1 MB every 4 s for 20 periods is found with high confidence.
func ExampleAnalyze() {
	var reqs []ftio.Request
	for i := 0; i < 20; i++ {
		s := 4 * float64(i)
		reqs = append(reqs, ftio.Request{Start: s, End: s + 1, Bandwidth: 1e6})
	}
	res, err := ftio.Analyze(ftio.Slice(reqs), ftio.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d samples, period %.2f s, %s confidence\n", res.NSamples, *res.PeriodS, res.Verdict)
	// Output: 770 samples, period 4.05 s, high confidence
}

// The online evaluator takes requests as they complete and predicts on
// demand, as the library does inside the process.
func ExampleOnline() {
	o := ftio.NewOnline(ftio.Options{}, 0)
	for i := int64(0); i < 12; i++ {
		start := i * 5_000_000_000 // every 5 s
		o.Add(start, start+1_000_000_000, 1<<20, true)
	}
	res, err := o.Evaluate()
	if err != nil {
		panic(err)
	}
	fmt.Printf("period %.2f s after %d find(s)\n", *res.PeriodS, o.Found())
	// Output: period 5.09 s after 1 find(s)
}

// FTIO's 8-rank example trace, in write mode, as `iopred period` reads it;
// it prints N=289, 0.519031 Hz, confidence 0.6774 (TestFTIOExamples checks
// these figures and skips when the traces are absent, which an example
// with an Output line could not).
func ExampleAnalyzeFiles() {
	res, err := ftio.AnalyzeFiles([]string{"../../tests/interop/ftio/tmio-8ranks.jsonl"}, ftio.ModeWrite, ftio.Options{})
	if err != nil {
		fmt.Println("example trace not available")
		return
	}
	fmt.Printf("N=%d, %.6f Hz, confidence %.4f\n", res.NSamples, *res.FreqHz, res.Confidence)
}

// FTIO's other outlier detectors pick the spectrum's outlying bins
// instead of the z-score; here scipy's find_peaks semantics, and the
// isolation forest, seeded so that its answer repeats.
func ExampleOptions_outlier() {
	var reqs []ftio.Request
	for i := 0; i < 20; i++ {
		s := 4 * float64(i)
		reqs = append(reqs, ftio.Request{Start: s, End: s + 1, Bandwidth: 1e6})
	}
	for _, name := range []string{"peaks", "isoforest"} {
		det, err := ftio.ParseOutlier(name)
		if err != nil {
			panic(err)
		}
		res, err := ftio.Analyze(ftio.Slice(reqs), ftio.Options{Outlier: det, Seed: 1})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: period %.2f s, %s\n", det, *res.PeriodS, res.Verdict)
	}
	// Output:
	// peaks: period 4.05 s, high
	// isoforest: period 4.05 s, high
}

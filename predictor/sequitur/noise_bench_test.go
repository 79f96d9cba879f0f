package sequitur

import (
	"fmt"
	"testing"
)

// BenchmarkNoiseAccuracy reports, side by side in one run, the top-1
// accuracy of main's predictor (reference_test.go) and of this package's on
// the nested-loop stream of 8 contexts, 50,000 symbols, clean and with 1%,
// 5% and 10% substitutions, insertions and deletions: the mean over three
// noise seeds of the share of symbols the first candidate named. Run it
// with -benchtime 1x: the figures are accuracies, not times.
func BenchmarkNoiseAccuracy(b *testing.B) {
	const seeds = 3
	clean := nestedLoop(50_000)
	for _, kind := range []noiseKind{substitution, insertion, deletion} {
		for _, frac := range []float64{0, 0.01, 0.05, 0.10} {
			if frac == 0 && kind != substitution {
				continue
			}
			name := fmt.Sprintf("%s/%g%%", kind, frac*100)
			if frac == 0 {
				name = "clean"
			}
			b.Run(name, func(b *testing.B) {
				var main, now float64
				for i := 0; i < b.N; i++ {
					main, now = 0, 0
					for seed := int64(1); seed <= seeds; seed++ {
						in := corrupt(clean, kind, frac, 8, seed)
						main += topOne(newRefPredictor(), in) / seeds
						now += topOne(NewPredictor(), in) / seeds
					}
				}
				b.ReportMetric(main, "main")
				b.ReportMetric(now, "now")
			})
		}
	}
}

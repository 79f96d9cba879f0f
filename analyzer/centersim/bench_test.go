package centersim

import (
	"testing"
)

// BenchmarkAIDMonth simulates the aid scenario: a month of 256 OSTs at
// 5 s (133 million OST samples) with its 2,800 jobs, in memory.
func BenchmarkAIDMonth(b *testing.B) {
	s, _ := Preset("aid")
	for b.Loop() {
		res, err := Run(s, Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Samples*s.OSTs)/b.Elapsed().Seconds(), "OST-samples/s")
	}
}

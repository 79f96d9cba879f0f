package iosi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"iopred/analyzer/iosi/wavelet"
)

// synthSamples makes n runs of points log intervals (2 s) of an IOR-like
// application (a 2.5 GB/s burst of 12 intervals every 150) drifting by a
// few intervals from run to run, on a noisy background with a foreign
// burst now and then.
func synthSamples(n, points int, seed uint64) []Sample {
	rng := rand.New(rand.NewPCG(seed, 14))
	out := make([]Sample, n)
	for s := range out {
		w, r := make([]float64, points), make([]float64, points)
		shift := rng.IntN(5)
		for i := range w {
			w[i] = 3e8 * math.Exp(0.5*rng.NormFloat64())
			r[i] = 1e8 * math.Exp(0.5*rng.NormFloat64())
			if k := (i - shift) % 150; i >= shift && k >= 60 && k < 72 {
				w[i] += 2.5e9
			}
		}
		for range points / 500 {
			at := rng.IntN(points)
			for i := at; i < min(at+8, points); i++ {
				r[i] += 1.5e9
			}
		}
		out[s] = Sample{JobID: fmt.Sprint(s), StepS: 2, Write: w, Read: r}
	}
	return out
}

// cpuTime is the process's user and system CPU time: on a loaded
// machine it counts the work, where the wall clock also counts waiting.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs f b.N times and reports its CPU time per call in ms.
func loop(b *testing.B, f func() error) {
	c0 := cpuTime()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkSamples is the cost of one signature against the number of
// runs (2,000 log intervals each), for IOSI and DTW: the paper's Figure
// 19(a).
func BenchmarkSamples(b *testing.B) {
	wavelet.Dmey() // the filter bank is computed once per process
	for _, n := range []int{2, 4, 8, 16, 32} {
		s := synthSamples(n, 2000, 1)
		b.Run(fmt.Sprintf("iosi/runs=%d", n), func(b *testing.B) {
			loop(b, func() error { _, err := Extract(s, Default()); return err })
		})
		b.Run(fmt.Sprintf("dtw/runs=%d", n), func(b *testing.B) {
			loop(b, func() error { _, err := ExtractDTW(s, Default()); return err })
		})
	}
}

// BenchmarkPoints is the cost of one signature of 8 runs against their
// length, 1k to 64k log intervals for IOSI and 1k to 4k for DTW, whose
// cost is quadratic: the paper's Figure 19(b).
func BenchmarkPoints(b *testing.B) {
	wavelet.Dmey()
	for _, p := range []int{1000, 2000, 4000, 8000, 16000, 32000, 64000} {
		s := synthSamples(8, p, 2)
		b.Run(fmt.Sprintf("iosi/points=%d", p), func(b *testing.B) {
			loop(b, func() error { _, err := Extract(s, Default()); return err })
		})
		if p > 4000 {
			continue
		}
		b.Run(fmt.Sprintf("dtw/points=%d", p), func(b *testing.B) {
			loop(b, func() error { _, err := ExtractDTW(s, Default()); return err })
		})
	}
}

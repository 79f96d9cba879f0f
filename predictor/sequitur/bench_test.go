package sequitur

import (
	"runtime"
	"sort"
	"testing"
	"time"
)

// benchStream measures Append followed by Candidates per symbol, and
// reports the median over batches of 1000 symbols (ns/symbol) beside the
// mean that ns/op gives.
func benchStream(b *testing.B, in []int) {
	p := NewPredictor()
	// Warm the model with one pass so the benchmark measures the steady
	// state of a long-running process, as the paper's figures do.
	for _, s := range in {
		p.Append(s)
	}
	const batch = 1000
	var batches []float64
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		p.Append(in[i%len(in)])
		_ = p.Candidates()
		if (i+1)%batch == 0 {
			now := time.Now()
			batches = append(batches, float64(now.Sub(start).Nanoseconds())/batch)
			start = now
		}
	}
	b.StopTimer()
	if len(batches) > 0 {
		sort.Float64s(batches)
		b.ReportMetric(batches[len(batches)/2], "median-ns/symbol")
	}
}

// BenchmarkPeriodic: Append+Candidates on the nested-loop stream.
func BenchmarkPeriodic(b *testing.B) { benchStream(b, nestedLoop(1_000_000)) }

// BenchmarkNoisy: Append+Candidates on the nested-loop stream with 5% of
// the symbols replaced at random.
func BenchmarkNoisy(b *testing.B) { benchStream(b, noisy(nestedLoop(1_000_000), 0.05, 8, 1)) }

// BenchmarkMemory reports the model's memory after 1,000,000
// symbols of a periodic program, by MemoryBytes and by the runtime's heap
// measurement (live heap after GC, minus the input stream).
func BenchmarkMemory(b *testing.B) {
	in := nestedLoop(1_000_000)
	var p *Predictor
	var est, heap float64
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p = NewPredictor()
		for _, s := range in {
			p.Append(s)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		est = float64(p.MemoryBytes())
		heap = float64(after.HeapAlloc) - float64(before.HeapAlloc)
	}
	runtime.KeepAlive(p)
	b.ReportMetric(est, "MemoryBytes")
	b.ReportMetric(heap, "heap-bytes")
}

// BenchmarkAppendRun measures Append alone, main's predictor (reference
// copy) beside this package's, on the streams the preload library's
// consumer sees for a loop over one call: a long run of one symbol (the
// calling context, or write's sequential offsets) and a cycle of 255
// equal symbols and another one (pwrite's offsets over 256 blocks).
func BenchmarkAppendRun(b *testing.B) {
	type appender interface{ Append(int) }
	for _, period := range []int{256, 0} {
		name := "cycle256"
		if period == 0 {
			name = "run"
		}
		sym := func(i int) int {
			if period > 0 && i%period == 0 {
				return 1
			}
			return 0
		}
		for _, impl := range []string{"main", "now"} {
			b.Run(name+"/"+impl, func(b *testing.B) {
				var p appender = NewPredictor()
				if impl == "main" {
					p = newRefPredictor()
				}
				const warm = 1 << 16
				for i := 0; i < warm; i++ {
					p.Append(sym(i))
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					p.Append(sym(warm + i))
				}
			})
		}
	}
}

package predictor

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"iopred/tracefmt"
)

// benchStream is the length of the pre-built streams the benchmarks cycle
// through.
const benchStream = 1 << 18

// benchObservePredict measures Observe followed by Predict(1), the work the
// library does per intercepted call when an application asks for
// predictions, and reports the median over batches of 256 events.
func benchObservePredict(b *testing.B, events []*tracefmt.Event) {
	m := New(Options{})
	// Warm up: the goal concerns the steady state of a long run.
	for _, e := range events[:len(events)/4] {
		m.Observe(e)
		m.Predict(1)
	}
	const batch = 256
	var perEvent []float64
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		m.Observe(events[i%len(events)])
		m.Predict(1)
		if i%batch == batch-1 {
			now := time.Now()
			perEvent = append(perEvent, float64(now.Sub(start).Nanoseconds())/batch)
			start = now
		}
	}
	b.StopTimer()
	if len(perEvent) > 0 {
		slices.Sort(perEvent)
		b.ReportMetric(perEvent[len(perEvent)/2], "median-ns/event")
	}
	b.ReportMetric(float64(m.MemoryBytes()), "model-bytes")
}

// BenchmarkObservePredictPeriodic: goal at most 1 us median per event.
func BenchmarkObservePredictPeriodic(b *testing.B) {
	benchObservePredict(b, periodicStream(benchStream))
}

// BenchmarkObservePredictNoisy: the periodic stream with 5% of its
// contexts replaced at random; goal at most 1 us median per event.
func BenchmarkObservePredictNoisy(b *testing.B) {
	benchObservePredict(b, noisyStream(benchStream, 0.05, 1))
}

// BenchmarkObservePredictHDF5 is the HDF5-like checkpoint loop with an
// interleaved log.
func BenchmarkObservePredictHDF5(b *testing.B) {
	events, _ := hdf5Run(benchStream/40, 3, 8)
	benchObservePredict(b, events)
}

// BenchmarkMemoryPeriodic1M feeds 1,000,000 events of a periodic program
// and reports the model's heap, measured and estimated; goal at most
// 1 MiB. It fails when the measured heap passes the goal.
func BenchmarkMemoryPeriodic1M(b *testing.B) {
	events := periodicStream(1_000_000)
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := New(Options{})
		for _, e := range events {
			m.Observe(e)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		b.ReportMetric(float64(heap), "heap-bytes")
		b.ReportMetric(float64(m.MemoryBytes()), "estimated-bytes")
		if heap > 1<<20 {
			b.Errorf("model heap after 1,000,000 periodic events: %d bytes, goal at most %d", heap, 1<<20)
		}
		runtime.KeepAlive(m)
	}
}

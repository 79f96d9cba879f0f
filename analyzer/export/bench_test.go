package export

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"iopred/tracefmt"
)

// bigTrace writes a trace of n events to dir: a checkpoint loop of 4 KiB
// pwrites over 8 files from 4 threads and contexts, with an open and a
// close around every 64 writes.
func bigTrace(b *testing.B, dir string, n int) string {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("big.n.%d%s", n, tracefmt.FileSuffix))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	rank := 0
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/bin/big", Host: "n", PID: 1, Rank: &rank, StartUnixNs: 1.7e18}, tracefmt.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := uint32(1); i <= 8; i++ {
		w.File(tracefmt.File{ID: i, Path: fmt.Sprintf("/scratch/ckpt.%d", i)})
	}
	for c := uint64(1); c <= 3; c++ {
		w.Context(tracefmt.Context{ID: c, Frames: []tracefmt.Frame{{Module: "/bin/big", Offset: c}}})
	}
	t := int64(0)
	for i := 0; i < n; i++ {
		file := uint32(i/64%8 + 1)
		tid := int32(1 + i/64%4)
		e := tracefmt.Event{FileID: file, Tid: tid, StartNs: t, EndNs: t + 800}
		switch i % 66 {
		case 0:
			e.Op, e.Ctx, e.Offset = "open", 1, tracefmt.NoOffset
		case 65:
			e.Op, e.Ctx, e.Offset = "close", 3, tracefmt.NoOffset
		default:
			e.Op, e.Ctx, e.Offset, e.Size, e.Ret, e.Bytes = "pwrite", 2, int64(i%66-1)*4096, 4096, 4096, 4096
		}
		if err := w.Event(&e); err != nil {
			b.Fatal(err)
		}
		t += 1000
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit", EndNs: t}); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// heapWatch discards what is written and samples the heap (live objects
// and garbage not yet collected) at every MiB written: the peak shows
// whether the export holds the trace or streams it.
type heapWatch struct {
	n, next int64
	peak    uint64
}

func (h *heapWatch) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	if h.n >= h.next {
		h.next = h.n + 1<<20
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		h.peak = max(h.peak, m.HeapAlloc)
	}
	return len(p), nil
}

// BenchmarkExport exports traces of 250,000 and 1,000,000 events in both
// formats (Perfetto with and without the predictor). It reports events
// per second and the peak live heap, which stays flat as the trace grows.
func BenchmarkExport(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{250_000, 1_000_000} {
		trace := bigTrace(b, dir, n)
		for _, c := range []struct {
			name string
			run  func(io.Writer) (Stats, error)
		}{
			{"perfetto", func(w io.Writer) (Stats, error) {
				return Perfetto(w, []string{trace}, PerfettoOptions{Predict: true})
			}},
			{"perfetto-nopredict", func(w io.Writer) (Stats, error) { return Perfetto(w, []string{trace}, PerfettoOptions{}) }},
			{"parquet", func(w io.Writer) (Stats, error) { return Parquet(w, []string{trace}, ParquetOptions{}) }},
		} {
			b.Run(fmt.Sprintf("%s/%d", c.name, n), func(b *testing.B) {
				var peak uint64
				var out int64
				for b.Loop() {
					runtime.GC()
					h := &heapWatch{}
					st, err := c.run(h)
					if err != nil || st.Events != uint64(n) {
						b.Fatalf("%v, %d events", err, st.Events)
					}
					peak = max(peak, h.peak)
					out = h.n
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(out)/float64(n), "bytes/event")
			})
		}
	}
}

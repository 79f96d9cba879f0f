package tracefmt

import (
	"bytes"
	"io"
	"testing"
)

// loopEvents returns the events of the synthetic loop workload with their
// context and file definitions written to w.
func loopEvents(tb testing.TB, w *Writer, n int) []*Event {
	var evs []*Event
	for _, r := range loopRecords(n, 1) {
		switch {
		case r.ctx != nil:
			if err := w.Context(*r.ctx); err != nil {
				tb.Fatal(err)
			}
		case r.file != nil:
			if err := w.File(*r.file); err != nil {
				tb.Fatal(err)
			}
		case r.event != nil:
			evs = append(evs, r.event)
		}
	}
	return evs
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkWriterEvent measures Writer.Event on the loop workload,
// compression of the frames included, and reports the compressed size per
// event (goal: at most 8 bytes).
func BenchmarkWriterEvent(b *testing.B) {
	out := &countingWriter{}
	w, err := NewWriter(out, testHeader(), WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	evs := loopEvents(b, w, 100000)
	start := out.n
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.Event(evs[i%len(evs)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(out.n-start)/float64(b.N), "bytes/event")
}

// BenchmarkTraceSize reports the compressed bytes per event of one fixed
// trace of 1,000,000 loop events at the default frame size, independent of
// b.N.
func BenchmarkTraceSize(b *testing.B) {
	recs := loopRecords(1_000_000, 1)
	var size int
	for i := 0; i < b.N; i++ {
		size = len(writeTrace(b, testHeader(), WriterOptions{}, recs))
	}
	b.ReportMetric(float64(size)/float64(len(recs)), "bytes/event")
}

// BenchmarkReaderNext measures Reader.Next over a trace of loop events.
func BenchmarkReaderNext(b *testing.B) {
	const n = 200000
	data := writeTrace(b, testHeader(), WriterOptions{}, loopRecords(n, 1))
	b.SetBytes(int64(len(data)) / n)
	b.ReportAllocs()
	b.ResetTimer()
	var r *Reader
	var err error
	for i := 0; i < b.N; i++ {
		if i%n == 0 {
			b.StopTimer()
			if r != nil {
				r.Close()
			}
			if r, err = NewReader(bytes.NewReader(data), "bench"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if _, err := r.Next(); err != nil && err != io.EOF {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDecodePaths reads one trace of 200,000 loop events to its end
// with the general line parser (scanLine, encoding/json for the rest),
// with the fast event scanner, and with the fast scanner and shared
// events (ReuseEvents): the three side by side in one run.
func BenchmarkDecodePaths(b *testing.B) {
	const n = 200000
	data := writeTrace(b, testHeader(), WriterOptions{}, loopRecords(n, 1))
	for _, path := range []struct {
		name           string
		general, reuse bool
	}{{"general", true, false}, {"fast", false, false}, {"fast-reuse", false, true}} {
		b.Run(path.name, func(b *testing.B) {
			b.ReportAllocs()
			events := 0
			for i := 0; i < b.N; i++ {
				r, err := NewReader(bytes.NewReader(data), "bench")
				if err != nil {
					b.Fatal(err)
				}
				r.generalOnly = path.general
				if path.reuse {
					r.ReuseEvents()
				}
				if err := r.Each(func(rec Record) error {
					if rec.Event != nil {
						events++
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

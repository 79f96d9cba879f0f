package predictor

import (
	"io"
	"testing"

	"iopred/tracefmt"
)

// callStream is what the preload library's consumer sees when a program
// loops over one call from one place (preload/bench's calls.c): write1 is
// write(fd, buf, 1) appending to a file, pwrite4k is pwrite of 4 KiB at
// offsets cycling over 256 blocks.
func callStream(kind string, n int) []tracefmt.Event {
	evs := make([]tracefmt.Event, n)
	for i := range evs {
		e := &evs[i]
		start := int64(i) * 1400
		*e = tracefmt.Event{Layer: tracefmt.LayerPOSIX, FileID: 1, Path: "/dev/shm/iopred-bench",
			StartNs: start, EndNs: start + 1000, Tid: 4242, Ctx: 0x1234567}
		switch kind {
		case "write1":
			e.Op, e.Offset, e.Size, e.Ret, e.Bytes = "write", int64(i), 1, 1, 1
		case "pwrite4k":
			e.Op, e.Offset, e.Size, e.Ret, e.Bytes = "pwrite", int64(i%256)*4096, 4096, 4096, 4096
		}
	}
	return evs
}

// BenchmarkConsumer measures the consumer thread's Go work per event:
// the model's Observe, and the trace writer's Event (model=off), as the
// library runs them for the calls of preload/bench's BenchmarkCallOverhead.
func BenchmarkConsumer(b *testing.B) {
	for _, kind := range []string{"write1", "pwrite4k"} {
		evs := callStream(kind, 1<<16)
		b.Run(kind+"/observe", func(b *testing.B) {
			m := New(Options{})
			for i := range evs {
				m.Observe(&evs[i])
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Observe(&evs[i&(len(evs)-1)])
			}
		})
		b.Run(kind+"/trace", func(b *testing.B) {
			w, err := tracefmt.NewWriter(io.Discard, tracefmt.Header{}, tracefmt.WriterOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if err := w.File(tracefmt.File{ID: 1, Path: evs[0].Path}); err != nil {
				b.Fatal(err)
			}
			if err := w.Context(tracefmt.Context{ID: evs[0].Ctx}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e := &evs[i&(len(evs)-1)]
				if err := w.Event(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package bench

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"iopred/predictor"
	"iopred/tracefmt"
)

// recordedStream is a trace the library recorded from a real program,
// decoded: what its consumer thread turned into the model and the trace.
type recordedStream struct {
	name     string
	contexts []tracefmt.Context
	files    []tracefmt.File
	events   []tracefmt.Event
}

// recordedStreams reads the traces committed under analyzer/centersim
// (fio, LAMMPS, and rank 0 of the 4-rank IOR-like MPI-IO job), or those
// named by IOPRED_BENCH_STREAMS (trace files, separated by the path list
// separator).
func recordedStreams(tb testing.TB) []recordedStream {
	paths := filepath.SplitList(os.Getenv("IOPRED_BENCH_STREAMS"))
	if len(paths) == 0 {
		root := filepath.Join(repoRoot(tb), "analyzer", "centersim", "traces")
		for _, pat := range []string{"fio/*.iopred.zst", "lammps/*.iopred.zst", "ior/*.r0.iopred.zst"} {
			m, _ := filepath.Glob(filepath.Join(root, pat))
			paths = append(paths, m...)
		}
	}
	if len(paths) == 0 {
		tb.Fatal("no recorded traces found")
	}
	var out []recordedStream
	for _, p := range paths {
		s := recordedStream{name: filepath.Base(filepath.Dir(p))}
		if _, err := tracefmt.ReadAll(p, func(r tracefmt.Record) error {
			switch {
			case r.Context != nil:
				s.contexts = append(s.contexts, *r.Context)
			case r.File != nil:
				s.files = append(s.files, *r.File)
			case r.Event != nil:
				s.events = append(s.events, *r.Event)
			}
			return nil
		}); err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		out = append(out, s)
	}
	return out
}

// BenchmarkRecordedStreams runs the consumer thread's Go work per event on
// real programs' recorded streams: the model's Observe, then the trace
// writer's Event with its frames' compression, as the library does for each
// event it drains. Each iteration feeds the whole stream again to the same
// model and writer, shifted in time after the previous copy, as a program
// that runs its workload again: the steady state, without the model's and
// the encoder's creation. Under callgrind it gives the consumer's
// instructions per event on those streams:
//
//	go test -c -o /tmp/bench.test ./preload/bench
//	GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1 valgrind --tool=callgrind \
//	    /tmp/bench.test -test.run '^$' -test.bench 'RecordedStreams/lammps$' -test.benchtime 4x
//
// (the difference between -test.benchtime 8x and 4x, over 4 times the
// stream's events).
func BenchmarkRecordedStreams(b *testing.B) {
	for _, s := range recordedStreams(b) {
		b.Run(s.name, func(b *testing.B) {
			m := predictor.New(predictor.Options{})
			w, err := tracefmt.NewWriter(io.Discard, tracefmt.Header{}, tracefmt.WriterOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range s.contexts {
				if err := w.Context(c); err != nil {
					b.Fatal(err)
				}
			}
			for _, f := range s.files {
				if err := w.File(f); err != nil {
					b.Fatal(err)
				}
			}
			var span int64
			for _, e := range s.events {
				span = max(span, e.EndNs+1)
			}
			evs := make([]tracefmt.Event, len(s.events))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				shift := int64(i) * span
				for j := range s.events {
					e := &evs[j]
					*e = s.events[j]
					e.StartNs += shift
					e.EndNs += shift
					if err := w.Event(e); err != nil {
						b.Fatal(err)
					}
					m.Observe(e)
				}
			}
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(s.events)), "ns/event")
			b.ReportMetric(float64(len(s.events)), "events")
		})
	}
}

package export

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"iopred/analyzer/synth"
	"iopred/tracefmt"
)

// Perfetto writes the same document and counts the same figures whatever
// Jobs: the job's traces (MPI-IO, a fork, a cut trace), a synthetic job
// whose traces are larger than a chunk, with and without the predictor's
// guesses, DFTracer traces with regions (whose count the parallel path
// once dropped); and a trace that cannot be opened stops the export at the
// same point.
func TestPerfettoJobsIdentical(t *testing.T) {
	_, traces := jobTraces(t)
	dir := t.TempDir()
	syn, err := synth.WriteTraces(dir, synth.Config{Iterations: 4, ComputeMean: 1, Phase: synth.Burst(5, 200, 1<<16, 1e8, true),
		NoiseRate: 500, NoiseBytes: 4096, NoiseBandwidth: 1e6, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad"+tracefmt.FileSuffix)
	os.WriteFile(bad, []byte("no trace"), 0o644)
	withBad := append(append(append([]string(nil), syn[:2]...), bad), syn[2:]...)
	for _, c := range []struct {
		name    string
		traces  []string
		predict bool
	}{{"job", traces, true}, {"synthetic", syn, false}, {"synthetic-predict", syn, true}, {"unreadable", withBad, false},
		{"dftracer-regions", dftracerTraces(t), false}} {
		var want bytes.Buffer
		wantSt, wantErr := Perfetto(&want, c.traces, PerfettoOptions{Predict: c.predict, Command: "x"})
		if c.name == "synthetic" && want.Len() < 1<<20 {
			t.Fatalf("%s: a %d-byte document does not span chunks", c.name, want.Len())
		}
		if (c.name == "unreadable") != (wantErr != nil) {
			t.Fatalf("%s: error %v", c.name, wantErr)
		}
		for _, jobs := range []int{2, 3, 8} {
			var got bytes.Buffer
			st, err := Perfetto(&got, c.traces, PerfettoOptions{Predict: c.predict, Command: "x", Jobs: jobs})
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s: jobs %d: the document differs (%d bytes, want %d)", c.name, jobs, got.Len(), want.Len())
			}
			if !reflect.DeepEqual(st, wantSt) || (err == nil) != (wantErr == nil) {
				t.Errorf("%s: jobs %d: stats %+v, error %v; want %+v, %v", c.name, jobs, st, err, wantSt, wantErr)
			}
		}
	}
}

// dftracerTraces are DFTracer traces whose regions (functions, epochs,
// steps) the export counts apart from the calls.
func dftracerTraces(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "tracefmt", "dftracer", "testdata")
	traces, err := tracefmt.Discover(filepath.Join(dir, "v2-8100.pfw"), filepath.Join(dir, "pool-1.0-7000.pfw"))
	if err != nil || len(traces) < 2 {
		t.Fatalf("DFTracer traces: %v (%d)", err, len(traces))
	}
	return traces
}

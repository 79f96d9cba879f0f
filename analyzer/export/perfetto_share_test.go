package export

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"iopred/analyzer/synth"
	"iopred/internal/mpi"
	"iopred/tracefmt"
)

// The parts of every split of a job's traces into consecutive shares
// (empty ones included), each rendered on its own, sent through the wire
// form and written in order, make the document and the figures Perfetto
// makes of the whole job, byte for byte: MPI-IO traces with a fork and a
// cut trace, a synthetic job with the predictor's guesses, DFTracer
// regions. A trace that cannot be opened fails the share that holds it,
// and parts out of order are refused.
func TestPerfettoSharesIdentical(t *testing.T) {
	_, job := jobTraces(t)
	syn, err := synth.WriteTraces(t.TempDir(), synth.Config{Iterations: 3, ComputeMean: 1, Phase: synth.Burst(3, 50, 1<<14, 1e8, true),
		NoiseRate: 200, NoiseBytes: 4096, NoiseBandwidth: 1e6, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		traces  []string
		predict bool
	}{{"job", job, true}, {"synthetic-predict", syn, true}, {"dftracer-regions", dftracerTraces(t), false}} {
		opt := PerfettoOptions{Predict: c.predict, Command: "iopred export x"}
		var want bytes.Buffer
		wantSt, err := Perfetto(&want, c.traces, opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, shares := range []int{1, 2, 3, 4, len(c.traces) + 2} {
			for _, jobs := range []int{1, 2} {
				opt.Jobs = jobs
				parts := make([]*PerfettoPart, shares)
				for r := range shares {
					lo, hi := mpi.Block(len(c.traces), r, shares)
					pp, err := PerfettoShare(c.traces, lo, hi, opt)
					if err != nil {
						t.Fatalf("%s: share %d of %d: %v", c.name, r, shares, err)
					}
					b, err := pp.Encode()
					if err != nil {
						t.Fatal(err)
					}
					if parts[r], err = DecodePerfettoPart(b); err != nil {
						t.Fatal(err)
					}
				}
				var got bytes.Buffer
				st, err := WritePerfettoParts(&got, parts, opt)
				if err != nil {
					t.Fatalf("%s: %d shares: %v", c.name, shares, err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Errorf("%s: %d shares, jobs %d: the document differs (%d bytes, want %d)", c.name, shares, jobs, got.Len(), want.Len())
				}
				if !reflect.DeepEqual(st, wantSt) {
					t.Errorf("%s: %d shares, jobs %d: stats %+v, want %+v", c.name, shares, jobs, st, wantSt)
				}
				if shares > 1 {
					swapped := append([]*PerfettoPart{parts[1], parts[0]}, parts[2:]...)
					if _, err := WritePerfettoParts(&bytes.Buffer{}, swapped, opt); err == nil && parts[0].Traces > 0 {
						t.Errorf("%s: parts out of order were written", c.name)
					}
				}
			}
		}
	}
	bad := filepath.Join(t.TempDir(), "bad"+tracefmt.FileSuffix)
	os.WriteFile(bad, []byte("no trace"), 0o644)
	withBad := append(append([]string(nil), syn...), bad)
	if _, err := PerfettoShare(withBad, 0, 1, PerfettoOptions{}); err == nil || !bytes.Contains([]byte(err.Error()), []byte(bad)) {
		t.Errorf("a share of a job with an unreadable trace: error %v, want one naming %s", err, bad)
	}
	if _, err := DecodePerfettoPart([]byte{0x85, 0xa5}); err == nil {
		t.Error("a cut part was decoded")
	}
}

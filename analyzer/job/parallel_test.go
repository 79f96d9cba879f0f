package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"iopred/analyzer/synth"
	"iopred/tracefmt"
)

// FromTracesWith gives the same summary, warnings and error whatever Jobs,
// for ranked traces (with the models' accuracy), for traces taken as
// processes, and with a corrupt trace among them: the JSON is compared
// byte for byte.
func TestFromTracesJobsIdentical(t *testing.T) {
	dir := t.TempDir()
	traces, err := synth.WriteTraces(dir, synth.Config{Iterations: 5, ComputeMean: 1, Phase: synth.Burst(6, 10, 1<<16, 1e8, true),
		NoiseRate: 300, NoiseBytes: 4096, NoiseBandwidth: 1e6, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad"+tracefmt.FileSuffix)
	os.WriteFile(bad, []byte("no trace"), 0o644)
	cases := []struct {
		name   string
		traces []string
		opt    Options
	}{
		{"ranks", traces, Options{}},
		{"ranks-no-accuracy", traces, Options{NoAccuracy: true, AllPaths: true}},
		{"processes", traces, Options{Processes: true}},
		{"corrupt", append(append([]string{}, traces...), bad), Options{}},
	}
	for _, c := range cases {
		var want string
		for _, jobs := range []int{1, 2, 4, 16} {
			c.opt.Jobs = jobs
			sum, warnings, err := FromTracesWith(c.traces, c.opt)
			if sum == nil {
				t.Fatalf("%s: jobs %d: %v", c.name, jobs, err)
			}
			b, jerr := json.Marshal(sum)
			if jerr != nil {
				t.Fatal(jerr)
			}
			got := fmt.Sprintf("%s\n%q\n%v", b, warnings, err)
			if jobs == 1 {
				want = got
				if sum.Ranks != len(traces) {
					t.Fatalf("%s: %d ranks, want %d", c.name, sum.Ranks, len(traces))
				}
				continue
			}
			if !bytes.Equal([]byte(got), []byte(want)) {
				t.Errorf("%s: jobs %d differs from jobs 1:\n%s\nwant\n%s", c.name, jobs, got, want)
			}
		}
	}
}

// rankPartial skips the model's replay for a trace whose final footer
// says no model ran, and gives exactly the partial of the full replay:
// for traces with and without a model, killed, and corrupt in the middle
// (where the reading stops before that footer).
func TestRankPartialSkipsReplayExactly(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, model bool, footer bool) string {
		path := filepath.Join(dir, name+tracefmt.FileSuffix)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rank := 3
		w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/opt/app", PID: 9, Rank: &rank, StartUnixNs: 1e18}, tracefmt.WriterOptions{FrameBytes: 3000})
		if err != nil {
			t.Fatal(err)
		}
		w.Context(tracefmt.Context{ID: 5, Frames: []tracefmt.Frame{{Module: "/opt/app", Offset: 1}}})
		w.Context(tracefmt.Context{ID: 6, Frames: []tracefmt.Frame{{Module: "/opt/app", Offset: 2}}})
		w.File(tracefmt.File{ID: 1, Path: "/d/out"})
		for i := range 3000 {
			ctx := uint64(5 + i%2)
			if err := w.Event(&tracefmt.Event{Op: "pwrite", FileID: 1, Offset: int64(i) * 4096, Size: 4096, Ret: 4096, Bytes: 4096,
				StartNs: int64(i) * 1000, EndNs: int64(i)*1000 + 500, Ctx: ctx}); err != nil {
				t.Fatal(err)
			}
		}
		var m map[string]any
		if model {
			m = map[string]any{"events": 3000}
		}
		if footer {
			err = w.Close(tracefmt.Footer{Reason: "exit", EndNs: 4e6, Model: m})
		} else {
			err = w.Flush()
		}
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	corrupt := func(path string) string {
		b, _ := os.ReadFile(path)
		b[len(b)/2] ^= 0x55
		out := path + ".bad" + tracefmt.FileSuffix
		os.WriteFile(out, b, 0o644)
		return out
	}
	noModel := write("nomodel", false, true)
	model := write("model", true, true)
	for _, path := range []string{noModel, model, write("killed", true, false), corrupt(noModel), corrupt(model)} {
		p, rank, mpi, err := rankPartial(path, -1, defaultFilter, true)
		q, qrank, qmpi, qerr := readRank(path, -1, defaultFilter, true)
		if !reflect.DeepEqual(p, q) || rank != qrank || mpi != qmpi || fmt.Sprint(err) != fmt.Sprint(qerr) {
			t.Errorf("%s: partial %+v, %v; the full replay gives %+v, %v", filepath.Base(path), p, err, q, qerr)
		}
	}
	// The accuracy is there exactly when the footer names a model.
	if p, _, _, _ := rankPartial(model, -1, defaultFilter, true); p.Accuracy[0] < 0 {
		t.Errorf("a trace with a model has no accuracy: %v", p.Accuracy)
	}
	if p, _, _, _ := rankPartial(noModel, -1, defaultFilter, true); p.Accuracy[0] >= 0 {
		t.Errorf("a trace without a model has an accuracy: %v", p.Accuracy)
	}
}

// coarsen in place gives bit for bit the bins of a coarsening into a
// fresh slice, for even and odd first indexes and any length.
func TestCoarsenInPlace(t *testing.T) {
	for first := int64(0); first < 5; first++ {
		for n := 1; n < 40; n++ {
			h := Histogram{WidthNs: MinBinNs, First: first}
			for i := range n {
				h.Bins = append(h.Bins, 0.1*float64(i*i%7)+1e-3*float64(i))
			}
			lo := h.First / 2
			want := make([]float64, (h.First+int64(n)-1)/2-lo+1)
			for i, v := range h.Bins {
				want[(h.First+int64(i))/2-lo] += v
			}
			h.coarsen()
			if h.First != lo || h.WidthNs != 2*MinBinNs || !reflect.DeepEqual(h.Bins, want) {
				t.Fatalf("first %d, %d bins: got %v at %d, want %v at %d", first, n, h.Bins, h.First, want, lo)
			}
		}
	}
}

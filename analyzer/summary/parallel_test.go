package summary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"testing"

	"iopred/analyzer/synth"
	"iopred/tracefmt"
)

// digestObserver records everything an Observer is shown, in order, as a
// hash: two runs that show the same records in the same order agree.
type digestObserver struct {
	log bytes.Buffer
}

func (d *digestObserver) Begin(proc int, trace string, h tracefmt.Header) {
	fmt.Fprintf(&d.log, "B %d %s %d\n", proc, trace, h.PID)
}

func (d *digestObserver) Event(e *tracefmt.Event, dir tracefmt.Direction) {
	d.log.Write(e.AppendJSON(nil))
	fmt.Fprintf(&d.log, " %d\n", dir)
}

func (d *digestObserver) End(p *Process) {
	fmt.Fprintf(&d.log, "E %s %d %q\n", p.Trace, p.Events, p.Problem)
}

func (d *digestObserver) sum() uint64 {
	h := fnv.New64a()
	h.Write(d.log.Bytes())
	return h.Sum64()
}

// parallelTraceSet writes traces of every kind Summarize meets: a
// synthetic MPI job whose traces span many read batches, processes with
// contexts and a failed call, one killed before its footer, MPI ranks
// with excluded system files, and a file that is no trace at all.
func parallelTraceSet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := synth.WriteTraces(dir, synth.Config{Iterations: 6, ComputeMean: 2, Phase: synth.Burst(5, 20, 1<<16, 1e8, true),
		NoiseRate: 2000, NoiseBytes: 4096, NoiseBandwidth: 1e6, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o755)
	writeProc(t, other, 101, 3000, true)
	writeProc(t, other, 102, 50, false)
	writeMPIProc(t, other, 0, 1_000_000)
	writeMPIProc(t, other, 1, 2_000_000)
	os.WriteFile(filepath.Join(other, "zz"+tracefmt.FileSuffix), []byte("this is no trace at all"), 0o644)
	return dir
}

// Summarize gives the same report, the same error and shows its Observer
// the same records in the same order whatever Jobs: the JSON is compared
// byte for byte.
func TestSummarizeJobsIdentical(t *testing.T) {
	dir := parallelTraceSet(t)
	for _, sub := range []string{dir, filepath.Join(dir, "other")} {
		traces, err := tracefmt.Discover(sub)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		var wantErr string
		var wantLog uint64
		for _, jobs := range []int{1, 2, 4, 64} {
			obs := &digestObserver{}
			rep, err := Summarize(traces, Options{Top: 5, Observer: obs, Jobs: jobs})
			if rep == nil {
				t.Fatalf("jobs %d: %v", jobs, err)
			}
			got, jerr := json.MarshalIndent(rep, "", " ")
			if jerr != nil {
				t.Fatal(jerr)
			}
			errText := fmt.Sprint(err)
			if jobs == 1 {
				want, wantErr, wantLog = got, errText, obs.sum()
				var events uint64
				for _, p := range rep.Processes {
					events += p.Events
				}
				if sub == dir && events < 3*batchRecords {
					t.Fatalf("%s: %d events: too few to span read batches", sub, events)
				}
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: --jobs %d: report differs from --jobs 1:\n%s\nwant\n%s", sub, jobs, got, want)
			}
			if errText != wantErr {
				t.Errorf("%s: jobs %d: error %q, want %q", sub, jobs, errText, wantErr)
			}
			if obs.sum() != wantLog {
				t.Errorf("%s: jobs %d: the observer saw other records or another order", sub, jobs)
			}
		}
	}
}

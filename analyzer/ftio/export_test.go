package ftio

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// TestWriteJSONLines proves an export in FTIO's JSON lines is read back
// (by the FTIO reader that also reads TMIO's files) as the same requests:
// FTIO's analysis of the export and of the trace agree in every figure
// printed, for reads and writes.
func TestWriteJSONLines(t *testing.T) {
	trace := "../../tests/periodcorpus/runs/ckpt2"
	out := filepath.Join(t.TempDir(), "ckpt2.jsonl")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	st, err := WriteJSONLines(f, []string{trace})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if format, err := tracefmt.IsFTIOFile(out); err != nil || format == "" {
		t.Fatalf("the export is not FTIO input: %q %v", format, err)
	}
	// FTIO itself (v0.0.9) casts every line's number_of_ranks to an
	// integer and fails without it.
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec map[string]struct {
			Ranks *int `json:"number_of_ranks"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for mode, r := range rec {
			if r.Ranks == nil || *r.Ranks < 1 {
				t.Errorf("line %d (%s): number_of_ranks %v, want at least 1", i+1, mode, r.Ranks)
			}
		}
	}
	if st.Writes != 30 {
		t.Errorf("%d write requests, want the run's 30 checkpoints of one write", st.Writes)
	}
	for _, mode := range []Mode{ModeWrite, ModeBoth} {
		a, err := AnalyzeFiles([]string{trace}, mode, Options{Fs: 50})
		if err != nil {
			t.Fatal(err)
		}
		b, err := AnalyzeFiles([]string{out}, mode, Options{Fs: 50})
		if err != nil {
			t.Fatal(err)
		}
		if a.NSamples != b.NSamples || a.TStart != b.TStart || a.Confidence != b.Confidence || (a.PeriodS == nil) != (b.PeriodS == nil) ||
			(a.PeriodS != nil && *a.PeriodS != *b.PeriodS) || a.SampledVolume != b.SampledVolume {
			t.Errorf("%s: trace %d samples from %g, period %v, confidence %g; export %d from %g, %v, %g",
				mode, a.NSamples, a.TStart, a.PeriodS, a.Confidence, b.NSamples, b.TStart, b.PeriodS, b.Confidence)
		}
	}
}

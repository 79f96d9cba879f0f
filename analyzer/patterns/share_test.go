package patterns

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"iopred/analyzer/synth"
	"iopred/tracefmt"
)

// The report built from shares of the traces (ReadShare, each share
// through its wire form, Combine) is Analyze's, byte for byte in JSON,
// for every split, with a truncated trace and a file that is no trace
// among them.
func TestCombineSharesIdentical(t *testing.T) {
	dir := t.TempDir()
	traces, err := synth.WriteTraces(dir, synth.Config{Iterations: 4, ComputeMean: 1, Phase: synth.Burst(5, 12, 1<<16, 1e8, true),
		NoiseRate: 200, NoiseBytes: 4096, NoiseBandwidth: 1e6, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(traces[2])
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut"+tracefmt.FileSuffix)
	os.WriteFile(cut, b[:len(b)/2], 0o644)
	bad := filepath.Join(dir, "zz"+tracefmt.FileSuffix)
	os.WriteFile(bad, []byte("no trace"), 0o644)
	traces = append(traces, cut, bad)
	rep, wantErr := Analyze(traces, 0)
	if len(rep.Files) == 0 || len(rep.Warnings) != 2 {
		t.Fatalf("%d files, warnings %q: the set checks too little", len(rep.Files), rep.Warnings)
	}
	want, _ := json.Marshal(rep)
	for _, k := range []int{1, 2, 3, len(traces) + 1} {
		var shares []*Share
		for r := range k {
			sh := ReadShare(traces, r*len(traces)/k, (r+1)*len(traces)/k, 0, 2)
			enc, err := sh.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if sh, err = DecodeShare(enc); err != nil {
				t.Fatal(err)
			}
			shares = append(shares, sh)
		}
		rep, err := Combine(traces, shares)
		got, _ := json.Marshal(rep)
		if !bytes.Equal(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%d shares: report or error (%v, want %v) differs:\n%.1500s\nwant\n%.1500s", k, err, wantErr, got, want)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// writeStridedReadTrace writes, with the tracefmt writer, one process
// reading 4 KiB records 64 KiB apart.
func writeStridedReadTrace(t *testing.T, dir string, pid int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := tracefmt.NewWriter(&buf, tracefmt.Header{Program: "/bin/r", Host: "h", PID: pid}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.File(tracefmt.File{ID: 3, Path: "/data/x"})
	for i := int64(0); i < 400; i++ {
		if err := w.Event(&tracefmt.Event{Op: "pread64", FileID: 3, Offset: i * 65536, Size: 4096, Ret: 4096, Bytes: 4096, StartNs: i, EndNs: i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "r.h."+string(rune('0'+pid))+tracefmt.FileSuffix), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// `replay --prefetch --json RUN1 RUN2` trains on the first run and scores
// the predictors on the second; the hook is what replay calls.
func TestPrefetchReplayJSON(t *testing.T) {
	if prefetchReplay == nil {
		t.Fatal("prefetchReplay hook not set")
	}
	dir := t.TempDir()
	run1, run2 := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Mkdir(run1, 0o755)
	os.Mkdir(run2, 0o755)
	writeStridedReadTrace(t, run1, 1)
	writeStridedReadTrace(t, run2, 2)
	var out, errOut bytes.Buffer
	if err := prefetchReplay([]string{"--prefetch", "--json", run1, run2}, &out, &errOut); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	var rep struct {
		Mode    string `json:"mode"`
		Results []struct {
			Predictor         string  `json:"predictor"`
			Reads             int64   `json:"reads"`
			PredictedFraction float64 `json:"predicted_fraction"`
			UnusedFraction    float64 `json:"unused_fraction"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if rep.Mode != "runs" || len(rep.Results) != 4 || rep.Results[0].Predictor != "pattern" || rep.Results[0].Reads != 400 {
		t.Fatalf("report %+v", rep)
	}
	if rep.Results[0].PredictedFraction < 0.95 {
		t.Fatalf("pattern predicted %.3f", rep.Results[0].PredictedFraction)
	}
	out.Reset()
	if err := prefetchReplay([]string{"--prefetch", run2}, &out, &errOut); err != nil || !strings.Contains(out.String(), "first half") {
		t.Fatalf("one run: %v\n%s", err, out.String())
	}
	if err := prefetchReplay([]string{"--prefetch"}, &out, &errOut); err != errUsage {
		t.Fatalf("no traces: %v, want usage error", err)
	}
}

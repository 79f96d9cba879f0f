package summary

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// writePrefetchProc writes a trace whose footer carries prefetch counters
// (nil: a run without prefetching).
func writePrefetchProc(t *testing.T, dir string, pid int, p *tracefmt.Prefetch) string {
	t.Helper()
	path := filepath.Join(dir, "reader.host."+itoa(pid)+tracefmt.FileSuffix)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/opt/reader", Host: "host", PID: pid}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.File(tracefmt.File{ID: 1, Path: "/d/data"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Event(&tracefmt.Event{Op: "pread", FileID: 1, Offset: 0, Size: 65536, Ret: 65536, Bytes: 65536, StartNs: 10, EndNs: 20}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit", EndNs: 100, Events: 1, Prefetch: p}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPrefetchCounters: the footers' prefetch counters reach the report,
// per process and summed over the processes that prefetched, in JSON and
// in the text; a job without prefetching shows no prefetch section.
func TestPrefetchCounters(t *testing.T) {
	dir := t.TempDir()
	a := &tracefmt.Prefetch{Reads: 100, Covered: 90, PrefetchedBytes: 1000, UsedBytes: 900, WastedBytes: 100, Calls: 95, Misses: 2}
	b := &tracefmt.Prefetch{Reads: 50, Covered: 10, PrefetchedBytes: 3000, UsedBytes: 2700, WastedBytes: 300, Calls: 12, TableFiles: 1}
	traces := []string{writePrefetchProc(t, dir, 1, a), writePrefetchProc(t, dir, 2, b), writePrefetchProc(t, dir, 3, nil)}
	rep, err := Summarize(traces, Options{Top: 5, AllPaths: true})
	if err != nil {
		t.Fatal(err)
	}
	want := tracefmt.Prefetch{Reads: 150, Covered: 100, PrefetchedBytes: 4000, UsedBytes: 3600, WastedBytes: 400, Calls: 107, Misses: 2, TableFiles: 1}
	if rep.Prefetch == nil || *rep.Prefetch != want {
		t.Fatalf("total %+v, want %+v", rep.Prefetch, want)
	}
	byPID := map[int]*tracefmt.Prefetch{}
	for _, p := range rep.Processes {
		byPID[p.PID] = p.Prefetch
	}
	if byPID[1] == nil || *byPID[1] != *a || byPID[2] == nil || *byPID[2] != *b || byPID[3] != nil {
		t.Errorf("per process: %+v %+v %+v", byPID[1], byPID[2], byPID[3])
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Prefetch tracefmt.Prefetch `json:"prefetch"`
	}
	if err := json.Unmarshal(js, &back); err != nil || back.Prefetch != want {
		t.Errorf("JSON prefetch %+v (%v), want %+v", back.Prefetch, err, want)
	}
	var text bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"PREFETCH", "90 (90.0%)", "(all)", "100 (66.7%)", "400 B (10.0%)"} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, text.String())
		}
	}

	none, err := Summarize(traces[2:], Options{Top: 5, AllPaths: true})
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	if err := WriteText(&text, none); err != nil {
		t.Fatal(err)
	}
	if none.Prefetch != nil || strings.Contains(text.String(), "PREFETCH") {
		t.Errorf("a job without prefetching reports some: %+v\n%s", none.Prefetch, text.String())
	}
}

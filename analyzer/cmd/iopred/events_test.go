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

// writeEventsTrace writes a trace of n pwrites of 512 bytes, one close and
// (when footer) a footer; it returns the path.
func writeEventsTrace(t *testing.T, dir string, n int, footer bool) string {
	t.Helper()
	path := filepath.Join(dir, "prog.h.9"+tracefmt.FileSuffix)
	var buf bytes.Buffer
	rank := 4
	w, err := tracefmt.NewWriter(&buf, tracefmt.Header{Program: "/bin/prog", Host: "h", PID: 9, Rank: &rank},
		tracefmt.WriterOptions{FrameBytes: 400})
	if err != nil {
		t.Fatal(err)
	}
	w.Context(tracefmt.Context{ID: 555, Frames: []tracefmt.Frame{{Module: "/bin/prog", Offset: 0x42, Function: "main"}}})
	w.File(tracefmt.File{ID: 3, Path: "/data/out.bin"})
	for i := 0; i < n; i++ {
		if err := w.Event(&tracefmt.Event{Op: "pwrite", FileID: 3, Offset: int64(i) * 512, Size: 512, Ret: 512, Bytes: 512,
			StartNs: int64(i) * 100, EndNs: int64(i)*100 + 40, Tid: 9, Ctx: 555}); err != nil {
			t.Fatal(err)
		}
	}
	w.Event(&tracefmt.Event{Op: "close", FileID: 3, Offset: tracefmt.NoOffset, StartNs: int64(n) * 100, EndNs: int64(n)*100 + 5, Tid: 9, Errno: 9, Ret: -1})
	if footer {
		w.Close(tracefmt.Footer{Reason: "exit"})
	} else {
		w.Flush()
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEventsCommand(t *testing.T) {
	// Every event comes out as one JSON object with the contract's fields;
	// offset is null for NoOffset; the filters select by op and path.
	path := writeEventsTrace(t, t.TempDir(), 20, true)
	var out, errb bytes.Buffer
	if code := runMain([]string{"events", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 21 {
		t.Fatalf("%d lines, want 21", len(lines))
	}
	var first, last map[string]any
	json.Unmarshal([]byte(lines[1]), &first)
	json.Unmarshal([]byte(lines[20]), &last)
	want := map[string]any{"layer": "posix", "op": "pwrite", "path": "/data/out.bin", "offset": 512.0, "size": 512.0,
		"ret": 512.0, "bytes": 512.0, "start_ns": 100.0, "end_ns": 140.0, "tid": 9.0, "rank": 4.0, "ctx": 555.0,
		"errno": 0.0, "pid": 9.0, "file_id": 3.0}
	for k, v := range want {
		if first[k] != v {
			t.Errorf("field %s = %v, want %v", k, first[k], v)
		}
	}
	if last["offset"] != nil || last["errno"] != 9.0 || last["op"] != "close" {
		t.Errorf("close event %v", last)
	}
	out.Reset()
	if code := runMain([]string{"events", path, "--op", "close"}, &out, &errb); code != 0 || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("--op close: exit %d, output %q", code, out.String())
	}
	out.Reset()
	if code := runMain([]string{"events", "--path", "*.txt", path}, &out, &errb); code != 0 || out.Len() != 0 {
		t.Errorf("--path *.txt: exit %d, output %q", code, out.String())
	}
	out.Reset()
	if code := runMain([]string{"events", "--path", "out.*", path}, &out, &errb); code != 0 || strings.Count(out.String(), "\n") != 21 {
		t.Errorf("--path out.*: exit %d, %d lines", code, strings.Count(out.String(), "\n"))
	}
}

func TestEventsTruncated(t *testing.T) {
	// A trace cut inside a frame of events: every event of the complete
	// frames is printed, then the truncation is reported and the status
	// is 1. (No footer: the cut must fall in a frame that holds events,
	// not in the footer's own frame, however many lines a frame holds.)
	dir := t.TempDir()
	path := writeEventsTrace(t, dir, 200, false)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-10], 0o644)
	var out, errb bytes.Buffer
	code := runMain([]string{"events", path}, &out, &errb)
	n := strings.Count(out.String(), "\n")
	if code != 1 || !strings.Contains(errb.String(), "truncated trace at byte") || n == 0 || n >= 201 {
		t.Fatalf("exit %d, %d events, stderr %q", code, n, errb.String())
	}
	// The events printed are exactly those the reader returns before its error.
	r, _ := tracefmt.Open(path)
	defer r.Close()
	want := 0
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Event != nil {
			want++
		}
	}
	if n != want {
		t.Errorf("printed %d events, the reader has %d", n, want)
	}
}

func TestSummaryAndContextsCommands(t *testing.T) {
	// summary --json and contexts --json print what the trace holds; a
	// trace without footer is a warning for summary (status 0).
	dir := t.TempDir()
	writeEventsTrace(t, dir, 30, false)
	var out, errb bytes.Buffer
	if code := runMain([]string{"summary", "--json", dir}, &out, &errb); code != 0 {
		t.Fatalf("summary exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "warning") {
		t.Errorf("no warning for a trace without footer: %q", errb.String())
	}
	var rep struct {
		Processes []struct {
			Events       int   `json:"events"`
			BytesWritten int64 `json:"bytes_written"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Processes) != 1 || rep.Processes[0].Events != 31 || rep.Processes[0].BytesWritten != 30*512 {
		t.Fatalf("summary %v: %s", err, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := runMain([]string{"summary", dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "/data/out.bin") {
		t.Fatalf("summary text: exit %d\n%s", code, out.String())
	}
	out.Reset()
	path := writeEventsTrace(t, t.TempDir(), 7, true)
	if code := runMain([]string{"contexts", "--json", path}, &out, &errb); code != 0 {
		t.Fatalf("contexts exit %d: %s", code, errb.String())
	}
	var ctxs []struct {
		ID     uint64 `json:"id"`
		Events int    `json:"events"`
		Frames []struct {
			Function string `json:"fn"`
		} `json:"frames"`
	}
	if err := json.Unmarshal(out.Bytes(), &ctxs); err != nil || len(ctxs) != 1 || ctxs[0].ID != 555 || ctxs[0].Events != 7 || ctxs[0].Frames[0].Function != "main" {
		t.Fatalf("contexts %v: %s", err, out.String())
	}
	if code := runMain([]string{"contexts"}, &out, &errb); code != 2 {
		t.Errorf("contexts without a trace: exit %d, want 2", code)
	}
}

// TestEventsRegions proves that `iopred events` prints the regions of a
// DFTracer trace (layer "region", op its name, cat its category, its
// arguments, its process and parent) in the trace's order among the
// calls, that --op selects them by name, and that --path, which names
// files, leaves them out.
func TestEventsRegions(t *testing.T) {
	path := filepath.Join("..", "..", "..", "tracefmt", "dftracer", "testdata", "v2-8100.pfw")
	for _, c := range []struct {
		name  string
		args  []string
		lines []string // op per line
	}{
		{"all", nil, []string{"epoch", "open64", "read", "step", "read", "read", "close"}},
		{"by op", []string{"--op", "step,close"}, []string{"step", "close"}},
		{"by path", []string{"--path", "*.npz"}, []string{"open64", "read", "read", "read", "close"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := runMain(append([]string{"events", path}, c.args...), &out, &errb); code != 0 {
				t.Fatalf("status %d: %s", code, errb.String())
			}
			var ops []string
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var e struct {
					Layer, Op, Cat string
					StartNs        int64 `json:"start_ns"`
					EndNs          int64 `json:"end_ns"`
					PID, PPID, Tid int
					Args           map[string]string
				}
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				ops = append(ops, e.Op)
				if e.Op == "step" && (e.Layer != "region" || e.Cat != "PyTorch" || e.StartNs != 1_300_000 || e.EndNs != 2_200_000 ||
					e.PID != 8100 || e.PPID != 8000 || e.Tid != 8100 || e.Args["step"] != "1") {
					t.Errorf("step: %s", line)
				}
			}
			if strings.Join(ops, " ") != strings.Join(c.lines, " ") {
				t.Errorf("ops %v, want %v", ops, c.lines)
			}
		})
	}
}

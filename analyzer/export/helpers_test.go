package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"iopred/analyzer/summary"
	"iopred/tracefmt"
)

// writeTrace writes a trace of events to dir and returns its path; cut
// removes that many bytes from its end (a killed process).
func writeTrace(t *testing.T, dir string, h tracefmt.Header, files []tracefmt.File, events []tracefmt.Event, procs []tracefmt.Proc, cut int) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := tracefmt.NewWriter(&buf, h, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := w.File(f); err != nil {
			t.Fatal(err)
		}
	}
	ctxs := map[uint64]bool{}
	for i := range events {
		if c := events[i].Ctx; c != 0 && !ctxs[c] {
			ctxs[c] = true
			if err := w.Context(tracefmt.Context{ID: c, Frames: []tracefmt.Frame{{Module: "/bin/app", Offset: c}}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Event(&events[i]); err != nil {
			t.Fatal(err)
		}
		if i == len(events)/2 {
			// A second frame, so that a cut can keep the first whole.
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range procs {
		if err := w.Proc(p); err != nil {
			t.Fatal(err)
		}
	}
	last := int64(0)
	if len(events) > 0 {
		last = events[len(events)-1].EndNs
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit", EndNs: last + 10}); err != nil {
		t.Fatal(err)
	}
	rank := "x"
	if h.Rank != nil {
		rank = fmt.Sprint(*h.Rank)
	}
	path := filepath.Join(dir, fmt.Sprintf("app.node.%d.r%s%s", h.PID, rank, tracefmt.FileSuffix))
	if err := os.WriteFile(path, buf.Bytes()[:buf.Len()-cut], 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// jobTraces writes two ranks of a small MPI-IO job, 1 ms apart, and a
// process without rank whose trace is cut short:
//   - rank 0: a collective write whose two pwrites ROMIO made inside it,
//     a nonblocking read completed by MPI_Wait, a stat without offset, two
//     threads, a fork;
//   - rank 1: the same collective write, a failed open of a path that is
//     not UTF-8 and holds a quote;
//   - the third: a write and an fwrite, and a frame lost at its end.
func jobTraces(t *testing.T) (dir string, traces []string) {
	t.Helper()
	dir = t.TempDir()
	r0, r1 := 0, 1
	const t0 = int64(1_700_000_000_000_000_000)
	data := tracefmt.File{ID: 1, Path: "/scratch/ckpt.dat"}
	odd := tracefmt.File{ID: 2, Path: "/scratch/bad\xff\"name"}
	log := tracefmt.File{ID: 3, Path: "/scratch/log.txt"}
	rank0 := []tracefmt.Event{
		{Op: "MPI_File_write_at_all", FileID: 1, Offset: 0, Size: 8192, Ret: 0, Bytes: 8192, Seq: 1, StartNs: 1000, EndNs: 9000, Tid: 100, Ctx: 7},
		{Op: "pwrite", FileID: 1, Offset: 0, Size: 4096, Ret: 4096, Bytes: 4096, Parent: 1, StartNs: 2000, EndNs: 3000, Tid: 100, Ctx: 8},
		{Op: "pwrite", FileID: 1, Offset: 4096, Size: 4096, Ret: 4096, Bytes: 4096, Parent: 1, StartNs: 4000, EndNs: 8000, Tid: 100, Ctx: 8},
		{Op: "MPI_File_iread_at", FileID: 1, Offset: 0, Size: 100, Seq: 2, StartNs: 10000, EndNs: 10500, Tid: 100, Ctx: 9},
		{Op: "pread", FileID: 1, Offset: 0, Size: 100, Ret: 100, Bytes: 100, StartNs: 10100, EndNs: 10200, Tid: 101, Ctx: 10},
		{Op: "MPI_Wait", FileID: 1, Offset: 0, Bytes: 100, Parent: 2, StartNs: 11000, EndNs: 12000, Tid: 100, Ctx: 11},
		{Op: "stat", FileID: 1, Offset: tracefmt.NoOffset, StartNs: 13000, EndNs: 13001, Tid: 101, Ctx: 12},
	}
	rank1 := []tracefmt.Event{
		{Op: "MPI_File_write_at_all", FileID: 1, Offset: 8192, Size: 8192, Ret: 0, Bytes: 8192, Seq: 1, StartNs: 500, EndNs: 7000, Tid: 200, Ctx: 7},
		{Op: "open", FileID: 2, Offset: tracefmt.NoOffset, Ret: -1, Errno: 2, StartNs: 7100, EndNs: 7200, Tid: 200, Ctx: 13},
	}
	plain := []tracefmt.Event{
		{Op: "write", FileID: 3, Offset: 0, Size: 10, Ret: 10, Bytes: 10, StartNs: 100, EndNs: 200, Tid: 300},
		{Op: "fwrite", FileID: 3, Offset: 10, Size: 20, Ret: 1, Bytes: 20, StartNs: 300, EndNs: 400, Tid: 300},
		{Op: "write", FileID: 3, Offset: 30, Size: 10, Ret: 10, Bytes: 10, StartNs: 500, EndNs: 600, Tid: 300},
		{Op: "write", FileID: 3, Offset: 40, Size: 10, Ret: 10, Bytes: 10, StartNs: 700, EndNs: 800, Tid: 300},
	}
	traces = []string{
		writeTrace(t, dir, tracefmt.Header{Program: "/bin/ior", Host: "n1", PID: 100, Rank: &r0, StartUnixNs: t0 + 1e6}, []tracefmt.File{data}, rank0,
			[]tracefmt.Proc{{Op: "fork", TimeNs: 12500, Child: 555}}, 0),
		writeTrace(t, dir, tracefmt.Header{Program: "/bin/ior", Host: "n2", PID: 100, Rank: &r1, StartUnixNs: t0}, []tracefmt.File{data, odd}, rank1, nil, 0),
		writeTrace(t, dir, tracefmt.Header{Program: "/bin/logger", Host: "n1", PID: 300, StartUnixNs: t0 + 2e6}, []tracefmt.File{log}, plain, nil, 30),
	}
	sort.Strings(traces)
	return dir, traces
}

// summaryCounts is what `iopred summary --all-paths` counts over traces:
// events, bytes read and bytes written.
func summaryCounts(t *testing.T, traces []string) (events uint64, read, written int64) {
	t.Helper()
	rep, _ := summary.Summarize(traces, summary.Options{AllPaths: true})
	if rep == nil {
		t.Fatal("no summary")
	}
	for _, p := range rep.Processes {
		events += p.Events
		read += p.BytesRead
		written += p.BytesWritten
	}
	return
}

// traceEvent is one event of a Chrome trace-event document, as a reader
// of the format sees it.
type traceEvent struct {
	Ph   string          `json:"ph"`
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Pid  *int64          `json:"pid"`
	Tid  *int64          `json:"tid"`
	Ts   json.Number     `json:"ts"`
	Dur  json.Number     `json:"dur"`
	S    string          `json:"s"`
	Args json.RawMessage `json:"args"`
}

// nanos reads a time in microseconds, written to the nanosecond, as
// integer nanoseconds (floats would blur the nesting at the last digit);
// -1 when absent or not such a number.
func nanos(n json.Number) int64 {
	s := string(n)
	if s == "" {
		return -1
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 3 {
		return -1
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return -1
	}
	f := int64(0)
	if frac != "" {
		if f, err = strconv.ParseInt((frac + "00")[:3], 10, 64); err != nil {
			return -1
		}
	}
	return w*1000 + f
}

// checkTraceEvents decodes doc as a Chrome trace-event document and
// checks the format's rules: every event has a phase iopred writes, a
// name, a pid and a tid; slices and instants have a time, slices a
// duration, at or after the job's start; every process and every thread
// that has slices is named by a metadata event; on each track the slices
// nest (one that starts inside another ends inside it). It returns the
// events by phase.
func checkTraceEvents(t *testing.T, doc []byte) map[string][]traceEvent {
	t.Helper()
	var d struct {
		TraceEvents []traceEvent   `json:"traceEvents"`
		Unit        string         `json:"displayTimeUnit"`
		Other       map[string]any `json:"otherData"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if d.Unit != "ns" || d.Other["job_start"] == nil {
		t.Errorf("displayTimeUnit %q, otherData %v", d.Unit, d.Other)
	}
	byPh := map[string][]traceEvent{}
	named := map[string]bool{}
	type track struct{ pid, tid int64 }
	slices := map[track][]traceEvent{}
	for i, e := range d.TraceEvents {
		if e.Name == "" || e.Pid == nil || e.Tid == nil {
			t.Fatalf("event %d: no name, pid or tid: %+v", i, e)
		}
		byPh[e.Ph] = append(byPh[e.Ph], e)
		switch e.Ph {
		case "M":
			var a struct {
				Name      *string `json:"name"`
				SortIndex *int64  `json:"sort_index"`
			}
			if err := json.Unmarshal(e.Args, &a); err != nil || (a.Name == nil && a.SortIndex == nil) {
				t.Errorf("metadata event %d: args %s", i, e.Args)
			}
			named[fmt.Sprint(e.Name, *e.Pid, *e.Tid)] = true
		case "X":
			if nanos(e.Ts) < 0 || nanos(e.Dur) < 0 {
				t.Fatalf("slice %d: ts %q dur %q", i, e.Ts, e.Dur)
			}
			slices[track{*e.Pid, *e.Tid}] = append(slices[track{*e.Pid, *e.Tid}], e)
		case "i":
			if nanos(e.Ts) < 0 || (e.S != "t" && e.S != "p") {
				t.Fatalf("instant %d: ts %v scope %q", i, e.Ts, e.S)
			}
		default:
			t.Fatalf("event %d: phase %q", i, e.Ph)
		}
	}
	for tr, ss := range slices {
		if !named[fmt.Sprint("process_name", tr.pid, 0)] || !named[fmt.Sprint("thread_name", tr.pid, tr.tid)] {
			t.Errorf("track %v: process or thread not named", tr)
		}
		sort.SliceStable(ss, func(i, j int) bool {
			if a, b := nanos(ss[i].Ts), nanos(ss[j].Ts); a != b {
				return a < b
			}
			return nanos(ss[i].Dur) > nanos(ss[j].Dur)
		})
		var open []int64 // ends of the enclosing slices
		for _, s := range ss {
			ts := nanos(s.Ts)
			for len(open) > 0 && open[len(open)-1] <= ts {
				open = open[:len(open)-1]
			}
			end := ts + nanos(s.Dur)
			if len(open) > 0 && end > open[len(open)-1] {
				t.Errorf("track %v: %s at %d ns ends at %d ns, after its enclosing slice's end %d ns", tr, s.Name, ts, end, open[len(open)-1])
			}
			open = append(open, end)
		}
	}
	return byPh
}

// checkLayers compares an export's per-layer views with the summary's
// (every path kept): each layer's calls and bytes.
func checkLayers(t *testing.T, traces []string, st Stats) {
	t.Helper()
	rep, _ := summary.Summarize(traces, summary.Options{AllPaths: true})
	if rep == nil {
		t.Fatal("no summary")
	}
	if len(rep.Layers) != len(st.Layers) {
		t.Errorf("layers: export %v, summary %+v", st.Layers, rep.Layers)
	}
	for _, l := range rep.Layers {
		g := st.Layers[l.Layer]
		if g == nil || g.BytesRead != l.BytesRead || g.BytesWritten != l.BytesWritten || g.Calls != l.Calls {
			t.Errorf("layer %s: export %+v, summary %+v", l.Layer, g, l.LayerIO)
		}
	}
}

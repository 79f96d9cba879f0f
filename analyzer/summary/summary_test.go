package summary

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"iopred/tracefmt"
)

// writeProc writes a trace of n iterations of (write 4096 at ctx 101 on
// /d/shared, read 100 at ctx 102 on /d/own-<pid>) and returns its path.
// Without footer the trace ends as a killed process leaves it.
func writeProc(t *testing.T, dir string, pid, n int, footer bool) string {
	t.Helper()
	path := filepath.Join(dir, "app.host."+itoa(pid)+tracefmt.FileSuffix)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rank := pid - 100
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/opt/app", Host: "host", PID: pid, Rank: &rank}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Context(tracefmt.Context{ID: 101, Frames: []tracefmt.Frame{
		{Module: "/usr/lib/x86_64-linux-gnu/libc.so.6", Offset: 0x10, Function: "write"},
		{Module: "/opt/app", Offset: 0x1234, Function: "dump"},
		{Module: "/opt/app", Offset: 0x99, Function: "main"}}}))
	must(w.Context(tracefmt.Context{ID: 102, Frames: []tracefmt.Frame{{Module: "/opt/app", Offset: 0x500}}}))
	must(w.File(tracefmt.File{ID: 1, Path: "/d/shared"}))
	must(w.File(tracefmt.File{ID: 2, Path: "/d/own-" + itoa(pid)}))
	now := int64(0)
	for i := 0; i < n; i++ {
		must(w.Event(&tracefmt.Event{Op: "write", FileID: 1, Offset: int64(i) * 4096, Size: 4096, Ret: 4096, Bytes: 4096, StartNs: now, EndNs: now + 1000, Ctx: 101}))
		must(w.Event(&tracefmt.Event{Op: "read", FileID: 2, Offset: 0, Size: 100, Ret: 100, Bytes: 100, StartNs: now + 2000, EndNs: now + 2500, Ctx: 102}))
		now += 3000
	}
	must(w.Event(&tracefmt.Event{Op: "unlink", Offset: tracefmt.NoOffset, Ret: -1, Errno: 2, StartNs: now, EndNs: now + 10}))
	if footer {
		must(w.Close(tracefmt.Footer{Reason: "exit", EndNs: now + 100, Events: uint64(2*n + 1)}))
	} else {
		must(w.Flush())
	}
	return path
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestSummarize(t *testing.T) {
	// Two processes: the per-process, per-file and per-context figures are
	// the sums of the events each trace holds.
	dir := t.TempDir()
	a := writeProc(t, dir, 101, 10, true)
	b := writeProc(t, dir, 102, 5, false) // killed: no footer
	traces, err := tracefmt.Discover(dir)
	if err != nil || len(traces) != 2 || traces[0] != a || traces[1] != b {
		t.Fatalf("Discover: %v %v", traces, err)
	}
	rep, err := Summarize(traces, Options{Top: 10})
	if err != nil {
		t.Fatalf("a truncated trace must not be an error: %v", err)
	}
	p := rep.Processes
	if len(p) != 2 || p[0].Events != 21 || p[1].Events != 11 || p[0].PID != 101 || *p[1].Rank != 2 {
		t.Fatalf("processes %+v", p)
	}
	if p[0].BytesWritten != 10*4096 || p[0].BytesRead != 10*100 || p[0].IONs != 10*1500+10 || p[0].Errors != 1 {
		t.Errorf("process 0 figures %+v", p[0])
	}
	if !p[0].Complete || p[0].DurationNs != 30100 || p[0].Problem != "" {
		t.Errorf("process 0 completion %+v", p[0])
	}
	if p[1].Complete || !strings.Contains(p[1].Problem, "without a footer") || p[1].DurationNs != 15010 {
		t.Errorf("process 1 should be flagged as truncated: %+v", p[1])
	}
	byPath := map[string]FileStats{}
	for _, f := range rep.Files {
		byPath[f.Path] = f
	}
	if s := byPath["/d/shared"]; s.Processes != 2 || s.Calls["write"] != 15 || s.BytesWritten != 15*4096 || s.IONs != 15*1000 {
		t.Errorf("shared file %+v", s)
	}
	if s := byPath["/d/own-101"]; s.Processes != 1 || s.Calls["read"] != 10 || s.BytesRead != 1000 {
		t.Errorf("own file %+v", s)
	}
	if s := byPath[""]; s.Calls["unlink"] != 2 {
		t.Errorf("calls without a file %+v", s)
	}
	if len(rep.Contexts) != 2 || rep.Contexts[0].ID != 101 || rep.Contexts[0].Events != 15 || rep.Contexts[0].Processes != 2 {
		t.Fatalf("contexts %+v", rep.Contexts)
	}
	if w := rep.Contexts[0].Where; w != "app+0x1234 (dump)" {
		t.Errorf("innermost application frame %q, want the app's dump, not libc", w)
	}
	if top, _ := Summarize(traces, Options{Top: 1}); len(top.Contexts) != 1 {
		t.Errorf("top 1 kept %d contexts", len(top.Contexts))
	}
	var out bytes.Buffer
	if err := WriteText(&out, rep); err != nil {
		t.Fatal(err)
	}
	// The traces carry ranks 1 and 2: the job view covers ranks 0 to 2,
	// rank 0 missing, and the killed rank 2 with what its trace holds.
	if j := rep.Job; j == nil || j.Ranks != 3 || j.Counts.Writes != 15 || j.Counts.Reads != 15 {
		t.Errorf("job view %+v", j)
	}
	if len(rep.JobWarnings) != 2 || !strings.Contains(strings.Join(rep.JobWarnings, "\n"), "no trace of rank 0") {
		t.Errorf("job warnings %q: want the missing rank and the truncated trace", rep.JobWarnings)
	}
	for _, want := range []string{"app", "40.0 KiB", "/d/shared", "write=15", "app+0x1234 (dump)", "without a footer",
		"JOB", "3 ranks", "15 writes (60.0 KiB)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSummarizeCorrupt(t *testing.T) {
	// A foreign file among the traces makes Summarize return a FormatError,
	// and the good traces are still summarised.
	dir := t.TempDir()
	writeProc(t, dir, 101, 3, true)
	bad := filepath.Join(dir, "zz"+tracefmt.FileSuffix)
	os.WriteFile(bad, []byte("this is no trace at all"), 0o644)
	traces, _ := tracefmt.Discover(dir)
	rep, err := Summarize(traces, Options{Top: 10})
	var fe *tracefmt.FormatError
	if !errors.As(err, &fe) || fe.File != bad {
		t.Fatalf("err %v, want a FormatError naming %s", err, bad)
	}
	if len(rep.Processes) != 2 || rep.Processes[0].Events != 7 || rep.Processes[1].Problem == "" {
		t.Fatalf("processes %+v", rep.Processes)
	}
}

func TestContexts(t *testing.T) {
	// The context table counts the events of each context, most used first.
	dir := t.TempDir()
	path := writeProc(t, dir, 101, 4, true)
	ctxs, err := Contexts(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ctxs) != 2 || ctxs[0].Events != 4 || ctxs[1].Events != 4 || ctxs[0].ID != 101 || len(ctxs[0].Frames) != 3 {
		t.Fatalf("%+v", ctxs)
	}
	var out bytes.Buffer
	WriteContextsText(&out, ctxs)
	if !strings.Contains(out.String(), "context 101: 4 events") || !strings.Contains(out.String(), "#1  app+0x1234 (dump)  /opt/app") {
		t.Errorf("text:\n%s", out.String())
	}
}

func TestInnermostAppFrame(t *testing.T) {
	// System and runtime libraries are skipped; when nothing else remains
	// the innermost frame is kept.
	libc := tracefmt.Frame{Module: "/lib/x86_64-linux-gnu/libc.so.6", Offset: 1}
	app := tracefmt.Frame{Module: "/home/u/a.out", Offset: 2}
	mylib := tracefmt.Frame{Module: "/home/u/libio.so", Offset: 3}
	cases := []struct {
		frames []tracefmt.Frame
		want   tracefmt.Frame
	}{
		{[]tracefmt.Frame{libc, mylib, app}, mylib},
		{[]tracefmt.Frame{libc, app}, app},
		{[]tracefmt.Frame{libc}, libc},
		{nil, tracefmt.Frame{}},
	}
	for i, c := range cases {
		if got := InnermostAppFrame(c.frames); got != c.want {
			t.Errorf("case %d: %+v, want %+v", i, got, c.want)
		}
	}
}

func TestCopyFileRangeCountsBothFiles(t *testing.T) {
	// copy_file_range reads the event's file and writes the file in Aux:
	// the summary counts the bytes on both sides.
	dir := t.TempDir()
	path := filepath.Join(dir, "cp.h.1"+tracefmt.FileSuffix)
	f, _ := os.Create(path)
	w, _ := tracefmt.NewWriter(f, tracefmt.Header{Program: "/bin/cp", PID: 1}, tracefmt.WriterOptions{})
	w.File(tracefmt.File{ID: 1, Path: "/src"})
	w.File(tracefmt.File{ID: 2, Path: "/dst"})
	if err := w.Event(&tracefmt.Event{Op: "copy_file_range", FileID: 1, Offset: 0, Size: 1 << 30, Ret: 700, Bytes: 700, Aux: 2, StartNs: 1, EndNs: 2}); err != nil {
		t.Fatal(err)
	}
	w.Close(tracefmt.Footer{Reason: "exit"})
	f.Close()
	rep, err := Summarize([]string{path}, Options{Top: 10})
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]FileStats{}
	for _, f := range rep.Files {
		byPath[f.Path] = f
	}
	if byPath["/src"].BytesRead != 700 || byPath["/dst"].BytesWritten != 700 || rep.Processes[0].BytesRead != 700 || rep.Processes[0].BytesWritten != 700 {
		t.Fatalf("files %+v, process %+v", rep.Files, rep.Processes[0])
	}
	// The per-layer view agrees: the copy's write is a POSIX write.
	if l := rep.Processes[0].Layers["posix"]; l == nil || l.BytesRead != 700 || l.BytesWritten != 700 || l.Calls != 1 {
		t.Errorf("process layers %+v", rep.Processes[0].Layers["posix"])
	}
	if l := byPath["/dst"].Layers["posix"]; l == nil || l.BytesWritten != 700 || l.Calls != 0 {
		t.Errorf("/dst layers %+v", byPath["/dst"].Layers["posix"])
	}
}

// writeMPIProc writes the trace of an MPI rank started startUnixNs: MPI_Init
// (500 us) reading /proc/cpuinfo and opening an Open MPI session file
// inside it, one 4 KiB write of its own and one read of /etc/hosts (20
// us each), MPI_Finalize (300 us).
func writeMPIProc(t *testing.T, dir string, rank int, startUnixNs int64) string {
	t.Helper()
	path := filepath.Join(dir, "mpi.host."+itoa(100+rank)+".r"+itoa(rank)+tracefmt.FileSuffix)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rank
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/home/u/mpi", Host: "host", PID: 100 + rank, Rank: &r,
		StartUnixNs: startUnixNs}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []uint64{7, 8, 9} {
		must(w.Context(tracefmt.Context{ID: id, Frames: []tracefmt.Frame{{Module: "/home/u/mpi", Offset: id}}}))
	}
	must(w.File(tracefmt.File{ID: 1, Path: "/proc/cpuinfo"}))
	must(w.File(tracefmt.File{ID: 2, Path: "/tmp/ompi.host.0/pid.9/1/x_cid-0-9.sm"}))
	must(w.File(tracefmt.File{ID: 3, Path: "/d/out." + itoa(rank)}))
	must(w.File(tracefmt.File{ID: 4, Path: "/etc/hosts"}))
	must(w.Event(&tracefmt.Event{Op: "read", FileID: 1, Offset: 0, Size: 4096, Ret: 900, Bytes: 900, StartNs: 100, EndNs: 200, Parent: 1}))
	must(w.Event(&tracefmt.Event{Op: "open", FileID: 2, Offset: tracefmt.NoOffset, Ret: 5, StartNs: 300, EndNs: 400, Parent: 1}))
	must(w.Event(&tracefmt.Event{Op: "MPI_Init", Offset: tracefmt.NoOffset, StartNs: 0, EndNs: 500_000, Seq: 1, Ctx: 7}))
	must(w.Event(&tracefmt.Event{Op: "pwrite", FileID: 3, Offset: 0, Size: 4096, Ret: 4096, Bytes: 4096, StartNs: 600_000, EndNs: 620_000, Ctx: 8}))
	must(w.Event(&tracefmt.Event{Op: "read", FileID: 4, Offset: 0, Size: 4096, Ret: 50, Bytes: 50, StartNs: 700_000, EndNs: 720_000}))
	must(w.Event(&tracefmt.Event{Op: "MPI_Finalize", Offset: tracefmt.NoOffset, StartNs: 800_000, EndNs: 1_100_000, Seq: 2, Ctx: 9}))
	must(w.Close(tracefmt.Footer{Reason: "exit", EndNs: 1_200_000, Events: 6}))
	return path
}

// The system's and the MPI runtime's files are left out of the processes,
// files, contexts and job view and counted on one line; MPI_Init and
// MPI_Finalize are start-up and shut-down time, not I/O time; the
// processes' starts count from the earliest, which the text states once
// as a date. With AllPaths the files are kept.
func TestSummarizeExclusionsAndMPI(t *testing.T) {
	dir := t.TempDir()
	const t0 = int64(1_700_000_000_000_000_000)
	traces := []string{writeMPIProc(t, dir, 0, t0+2_000_000), writeMPIProc(t, dir, 1, t0)}
	rep, err := Summarize(traces, Options{Top: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rep.StartUnixNs != t0 || rep.Processes[0].StartNs != 2_000_000 || rep.Processes[1].StartNs != 0 {
		t.Errorf("job start %d, process starts %d %d", rep.StartUnixNs, rep.Processes[0].StartNs, rep.Processes[1].StartNs)
	}
	x := rep.Excluded
	if x.Files != 3 || x.Events != 6 || x.Bytes != 100 || x.ByKind["system"] != 2 || x.ByKind["MPI runtime"] != 1 {
		t.Errorf("excluded %+v: want 3 files (2 system, 1 MPI runtime), 6 calls, the 2 reads of /etc/hosts", x)
	}
	for _, p := range rep.Processes {
		if p.Events != 3 || p.IONs != 20_000 || p.MPIStartNs != 500_000 || p.MPIEndNs != 300_000 || p.BytesRead != 0 {
			t.Errorf("process %+v: want 3 calls, 20 us of I/O, 500 us start-up, 300 us shut-down, nothing read", p)
		}
	}
	if len(rep.Files) != 2 {
		t.Errorf("files %+v: want the two outputs only", rep.Files)
	}
	if len(rep.Contexts) != 1 || rep.Contexts[0].ID != 8 {
		t.Errorf("contexts %+v: want the write's only", rep.Contexts)
	}
	if j := rep.Job; j == nil || j.Counts.Reads != 0 || j.Counts.ExcludedEvents != 6 || j.StartUnixNs != t0 {
		t.Errorf("job view %+v", j)
	}
	var out bytes.Buffer
	if err := WriteText(&out, rep); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"excluded: 3 files, 100 B (6 calls", "2 system, 1 MPI runtime", "--all-paths",
		"MPI START-UP", "500µs", "300µs", "0.002000", "; 6 more on excluded paths"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, time.Unix(0, t0).Format("2006-01-02")); n != 1 {
		t.Errorf("the job's date appears %d times, want once:\n%s", n, text)
	}
	for _, gone := range []string{"/proc", "/etc/hosts", "ompi.host", "MPI_Init", "(no file)"} {
		if strings.Contains(text, gone) {
			t.Errorf("text shows %q:\n%s", gone, text)
		}
	}

	all, err := Summarize(traces, Options{Top: 10, AllPaths: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Files) != 5 || all.Excluded.Files != 0 || all.Processes[0].BytesRead != 50 || all.Job.Counts.Reads != 2 {
		t.Errorf("all paths: %d files, excluded %+v, process %+v", len(all.Files), all.Excluded, all.Processes[0])
	}
	out.Reset()
	WriteText(&out, all)
	if !strings.Contains(out.String(), "excluded: nothing (--all-paths") {
		t.Errorf("all paths text:\n%s", out.String())
	}
}

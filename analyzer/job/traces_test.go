package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// writeRank writes a trace of rank with writes events before the job cut
// and after more after it; mpi adds an MPI_Init event.
func writeRank(t *testing.T, dir, name string, rank, writes, after int, mpi bool) string {
	t.Helper()
	path := filepath.Join(dir, name+tracefmt.FileSuffix)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rank
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/opt/app", PID: 100 + rank, Rank: &r, StartUnixNs: 1e18}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.File(tracefmt.File{ID: 1, Path: "/d/shared"}))
	now := int64(0)
	if mpi {
		must(w.Event(&tracefmt.Event{Op: "MPI_Init", Offset: tracefmt.NoOffset, StartNs: now, EndNs: now + 10}))
	}
	for i := 0; i < writes+after; i++ {
		if i == writes {
			must(w.Proc(tracefmt.Proc{Op: CutOp, TimeNs: now}))
		}
		off := int64(i*4+rank) * 4096
		must(w.Event(&tracefmt.Event{Op: "pwrite", FileID: 1, Offset: off, Size: 4096, Ret: 4096, Bytes: 4096, StartNs: now, EndNs: now + 1000}))
		now += 1e6
	}
	must(w.Close(tracefmt.Footer{Reason: "exit", EndNs: now, Model: map[string]any{"events": writes + after}}))
	return path
}

// Offline, a rank's partial holds the events before its job cut only, the
// ranks' strided writes make one global pattern, and the model replayed
// over them scores every call after the first.
func TestFromTracesCut(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for r := 0; r < 4; r++ {
		paths = append(paths, writeRank(t, dir, "app.r"+itoa(r), r, 20, 7, true))
	}
	s, warnings, err := FromTraces(paths)
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	if s.Ranks != 4 || s.Counts.Writes != 4*20 || s.Counts.MPIIO != 4 {
		t.Fatalf("ranks %d, counts %+v; want 4 ranks of 20 writes before the cut", s.Ranks, s.Counts)
	}
	if len(s.Patterns) != 1 || len(s.Patterns[0].Globals) != 1 || s.Patterns[0].InGlobals != 80 {
		t.Fatalf("patterns %+v", s.Patterns)
	}
	if s.Accuracy.Steps != 4*20 {
		t.Fatalf("%d calls scored, want the 20 after each rank's first", s.Accuracy.Steps)
	}
}

// A missing rank counts as a rank without I/O, with a warning; two traces
// of one rank are an error unless exactly one of them used MPI (a script
// mpirun started, and the program it ran).
func TestFromTracesRanks(t *testing.T) {
	dir := t.TempDir()
	a := writeRank(t, dir, "a0", 0, 3, 0, true)
	c := writeRank(t, dir, "c2", 2, 3, 0, true)
	s, warnings, err := FromTraces([]string{a, c})
	if err != nil || s.Ranks != 3 || len(warnings) != 1 || !strings.Contains(warnings[0], "rank 1") {
		t.Fatalf("ranks 0 and 2: %v, warnings %v, err %v", s, warnings, err)
	}
	script := writeRank(t, dir, "bash0", 0, 1, 0, false)
	s, _, err = FromTraces([]string{script, a, c})
	if err != nil || s.Counts.Writes != 6 {
		t.Fatalf("with the launcher script's trace: %v, %v", s, err)
	}
	twin := writeRank(t, dir, "twin0", 0, 3, 0, true)
	if _, _, err := FromTraces([]string{a, twin}); err == nil || !strings.Contains(err.Error(), "both rank 0") {
		t.Fatalf("two MPI traces of rank 0: err %v", err)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// writePlain writes the trace of a process without a rank: n writes of
// 4096 bytes, one every millisecond, and a read of /etc/hosts.
func writePlain(t *testing.T, dir string, pid, n int) string {
	t.Helper()
	path := filepath.Join(dir, "app.h."+itoa(pid)+tracefmt.FileSuffix)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/opt/app", PID: pid, StartUnixNs: int64(pid) * 1e15}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.File(tracefmt.File{ID: 1, Path: "/d/out"}))
	must(w.File(tracefmt.File{ID: 2, Path: "/etc/hosts"}))
	must(w.Event(&tracefmt.Event{Op: "read", FileID: 2, Offset: 0, Size: 4096, Ret: 200, Bytes: 200, StartNs: 0, EndNs: 10}))
	for i := 0; i < n; i++ {
		must(w.Event(&tracefmt.Event{Op: "write", FileID: 1, Offset: int64(i) * 4096, Size: 4096, Ret: 4096, Bytes: 4096,
			StartNs: int64(i) * 1e6, EndNs: int64(i)*1e6 + 1000}))
	}
	must(w.Close(tracefmt.Footer{Reason: "exit", EndNs: int64(n) * 1e6, Model: map[string]any{"events": n}}))
	return path
}

// Traces without ranks have no job view, unless Processes takes them for
// ranks in the order given; AllPaths keeps the system file's read.
func TestFromTracesProcesses(t *testing.T) {
	dir := t.TempDir()
	paths := []string{writePlain(t, dir, 7, 30), writePlain(t, dir, 5, 10)}
	if _, _, err := FromTraces(paths); err == nil {
		t.Fatal("a job view of traces without ranks")
	}
	s, warnings, err := FromTracesWith(paths, Options{Processes: true})
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	if s.Ranks != 2 || s.Counts.Writes != 40 || s.Counts.Reads != 0 || s.Counts.ExcludedEvents != 2 || s.StartUnixNs != 5e15 {
		t.Errorf("job of 2 processes: ranks %d, counts %+v, start %d", s.Ranks, s.Counts, s.StartUnixNs)
	}
	if s.Counts.MaxIORank != 0 || len(s.Accuracy.PerRank) != 2 || s.Accuracy.PerRank[0] == nil {
		t.Errorf("rank 0 (the first trace, 30 writes) is not the longest in I/O, or no scores: %+v %v", s.Counts, s.Accuracy.PerRank)
	}
	all, _, err := FromTracesWith(paths, Options{Processes: true, AllPaths: true})
	if err != nil || all.Counts.Reads != 2 || all.Counts.ExcludedEvents != 0 {
		t.Errorf("all paths: %v %+v", err, all.Counts)
	}
}

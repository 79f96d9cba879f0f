package summary

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// writeCounters writes a trace of counters records (and, when withEvent,
// one write event) and returns its path.
func writeCounters(t *testing.T, dir, name string, rank *int, withEvent bool, recs ...tracefmt.Counters) string {
	t.Helper()
	path := filepath.Join(dir, name+tracefmt.FileSuffix)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/bin/sim", Rank: rank, Source: "darshan 3.4.7, log format 3.41", JobID: "77", Procs: 8},
		tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]uint32{}
	for _, c := range recs {
		id, ok := ids[c.Path]
		if !ok {
			id = uint32(len(ids) + 1)
			ids[c.Path] = id
			if err := w.File(tracefmt.File{ID: id, Path: c.Path}); err != nil {
				t.Fatal(err)
			}
		}
		c.FileID = id
		if err := w.Counters(&c); err != nil {
			t.Fatal(err)
		}
	}
	if withEvent {
		if err := w.File(tracefmt.File{ID: 99, Path: "/traced"}); err != nil {
			t.Fatal(err)
		}
		if err := w.Event(&tracefmt.Event{Op: "write", FileID: 99, Size: 10, Ret: 10, Bytes: 10, EndNs: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit", EndNs: 3e9}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSummarizeCounters proves the summary of traces that hold counters
// and no event: the module table adds up each layer's records, files and
// calls; a file's and a process's bytes and time are the application's
// (the MPI-IO layer's for a file accessed through MPI-IO, not again the
// POSIX calls beneath; POSIX's and stdio's added otherwise); a file shared
// by every rank counts the job's processes; the notes name the job and
// say that the time-resolved analyses need traced calls; and no job view
// is made of counters.
func TestSummarizeCounters(t *testing.T) {
	dir := t.TempDir()
	r0 := 0
	shared := writeCounters(t, dir, "shared", nil, false,
		tracefmt.Counters{Path: "/out.h5", Layer: tracefmt.LayerMPIIO, Procs: 8, Calls: map[string]uint64{"MPI_File_write_all": 8},
			BytesWritten: 800, WriteNs: 4000, MetaNs: 100},
		tracefmt.Counters{Path: "/out.h5", Layer: tracefmt.LayerPOSIX, Procs: 8, Calls: map[string]uint64{"write": 16, "open": 8},
			BytesWritten: 800, WriteNs: 3000, MetaNs: 50})
	rank0 := writeCounters(t, dir, "r0", &r0, false,
		tracefmt.Counters{Path: "/in.dat", Layer: tracefmt.LayerPOSIX, Calls: map[string]uint64{"read": 3}, BytesRead: 300, ReadNs: 30},
		tracefmt.Counters{Path: "/in.dat", Layer: tracefmt.LayerStdio, Calls: map[string]uint64{"fread": 1}, BytesRead: 20, ReadNs: 2},
		tracefmt.Counters{Path: "<STDOUT>", Layer: tracefmt.LayerStdio, Calls: map[string]uint64{"fwrite": 2}, BytesWritten: 7})
	rep, err := Summarize([]string{rank0, shared}, Options{Top: DefaultTop})
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]ModuleStats{}
	for _, m := range rep.Modules {
		mods[m.Layer] = m
	}
	if len(rep.Modules) != 3 || rep.Modules[0].Layer != "mpiio" {
		t.Fatalf("modules %+v", rep.Modules)
	}
	if p := mods["posix"]; p.Files != 2 || p.Records != 2 || p.BytesRead != 300 || p.BytesWritten != 800 || p.Calls["write"] != 16 || p.WriteNs != 3000 {
		t.Errorf("POSIX module %+v", p)
	}
	if s := mods["stdio"]; s.Files != 2 || s.BytesWritten != 7 || s.BytesRead != 20 {
		t.Errorf("stdio module %+v", s)
	}
	files := map[string]FileStats{}
	for _, f := range rep.Files {
		files[f.Path] = f
	}
	if f := files["/out.h5"]; f.BytesWritten != 800 || f.IONs != 4100 || f.Processes != 8 || f.Calls["write"] != 16 || f.Calls["MPI_File_write_all"] != 8 {
		t.Errorf("/out.h5 %+v", f)
	}
	if f := files["/in.dat"]; f.BytesRead != 320 || f.IONs != 32 || f.Processes != 1 {
		t.Errorf("/in.dat %+v", f)
	}
	if p := rep.Processes[0]; p.BytesRead != 320 || p.BytesWritten != 7 || p.DurationNs != 3e9 {
		t.Errorf("rank 0 %+v", p)
	}
	if p := rep.Processes[1]; p.BytesWritten != 800 || p.IONs != 4100 {
		t.Errorf("shared %+v", p)
	}
	if rep.Job != nil || len(rep.Notes) != 2 || rep.Notes[0] != "job 77, 8 processes (darshan 3.4.7, log format 3.41)" || !strings.Contains(rep.Notes[1], "need a trace of each call") {
		t.Errorf("job %v, notes %q", rep.Job, rep.Notes)
	}
	var text bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MODULE", "mpiio   1      1        0 B", "MPI_File_write_all=8", "note: job 77"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// TestSummarizeCountersWithEvents proves that when some trace has events,
// the file and process tables come from the events alone (counters do not
// add to them) while the module table still adds up the counters.
func TestSummarizeCountersWithEvents(t *testing.T) {
	dir := t.TempDir()
	r0 := 0
	p := writeCounters(t, dir, "r0", &r0, true,
		tracefmt.Counters{Path: "/traced", Layer: tracefmt.LayerPOSIX, Calls: map[string]uint64{"write": 1}, BytesWritten: 10},
		tracefmt.Counters{Path: "/untraced", Layer: tracefmt.LayerStdio, Calls: map[string]uint64{"fwrite": 1}, BytesWritten: 5})
	rep, err := Summarize([]string{p}, Options{Top: DefaultTop})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 1 || rep.Files[0].Path != "/traced" || rep.Files[0].BytesWritten != 10 || rep.Processes[0].BytesWritten != 10 {
		t.Errorf("files %+v, process %+v", rep.Files, rep.Processes[0])
	}
	if len(rep.Modules) != 2 || len(rep.Notes) != 2 || !strings.Contains(rep.Notes[1], "from the traced calls alone") {
		t.Errorf("modules %+v, notes %q", rep.Modules, rep.Notes)
	}
}

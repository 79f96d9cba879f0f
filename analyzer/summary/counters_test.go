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
// a file's figures come from its events, and the counters add only the
// files (and layers) no event was traced on, as stdio beside a Darshan
// log's DXT; the module table still adds up the counters.
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
	files := map[string]FileStats{}
	for _, f := range rep.Files {
		files[f.Path] = f
	}
	if len(files) != 2 || files["/traced"].BytesWritten != 10 || files["/traced"].Events != 1 || files["/untraced"].BytesWritten != 5 ||
		rep.Processes[0].BytesWritten != 15 || rep.Application.BytesWritten != 15 {
		t.Errorf("files %+v, process %+v", rep.Files, rep.Processes[0])
	}
	if len(rep.Modules) != 2 || len(rep.Notes) != 2 || !strings.Contains(rep.Notes[1], "for the files and layers no call was traced on") {
		t.Errorf("modules %+v, notes %q", rep.Modules, rep.Notes)
	}
}

// TestSummarizeLayersCountedOnce proves the application's figures count
// each byte once when a file's MPI-IO record is the job's shared one and
// its POSIX records are the ranks' own (the E3SM-IO case: 77 GB through
// MPI-IO was summed with the 303 GB of POSIX records beneath into 380 GB):
// the file, the processes and the job count MPI-IO's bytes plus stdio's,
// and each layer's view keeps its own.
func TestSummarizeLayersCountedOnce(t *testing.T) {
	dir := t.TempDir()
	r0, r1 := 0, 1
	shared := writeCounters(t, dir, "shared", nil, false,
		tracefmt.Counters{Path: "/out.nc", Layer: tracefmt.LayerMPIIO, Procs: 2, Calls: map[string]uint64{"MPI_File_write_all": 2},
			BytesWritten: 1000, WriteNs: 40})
	ranks := []string{
		writeCounters(t, dir, "r0", &r0, false,
			tracefmt.Counters{Path: "/out.nc", Layer: tracefmt.LayerPOSIX, Calls: map[string]uint64{"write": 4}, BytesWritten: 3000, WriteNs: 30},
			tracefmt.Counters{Path: "<STDOUT>", Layer: tracefmt.LayerStdio, Calls: map[string]uint64{"fwrite": 1}, BytesWritten: 7}),
		writeCounters(t, dir, "r1", &r1, false,
			tracefmt.Counters{Path: "/out.nc", Layer: tracefmt.LayerPOSIX, Calls: map[string]uint64{"write": 4}, BytesWritten: 900, WriteNs: 30},
			tracefmt.Counters{Path: "/own.dat", Layer: tracefmt.LayerPOSIX, Calls: map[string]uint64{"write": 1}, BytesWritten: 50}),
	}
	rep, err := Summarize(append(ranks, shared), Options{Top: DefaultTop})
	if err != nil {
		t.Fatal(err)
	}
	if a := rep.Application; a.BytesWritten != 1000+7+50 || a.Calls != 2+1+1 {
		t.Errorf("application %+v, want 1057 bytes written in 4 calls", a)
	}
	layers := map[string]LayerIO{}
	for _, l := range rep.Layers {
		layers[l.Layer] = l.LayerIO
	}
	if len(rep.Layers) != 3 || rep.Layers[0].Layer != "mpiio" || layers["mpiio"].BytesWritten != 1000 ||
		layers["posix"].BytesWritten != 3950 || layers["posix"].Calls != 9 || layers["stdio"].BytesWritten != 7 {
		t.Errorf("layers %+v", rep.Layers)
	}
	for _, f := range rep.Files {
		if f.Path == "/out.nc" && (f.BytesWritten != 1000 || f.Layers["posix"].BytesWritten != 3900 || f.Layers["mpiio"].BytesWritten != 1000 || f.IONs != 40) {
			t.Errorf("/out.nc %+v, posix %+v", f, f.Layers["posix"])
		}
	}
	var sum int64
	for _, p := range rep.Processes {
		sum += p.BytesWritten
	}
	if sum != rep.Application.BytesWritten || rep.Processes[0].BytesWritten != 7 || rep.Processes[0].Layers["posix"].BytesWritten != 3000 {
		t.Errorf("processes %+v", rep.Processes)
	}
	var text bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"application (each byte once)  4      0 B   1.0 KiB", "BY LAYER (READ/WRITTEN)", "mpiio 0 B/1000 B, posix 0 B/3.8 KiB"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// TestSummarizeOwnMPIIOLayers proves that in iopred's own traces, where a
// POSIX call made inside an MPI-IO call names it as parent, the
// application's bytes are the MPI-IO call's alone while POSIX's view
// still shows the call beneath.
func TestSummarizeOwnMPIIOLayers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r0"+tracefmt.FileSuffix)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	r0 := 0
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/bin/sim", Rank: &r0}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.File(tracefmt.File{ID: 1, Path: "/out"}))
	must(w.Event(&tracefmt.Event{Op: "MPI_File_write_at", FileID: 1, Size: 100, Ret: 0, Bytes: 100, Seq: 1, StartNs: 1, EndNs: 10}))
	must(w.Event(&tracefmt.Event{Op: "pwrite", FileID: 1, Size: 100, Ret: 100, Bytes: 100, Parent: 1, StartNs: 2, EndNs: 9}))
	must(w.Event(&tracefmt.Event{Op: "write", FileID: 1, Size: 5, Ret: 5, Bytes: 5, StartNs: 11, EndNs: 12}))
	must(w.Close(tracefmt.Footer{Reason: "exit", EndNs: 20}))
	must(f.Close())
	rep, err := Summarize([]string{path}, Options{Top: DefaultTop})
	must(err)
	if a := rep.Application; a.BytesWritten != 105 || a.Calls != 2 {
		t.Errorf("application %+v, want 105 bytes in 2 calls", a)
	}
	p := rep.Processes[0]
	if p.BytesWritten != 105 || p.Layers["mpiio"].BytesWritten != 100 || p.Layers["posix"].BytesWritten != 105 || p.Layers["posix"].Calls != 2 {
		t.Errorf("process %+v: mpiio %+v posix %+v", p, p.Layers["mpiio"], p.Layers["posix"])
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// TestReplayPrefetchHook proves that `replay --prefetch` hands the whole
// argument list to the prefetch evaluation when one is built in, and says
// so clearly when none is.
func TestReplayPrefetchHook(t *testing.T) {
	saved := prefetchReplay
	defer func() { prefetchReplay = saved }()

	prefetchReplay = nil
	err := runReplay([]string{"x.iopred.zst", "--prefetch"}, io.Discard, io.Discard)
	if !errors.Is(err, errNoPrefetch) {
		t.Errorf("without the prefetch evaluation: err = %v, want %v", err, errNoPrefetch)
	}

	var got []string
	prefetchReplay = func(args []string, stdout, stderr io.Writer) error {
		got = args
		_, err := io.WriteString(stdout, "prefetch ran\n")
		return err
	}
	var out bytes.Buffer
	args := []string{"--prefetch", "a.iopred.zst", "--json"}
	if err := runReplay(args, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(args) || out.String() != "prefetch ran\n" {
		t.Errorf("prefetch got args %q and printed %q", got, out.String())
	}
}

// TestReplayUsage proves that replay without traces is a usage error.
func TestReplayUsage(t *testing.T) {
	if err := runReplay([]string{"--json"}, io.Discard, io.Discard); !errors.Is(err, errUsage) {
		t.Errorf("err = %v, want the usage error", err)
	}
}

// writeLoopTrace writes a trace of a program that writes n checkpoints of
// three records to out.dat, and returns its path.
func writeLoopTrace(t *testing.T, dir string, pid, n int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("prog.host.%d%s", pid, tracefmt.FileSuffix))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "prog", PID: pid}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for c := uint64(1); c <= 3; c++ {
		w.Context(tracefmt.Context{ID: c, Frames: []tracefmt.Frame{{Module: "prog", Offset: c}}})
	}
	w.File(tracefmt.File{ID: 1, Path: "out.dat"})
	now, off := int64(0), int64(0)
	for i := 0; i < n; i++ {
		now += 1e9
		for c := uint64(1); c <= 3; c++ {
			size := int64(c * 100)
			if err := w.Event(&tracefmt.Event{Op: "pwrite", FileID: 1, Ctx: c, Offset: off, Size: size,
				Ret: size, Bytes: size, StartNs: now, EndNs: now + 500}); err != nil {
				t.Fatal(err)
			}
			off += size
			now += 10_000
		}
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

type replayJSON struct {
	Processes []struct {
		Trace   string
		PID     int
		Events  int
		Context struct{ Paper, Weighted float64 }
		Offset  struct{ Model, Contiguous float64 }
	}
}

// TestReplayCommand proves the command end to end: a directory of two
// traces gives one JSON report per process; --save after a first run and
// --model for a second run make the second run's context predictions
// perfect; the text form reports the same traces.
func TestReplayCommand(t *testing.T) {
	dir := t.TempDir()
	a := writeLoopTrace(t, dir, 11, 20)
	writeLoopTrace(t, dir, 12, 20)

	var out bytes.Buffer
	if err := runReplay([]string{dir, "--json"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got replayJSON
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	if len(got.Processes) != 2 || got.Processes[0].PID != 11 || got.Processes[1].PID != 12 || got.Processes[0].Events != 60 {
		t.Fatalf("processes %+v", got.Processes)
	}

	model := filepath.Join(t.TempDir(), "model.msgpack")
	if err := runReplay([]string{"--save", model, a}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	second := writeLoopTrace(t, t.TempDir(), 13, 5)
	out.Reset()
	if err := runReplay([]string{"--json", "--model", model, second}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	got = replayJSON{}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if p := got.Processes[0]; p.Context.Paper != 1 || p.Offset.Model != 1 {
		t.Errorf("second run from the saved model: context %g, offsets %g; want 1 and 1", p.Context.Paper, p.Offset.Model)
	}

	out.Reset()
	if err := runReplay([]string{a}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), a) || !strings.Contains(out.String(), "context accuracy") {
		t.Errorf("text report:\n%s", out.String())
	}

	if err := runReplay([]string{"--model", filepath.Join(dir, "prog.host.11"+tracefmt.FileSuffix), a}, io.Discard, io.Discard); err == nil {
		t.Error("a trace given as --model was accepted")
	}
}

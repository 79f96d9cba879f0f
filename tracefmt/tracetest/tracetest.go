// Package tracetest writes small iopred traces for the tests of the
// packages that read them.
package tracetest

import (
	"os"
	"testing"

	"iopred/tracefmt"
)

// Write writes a whole trace at path: the header h, the file records,
// the events in order and the footer f. Any error fails t.
func Write(t testing.TB, path string, h tracefmt.Header, files []tracefmt.File, events []*tracefmt.Event, f tracefmt.Footer) {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w, err := tracefmt.NewWriter(out, h, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if err := w.File(file); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range events {
		if err := w.Event(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(f); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// Files makes the file records of paths, numbered from 1 in order.
func Files(paths ...string) []tracefmt.File {
	out := make([]tracefmt.File, len(paths))
	for i, p := range paths {
		out[i] = tracefmt.File{ID: uint32(i + 1), Path: p}
	}
	return out
}

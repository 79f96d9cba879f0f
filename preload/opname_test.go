package main

import (
	"testing"

	"iopred/tracefmt"
)

// The trace names calls as the source wrote them, whatever entry point
// the compiler or an old glibc chose.
func TestCanonicalOp(t *testing.T) {
	for sym, want := range map[string]string{
		"read": "read", "__read_chk": "read", "__pread64_chk": "pread64",
		"__isoc99_fscanf": "fscanf", "__fprintf_chk": "fprintf", "__vfprintf_chk": "vfprintf",
		"__open_2": "open", "__open64_2": "open64", "__openat_2": "openat",
		"__xstat": "stat", "__fxstatat64": "fstatat64", "__fgets_chk": "fgets",
		"fwrite": "fwrite", "copy_file_range": "copy_file_range",
		"fread_unlocked": "fread", "__fread_unlocked_chk": "fread", "fputc_unlocked": "fputc",
		"fflush_unlocked": "fflush", "fgets_unlocked": "fgets",
	} {
		if got := canonicalOp(sym); got != want {
			t.Errorf("canonicalOp(%q) = %q, want %q", sym, got, want)
		}
	}
}

// The trace does not store a call's layer: its readers tell it from the
// call's name (tracefmt.LayerOf). Every interposed call must come out in
// the layer its wrapper files it under (putc and getc once came out as
// POSIX calls).
func TestEveryCallInItsLayer(t *testing.T) {
	calls := interposedCalls()
	if len(calls) < 100 {
		t.Fatalf("only %d interposed calls listed", len(calls))
	}
	for _, c := range calls {
		if c.layer == "" {
			t.Errorf("%s: no layer", c.symbol)
			continue
		}
		if got := tracefmt.LayerOf(canonicalOp(c.symbol)); got != c.layer {
			t.Errorf("%s: read back as a %s call, interposed as %s", c.symbol, got, c.layer)
		}
	}
}

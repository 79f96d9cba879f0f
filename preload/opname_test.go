package main

import "testing"

// The trace names calls as the source wrote them, whatever entry point
// the compiler or an old glibc chose.
func TestCanonicalOp(t *testing.T) {
	for sym, want := range map[string]string{
		"read": "read", "__read_chk": "read", "__pread64_chk": "pread64",
		"__isoc99_fscanf": "fscanf", "__fprintf_chk": "fprintf", "__vfprintf_chk": "vfprintf",
		"__open_2": "open", "__open64_2": "open64", "__openat_2": "openat",
		"__xstat": "stat", "__fxstatat64": "fstatat64", "__fgets_chk": "fgets",
		"fwrite": "fwrite", "copy_file_range": "copy_file_range",
	} {
		if got := canonicalOp(sym); got != want {
			t.Errorf("canonicalOp(%q) = %q, want %q", sym, got, want)
		}
	}
}

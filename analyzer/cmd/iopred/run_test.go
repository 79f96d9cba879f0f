package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// iopred run puts the library first in LD_PRELOAD and keeps whatever the
// user preloaded already.
func TestPrependList(t *testing.T) {
	for _, c := range []struct{ list, item, want string }{
		{"", "/lib/libiopred.so", "/lib/libiopred.so"},
		{"/other.so", "/lib/libiopred.so", "/lib/libiopred.so:/other.so"},
	} {
		if got := prependList(c.list, c.item); got != c.want {
			t.Errorf("prependList(%q, %q) = %q, want %q", c.list, c.item, got, c.want)
		}
	}
}

// setEnv replaces a variable rather than adding a second copy, which
// programs would read inconsistently.
func TestSetEnv(t *testing.T) {
	env := []string{"A=1", "IOPRED_DIR=/old", "B=2", "IOPRED_DIRX=keep"}
	got := setEnv(env, "IOPRED_DIR", "/new")
	want := []string{"A=1", "B=2", "IOPRED_DIRX=keep", "IOPRED_DIR=/new"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("setEnv = %v, want %v", got, want)
	}
	if env[1] != "IOPRED_DIR=/old" {
		t.Error("setEnv modified its input")
	}
}

// The library is found from --lib, then IOPRED_LIB; a missing one is an
// error that says how to give it.
func TestFindLibrary(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libiopred.so")
	if err := os.WriteFile(lib, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := findLibrary(lib); err != nil || got != lib {
		t.Errorf("findLibrary(--lib) = %q, %v", got, err)
	}
	t.Setenv("IOPRED_LIB", lib)
	if got, err := findLibrary(""); err != nil || got != lib {
		t.Errorf("findLibrary(IOPRED_LIB) = %q, %v", got, err)
	}
	t.Setenv("IOPRED_LIB", filepath.Join(dir, "missing.so"))
	if _, err := findLibrary(filepath.Join(dir, "also-missing.so")); err == nil {
		t.Error("findLibrary found a library that does not exist")
	}
}

package main

import (
	"os"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// The symbol reader finds the function that holds an address in a real
// module: this test binary's own TestLoadSyms.
func TestLoadSyms(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := loadSyms(exe)
	if len(m.funcs) == 0 {
		t.Fatalf("no function symbols read from %s", exe)
	}
	s := &symbolizer{exe: exe, modules: map[string]*moduleSyms{exe: m}}
	found := false
	for _, f := range m.funcs {
		if s.lookup(exe, f.start) == "" {
			t.Fatalf("lookup of a symbol's own start %#x found no name", f.start)
		}
		if name := s.lookup(exe, f.start); strings.HasSuffix(name, ".TestLoadSyms") {
			found = true
			if got := s.lookup(exe, f.end-1); got != name {
				t.Errorf("last byte of TestLoadSyms resolves to %q", got)
			}
		}
	}
	if !found {
		t.Error("TestLoadSyms not among the symbols")
	}
	if got := loadSyms("/nonexistent"); len(got.funcs) != 0 {
		t.Error("a missing module must give an empty table, not symbols")
	}
}

// Context ids depend on module names and offsets only, not on where the
// modules were loaded or on function names.
func TestContextIDStable(t *testing.T) {
	a := []tracefmt.Frame{{Module: "/usr/bin/app", Offset: 0x1234, Function: "main"}, {Module: "/lib/libc.so.6", Offset: 0x29d90}}
	b := []tracefmt.Frame{{Module: "/opt/other/app", Offset: 0x1234}, {Module: "/usr/lib/x86_64-linux-gnu/libc.so.6", Offset: 0x29d90}}
	c := []tracefmt.Frame{{Module: "/usr/bin/app", Offset: 0x1235}, {Module: "/lib/libc.so.6", Offset: 0x29d90}}
	if contextID(a) != contextID(b) {
		t.Error("same modules and offsets gave different ids")
	}
	if contextID(a) == contextID(c) {
		t.Error("different offsets gave the same id")
	}
	if id := contextID(a); id >= 1<<53 || id == 0 {
		t.Errorf("id %d outside 1..2^53", id)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"iopred/tracefmt"
)

// The symbol reader finds the function that holds an address in a real
// module: a C program built here with a function of known name.
func TestLoadSyms(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	exe := filepath.Join(dir, "p")
	code := "int iopred_probe_fn(int x) { return x * 3 + 1; }\nint main(int c, char **v) { (void)v; return iopred_probe_fn(c); }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O0", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	m := loadSyms(exe)
	s := &symbolizer{exe: exe, modules: map[string]*moduleSyms{exe: m}}
	found := false
	var funcs []funcSym
	m.each(func(f funcSym) { funcs = append(funcs, f) })
	for _, f := range funcs {
		if s.lookup(exe, f.start) == "" {
			t.Fatalf("lookup of a symbol's own start %#x found no name", f.start)
		}
		if s.lookup(exe, f.start) == "iopred_probe_fn" {
			found = true
			if got := s.lookup(exe, f.end-1); got != "iopred_probe_fn" {
				t.Errorf("last byte of iopred_probe_fn resolves to %q", got)
			}
			if got := s.lookup(exe, f.end); got == "iopred_probe_fn" {
				t.Error("the byte after iopred_probe_fn still resolves to it")
			}
		}
	}
	if !found {
		t.Errorf("iopred_probe_fn not among the %d symbols", len(funcs))
	}
	if got := loadSyms(filepath.Join(dir, "missing")); len(got.tables) != 0 {
		t.Error("a missing module must give an empty table, not symbols")
	}
}

// The first lookups scan the raw tables and later ones search the sorted
// table: both give the same function for every address tried in libc.
func TestSymbolScanMatchesSorted(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	scan, sorted := loadSyms(libc), loadSyms(libc)
	if len(scan.tables) == 0 {
		t.Skipf("no symbols read from %s", libc)
	}
	var addrs []uint64
	scan.each(func(f funcSym) { addrs = append(addrs, f.start-1, f.start, f.start+1, f.end-1, f.end) })
	sorted.lookups = sortAfterLookups
	for i, a := range addrs {
		if i%7 != 0 { // a sample keeps the scans' cost down
			continue
		}
		scan.lookups = 0 // keep scanning
		got, okScan := scan.find(a)
		want, okSorted := sorted.find(a)
		if okScan != okSorted || got != want {
			t.Fatalf("address %#x: scan %+v %v, sorted %+v %v", a, got, okScan, want, okSorted)
		}
	}
	if sorted.funcs == nil {
		t.Fatal("the sorted table was never built")
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

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	scan, sorted := readSyms(libc, false), readSyms(libc, false)
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

// A stripped library's names come from its loaded dynamic symbol table:
// for every dynamic function of libc (loaded in this test process), the
// in-memory lookup gives the name the file's table gives, at its first
// and last byte.
func TestDynsymMatchesFile(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	if m := loadSyms(libc); !m.dynamicOnly {
		t.Skipf("%s has a full symbol table: its names come from the file", libc)
	}
	file := readSyms(libc, false)
	if len(file.tables) == 0 {
		t.Fatalf("no dynamic symbols read from %s", libc)
	}
	var funcs []funcSym
	file.each(func(f funcSym) { funcs = append(funcs, f) })
	// The loaded libc's base: its mapping at file offset 0.
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	var bias uintptr
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && f[2] == "00000000" && filepath.Base(f[5]) == "libc.so.6" {
			start, _, _ := strings.Cut(f[0], "-")
			b, err := strconv.ParseUint(start, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			bias = uintptr(b)
			break
		}
	}
	if _, modBias, _, ok := moduleOf(bias, currentEpoch()); !ok || modBias != bias {
		t.Fatalf("libc at %#x in /proc/self/maps, the loader says %#x (%v)", bias, modBias, ok)
	}
	s := &symbolizer{modules: map[string]*moduleSyms{libc: file}}
	checked := 0
	for _, f := range funcs {
		for _, vaddr := range []uint64{f.start, f.end - 1} {
			want := s.lookup(libc, vaddr)
			if got := dynsymName(bias + uintptr(vaddr)); got != want {
				t.Fatalf("%#x: in memory %q, from the file %q", vaddr, got, want)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d addresses checked", checked)
	}
	if got := dynsymName(0x10); got != "" {
		t.Errorf("an address outside every module is named %q", got)
	}
}

// Files that are not 64-bit ELF, or whose headers point past their end,
// give no symbols and no panic.
func TestReadSymsBadFiles(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip(err)
	}
	cases := map[string][]byte{
		"empty":     nil,
		"text":      []byte("#!/bin/sh\necho hi\n"),
		"header":    exe[:64],
		"truncated": exe[:len(exe)/3],
		"32-bit":    append([]byte("\x7fELF\x01\x01"), exe[6:]...),
	}
	for name, b := range cases {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m := readSyms(path, false)
		if name != "truncated" && len(m.tables) != 0 {
			t.Errorf("%s: %d symbol tables", name, len(m.tables))
		}
		m.each(func(funcSym) {})
		m.find(0x1000)
	}
}

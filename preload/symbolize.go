package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"os"
	"slices"
	"sort"

	"iopred/tracefmt"
)

// symbolizer turns return addresses into module + offset frames, with
// function names from the module's ELF symbol tables where it has them.
type symbolizer struct {
	exe     string
	modules map[string]*moduleSyms
	// dynNames caches the names found in loaded dynamic tables by module
	// and return address: each lookup there scans the module's table, and
	// the same call sites recur in many contexts.
	dynNames map[dynKey]string
}

type dynKey struct {
	module string
	pc     uintptr
}

type moduleSyms struct {
	// dynamicOnly: the module has no full symbol table, only the dynamic
	// one, which is looked up where the loader mapped it (iop_dynsym_name)
	// instead of read from the file.
	dynamicOnly bool
	tables      []symTable
	// funcs is built, sorted by start, once the module has had
	// sortAfterLookups lookups: the first few scan the raw tables, which
	// is far cheaper for a short process than sorting thousands of symbols.
	funcs   []funcSym
	lookups int
}

// symTable is a raw ELF symbol table (little-endian Elf64_Sym entries)
// with the string table its names point into.
type symTable struct {
	syms, strs []byte
}

const sortAfterLookups = 8

type funcSym struct {
	start, end uint64
	name       uint32 // offset in tables[table].strs
	table      uint8
}

// each calls fn for every function symbol of the module, the full table's
// before the dynamic one's.
func (m *moduleSyms) each(fn func(funcSym)) {
	for t, tab := range m.tables {
		le := binary.LittleEndian
		for off := symSize; off+symSize <= len(tab.syms); off += symSize { // entry 0 is reserved
			ent := tab.syms[off : off+symSize]
			name, info := le.Uint32(ent[0:]), ent[4]
			value, size := le.Uint64(ent[8:]), le.Uint64(ent[16:])
			if info&0xf != sttFunc || value == 0 || int(name) >= len(tab.strs) {
				continue
			}
			end := value + size
			if size == 0 {
				end = value + 1
			}
			fn(funcSym{start: value, end: end, name: name, table: uint8(t)})
		}
	}
}

// find returns the function containing vaddr: the symbol with the highest
// start at or below it (the first one listed when several start there).
func (m *moduleSyms) find(vaddr uint64) (funcSym, bool) {
	m.lookups++
	if m.funcs == nil && m.lookups > sortAfterLookups {
		m.each(func(f funcSym) { m.funcs = append(m.funcs, f) })
		slices.SortStableFunc(m.funcs, func(a, b funcSym) int { return cmp.Compare(a.start, b.start) })
		m.funcs = slices.CompactFunc(m.funcs, func(a, b funcSym) bool { return a.start == b.start })
	}
	var best funcSym
	found := false
	if m.funcs != nil {
		fs := m.funcs
		i := sort.Search(len(fs), func(i int) bool { return fs[i].start > vaddr }) - 1
		if i >= 0 {
			best, found = fs[i], true
		}
	} else {
		m.each(func(f funcSym) {
			if f.start <= vaddr && (!found || f.start > best.start) {
				best, found = f, true
			}
		})
	}
	if !found || vaddr >= best.end {
		return funcSym{}, false
	}
	return best, true
}

func newSymbolizer() *symbolizer {
	exe, _ := os.Executable()
	return &symbolizer{exe: exe, modules: make(map[string]*moduleSyms), dynNames: make(map[dynKey]string)}
}

// frame names a return address captured in an unload epoch.
func (s *symbolizer) frame(pc uintptr, epoch uint64) tracefmt.Frame {
	path, bias, gone, ok := moduleOf(pc, epoch)
	if !ok {
		return tracefmt.Frame{Module: "?", Offset: uint64(pc)}
	}
	if path == "" {
		path = s.exe
	}
	off := uint64(pc - bias)
	f := tracefmt.Frame{Module: path, Offset: off}
	// A return address points after the call: look up the call itself.
	if s.module(path).dynamicOnly {
		if gone {
			// Only the loaded copy of its dynamic symbols served, and it
			// is unmapped (or another module's code is at pc now).
			return f
		}
		k := dynKey{path, pc}
		name, ok := s.dynNames[k]
		if !ok {
			name = dynsymName(pc - 1)
			s.dynNames[k] = name
		}
		f.Function = name
	} else {
		f.Function = s.lookup(path, off-1)
	}
	return f
}

func (s *symbolizer) module(path string) *moduleSyms {
	m, ok := s.modules[path]
	if !ok {
		m = loadSyms(path)
		s.modules[path] = m
	}
	return m
}

func (s *symbolizer) lookup(path string, vaddr uint64) string {
	m := s.module(path)
	f, ok := m.find(vaddr)
	if !ok {
		return ""
	}
	name := m.tables[f.table].strs[f.name:]
	if n := bytes.IndexByte(name, 0); n >= 0 {
		name = name[:n]
	}
	return string(name)
}

// loadSyms reads a module's symbol tables (the full one where the module
// has it, and the dynamic one) as raw bytes, without making a string of
// every name: this runs in the traced process, and libc alone has
// thousands of symbols. A module without a full table (a stripped
// library) is marked dynamicOnly and nothing is read: the loaded copy of
// its dynamic table serves.
func loadSyms(path string) *moduleSyms {
	return readSyms(path, true)
}

// readSyms is loadSyms; with inMemory false it reads a stripped module's
// dynamic table from the file too (for tests comparing both).
func readSyms(path string, inMemory bool) *moduleSyms {
	m := &moduleSyms{}
	file, err := openPrivateFile(path)
	if err != nil {
		return m
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return m
	}
	secs, err := elfSections(file)
	if err != nil {
		return m
	}
	if _, full := sectionOfType(secs, shtSymtab); inMemory && !full {
		m.dynamicOnly = true
		return m
	}
	for _, typ := range []uint32{shtSymtab, shtDynsym} {
		sec, ok := sectionOfType(secs, typ)
		if !ok || int(sec.link) >= len(secs) {
			continue
		}
		syms, err := sec.data(file, st.Size())
		if err != nil {
			continue
		}
		strs, err := secs[sec.link].data(file, st.Size())
		if err != nil {
			continue
		}
		m.tables = append(m.tables, symTable{syms: syms, strs: strs})
	}
	return m
}

// contextID is the stable id of a context (tracefmt.ContextID).
func contextID(frames []tracefmt.Frame) uint64 { return tracefmt.ContextID(frames) }

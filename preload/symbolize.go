package main

import (
	"debug/elf"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"iopred/tracefmt"
)

// symbolizer turns return addresses into module + offset frames, with
// function names from the module's ELF symbol tables where it has them.
type symbolizer struct {
	exe     string
	modules map[string]*moduleSyms
}

type moduleSyms struct {
	funcs []funcSym // sorted by start
}

type funcSym struct {
	start, end uint64
	name       string
}

func newSymbolizer() *symbolizer {
	exe, _ := os.Executable()
	return &symbolizer{exe: exe, modules: make(map[string]*moduleSyms)}
}

func (s *symbolizer) frame(pc uintptr) tracefmt.Frame {
	path, bias, ok := moduleOf(pc)
	if !ok {
		return tracefmt.Frame{Module: "?", Offset: uint64(pc)}
	}
	if path == "" {
		path = s.exe
	}
	off := uint64(pc - bias)
	f := tracefmt.Frame{Module: path, Offset: off}
	// A return address points after the call: look up the call itself.
	f.Function = s.lookup(path, off-1)
	return f
}

func (s *symbolizer) lookup(path string, vaddr uint64) string {
	m, ok := s.modules[path]
	if !ok {
		m = loadSyms(path)
		s.modules[path] = m
	}
	fs := m.funcs
	i := sort.Search(len(fs), func(i int) bool { return fs[i].start > vaddr }) - 1
	if i >= 0 && vaddr < fs[i].end {
		return fs[i].name
	}
	return ""
}

func loadSyms(path string) *moduleSyms {
	m := &moduleSyms{}
	f, err := elf.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	seen := make(map[uint64]bool)
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := get()
		for _, sym := range syms {
			if elf.ST_TYPE(sym.Info) != elf.STT_FUNC || sym.Value == 0 || seen[sym.Value] {
				continue
			}
			seen[sym.Value] = true
			end := sym.Value + sym.Size
			if sym.Size == 0 {
				end = sym.Value + 1
			}
			m.funcs = append(m.funcs, funcSym{sym.Value, end, sym.Name})
		}
	}
	sort.Slice(m.funcs, func(i, j int) bool { return m.funcs[i].start < m.funcs[j].start })
	return m
}

// contextID hashes a context's frames by module name and offset, so that
// the same code path has the same id in every run of the same binaries
// wherever they are loaded. It fits in 53 bits for JSON readers.
func contextID(frames []tracefmt.Frame) uint64 {
	h := fnv.New64a()
	for _, f := range frames {
		h.Write([]byte(filepath.Base(f.Module)))
		h.Write([]byte{0})
		h.Write(strconv.AppendUint(nil, f.Offset, 16))
		h.Write([]byte{0})
	}
	id := h.Sum64() & (1<<53 - 1)
	if id == 0 {
		id = 1
	}
	return id
}

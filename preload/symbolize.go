package main

import (
	"bytes"
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
	strs  [][]byte  // string tables the names point into
}

type funcSym struct {
	start, end uint64
	name       uint32 // offset in strs[table]
	table      uint8
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
	if i < 0 || vaddr >= fs[i].end {
		return ""
	}
	strs := m.strs[fs[i].table]
	name := strs[fs[i].name:]
	if n := bytes.IndexByte(name, 0); n >= 0 {
		name = name[:n]
	}
	return string(name)
}

// loadSyms reads a module's function symbols (the full table where the
// module has one, else the dynamic one) as raw entries, without making a
// string of every name: this runs in the traced process, and libc alone
// has thousands of symbols.
func loadSyms(path string) *moduleSyms {
	m := &moduleSyms{}
	file, err := openPrivateFile(path)
	if err != nil {
		return m
	}
	defer file.Close()
	f, err := elf.NewFile(file)
	if err != nil {
		return m
	}
	if f.Class != elf.ELFCLASS64 {
		return m
	}
	seen := make(map[uint64]bool)
	for _, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		sec := f.SectionByType(typ)
		if sec == nil || int(sec.Link) >= len(f.Sections) || len(m.strs) > 255 {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			continue
		}
		strs, err := f.Sections[sec.Link].Data()
		if err != nil {
			continue
		}
		table := uint8(len(m.strs))
		m.strs = append(m.strs, strs)
		order := f.ByteOrder
		for off := 24; off+24 <= len(data); off += 24 { // entry 0 is reserved
			ent := data[off : off+24]
			name, info := order.Uint32(ent[0:]), ent[4]
			value, size := order.Uint64(ent[8:]), order.Uint64(ent[16:])
			if elf.ST_TYPE(info) != elf.STT_FUNC || value == 0 || seen[value] || int(name) >= len(strs) {
				continue
			}
			seen[value] = true
			end := value + size
			if size == 0 {
				end = value + 1
			}
			m.funcs = append(m.funcs, funcSym{start: value, end: end, name: name, table: table})
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

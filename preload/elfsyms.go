package main

import (
	"encoding/binary"
	"errors"
	"os"
)

// The ELF section headers the symbolizer needs, read by hand: debug/elf
// would bring DWARF, zlib and flate into the library, whose
// initialisation every traced process would pay at start.

// ELF constants (the ELF-64 object file format).
const (
	shtSymtab = 2  // SHT_SYMTAB: the full symbol table
	shtDynsym = 11 // SHT_DYNSYM: the dynamic symbol table
	sttFunc   = 2  // STT_FUNC: a function symbol
	symSize   = 24 // bytes of an Elf64_Sym
)

var errNotELF64 = errors.New("not a 64-bit little-endian ELF file")

// elfSection is what a section header says of where its bytes are.
type elfSection struct {
	typ       uint32
	off, size uint64
	link      uint32 // for a symbol table, the section of its names
}

// elfSections reads the section headers of a 64-bit little-endian ELF
// file.
func elfSections(f *os.File) ([]elfSection, error) {
	var hdr [64]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, err
	}
	if string(hdr[:4]) != "\x7fELF" || hdr[4] != 2 || hdr[5] != 1 {
		return nil, errNotELF64
	}
	le := binary.LittleEndian
	shoff, entsize, n := le.Uint64(hdr[0x28:]), int(le.Uint16(hdr[0x3a:])), int(le.Uint16(hdr[0x3c:]))
	if entsize < 64 || n == 0 || shoff > 1<<40 {
		return nil, errNotELF64
	}
	buf := make([]byte, entsize*n)
	if _, err := f.ReadAt(buf, int64(shoff)); err != nil {
		return nil, err
	}
	secs := make([]elfSection, n)
	for i := range secs {
		h := buf[i*entsize:]
		secs[i] = elfSection{typ: le.Uint32(h[4:]), off: le.Uint64(h[0x18:]), size: le.Uint64(h[0x20:]), link: le.Uint32(h[0x28:])}
	}
	return secs, nil
}

// data reads the section's bytes from f, whose size is limit.
func (s elfSection) data(f *os.File, limit int64) ([]byte, error) {
	if s.size > uint64(limit) || s.off > uint64(limit)-s.size {
		return nil, errors.New("section beyond the end of the file")
	}
	b := make([]byte, s.size)
	_, err := f.ReadAt(b, int64(s.off))
	return b, err
}

// sectionOfType returns the first section of type typ.
func sectionOfType(secs []elfSection, typ uint32) (elfSection, bool) {
	for _, s := range secs {
		if s.typ == typ {
			return s, true
		}
	}
	return elfSection{}, false
}

// Package spill reads the spill files of libiopred.so and converts them
// into iopred traces.
//
// A child that forks without exec cannot run the Go side of the library
// (the Go runtime's threads do not survive fork), so it appends its
// records to a spill, `<exe>.<host>.<pid>[.<n>].iopspill` in the trace
// directory, through shared file mappings (preload/spill.c). The Go
// process it descends from converts the spill into an ordinary trace once
// the child has ended, with Convert; a spill left over (its root process
// was killed, or the child still ran) is read as a trace by every iopred
// command, because this package registers the format with tracefmt
// (import it for its side effect).
//
// # Format (version 1, little-endian)
//
// The file is an 8 KiB header followed by 64 KiB chunks.
//
// Header: "IOPSPILL" (8 bytes); u32 version (1); u32 chunk size (65536);
// i32 pid; i32 ppid; i32 root (the pid of the Go process that converts
// it); i32 context depth; i64 CLOCK_MONOTONIC ns and i64 wall-clock ns of
// the fork (the time anchor); i64 CLOCK_MONOTONIC ns of the end (0 while
// running or after _exit or a signal); u32 state (0 no end seen, 1 exit,
// 2 exec); u32 header size (8192); u64 records dropped; host (64 bytes,
// NUL-padded) at 72; executable path (1024 bytes) at 136; u32 prefetch at
// 1160 (1 when the child prefetched, IOPRED_PREFETCH=1; 0 in spills of
// libraries before it) and from 1168 eight u64 prefetch counters: reads,
// reads covered, bytes prefetched, bytes used, bytes written off at
// closes, fadvise calls, misses, predictions capped; from byte 2048 the
// operation names, NUL-separated, in op-code order.
//
// Chunk: 512 slots of 128 bytes. Slot 0 is the chunk header: u32 magic
// "CHNK" (stored last), i32 thread id, u32 stream, u32 index of the chunk
// in its stream, u64 sequence number of its first record. Each thread
// writes a stream of its own; a record occupies whole slots: u64 sequence
// number (from 1 in each stream, stored last: a record whose number is not
// the next one was never finished), u16 type, u16 slots, u32 data length,
// then the data. Types: 1 event (the 96-byte struct iop_event of
// preload/iop.h), 2 file (u32 id, then the path), 3 context (u32 slot, u32
// count, then that many u64 return addresses), 4 next (the stream goes on
// in its next chunk). Definitions may come after the events that use them.
package spill

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"iopred/tracefmt"
)

// Suffix ends the name of every spill file.
const Suffix = ".iopspill"

// HeaderSize is the size of a spill's header: ParseHeader needs this many
// bytes of the file's start.
const HeaderSize = headerSize

// Layout constants (see the package comment).
const (
	headerSize = 8192
	opsAt      = 2048
	chunkSize  = 65536
	slotSize   = 128
	slots      = chunkSize / slotSize
	eventSize  = 96
	chunkMagic = 0x4b4e4843
)

// Record types.
const (
	recEvent = 1
	recFile  = 2
	recCtx   = 3
	recNext  = 4
)

// Event kinds, as in preload/iop.h.
const (
	KindEvent = 0
	KindFork  = 1
	KindExec  = 2
)

// Header is what a spill says of its process.
type Header struct {
	PID, PPID int
	// Root is the pid of the traced process with a Go runtime that the
	// spilling process descends from: it converts the spill.
	Root         int
	ContextDepth int
	StartMonoNs  int64 // CLOCK_MONOTONIC ns of the fork
	StartUnixNs  int64 // wall clock of the fork
	EndMonoNs    int64 // 0 when no end was seen
	State        int   // 0 no end seen (running, _exit or a signal), 1 exit, 2 exec
	Dropped      uint64
	Host         string
	Program      string
	Ops          []string // op code -> the interposed symbol's name
	// Prefetch is the child's prefetching, nil when it did not prefetch.
	// Its wasted bytes are those no read used by the child's end (a child
	// that ends with _exit or a signal writes nothing off itself).
	Prefetch *tracefmt.Prefetch
}

// Event is one record of a call or of a process event, as the C side
// wrote it. Times are CLOCK_MONOTONIC ns.
type Event struct {
	StartNs, EndNs           int64
	Offset, Size, Ret, Bytes int64
	Aux                      int64
	File, Ctx                uint32
	Errno, Tid               int32
	Op                       uint16
	Kind, Layer              uint8
	Seq, Parent              int64
}

// Spill is a spill file's content.
type Spill struct {
	Header   Header
	Files    map[uint32]string   // file id -> path
	Contexts map[uint32][]uint64 // context slot -> return addresses, innermost first
	Events   []Event             // every complete event, by start time
}

// Error is a fault in a spill file: where it is and what is wrong. The
// records before it, and those of other streams, are still returned.
type Error struct {
	File   string
	Offset int64 // byte offset of the chunk or record at fault
	Reason string
	// Truncated tells a file cut short from one whose content is wrong.
	Truncated bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: spill at byte %d: %s", e.File, e.Offset, e.Reason)
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// ParseHeader reads the header of a spill.
func ParseHeader(data []byte, name string) (Header, error) {
	le := binary.LittleEndian
	if len(data) < headerSize {
		if len(data) >= 8 && string(data[:8]) == "IOPSPILL" {
			return Header{}, &Error{File: name, Offset: int64(len(data)), Reason: fmt.Sprintf("header cut short (%d of %d bytes)", len(data), headerSize), Truncated: true}
		}
		return Header{}, &Error{File: name, Reason: "not a spill file (too short)"}
	}
	if string(data[:8]) != "IOPSPILL" {
		return Header{}, &Error{File: name, Reason: "not a spill file (no IOPSPILL magic)"}
	}
	if v := le.Uint32(data[8:]); v != 1 {
		return Header{}, &Error{File: name, Offset: 8, Reason: fmt.Sprintf("version %d; this reader knows version 1", v)}
	}
	if c := le.Uint32(data[12:]); c != chunkSize {
		return Header{}, &Error{File: name, Offset: 12, Reason: fmt.Sprintf("chunk size %d, not %d", c, chunkSize)}
	}
	if h := le.Uint32(data[60:]); h != headerSize {
		return Header{}, &Error{File: name, Offset: 60, Reason: fmt.Sprintf("header size %d, not %d", h, headerSize)}
	}
	h := Header{
		PID:          int(int32(le.Uint32(data[16:]))),
		PPID:         int(int32(le.Uint32(data[20:]))),
		Root:         int(int32(le.Uint32(data[24:]))),
		ContextDepth: int(int32(le.Uint32(data[28:]))),
		StartMonoNs:  int64(le.Uint64(data[32:])),
		StartUnixNs:  int64(le.Uint64(data[40:])),
		EndMonoNs:    int64(le.Uint64(data[48:])),
		State:        int(le.Uint32(data[56:])),
		Dropped:      le.Uint64(data[64:]),
		Host:         cstring(data[72:136]),
		Program:      cstring(data[136 : 136+1024]),
	}
	if le.Uint32(data[1160:]) == 1 {
		c := func(i int) uint64 { return le.Uint64(data[1168+8*i:]) }
		p := &tracefmt.Prefetch{Reads: c(0), Covered: c(1), PrefetchedBytes: c(2), UsedBytes: c(3),
			Calls: c(5), Misses: c(6), Capped: c(7)}
		if p.UsedBytes > p.PrefetchedBytes || p.Covered > p.Reads {
			return Header{}, &Error{File: name, Offset: 1168, Reason: fmt.Sprintf("prefetch counters: %d bytes used of %d prefetched, %d reads covered of %d", p.UsedBytes, p.PrefetchedBytes, p.Covered, p.Reads)}
		}
		p.WastedBytes = p.PrefetchedBytes - p.UsedBytes
		h.Prefetch = p
	}
	ops := data[opsAt:headerSize]
	for {
		i := bytes.IndexByte(ops, 0)
		if i < 0 || i == 0 && len(h.Ops) > 0 {
			break
		}
		h.Ops = append(h.Ops, string(ops[:i]))
		ops = ops[i+1:]
	}
	return h, nil
}

type chunk struct {
	off      int64
	tid      int32
	stream   uint32
	index    uint32
	firstSeq uint64
	data     []byte // up to chunkSize bytes; shorter for a cut-off last chunk
}

// Parse reads a whole spill file's bytes. It returns every complete
// record it finds, and an *Error for the first fault (nil for a whole
// file): a file cut short, a chunk missing from a stream, a record whose
// fields do not hold together. A record still being written when the
// process ended (SIGKILL) is not complete and is no fault.
func Parse(data []byte, name string) (*Spill, error) {
	h, err := ParseHeader(data, name)
	if err != nil {
		return nil, err
	}
	sp := &Spill{Header: h, Files: map[uint32]string{}, Contexts: map[uint32][]uint64{}}
	var first error
	fail := func(e *Error) {
		if first == nil {
			first = e
		}
	}
	le := binary.LittleEndian
	streams := map[uint32][]chunk{}
	for off := int64(headerSize); off < int64(len(data)); off += chunkSize {
		end := min(off+chunkSize, int64(len(data)))
		c := data[off:end]
		if len(c) < 24 || le.Uint32(c) != chunkMagic {
			// Never started: storage the process allocated but did not
			// use, or whose zeros it was still writing when it was killed.
			continue
		}
		if end-off < chunkSize {
			fail(&Error{File: name, Offset: off, Reason: fmt.Sprintf("last chunk cut short (%d of %d bytes)", end-off, chunkSize), Truncated: true})
		}
		ch := chunk{off: off, tid: int32(le.Uint32(c[4:])), stream: le.Uint32(c[8:]), index: le.Uint32(c[12:]), firstSeq: le.Uint64(c[16:]), data: c}
		streams[ch.stream] = append(streams[ch.stream], ch)
	}
	ids := make([]uint32, 0, len(streams))
	for id := range streams {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		cs := streams[id]
		sort.Slice(cs, func(i, j int) bool { return cs[i].index < cs[j].index })
		if e := sp.readStream(cs, name); e != nil {
			fail(e)
		}
	}
	sort.SliceStable(sp.Events, func(i, j int) bool { return sp.Events[i].StartNs < sp.Events[j].StartNs })
	return sp, first
}

// readStream reads one thread's chunks in order.
func (sp *Spill) readStream(cs []chunk, name string) *Error {
	le := binary.LittleEndian
	seq := uint64(1)
	for k, c := range cs {
		if c.index != uint32(k) {
			return &Error{File: name, Offset: c.off, Reason: fmt.Sprintf("stream %d: chunk %d missing (found chunk %d)", c.stream, k, c.index)}
		}
		if c.firstSeq != seq {
			return &Error{File: name, Offset: c.off, Reason: fmt.Sprintf("stream %d chunk %d starts at record %d, not %d", c.stream, k, c.firstSeq, seq)}
		}
		next := false
		for slot := 1; slot < slots && !next; {
			at := slot * slotSize
			if at+16 > len(c.data) {
				break // cut off: the file's fault was reported
			}
			r := c.data[at:]
			got := le.Uint64(r)
			if got != seq {
				if got == 0 && k == len(cs)-1 {
					return nil // the stream's end
				}
				if got == 0 {
					return &Error{File: name, Offset: c.off + int64(at), Reason: fmt.Sprintf("stream %d: chunk %d ends without a next record, yet chunk %d follows", c.stream, k, k+1)}
				}
				return &Error{File: name, Offset: c.off + int64(at), Reason: fmt.Sprintf("stream %d: record %d where %d was expected", c.stream, got, seq)}
			}
			typ, n, length := le.Uint16(r[8:]), int(le.Uint16(r[10:])), int(le.Uint32(r[12:]))
			if n == 0 || slot+n > slots || length > n*slotSize-16 {
				return &Error{File: name, Offset: c.off + int64(at), Reason: fmt.Sprintf("stream %d record %d: %d slots for %d bytes do not fit", c.stream, seq, n, length)}
			}
			if at+16+length > len(c.data) {
				return nil // cut off
			}
			body := r[16 : 16+length]
			switch typ {
			case recEvent:
				if length != eventSize {
					return &Error{File: name, Offset: c.off + int64(at), Reason: fmt.Sprintf("event record of %d bytes, not %d", length, eventSize)}
				}
				sp.Events = append(sp.Events, decodeEvent(body))
			case recFile:
				if length < 4 {
					return &Error{File: name, Offset: c.off + int64(at), Reason: "file record without an id"}
				}
				sp.Files[le.Uint32(body)] = string(body[4:])
			case recCtx:
				if length < 8 || int(le.Uint32(body[4:]))*8 != length-8 {
					return &Error{File: name, Offset: c.off + int64(at), Reason: "context record whose frame count does not match its length"}
				}
				pcs := make([]uint64, (length-8)/8)
				for i := range pcs {
					pcs[i] = le.Uint64(body[8+8*i:])
				}
				sp.Contexts[le.Uint32(body)] = pcs
			case recNext:
				next = true
			default:
				return &Error{File: name, Offset: c.off + int64(at), Reason: fmt.Sprintf("record of unknown type %d", typ)}
			}
			seq++
			slot += n
		}
	}
	return nil
}

func decodeEvent(b []byte) Event {
	le := binary.LittleEndian
	return Event{
		StartNs: int64(le.Uint64(b[0:])),
		EndNs:   int64(le.Uint64(b[8:])),
		Offset:  int64(le.Uint64(b[16:])),
		Size:    int64(le.Uint64(b[24:])),
		Ret:     int64(le.Uint64(b[32:])),
		Bytes:   int64(le.Uint64(b[40:])),
		Aux:     int64(le.Uint64(b[48:])),
		File:    le.Uint32(b[56:]),
		Ctx:     le.Uint32(b[60:]),
		Errno:   int32(le.Uint32(b[64:])),
		Tid:     int32(le.Uint32(b[68:])),
		Op:      le.Uint16(b[72:]),
		Kind:    b[74],
		Layer:   b[75],
		Seq:     int64(le.Uint64(b[80:])),
		Parent:  int64(le.Uint64(b[88:])),
	}
}

package tracefmt

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Limits that keep a hostile file from exhausting memory. The writer's
// frames hold FrameBytes (1 MiB by default) plus one record.
const (
	// MaxFrameData bounds the decompressed size of one frame.
	MaxFrameData = 64 << 20
	// maxFrameRaw bounds the compressed size of one frame.
	maxFrameRaw = 64 << 20
	// maxCtxIndexGap bounds how far beyond the known contexts a context
	// record's index may jump (the writer numbers them 1, 2, 3, ...).
	maxCtxIndexGap = 1 << 16
	// maxOps bounds the table of interned operation names.
	maxOps = 4096
	// eventSlab is how many events the reader allocates at once: a
	// caller that keeps one event keeps its slab (about 10 KiB) alive.
	eventSlab = 64
)

const (
	zstdMagic          = 0xFD2FB528
	skippableMagicMask = 0xFFFFFFF0
	skippableMagic     = 0x184D2A50
	maxBlockSize       = 128 << 10
)

// TruncatedError reports a trace that ends early: inside a frame (the
// process was killed while writing it, or the file was cut), or without a
// footer. Every record before Offset has been returned.
type TruncatedError struct {
	File string
	// Offset is the byte offset of the first frame that could not be read;
	// -1 when the file is whole but its source lost records (a Darshan
	// module that ran out of memory).
	Offset int64
	Reason string
}

func (e *TruncatedError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("%s: incomplete trace: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("%s: truncated trace at byte %d: %s", e.File, e.Offset, e.Reason)
}

// FormatError reports corrupt or foreign input.
type FormatError struct {
	File   string
	Offset int64  // byte offset of the frame holding the fault
	Line   int    // line within the decompressed frame, from 1; 0 when the frame itself is bad
	Field  string // the record field at fault, if any
	Err    error
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("%s: frame at byte %d", e.File, e.Offset)
	if e.Line > 0 {
		s += fmt.Sprintf(", line %d", e.Line)
	}
	if e.Field != "" {
		s += fmt.Sprintf(", field %q", e.Field)
	}
	return s + ": " + e.Err.Error()
}

func (e *FormatError) Unwrap() error { return e.Err }

// errEndOfInput marks the end of the input exactly at a frame boundary.
var errEndOfInput = errors.New("end of input")

// Reader streams the records of a trace. Its memory holds one frame and
// the context and file tables, never the events already returned.
type Reader struct {
	name   string
	br     *bufio.Reader
	closer io.Closer
	dec    *zstd.Decoder

	off      int64 // bytes consumed from the input
	frameOff int64 // offset of the frame being read
	raw      []byte
	data     []byte
	pos      int // start of the next line in data
	line     int // lines consumed in the current frame
	err      error

	hdr        Header
	rank       *int
	contexts   map[uint64]Context
	ctxByIndex []uint64 // per-trace index -> context id; 0 = undefined
	files      map[uint32]File
	footer     *Footer
	endsClean  bool // the last record read was a footer
	ops        map[string]*opInfo
	// lastOp and lastFile remember the previous event's operation and
	// file: a loop's events repeat them, and a comparison is cheaper
	// than a map lookup. lastFile.ID is 0 when nothing is remembered.
	lastOp   *opInfo
	lastFile File

	// generalOnly turns the fast event scanner off (tests compare the
	// two paths).
	generalOnly bool

	// slab is where the next events are made, eventSlab at a time: one
	// allocation instead of one per event. Each event is returned once.
	slab []Event
	// reuse makes every event come in shared (ReuseEvents).
	reuse  bool
	shared Event

	// rawOnly makes readFrame find the next frame's bytes without
	// decoding them (FinalFooter).
	rawOnly bool

	// Delta state of the current frame: version 1's previous file, or
	// version 2's per-context state (ctxs by context index, valid for the
	// frame whose number it holds).
	v2        bool // the header's version is 2 or more
	frame     uint64
	ctxs      []ctxState
	prevStart int64
	prevTid   int32
	prevFile  uint32
	ends      fileEnds
}

// NewReader reads a trace from r and reads its header; name stands for the
// input in error messages. Close does not close r.
func NewReader(r io.Reader, name string) (*Reader, error) {
	return newReader(r, name, nil)
}

func newReader(in io.Reader, name string, closer io.Closer) (*Reader, error) {
	dec, err := getDecoder()
	if err != nil {
		return nil, fmt.Errorf("tracefmt: zstd decoder: %w", err)
	}
	r := &Reader{
		name:     name,
		br:       getBufReader(in),
		closer:   closer,
		dec:      dec,
		raw:      getFrameBuf(),
		data:     getFrameBuf(),
		contexts: make(map[uint64]Context),
		files:    make(map[uint32]File),
		ops:      make(map[string]*opInfo),
	}
	if err := r.readHeader(); err != nil {
		r.release()
		return nil, err
	}
	return r, nil
}

// Readers are opened by the thousand (one per process of a job), and a
// zstd decoder, a read buffer and the frame buffers cost hundreds of
// kilobytes of fresh memory each: a closed Reader leaves them to the next.
// Without the frame buffers' pool, reading a 512-process job allocated
// 2.3 GB (a frame's buffers grown anew in every trace), and the garbage
// collector's work took the second core from a second reader.
var (
	decoders   sync.Pool // *zstd.Decoder
	bufReaders sync.Pool // *bufio.Reader
	frameBufs  sync.Pool // *[]byte: compressed or decompressed frames
)

// maxPooledFrameBuf is the largest frame buffer kept for the next Reader:
// twice the writer's default frame, so that a rare huge frame's memory
// goes back to the collector.
const maxPooledFrameBuf = 4 * DefaultFrameBytes

// getFrameBuf returns an empty frame buffer from the pool, or nil.
func getFrameBuf() []byte {
	if b, ok := frameBufs.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return nil
}

// putFrameBuf gives b to the pool, when it is worth keeping.
func putFrameBuf(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledFrameBuf {
		return
	}
	b = b[:0]
	frameBufs.Put(&b)
}

// getDecoder returns a decoder from the pool, or a new one.
func getDecoder() (*zstd.Decoder, error) {
	if d, ok := decoders.Get().(*zstd.Decoder); ok {
		return d, nil
	}
	return newDecoder()
}

// getBufReader returns a read buffer on in from the pool, or a new one.
func getBufReader(in io.Reader) *bufio.Reader {
	if b, ok := bufReaders.Get().(*bufio.Reader); ok {
		b.Reset(in)
		return b
	}
	return bufio.NewReaderSize(in, 256<<10)
}

// release returns the Reader's decoder and buffers to the pools, once.
// Nothing the Reader returned points into its frame buffers (records are
// fresh values), and Next after Close returns the closing error before
// looking at them.
func (r *Reader) release() {
	putFrameBuf(r.raw)
	putFrameBuf(r.data)
	r.raw, r.data, r.pos = nil, nil, 0
	if r.dec != nil {
		decoders.Put(r.dec)
		r.dec = nil
	}
	if r.br != nil {
		r.br.Reset(nil)
		bufReaders.Put(r.br)
		r.br = nil
	}
}

// newDecoder returns a zstd decoder whose memory is bounded, whatever the
// frame headers claim.
func newDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(MaxFrameData), zstd.WithDecoderMaxWindow(MaxFrameData))
}

func (r *Reader) readHeader() error {
	for r.pos >= len(r.data) {
		if err := r.readFrame(); err != nil {
			if err == errEndOfInput {
				return &TruncatedError{File: r.name, Offset: r.off, Reason: "no header: the file is empty"}
			}
			var fe *FormatError
			if errors.As(err, &fe) && r.off <= 4 {
				fe.Err = fmt.Errorf("not an iopred trace: %w", fe.Err)
			}
			return err
		}
	}
	line, err := r.nextLine()
	if err != nil {
		return err
	}
	kind, err := lineKind(line)
	if err != nil || kind != KindHeader {
		return r.formatError("k", errors.New("not an iopred trace: the first record is not a header"))
	}
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return r.formatError("", fmt.Errorf("header: %w", err))
	}
	if h.Version > FormatVersion {
		return r.formatError("v", fmt.Errorf("format version %d is newer than this reader's (%d): upgrade iopred", h.Version, FormatVersion))
	}
	if h.Version < 1 {
		return r.formatError("v", fmt.Errorf("bad format version %d", h.Version))
	}
	r.hdr = h
	r.v2 = h.Version >= 2
	if h.Rank != nil {
		rank := *h.Rank
		r.rank = &rank
	}
	return nil
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.hdr }

// Contexts returns every context defined so far, by id. The map belongs to
// the Reader: do not modify it.
func (r *Reader) Contexts() map[uint64]Context { return r.contexts }

// Files returns every file defined so far, by id (the latest definition of
// a reused id). The map belongs to the Reader: do not modify it.
func (r *Reader) Files() map[uint32]File { return r.files }

// Footer returns the last footer read, or nil when none was read yet (or the
// trace has none).
func (r *Reader) Footer() *Footer { return r.footer }

// Close releases the decoder, and the file if Open opened it.
func (r *Reader) Close() error {
	r.release()
	if r.err == nil {
		r.err = errors.New("tracefmt: reader closed")
	}
	if r.closer != nil {
		c := r.closer
		r.closer = nil
		return c.Close()
	}
	return nil
}

// Next returns the next record after the header. Each call returns fresh
// values that the caller may keep. At a clean end (a footer, then the end
// of the input at a frame boundary) it returns io.EOF; when the input ends
// inside a frame or without a footer, a *TruncatedError after every record
// of the complete frames; on corrupt input a *FormatError. Records after an
// error are never returned: the error repeats.
func (r *Reader) Next() (Record, error) {
	for {
		if r.err != nil {
			return Record{}, r.err
		}
		if r.pos >= len(r.data) {
			if err := r.readFrame(); err != nil {
				if err == errEndOfInput {
					if r.endsClean {
						err = io.EOF
					} else {
						err = &TruncatedError{File: r.name, Offset: r.off,
							Reason: "the trace ends without a footer (the process was killed, or is still running)"}
					}
				}
				r.err = err
				return Record{}, err
			}
			continue
		}
		line, err := r.nextLine()
		if err != nil {
			r.err = err
			return Record{}, err
		}
		rec, ok, err := r.parse(line)
		if err != nil {
			r.err = err
			return Record{}, err
		}
		if ok {
			return rec, nil
		}
	}
}

// ReuseEvents makes Next return every event in one Event of the Reader's,
// which the next call overwrites: for a caller that is done with each
// event before it asks for the next, reading costs no memory per event
// (an event is about 170 bytes, made and later collected). The other
// records stay fresh.
func (r *Reader) ReuseEvents() { r.reuse = true }

// ReadAll opens the trace at path (any format Open reads) and calls fn on every record after the
// header. It returns the header and the first error from the reader
// (io.EOF excepted) or from fn.
func ReadAll(path string, fn func(Record) error) (Header, error) {
	r, err := Open(path)
	if err != nil {
		return Header{}, err
	}
	defer r.Close()
	return r.Header(), r.Each(fn)
}

// Each calls fn on every record left, to the end of the trace. It returns
// nil at the end, else the first error from the reader (a
// *TruncatedError for a trace cut short, after every complete record) or
// from fn.
func (r *Reader) Each(fn func(Record) error) error {
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

func (r *Reader) formatError(field string, err error) error {
	return &FormatError{File: r.name, Offset: r.frameOff, Line: r.line, Field: field, Err: err}
}

func (r *Reader) nextLine() ([]byte, error) {
	rest := r.data[r.pos:]
	i := bytes.IndexByte(rest, '\n')
	r.line++
	if i < 0 {
		r.pos = len(r.data)
		return nil, r.formatError("", errors.New("the frame's last line has no newline"))
	}
	r.pos += i + 1
	return rest[:i], nil
}

// take appends n bytes of input to r.raw.
func (r *Reader) take(n int, start int64, what string) error {
	if len(r.raw)+n > maxFrameRaw {
		return &FormatError{File: r.name, Offset: start, Err: fmt.Errorf("zstd frame larger than %d bytes", maxFrameRaw)}
	}
	old := len(r.raw)
	r.raw = append(r.raw, make([]byte, n)...)
	got, err := io.ReadFull(r.br, r.raw[old:])
	r.off += int64(got)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &TruncatedError{File: r.name, Offset: start, Reason: what + " cut off"}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	return nil
}

// readFrame reads and decodes the next zstd frame. Frame boundaries are
// found from the block headers, so that a frame cut short is recognised
// without decoding any of it.
func (r *Reader) readFrame() error {
	for {
		start := r.off
		if _, err := r.br.Peek(1); err == io.EOF {
			return errEndOfInput
		}
		r.raw = r.raw[:0]
		if err := r.take(4, start, "frame header"); err != nil {
			return err
		}
		magic := binary.LittleEndian.Uint32(r.raw)
		if magic&skippableMagicMask == skippableMagic {
			if err := r.take(4, start, "skippable frame"); err != nil {
				return err
			}
			n := binary.LittleEndian.Uint32(r.raw[4:])
			got, err := r.br.Discard(int(min(n, maxFrameRaw)))
			r.off += int64(got)
			if n > maxFrameRaw {
				return &FormatError{File: r.name, Offset: start, Err: errors.New("skippable frame too large")}
			}
			if err != nil {
				return &TruncatedError{File: r.name, Offset: start, Reason: "skippable frame cut off"}
			}
			continue
		}
		if magic != zstdMagic {
			return &FormatError{File: r.name, Offset: start, Err: fmt.Errorf("not a zstd frame (magic %#08x)", magic)}
		}
		if err := r.take(1, start, "frame header"); err != nil {
			return err
		}
		fhd := r.raw[4]
		single := fhd&0x20 != 0
		n := [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
		if !single {
			n++ // window descriptor
		}
		switch fhd >> 6 {
		case 0:
			if single {
				n++
			}
		case 1:
			n += 2
		case 2:
			n += 4
		case 3:
			n += 8
		}
		if err := r.take(n, start, "frame header"); err != nil {
			return err
		}
		for {
			if err := r.take(3, start, "frame"); err != nil {
				return err
			}
			bh := r.raw[len(r.raw)-3:]
			h := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
			last, typ, size := h&1 != 0, (h>>1)&3, int(h>>3)
			switch typ {
			case 1: // RLE: one byte repeated size times
				size = 1
			case 3:
				return &FormatError{File: r.name, Offset: start, Err: errors.New("zstd block of reserved type")}
			}
			if size > maxBlockSize {
				return &FormatError{File: r.name, Offset: start, Err: errors.New("zstd block larger than 128 KiB")}
			}
			if err := r.take(size, start, "frame"); err != nil {
				return err
			}
			if last {
				break
			}
		}
		if fhd&4 != 0 {
			if err := r.take(4, start, "frame checksum"); err != nil {
				return err
			}
		}
		if r.rawOnly {
			r.frameOff = start
			return nil
		}
		data, err := r.dec.DecodeAll(r.raw, r.data[:0])
		if err != nil {
			return &FormatError{File: r.name, Offset: start, Err: fmt.Errorf("zstd: %w", err)}
		}
		r.data, r.pos, r.line, r.frameOff = data, 0, 0, start
		r.prevStart, r.prevTid, r.prevFile = 0, 0, 0
		r.frame++
		r.ends.reset()
		return nil
	}
}

// lineKind returns the "k" field of a line that is not parsed otherwise.
func lineKind(line []byte) (Kind, error) {
	var k struct {
		K *string `json:"k"`
	}
	if err := json.Unmarshal(line, &k); err != nil {
		return "", err
	}
	if k.K == nil {
		return "", errors.New("no record kind")
	}
	return Kind(*k.K), nil
}

// eventFields holds the fields of an event line as the scanner finds them.
type eventFields struct {
	op                  []byte
	opEscaped           bool
	hasOp, hasT, hasD   bool
	hasF, hasX, hasNX   bool
	hasR, hasB, hasI    bool
	hasS, hasA          bool
	f, c, i, e          int64
	x, s, r, b, t, d, a int64
	q, p                int64
	badField            string
	badErr              error
}

func (ef *eventFields) bad(field string, err error) {
	if ef.badErr == nil {
		ef.badField, ef.badErr = field, err
	}
}

// parse decodes one line. ok is false for records to skip (unknown kinds).
func (r *Reader) parse(line []byte) (rec Record, ok bool, err error) {
	var ef eventFields
	if !r.generalOnly && scanEvent(line, &ef) {
		e, err := r.event(&ef)
		if err != nil {
			return rec, false, err
		}
		r.endsClean = false
		return Record{Kind: KindEvent, Event: e}, true, nil
	}
	ef = eventFields{}
	kind, complex, err := scanLine(line, &ef)
	if err != nil {
		return rec, false, r.formatError("", err)
	}
	if kind == "" && !complex {
		return rec, false, r.formatError("k", errors.New("record without a kind"))
	}
	if kind == string(KindEvent) {
		if complex {
			return rec, false, r.formatError("", errors.New("event with a nested value"))
		}
		e, err := r.event(&ef)
		if err != nil {
			return rec, false, err
		}
		r.endsClean = false
		return Record{Kind: KindEvent, Event: e}, true, nil
	}
	if kind == "" {
		// The kind was an escaped string or the scanner gave up on it.
		k, err := lineKind(line)
		if err != nil {
			return rec, false, r.formatError("k", err)
		}
		kind = string(k)
	}
	unmarshal := func(v any) error {
		if err := json.Unmarshal(line, v); err != nil {
			field := ""
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				field = ute.Field
			}
			return r.formatError(field, fmt.Errorf("%s record: %w", kindName(Kind(kind)), err))
		}
		return nil
	}
	switch Kind(kind) {
	case KindEvent:
		return rec, false, r.formatError("k", errors.New("event with an escaped kind"))
	case KindHeader:
		return rec, false, r.formatError("k", errors.New("a second header"))
	case KindContext:
		var c struct {
			Index *uint32 `json:"i"`
			ID    *uint64 `json:"id"`
			Context
		}
		if err := unmarshal(&c); err != nil {
			return rec, false, err
		}
		if c.Index == nil || *c.Index == 0 {
			return rec, false, r.formatError("i", errors.New("context without an index"))
		}
		if c.ID == nil || *c.ID == 0 {
			return rec, false, r.formatError("id", errors.New("context without an id"))
		}
		idx := int(*c.Index)
		if idx >= len(r.ctxByIndex)+maxCtxIndexGap {
			return rec, false, r.formatError("i", fmt.Errorf("context index %d out of range", idx))
		}
		if idx >= len(r.ctxByIndex) {
			r.ctxByIndex = append(r.ctxByIndex, make([]uint64, idx+1-len(r.ctxByIndex))...)
		}
		ctx := c.Context
		ctx.ID = *c.ID
		r.ctxByIndex[idx] = ctx.ID
		r.contexts[ctx.ID] = ctx
		rec = Record{Kind: KindContext, Context: &ctx}
	case KindFile:
		var f struct {
			ID *uint32 `json:"id"`
			File
		}
		if err := unmarshal(&f); err != nil {
			return rec, false, err
		}
		if f.ID == nil || *f.ID == 0 {
			return rec, false, r.formatError("id", errors.New("file without an id"))
		}
		file := f.File
		file.ID = *f.ID
		r.files[file.ID] = file
		r.lastFile = File{}
		rec = Record{Kind: KindFile, File: &file}
	case KindProc:
		p := new(Proc)
		if err := unmarshal(p); err != nil {
			return rec, false, err
		}
		rec = Record{Kind: KindProc, Proc: p}
	case KindCounters:
		var c struct {
			FileID *uint32 `json:"f"`
			Counters
		}
		if err := unmarshal(&c); err != nil {
			return rec, false, err
		}
		if c.FileID == nil || *c.FileID == 0 {
			return rec, false, r.formatError("f", errors.New("counters without a file"))
		}
		f, ok := r.files[*c.FileID]
		if !ok {
			return rec, false, r.formatError("f", fmt.Errorf("file id %d used before its definition", *c.FileID))
		}
		cs := c.Counters
		cs.FileID, cs.Path = *c.FileID, f.Path
		rec = Record{Kind: KindCounters, Counters: &cs}
	case KindRegion:
		g := new(Region)
		if err := unmarshal(g); err != nil {
			return rec, false, err
		}
		if g.Name == "" {
			return rec, false, r.formatError("name", errors.New("region without a name"))
		}
		rec = Record{Kind: KindRegion, Region: g}
	case KindFooter:
		f := new(Footer)
		if err := unmarshal(f); err != nil {
			return rec, false, err
		}
		r.footer = f
		r.endsClean = true
		return Record{Kind: KindFooter, Footer: f}, true, nil
	default:
		// A record kind from a newer minor version: skip it.
		return rec, false, nil
	}
	r.endsClean = false
	return rec, true, nil
}

// event rebuilds an event from its line's fields and the frame's delta
// state.
func (r *Reader) event(ef *eventFields) (*Event, error) {
	if ef.badErr != nil {
		return nil, r.formatError(ef.badField, ef.badErr)
	}
	switch {
	case !r.v2 && !ef.hasOp:
		return nil, r.formatError("o", errors.New("event without an operation"))
	case !ef.hasT:
		return nil, r.formatError("t", errors.New("event without a start time"))
	case !ef.hasD:
		return nil, r.formatError("d", errors.New("event without a duration"))
	}
	var e *Event
	if r.reuse {
		e = &r.shared
	} else {
		if len(r.slab) == 0 {
			r.slab = make([]Event, eventSlab)
		}
		e = &r.slab[0]
		r.slab = r.slab[1:]
	}
	*e = Event{PID: r.hdr.PID, Rank: r.rank}
	ctxOK := ef.c == 0 || (ef.c > 0 && ef.c < int64(len(r.ctxByIndex)) && r.ctxByIndex[ef.c] != 0)
	var st *ctxState
	var op *opInfo
	if r.v2 {
		// The context's state supplies the omitted fields: check the
		// context first. (Version 1 checks it after the operation and
		// the file, as it always did.)
		if !ctxOK {
			return nil, r.formatError("c", fmt.Errorf("context index %d used before its definition", ef.c))
		}
		if int(ef.c) >= len(r.ctxs) {
			r.ctxs = append(r.ctxs, make([]ctxState, int(ef.c)+1-len(r.ctxs))...)
		}
		st = &r.ctxs[ef.c]
		if st.frame != r.frame {
			*st = ctxState{frame: r.frame}
		}
		if !ef.hasOp {
			op = st.opInfo // nil when the context has none in this frame
		}
		if !ef.hasF {
			ef.f = int64(st.file)
		}
		if !ef.hasS {
			ef.s = st.size
		}
		if !ef.hasA {
			ef.a = st.aux
		}
	} else if !ef.hasF {
		ef.f = int64(r.prevFile)
	}
	if op == nil {
		if !ef.hasOp {
			return nil, r.formatError("o", errors.New("event without an operation"))
		}
		var err error
		if op, err = r.op(ef); err != nil {
			return nil, err
		}
	}
	e.Op = op.name
	if ef.f < 0 || ef.f > 1<<32-1 {
		return nil, r.formatError("f", fmt.Errorf("file id %d out of range", ef.f))
	}
	e.FileID = uint32(ef.f)
	r.prevFile = e.FileID
	if e.FileID != 0 {
		if e.FileID != r.lastFile.ID {
			f, ok := r.files[e.FileID]
			if !ok {
				return nil, r.formatError("f", fmt.Errorf("file id %d used before its definition", e.FileID))
			}
			r.lastFile = File{ID: e.FileID, Path: f.Path}
		}
		e.Path = r.lastFile.Path
	}
	if !ctxOK {
		return nil, r.formatError("c", fmt.Errorf("context index %d used before its definition", ef.c))
	}
	if ef.c != 0 {
		e.Ctx = r.ctxByIndex[ef.c]
	}
	if ef.hasI {
		if ef.i != int64(int32(ef.i)) {
			return nil, r.formatError("i", fmt.Errorf("thread id %d out of range", ef.i))
		}
		r.prevTid = int32(ef.i)
	}
	e.Tid = r.prevTid
	if ef.e != int64(int32(ef.e)) {
		return nil, r.formatError("e", fmt.Errorf("errno %d out of range", ef.e))
	}
	e.Errno = int32(ef.e)
	e.Layer = op.layer
	data := op.data
	e.Size, e.Aux = ef.s, ef.a
	e.Seq, e.Parent = ef.q, ef.p
	e.Ret = expectedRet(data, e.Size)
	if ef.hasR {
		e.Ret = ef.r
	}
	e.Bytes = expectedBytesIn(data, op.posix, e.Ret, e.Size)
	if ef.hasB {
		e.Bytes = ef.b
	}
	atFile := r.ends.get(e.FileID)
	want := atFile
	if st != nil {
		want = st.expectedOffset(e.FileID, atFile)
	}
	switch {
	case ef.hasNX:
		e.Offset = NoOffset
	case ef.hasX:
		e.Offset = want + ef.x
	case data:
		e.Offset = want
	default:
		e.Offset = NoOffset
	}
	if e.Offset != NoOffset {
		next := nextOffset(data, e.Offset, e.Bytes)
		r.ends.set(e.FileID, next)
		if st != nil {
			st.setEnd(e.FileID, e.Offset, next, atFile)
		}
	} else if st != nil {
		st.hasEnd = false
	}
	if st != nil {
		st.opInfo = op
		st.file, st.size, st.aux = e.FileID, e.Size, e.Aux
	}
	e.StartNs = r.prevStart + ef.t
	r.prevStart = e.StartNs
	e.EndNs = e.StartNs + ef.d
	return e, nil
}

// opInfo is an operation name with what the reader derives from it.
type opInfo struct {
	name  string
	layer Layer
	data  bool // IsData
	posix bool // layer == LayerPOSIX
}

func newOpInfo(name string) *opInfo {
	l := LayerOf(name)
	return &opInfo{name: name, layer: l, data: IsData(name), posix: l == LayerPOSIX}
}

// op returns the event's operation, interned: the previous event's, or
// one from the table (up to maxOps names), or a new one.
func (r *Reader) op(ef *eventFields) (*opInfo, error) {
	if ef.opEscaped {
		var name string
		if err := json.Unmarshal(ef.op, &name); err != nil {
			return nil, r.formatError("o", err)
		}
		return newOpInfo(name), nil
	}
	if r.lastOp != nil && string(ef.op) == r.lastOp.name {
		return r.lastOp, nil
	}
	op, ok := r.ops[string(ef.op)]
	if !ok {
		op = newOpInfo(string(ef.op))
		if len(r.ops) < maxOps {
			r.ops[op.name] = op
		}
	}
	r.lastOp = op
	return op, nil
}

// eventPrefix starts every event line the writer writes; opKey follows
// it unless the line's context fixed the operation (version 2), then
// the context's key does.
const (
	eventPrefix = `{"k":"e"`
	opKey       = `,"o":"`
)

// scanEvent decodes an event line in the form the writer gives it: the
// kind, then an unescaped operation (absent where version 2 omits it),
// then integer fields with one- or
// two-letter keys, no spaces. It reports false on anything else (then ef
// holds nothing of use) and leaves that line to scanLine, which reads
// every form and says what is wrong; on the lines it takes, its fields
// are exactly scanLine's.
func scanEvent(b []byte, ef *eventFields) bool {
	if len(b) < len(eventPrefix) || string(b[:len(eventPrefix)]) != eventPrefix {
		return false
	}
	i := len(eventPrefix)
	if len(b) >= i+len(opKey) && string(b[i:i+len(opKey)]) == opKey {
		i += len(opKey)
		j := i
		for ; j < len(b) && b[j] != '"'; j++ {
			if b[j] == '\\' || b[j] < 0x20 {
				return false
			}
		}
		if j >= len(b) {
			return false
		}
		ef.op, ef.hasOp = b[i:j], true
		i = j + 1
	}
	for {
		// ,"k": or ,"kk": then an integer
		if i+5 >= len(b) || b[i] != ',' || b[i+1] != '"' {
			return i == len(b)-1 && b[i] == '}'
		}
		k0, k1 := b[i+2], b[i+3]
		if k1 == '"' {
			k1 = 0
			i += 4
		} else {
			if i+6 >= len(b) || b[i+4] != '"' {
				return false
			}
			i += 5
		}
		if b[i] != ':' {
			return false
		}
		i++
		neg := i < len(b) && b[i] == '-'
		if neg {
			i++
		}
		start := i
		var u uint64
		for ; i < len(b) && b[i]-'0' <= 9; i++ {
			u = u*10 + uint64(b[i]-'0')
		}
		// At most 18 digits: no overflow; longer numbers and leading
		// zeros are scanLine's to judge.
		if n := i - start; n == 0 || n > 18 || (n > 1 && b[start] == '0') {
			return false
		}
		v := int64(u)
		if neg {
			v = -v
		}
		// The fields are stored here rather than through setInt: the
		// call per field cost about 220 instructions per event more
		// (callgrind, BenchmarkDecodePaths/fast-reuse), a sixth of the
		// whole decoding.
		if k1 != 0 {
			if k0 != 'n' || k1 != 'x' {
				return false
			}
			ef.hasNX = v != 0
			continue
		}
		switch k0 {
		case 'f':
			ef.f, ef.hasF = v, true
		case 'c':
			ef.c = v
		case 'i':
			ef.i, ef.hasI = v, true
		case 's':
			ef.s, ef.hasS = v, true
		case 'r':
			ef.r, ef.hasR = v, true
		case 'b':
			ef.b, ef.hasB = v, true
		case 'e':
			ef.e = v
		case 'a':
			ef.a, ef.hasA = v, true
		case 'q':
			ef.q = v
		case 'p':
			ef.p = v
		case 'x':
			ef.x, ef.hasX = v, true
		case 't':
			ef.t, ef.hasT = v, true
		case 'd':
			ef.d, ef.hasD = v, true
		default:
			return false
		}
	}
}

// scanLine walks a flat JSON object, collecting the event fields into ef.
// It returns the record kind ("" when absent or escaped) and whether some
// value is an object or array (then the line is left to encoding/json).
func scanLine(b []byte, ef *eventFields) (kind string, complex bool, err error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return "", false, errors.New("not a JSON object")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return "", false, errors.New("expected a key")
			}
			key, esc, j, err := scanString(b, i)
			if err != nil {
				return "", false, err
			}
			if esc {
				key = nil // an escaped key matches none of ours
			}
			i = skipSpace(b, j)
			if i >= len(b) || b[i] != ':' {
				return "", false, fmt.Errorf("expected ':' after key %q", key)
			}
			i = skipSpace(b, i+1)
			if i >= len(b) {
				return "", false, fmt.Errorf("missing value of key %q", key)
			}
			switch c := b[i]; {
			case c == '"':
				s, sesc, j, err := scanString(b, i)
				if err != nil {
					return "", false, err
				}
				switch string(key) {
				case "k":
					if sesc {
						complex = true // leave the escaped kind to encoding/json
					} else {
						kind = string(s)
					}
				case "o":
					ef.hasOp = true
					if sesc {
						ef.op, ef.opEscaped = b[i:j], true
					} else {
						ef.op = s
					}
				default:
					if isEventIntKey(key) {
						ef.bad(string(key), errors.New("a string where a number belongs"))
					}
				}
				i = j
			case c == '-' || (c >= '0' && c <= '9'):
				j := i
				for j < len(b) && (b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || (b[j] >= '0' && b[j] <= '9')) {
					j++
				}
				if isEventIntKey(key) {
					v, ok := parseInt(b[i:j])
					if !ok {
						ef.bad(string(key), fmt.Errorf("bad integer %q", b[i:j]))
					} else {
						ef.setInt(key, v)
					}
				} else if string(key) == "o" || string(key) == "k" {
					ef.bad(string(key), errors.New("a number where a string belongs"))
				}
				i = j
			case c == '{' || c == '[':
				j, err := skipComposite(b, i)
				if err != nil {
					return "", false, err
				}
				complex = true
				i = j
			default:
				var lit string
				switch {
				case bytes.HasPrefix(b[i:], []byte("null")):
					lit = "null"
				case bytes.HasPrefix(b[i:], []byte("true")):
					lit = "true"
				case bytes.HasPrefix(b[i:], []byte("false")):
					lit = "false"
				default:
					return "", false, fmt.Errorf("bad value of key %q", key)
				}
				if isEventIntKey(key) || string(key) == "o" {
					ef.bad(string(key), fmt.Errorf("%s where a value belongs", lit))
				}
				i += len(lit)
			}
			i = skipSpace(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			return "", false, errors.New("expected ',' or '}'")
		}
	}
	if skipSpace(b, i) != len(b) {
		return "", false, errors.New("data after the JSON object")
	}
	return kind, complex, nil
}

func isEventIntKey(key []byte) bool {
	switch string(key) {
	case "f", "c", "i", "s", "r", "b", "e", "a", "x", "nx", "t", "d", "q", "p":
		return true
	}
	return false
}

func (ef *eventFields) setInt(key []byte, v int64) {
	switch string(key) {
	case "f":
		ef.f, ef.hasF = v, true
	case "c":
		ef.c = v
	case "i":
		ef.i, ef.hasI = v, true
	case "s":
		ef.s, ef.hasS = v, true
	case "r":
		ef.r, ef.hasR = v, true
	case "b":
		ef.b, ef.hasB = v, true
	case "e":
		ef.e = v
	case "a":
		ef.a, ef.hasA = v, true
	case "q":
		ef.q = v
	case "p":
		ef.p = v
	case "x":
		ef.x, ef.hasX = v, true
	case "nx":
		ef.hasNX = v != 0
	case "t":
		ef.t, ef.hasT = v, true
	case "d":
		ef.d, ef.hasD = v, true
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanString scans the JSON string starting at b[i] == '"'. It returns its
// content (raw, escapes included), whether it holds escapes, and the index
// after the closing quote.
func scanString(b []byte, i int) (s []byte, escaped bool, next int, err error) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], escaped, j + 1, nil
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return nil, false, 0, errors.New("control character in a string")
		}
	}
	return nil, false, 0, errors.New("unterminated string")
}

// skipComposite skips the object or array starting at b[i]; encoding/json
// validates it later.
func skipComposite(b []byte, i int) (int, error) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			_, _, next, err := scanString(b, j)
			if err != nil {
				return 0, err
			}
			j = next - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, errors.New("unterminated object or array")
}

// parseInt parses a JSON integer without allocating.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 19 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// MarshalJSON writes the event as `iopred events` prints it: long field
// names, offset and rank null when unknown.
func (e *Event) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(make([]byte, 0, 256)), nil
}

// AppendJSON appends the MarshalJSON form of e to b.
func (e *Event) AppendJSON(b []byte) []byte {
	layer := e.Layer
	if layer == "" {
		layer = LayerOf(e.Op)
	}
	b = append(b, `{"layer":`...)
	b = appendJSONString(b, string(layer))
	b = append(b, `,"op":`...)
	b = appendJSONString(b, e.Op)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, e.Path)
	b = append(b, `,"file_id":`...)
	b = strconv.AppendUint(b, uint64(e.FileID), 10)
	b = append(b, `,"offset":`...)
	if e.Offset == NoOffset {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, e.Offset, 10)
	}
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, e.Size, 10)
	b = append(b, `,"ret":`...)
	b = strconv.AppendInt(b, e.Ret, 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, e.Bytes, 10)
	b = append(b, `,"start_ns":`...)
	b = strconv.AppendInt(b, e.StartNs, 10)
	b = append(b, `,"end_ns":`...)
	b = strconv.AppendInt(b, e.EndNs, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(e.Tid), 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(e.PID), 10)
	b = append(b, `,"rank":`...)
	b = appendRank(b, e.Rank)
	b = append(b, `,"ctx":`...)
	b = strconv.AppendUint(b, e.Ctx, 10)
	b = append(b, `,"errno":`...)
	b = strconv.AppendInt(b, int64(e.Errno), 10)
	b = append(b, `,"aux":`...)
	b = strconv.AppendInt(b, e.Aux, 10)
	if e.Seq != 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, e.Seq, 10)
	}
	if e.Parent != 0 {
		b = append(b, `,"parent":`...)
		b = strconv.AppendInt(b, e.Parent, 10)
	}
	if layer == LayerMPIIO {
		b = append(b, `,"collective":`...)
		b = strconv.AppendBool(b, IsCollective(e.Op))
	}
	return append(b, '}')
}

// FinalFooter returns the footer a complete iopred trace ends with, found
// without decoding the trace: the frame boundaries come from the zstd
// block headers, and only the last frame is decompressed. ok is false when
// the file is not an iopred trace, is cut short, or does not end with a
// footer. A Reader that reads the trace to io.EOF returns this footer last
// (Reader.Footer); an analysis that needs the rest of a trace only when its
// footer says so (a model's summary) can decide before reading it.
func FinalFooter(path string) (f *Footer, ok bool) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer fd.Close()
	return finalFooter(fd, path)
}

// finalFooter is FinalFooter on the trace in in, named name.
func finalFooter(in io.Reader, name string) (f *Footer, ok bool) {
	r := &Reader{name: name, br: getBufReader(in), raw: getFrameBuf(), data: getFrameBuf(), rawOnly: true}
	defer r.release()
	// The frame read last and the one read before swap buffers: no copy,
	// and no allocation once the pool has two buffers.
	last := getFrameBuf()
	defer func() { putFrameBuf(last) }()
	for {
		err := r.readFrame()
		if err == errEndOfInput {
			break
		}
		if err != nil {
			return nil, false
		}
		last, r.raw = r.raw, last
	}
	if len(last) == 0 {
		return nil, false
	}
	dec, err := getDecoder()
	if err != nil {
		return nil, false
	}
	defer decoders.Put(dec)
	r.data, err = dec.DecodeAll(last, r.data[:0])
	data := r.data
	if err != nil || len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, false
	}
	data = data[:len(data)-1]
	line := data[bytes.LastIndexByte(data, '\n')+1:]
	if k, err := lineKind(line); err != nil || k != KindFooter {
		return nil, false
	}
	f = new(Footer)
	if err := json.Unmarshal(line, f); err != nil {
		return nil, false
	}
	return f, true
}

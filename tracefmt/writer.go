package tracefmt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Default frame bounds: a crashed process loses at most this much.
const (
	DefaultFrameBytes = 1 << 20
	DefaultFrameAge   = time.Second
)

// WriterOptions bound the frames a Writer produces. Zero values take the
// defaults.
type WriterOptions struct {
	FrameBytes int               // close a frame when its uncompressed size reaches this; default 1 MiB
	FrameAge   time.Duration     // Tick closes a frame whose first record is older than this; default 1 s
	Level      zstd.EncoderLevel // default zstd.SpeedFastest: as small on traces as the default level, with a third of its memory
}

// rawFrameMax is the size below which a frame is stored, not compressed:
// a zstd frame of one raw block, which every zstd decoder reads. The
// header frame and the frames of short-lived processes are this small;
// compressing them would save a few hundred bytes and cost the process
// the encoder's tables (about 300 KiB of fresh memory, a millisecond of
// page faults on some machines).
const rawFrameMax = 4 << 10

// denseIDs is the bound below which per-file state lives in slices
// rather than maps: the preload library numbers files from 1 upwards.
const denseIDs = 1 << 16

// Writer streams a trace: JSON lines gathered into independent zstd frames.
// It is not safe for concurrent use; the preload library calls it from one
// goroutine.
type Writer struct {
	w       io.Writer
	opt     WriterOptions
	enc     *zstd.Encoder
	buf     []byte // the open frame, uncompressed
	scratch []byte // a record's body being encoded
	out     []byte // the compressed frame being written
	opened  time.Time
	err     error

	ctxIndex map[uint64]uint32 // context id -> per-trace index (1, 2, ...)
	files    fileSet

	// The latest event's context and operation, with what Event derives
	// from them: a loop repeats both, and a context's index never changes.
	lastCtx   uint64
	lastIndex uint32
	ctxField  []byte // `,"c":` and lastIndex
	lastOp    string
	lastData  bool // IsData(lastOp)
	lastPOSIX bool // LayerOf(lastOp) == LayerPOSIX

	// Delta state; reset at every frame (ctxs by the frame's number).
	frame     uint64
	ctxs      []ctxState // by context index; 0 for events without one
	prevStart int64
	prevTid   int32
	ends      fileEnds
}

// NewWriter starts a trace on w and writes the header record h in a frame
// of its own, so that even a process killed at once leaves a file that
// names itself. h.Version is set to FormatVersion.
func NewWriter(w io.Writer, h Header, opt WriterOptions) (*Writer, error) {
	if opt.FrameBytes <= 0 {
		opt.FrameBytes = DefaultFrameBytes
	}
	// Leave room for the record that ends a frame: the reader refuses
	// frames that decompress to more than MaxFrameData.
	opt.FrameBytes = min(opt.FrameBytes, MaxFrameData/2)
	if opt.FrameAge <= 0 {
		opt.FrameAge = DefaultFrameAge
	}
	if opt.Level == 0 {
		opt.Level = zstd.SpeedFastest
	}
	wr := &Writer{
		w:   w,
		opt: opt,
		// The frame buffer grows as records come: a process that writes a
		// few records should not pay for a whole frame's memory at start.
		buf:      make([]byte, 0, min(opt.FrameBytes, 32<<10)),
		ctxIndex: make(map[uint64]uint32),
		frame:    1,
	}
	h.Version = FormatVersion
	if err := wr.record(KindHeader, h); err != nil {
		return nil, err
	}
	if err := wr.Flush(); err != nil {
		return nil, err
	}
	return wr, nil
}

// Context defines a context; events may use c.ID afterwards. Defining the
// same id again is a no-op.
func (w *Writer) Context(c Context) error {
	if w.err != nil {
		return w.err
	}
	if _, ok := w.ctxIndex[c.ID]; ok {
		return nil
	}
	if c.ID == 0 {
		return errors.New("tracefmt: context id 0 is reserved for events without a context")
	}
	idx := uint32(len(w.ctxIndex) + 1)
	if c.Frames == nil {
		c.Frames = []Frame{}
	}
	if err := w.record(KindContext, indexedContext{idx, c}); err != nil {
		return err
	}
	w.ctxIndex[c.ID] = idx
	return nil
}

// File defines file id f.ID (any value but 0, which events use for "no
// file"); events may use it afterwards. Defining an id again gives it a new
// path for the events that follow (the C side reuses ids of closed files).
func (w *Writer) File(f File) error {
	if w.err != nil {
		return w.err
	}
	if f.ID == 0 {
		return errors.New("tracefmt: file id 0 is reserved for events without a file")
	}
	if err := w.record(KindFile, f); err != nil {
		return err
	}
	w.files.add(f.ID)
	return nil
}

// Proc records a process event (fork, exec, exit).
func (w *Writer) Proc(p Proc) error {
	if w.err != nil {
		return w.err
	}
	return w.record(KindProc, p)
}

// Region appends a span of the application's own work (see Region).
func (w *Writer) Region(g *Region) error {
	if w.err != nil {
		return w.err
	}
	if g.Name == "" {
		return errors.New("tracefmt: a region without a name")
	}
	return w.record(KindRegion, g)
}

// Counters appends a file's totals (see Counters). The file c.FileID
// must have been defined; c.Path is ignored.
func (w *Writer) Counters(c *Counters) error {
	if w.err != nil {
		return w.err
	}
	if c.FileID == 0 || !w.files.has(c.FileID) {
		return fmt.Errorf("tracefmt: counters of file %d before its definition", c.FileID)
	}
	return w.record(KindCounters, c)
}

// Close writes the footer and closes the open frame. It leaves the
// underlying writer open, and the Writer usable: a process whose exec
// failed goes on recording and ends with a second footer.
func (w *Writer) Close(f Footer) error {
	if w.err != nil {
		return w.err
	}
	if !plainModel(f.Model) {
		if _, err := json.Marshal(f.Model); err != nil {
			// A model summary that JSON cannot hold (a NaN, say) must not
			// cost the trace its footer.
			f.Model = map[string]any{"error": err.Error()}
		}
	}
	if err := w.record(KindFooter, f); err != nil {
		return err
	}
	return w.Flush()
}

// FrameOpen reports whether records wait in the open frame.
func (w *Writer) FrameOpen() bool { return len(w.buf) > 0 }

// Tick closes the open frame if its first record is older than FrameAge.
func (w *Writer) Tick(now time.Time) error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) > 0 && now.Sub(w.opened) >= w.opt.FrameAge {
		return w.Flush()
	}
	return nil
}

// Flush compresses the open frame and writes it with one Write call.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	if len(w.buf) < rawFrameMax {
		w.out = appendRawFrame(w.out[:0], w.buf)
	} else {
		if w.enc == nil {
			if w.enc, w.err = newEncoder(w.opt.Level); w.err != nil {
				return w.err
			}
		}
		w.out = w.enc.EncodeAll(w.buf, w.out[:0])
	}
	w.buf = w.buf[:0]
	w.prevStart, w.prevTid = 0, 0
	w.frame++
	w.ends.reset()
	if _, err := w.w.Write(w.out); err != nil {
		w.err = fmt.Errorf("tracefmt: writing frame: %w", err)
		return w.err
	}
	return nil
}

// newEncoder makes the zstd encoder, on the first frame large enough to
// be worth compressing: its tables cost a short-lived process more time
// (fresh pages) than the trace could save.
func newEncoder(level zstd.EncoderLevel) (*zstd.Encoder, error) {
	// Frames are independent, so a window larger than a frame buys
	// nothing, and the default window (8 MiB) would cost the traced process
	// megabytes of encoder tables.
	const window = 256 << 10
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(true), zstd.WithZeroFrames(false), zstd.WithWindowSize(window), zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, fmt.Errorf("tracefmt: zstd encoder: %w", err)
	}
	return enc, nil
}

// startRecord notes the time a frame opens.
func (w *Writer) startRecord() {
	if len(w.buf) == 0 {
		w.opened = time.Now()
	}
}

// endRecord closes the frame when it has grown to FrameBytes. When the
// frame first grows past rawFrameMax, it will be compressed when it
// closes: the encoder is made now, and its match table's pages touched by
// compressing the frame so far once (the result is dropped). A process's
// last frame closes on its exit's path, where the encoder's fresh pages
// (some 80 page faults, a 256 KiB table) would delay the exit; the
// preload library's consumer reaches here while the program still runs.
func (w *Writer) endRecord() error {
	if len(w.buf) >= w.opt.FrameBytes {
		return w.Flush()
	}
	if w.enc == nil && len(w.buf) >= rawFrameMax {
		if w.enc, w.err = newEncoder(w.opt.Level); w.err != nil {
			return w.err
		}
		w.out = w.enc.EncodeAll(w.buf, w.out[:0])
	}
	return nil
}

// indexedContext is a context record: the context with its index.
type indexedContext struct {
	Index uint32 `json:"i"`
	Context
}

// record appends a non-event record, as encoding/json marshals it, with
// the kind spliced in as the first key.
func (w *Writer) record(k Kind, v any) error {
	body, ok := appendBody(w.scratch[:0], v)
	if ok {
		w.scratch = body
	} else {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return fmt.Errorf("tracefmt: encoding %s record: %w", kindName(k), err)
		}
	}
	w.startRecord()
	w.buf = append(w.buf, `{"k":"`...)
	w.buf = append(w.buf, k...)
	w.buf = append(w.buf, '"')
	if len(body) > 2 {
		w.buf = append(w.buf, ',')
	}
	w.buf = append(w.buf, body[1:]...)
	w.buf = append(w.buf, '\n')
	return w.endRecord()
}

// Event appends one event. e.Path, e.Rank, e.PID and e.Layer are ignored:
// the reader derives them. The context e.Ctx (unless 0) and the file
// e.FileID (unless 0) must have been defined. The Writer keeps no
// reference to e.
func (w *Writer) Event(e *Event) error {
	if w.err != nil {
		return w.err
	}
	var ctx uint32
	if e.Ctx != 0 && e.Ctx == w.lastCtx {
		ctx = w.lastIndex
	} else if e.Ctx != 0 {
		var ok bool
		if ctx, ok = w.ctxIndex[e.Ctx]; !ok {
			return fmt.Errorf("tracefmt: event uses context %d before its definition", e.Ctx)
		}
		w.lastCtx, w.lastIndex = e.Ctx, ctx
		w.ctxField = appendUint(append(w.ctxField[:0], `,"c":`...), uint64(ctx))
	}
	if e.FileID != 0 && !w.files.has(e.FileID) {
		return fmt.Errorf("tracefmt: event uses file %d before its definition", e.FileID)
	}
	w.startRecord()
	if int(ctx) >= len(w.ctxs) {
		w.ctxs = append(w.ctxs, make([]ctxState, int(ctx)+1-len(w.ctxs))...)
	}
	st := &w.ctxs[ctx]
	if st.frame != w.frame {
		// The context's first event in this frame: nothing is fixed yet.
		*st = ctxState{frame: w.frame}
	}
	b := append(w.buf, `{"k":"e"`...)
	if e.Op != st.op || !st.opSet {
		if e.Op != w.lastOp || w.lastOp == "" {
			w.lastOp, w.lastData, w.lastPOSIX = e.Op, IsData(e.Op), LayerOf(e.Op) == LayerPOSIX
		}
		st.op, st.opSet, st.data, st.posix = e.Op, true, w.lastData, w.lastPOSIX
		b = appendJSONString(append(b, `,"o":`...), e.Op)
	}
	if e.FileID != st.file {
		b = appendUint(append(b, `,"f":`...), uint64(e.FileID))
		st.file = e.FileID
	}
	if ctx != 0 {
		b = append(b, w.ctxField...)
	}
	if e.Tid != w.prevTid {
		b = appendInt(append(b, `,"i":`...), int64(e.Tid))
		w.prevTid = e.Tid
	}
	if e.Size != st.size {
		b = appendInt(append(b, `,"s":`...), e.Size)
		st.size = e.Size
	}
	data := st.data
	if e.Ret != expectedRet(data, e.Size) {
		b = appendInt(append(b, `,"r":`...), e.Ret)
	}
	if e.Bytes != expectedBytesIn(data, st.posix, e.Ret, e.Size) {
		b = appendInt(append(b, `,"b":`...), e.Bytes)
	}
	if e.Errno != 0 {
		b = appendInt(append(b, `,"e":`...), int64(e.Errno))
	}
	if e.Aux != st.aux {
		b = appendInt(append(b, `,"a":`...), e.Aux)
		st.aux = e.Aux
	}
	if e.Seq != 0 {
		b = appendInt(append(b, `,"q":`...), e.Seq)
	}
	if e.Parent != 0 {
		b = appendInt(append(b, `,"p":`...), e.Parent)
	}
	if e.Offset == NoOffset {
		if data {
			b = append(b, `,"nx":1`...)
		}
		st.hasEnd = false
	} else {
		atFile := w.ends.get(e.FileID)
		want := st.expectedOffset(e.FileID, atFile)
		if !data || e.Offset != want {
			b = appendInt(append(b, `,"x":`...), e.Offset-want)
		}
		next := nextOffset(data, e.Offset, e.Bytes)
		w.ends.set(e.FileID, next)
		st.setEnd(e.FileID, e.Offset, next, atFile)
	}
	b = appendInt(append(b, `,"t":`...), e.StartNs-w.prevStart)
	w.prevStart = e.StartNs
	b = appendInt(append(b, `,"d":`...), e.EndNs-e.StartNs)
	b = append(b, '}', '\n')
	w.buf = b
	return w.endRecord()
}

// ctxState is what a context's latest event in the open frame fixed
// (format version 2): an event of the same context omits the operation,
// file, size and aux when they are the same, and its offset is expected
// where the context's last one ended (plus its stride, a gap seen twice
// in a row) unless that one followed the file's expected offset. The
// writer and the reader keep it alike.
type ctxState struct {
	frame  uint64 // the frame it belongs to; any other: nothing fixed
	op     string
	opSet  bool    // op holds the context's operation in this frame
	data   bool    // IsData(op)
	posix  bool    // LayerOf(op) == LayerPOSIX
	opInfo *opInfo // the reader's: the operation with what it derives
	file   uint32
	size   int64
	aux    int64
	hasEnd bool   // the last event had an offset
	byFile bool   // ... and it was at the file's expected offset
	endOf  uint32 // ... on this file
	end    int64  // ... and ended there
	gap    int64  // its offset minus the end of the one before (same file), or 0
	stride int64  // gap when the one before had the same gap, else 0
}

// expectedOffset is the offset a data event of the context on file omits:
// the file's expected offset atFile, unless the context's last event in
// the frame was on the same file away from the file's expectation; then
// where that event ended plus the context's stride.
func (s *ctxState) expectedOffset(file uint32, atFile int64) int64 {
	if !s.hasEnd || s.byFile || s.endOf != file {
		return atFile
	}
	return s.end + s.stride
}

// setEnd records an event at offset off on file that ended at end;
// atFile was the file's expected offset.
func (s *ctxState) setEnd(file uint32, off, end, atFile int64) {
	var gap int64
	if s.hasEnd && s.endOf == file {
		gap = off - s.end
	}
	s.stride = 0
	if gap == s.gap {
		s.stride = gap
	}
	s.hasEnd, s.byFile, s.endOf, s.end, s.gap = true, off == atFile, file, end, gap
}

// digitPairs holds "00" to "99".
const digitPairs = "0001020304050607080910111213141516171819" +
	"2021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859" +
	"6061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// appendUint appends u in decimal, as strconv.AppendUint does, without
// its call chain: it counts the digits, then writes them in place, two
// at a time.
func appendUint(b []byte, u uint64) []byte {
	if u < 10 {
		return append(b, byte('0'+u))
	}
	n := decimalDigits(u)
	b = slices.Grow(b, n)
	b = b[:len(b)+n]
	d := b[len(b)-n:]
	i := n
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		d[i+1], d[i] = digitPairs[r+1], digitPairs[r]
		u = q
	}
	if u >= 10 {
		d[1], d[0] = digitPairs[u*2+1], digitPairs[u*2]
	} else {
		d[0] = byte('0' + u)
	}
	return b
}

// appendInt appends v in decimal, as strconv.AppendInt does.
// powersOf10 holds 10^0 to 10^19, the largest that uint64 holds.
var powersOf10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// decimalDigits is the number of decimal digits of u > 0: from its bit
// length (log10(2) is about 1233/4096, which never overshoots up to 2^64)
// and one comparison, instead of a division per digit.
func decimalDigits(u uint64) int {
	t := bits.Len64(u) * 1233 >> 12
	if u >= powersOf10[t] {
		t++
	}
	return t
}

func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		// -v wraps for the smallest int64, whose magnitude uint64 holds.
		return appendUint(append(b, '-'), uint64(-v))
	}
	return appendUint(b, uint64(v))
}

// expectedRet is the return value an event line omits: data calls usually
// return their size, other calls 0.
func expectedRet(data bool, size int64) int64 {
	if data {
		return size
	}
	return 0
}

// expectedBytesIn is the Bytes value an event line omits: a POSIX data
// call (posix says whether it is one) moves what it returns (nothing on
// failure), a stdio or MPI-IO data call what it asked for, any other call
// nothing.
func expectedBytesIn(data, posix bool, ret, size int64) int64 {
	if !data {
		return 0
	}
	if posix {
		if ret < 0 {
			return 0
		}
		return ret
	}
	return size
}

// nextOffset is where the next data event on the same file is expected to
// start: after the bytes a data call moved, or at the offset a non-data
// call (lseek, fseek) reports.
func nextOffset(data bool, off, moved int64) int64 {
	if data && moved > 0 {
		return off + moved
	}
	return off
}

// fileSet holds the defined file ids.
type fileSet struct {
	dense  []bool
	sparse map[uint32]bool
}

func (s *fileSet) add(id uint32) {
	if id < denseIDs {
		if int(id) >= len(s.dense) {
			s.dense = append(s.dense, make([]bool, int(id)+1-len(s.dense))...)
		}
		s.dense[id] = true
		return
	}
	if s.sparse == nil {
		s.sparse = make(map[uint32]bool)
	}
	s.sparse[id] = true
}

func (s *fileSet) has(id uint32) bool {
	if id < denseIDs {
		return int(id) < len(s.dense) && s.dense[id]
	}
	return s.sparse[id]
}

// fileEnds holds, per file, where the next data event is expected to start.
// Files not seen in the current frame expect offset 0.
type fileEnds struct {
	dense  []int64
	sparse map[uint32]int64
}

func (f *fileEnds) get(id uint32) int64 {
	if id < denseIDs {
		if int(id) < len(f.dense) {
			return f.dense[id]
		}
		return 0
	}
	return f.sparse[id]
}

func (f *fileEnds) set(id uint32, off int64) {
	if id < denseIDs {
		if int(id) >= len(f.dense) {
			f.dense = append(f.dense, make([]int64, int(id)+1-len(f.dense))...)
		}
		f.dense[id] = off
		return
	}
	if f.sparse == nil {
		f.sparse = make(map[uint32]int64)
	}
	f.sparse[id] = off
}

func (f *fileEnds) reset() {
	clear(f.dense)
	clear(f.sparse)
}

func kindName(k Kind) string {
	switch k {
	case KindHeader:
		return "header"
	case KindContext:
		return "context"
	case KindFile:
		return "file"
	case KindEvent:
		return "event"
	case KindProc:
		return "proc"
	case KindFooter:
		return "footer"
	case KindCounters:
		return "counters"
	case KindRegion:
		return "region"
	}
	return strconv.Quote(string(k))
}

// appendRawFrame appends p as a zstd frame of a single raw block, with the
// frame's content size and checksum (RFC 8878, sections 3.1.1 and 3.1.1.2).
// p must be at most 128 KiB, the largest block.
func appendRawFrame(dst, p []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, 0xFD2FB528)
	// Frame header descriptor: single segment (no window descriptor),
	// content checksum, and the smallest content size field that fits.
	switch n := len(p); {
	case n < 256:
		dst = append(dst, 0x24, byte(n))
	case n < 65536+256:
		dst = append(dst, 0x64)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(n-256))
	default:
		dst = append(dst, 0xA4)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	}
	// Block header: last block, raw, its size.
	h := uint32(len(p))<<3 | 1
	dst = append(dst, byte(h), byte(h>>8), byte(h>>16))
	dst = append(dst, p...)
	return binary.LittleEndian.AppendUint32(dst, uint32(xxh64(p)))
}

// xxh64 is XXH64 with seed 0, the checksum of zstd frames.
func xxh64(b []byte) uint64 {
	const (
		p1 uint64 = 11400714785074694791
		p2 uint64 = 14029467366897019727
		p3 uint64 = 1609587929392839161
		p4 uint64 = 9650029242287828579
		p5 uint64 = 2870177450012600261
	)
	round := func(acc, in uint64) uint64 {
		acc += in * p2
		acc = bits.RotateLeft64(acc, 31)
		return acc * p1
	}
	merge := func(acc, v uint64) uint64 {
		acc ^= round(0, v)
		return acc*p1 + p4
	}
	n := len(b)
	var h uint64
	if n >= 32 {
		q1, q2 := p1, p2 // variables: the sums wrap around
		v1, v2, v3, v4 := q1+q2, q2, uint64(0), 0-q1
		for ; len(b) >= 32; b = b[32:] {
			v1 = round(v1, binary.LittleEndian.Uint64(b[0:]))
			v2 = round(v2, binary.LittleEndian.Uint64(b[8:]))
			v3 = round(v3, binary.LittleEndian.Uint64(b[16:]))
			v4 = round(v4, binary.LittleEndian.Uint64(b[24:]))
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = merge(h, v1)
		h = merge(h, v2)
		h = merge(h, v3)
		h = merge(h, v4)
	} else {
		h = p5
	}
	h += uint64(n)
	for ; len(b) >= 8; b = b[8:] {
		h ^= round(0, binary.LittleEndian.Uint64(b))
		h = bits.RotateLeft64(h, 27)*p1 + p4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * p1
		h = bits.RotateLeft64(h, 23)*p2 + p3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * p5
		h = bits.RotateLeft64(h, 11) * p1
	}
	h ^= h >> 33
	h *= p2
	h ^= h >> 29
	h *= p3
	h ^= h >> 32
	return h
}

// The writer's records are few but the first use of encoding/json's
// reflection for each type cost a short-lived process about half a
// millisecond: appendBody writes the records the writer makes exactly as
// encoding/json would (TestAppendBodyAsJSON compares the two), and leaves
// anything unusual to encoding/json.

// appendBody appends the JSON object v, byte for byte as json.Marshal
// writes it, when v is a record of this package that it knows how to
// write; ok is false otherwise.
func appendBody(b []byte, v any) (_ []byte, ok bool) {
	switch r := v.(type) {
	case Header:
		b = append(b, `{"v":`...)
		b = strconv.AppendInt(b, int64(r.Version), 10)
		b = append(b, `,"prog":`...)
		b = appendJSONString(b, r.Program)
		if len(r.Args) > 0 {
			b = append(b, `,"args":[`...)
			for i, a := range r.Args {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, a)
			}
			b = append(b, ']')
		}
		b = append(b, `,"host":`...)
		b = appendJSONString(b, r.Host)
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(r.PID), 10)
		b = append(b, `,"ppid":`...)
		b = strconv.AppendInt(b, int64(r.PPID), 10)
		b = append(b, `,"rank":`...)
		b = appendRank(b, r.Rank)
		b = append(b, `,"t0_unix_ns":`...)
		b = strconv.AppendInt(b, r.StartUnixNs, 10)
		b = append(b, `,"t0_mono_ns":`...)
		b = strconv.AppendInt(b, r.StartMonoNs, 10)
		b = append(b, `,"ctx_depth":`...)
		b = strconv.AppendInt(b, int64(r.ContextDepth), 10)
		b = append(b, `,"lib":`...)
		b = appendJSONString(b, r.Library)
		if r.Source != "" {
			b = append(b, `,"src":`...)
			b = appendJSONString(b, r.Source)
		}
		if r.JobID != "" {
			b = append(b, `,"job":`...)
			b = appendJSONString(b, r.JobID)
		}
		if r.Procs != 0 {
			b = append(b, `,"procs":`...)
			b = strconv.AppendInt(b, int64(r.Procs), 10)
		}
		if r.ForkUnixNs != 0 {
			b = append(b, `,"fork_unix_ns":`...)
			b = strconv.AppendInt(b, r.ForkUnixNs, 10)
		}
		if r.Shared {
			b = append(b, `,"shared":true`...)
		}
		if r.Partial != "" {
			b = append(b, `,"partial":`...)
			b = appendJSONString(b, r.Partial)
		}
		if r.Job != nil {
			// Once a trace, and only in converted ones: the encoder's cost
			// does not matter.
			j, err := json.Marshal(r.Job)
			if err != nil {
				return b, false
			}
			b = append(append(b, `,"src_job":`...), j...)
		}
		if len(r.Notes) > 0 {
			b = append(b, `,"notes":[`...)
			for i, n := range r.Notes {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, n)
			}
			b = append(b, ']')
		}
		return append(b, '}'), true
	case File:
		b = append(b, `{"id":`...)
		b = strconv.AppendUint(b, uint64(r.ID), 10)
		b = append(b, `,"path":`...)
		b = appendJSONString(b, r.Path)
		return append(b, '}'), true
	case indexedContext:
		b = append(b, `{"i":`...)
		b = strconv.AppendUint(b, uint64(r.Index), 10)
		b = append(b, `,"id":`...)
		b = strconv.AppendUint(b, r.ID, 10)
		b = append(b, `,"frames":`...)
		if r.Frames == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for i, f := range r.Frames {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"mod":`...)
				b = appendJSONString(b, f.Module)
				b = append(b, `,"off":`...)
				b = strconv.AppendUint(b, f.Offset, 10)
				if f.Function != "" {
					b = append(b, `,"fn":`...)
					b = appendJSONString(b, f.Function)
				}
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		return append(b, '}'), true
	case Proc:
		b = append(b, `{"op":`...)
		b = appendJSONString(b, r.Op)
		b = append(b, `,"t":`...)
		b = strconv.AppendInt(b, r.TimeNs, 10)
		if r.Child != 0 {
			b = append(b, `,"child":`...)
			b = strconv.AppendInt(b, int64(r.Child), 10)
		}
		if r.Path != "" {
			b = append(b, `,"path":`...)
			b = appendJSONString(b, r.Path)
		}
		if r.Status != 0 {
			b = append(b, `,"status":`...)
			b = strconv.AppendInt(b, int64(r.Status), 10)
		}
		return append(b, '}'), true
	case Footer:
		if !plainModel(r.Model) {
			return b, false
		}
		b = append(b, `{"reason":`...)
		b = appendJSONString(b, r.Reason)
		b = append(b, `,"t":`...)
		b = strconv.AppendInt(b, r.EndNs, 10)
		b = append(b, `,"events":`...)
		b = strconv.AppendUint(b, r.Events, 10)
		b = append(b, `,"bytes":`...)
		b = strconv.AppendUint(b, r.Bytes, 10)
		b = append(b, `,"dropped":`...)
		b = strconv.AppendUint(b, r.Dropped, 10)
		if len(r.Model) > 0 {
			b = append(b, `,"model":{`...)
			keys := make([]string, 0, len(r.Model))
			for k := range r.Model {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for i, k := range keys {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, k)
				b = append(b, ':')
				b = appendPlain(b, r.Model[k])
			}
			b = append(b, '}')
		}
		if p := r.Prefetch; p != nil {
			b = append(b, `,"prefetch":{"reads":`...)
			b = strconv.AppendUint(b, p.Reads, 10)
			b = append(b, `,"covered":`...)
			b = strconv.AppendUint(b, p.Covered, 10)
			b = append(b, `,"prefetched_bytes":`...)
			b = strconv.AppendUint(b, p.PrefetchedBytes, 10)
			b = append(b, `,"used_bytes":`...)
			b = strconv.AppendUint(b, p.UsedBytes, 10)
			b = append(b, `,"wasted_bytes":`...)
			b = strconv.AppendUint(b, p.WastedBytes, 10)
			b = append(b, `,"calls":`...)
			b = strconv.AppendUint(b, p.Calls, 10)
			b = append(b, `,"misses":`...)
			b = strconv.AppendUint(b, p.Misses, 10)
			if p.Capped != 0 {
				b = append(b, `,"capped":`...)
				b = strconv.AppendUint(b, p.Capped, 10)
			}
			if p.TableFiles != 0 {
				b = append(b, `,"table_files":`...)
				b = strconv.AppendInt(b, int64(p.TableFiles), 10)
			}
			b = append(b, '}')
		}
		return append(b, '}'), true
	}
	return b, false
}

// plainModel reports whether appendPlain writes every value of m: nil,
// booleans, strings, integers and finite floats.
func plainModel(m map[string]any) bool {
	for _, v := range m {
		switch x := v.(type) {
		case nil, bool, string, int, int32, int64, uint, uint32, uint64:
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// appendPlain appends a value plainModel accepts, as encoding/json does.
func appendPlain(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return appendJSONString(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case float64:
		// encoding/json's float64 format: shortest representation, in
		// exponent form below 1e-6 and from 1e21, with a two-digit
		// negative exponent shortened ("e-07" becomes "e-7").
		format := byte('f')
		if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
			format = 'e'
		}
		b = strconv.AppendFloat(b, x, format, -1, 64)
		if format == 'e' {
			if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
				b[n-2] = b[n-1]
				b = b[:n-1]
			}
		}
		return b
	}
	panic("tracefmt: appendPlain of a value plainModel refuses")
}

// appendRank appends a rank, null when unknown.
func appendRank(b []byte, rank *int) []byte {
	if rank == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*rank), 10)
}

// appendJSONString appends s quoted as encoding/json quotes it: printable
// ASCII other than the quote, the backslash and the HTML characters <, >
// and & is copied; a string with anything else goes through
// encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

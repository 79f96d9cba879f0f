package serverlog

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// The local store keeps server-side throughput compact and indexed by day,
// so that months of logs are read from their sources once and then
// served by time window at the speed of decompression, decoding only the
// quarter hours a window needs.
//
// Layout of a store directory:
//
//	index.json             the index: version, step, OSTs, days (written last, atomically)
//	days/YYYY-MM-DD.G.day  one chunk per UTC day, G its generation
//
// A chunk holds the cells whose start falls in its day, on the grid of
// the store's step aligned to the Unix epoch, in blocks of 15 minutes of
// cells (one cell when the step is longer), each block one zstd frame.
// It starts with a header: magic "iopredSL", version 2, the start of its
// first cell and the step in ns, the cell count, the OST count, the block
// count, the OST names, then per block its first cell, its cell count,
// the offset (from the chunk's start) and length of its frame, and the
// block's decompressed length. A block holds, per OST, its read column and
// then its write column over the block's cells. A column is a byte of
// shift s, then per cell a uvarint: 0 for an unknown cell (NaN), else
// 1 + (the cell's bytes, rounded to a whole byte, >> s), where s is the
// number of trailing zero bits all of the column's byte counts share
// (Lustre moves whole pages: 12 bits saved per value). Rates come back as
// bytes / step. A window reads the header and the frames of the blocks it
// overlaps, and a decompressed length is checked against the table before
// anything is allocated for it.
//
// Version 1 chunks (and stores whose index says version 1) are still
// read: the same header without the block count and table, and one zstd
// frame for the whole day, decoded whole. An import writes version 2
// chunks only and marks the index version 2 once it names one.
//
// Every write goes to a new file that is renamed into place, and the
// index naming it is replaced the same way only after the chunk is on
// disk; the old chunk is removed last. An interrupted import leaves the
// previous index and its chunks, readable; files no index names are
// removed by the next import.

const (
	storeVersion = 2
	chunkMagic   = "iopredSL"
	indexName    = "index.json"
	daysDir      = "days"
	// blockSpan is a block's time: a 20-minute window decodes 2 or 3
	// blocks, and blocks of 256 OSTs at 5 s take 0.6% more bytes than
	// one frame per day (BenchmarkStoreWindow's center: 2.744 bytes per
	// OST sample, not 2.728).
	blockSpan = 15 * time.Minute
	// blockEntrySize is a block table entry: first cell, cells (uint32),
	// frame offset (uint64), frame length, decompressed length (uint32).
	blockEntrySize = 4 + 4 + 8 + 4 + 4
)

type storeIndex struct {
	Version int        `json:"version"`
	StepNS  int64      `json:"step_ns"`
	OSTs    []string   `json:"osts"`
	Days    []storeDay `json:"days"`
	Gen     int64      `json:"generation"`
	Sources []string   `json:"sources,omitempty"` // what was imported, as flags
	// Origins says, per source, the zone its times were read in and the
	// OSTs and times it brought, so that a later import can tell a
	// source read again from different data for the same OSTs and times.
	Origins []storeOrigin `json:"origins,omitempty"`
	// Resets are the counter resets the imports met.
	Resets []storeReset `json:"counter_resets,omitempty"`
}

// storeOrigin is one source of a store.
type storeOrigin struct {
	Source string `json:"source"`
	// ID names the source's content where it can tell (the same LMT
	// database copied elsewhere has the same ID).
	ID string `json:"id,omitempty"`
	// TZ is the zone of the source's times written without one; empty
	// when its times carry their zone (Unix times) or it was imported
	// from memory.
	TZ     string   `json:"tz,omitempty"`
	OSTs   []string `json:"osts"`
	FromNS int64    `json:"from_ns"`
	ToNS   int64    `json:"to_ns"`
}

// covers tells whether the origin brought data of ost at ns (within the
// span it was imported over).
func (o *storeOrigin) covers(ost string, ns int64) bool {
	return ns >= o.FromNS && ns < o.ToNS && slices.Contains(o.OSTs, ost)
}

// storeReset is a counter reset an import met.
type storeReset struct {
	OST      string `json:"ost"`
	AfterNS  int64  `json:"after_ns"`
	BeforeNS int64  `json:"before_ns"`
	Source   string `json:"source"`
}

type storeDay struct {
	Day        string  `json:"day"` // YYYY-MM-DD, UTC
	File       string  `json:"file"`
	StartNS    int64   `json:"start_ns"` // start of the chunk's first cell
	Cells      int     `json:"cells"`
	First      int     `json:"first_known"` // first cell any OST knows
	Last       int     `json:"last_known"`  // last cell any OST knows
	OSTs       int     `json:"osts"`
	Samples    int64   `json:"ost_samples"` // (Last-First+1) * OSTs
	Bytes      int64   `json:"file_bytes"`
	ReadBytes  float64 `json:"read_bytes"`
	WriteBytes float64 `json:"write_bytes"`
	// Complete lists the sources whose span covered the whole day when
	// they were imported: a later import skips the day for them.
	Complete []string `json:"complete_sources,omitempty"`
}

// Store is a local store of per-OST rates; it is a Source.
type Store struct {
	dir string
	idx storeIndex
	pos map[string]int // OST name -> index in idx.OSTs

	mu      sync.Mutex
	heads   map[string]*chunkHeader // by file
	cache   []*blockData            // most recently used last
	held    int                     // values the cache holds
	decoded int                     // blocks decoded so far (for tests)
}

// dayData is one decoded chunk, its columns indexed like the store's OSTs
// (nil: no data for that OST that day).
type dayData struct {
	file        string
	version     int // of the chunk
	start       int64
	cells       int
	read, write [][]float64
}

// blockData is one decoded block of a chunk: its cells from first on,
// its columns indexed like the store's OSTs (nil: no data that day).
type blockData struct {
	file         string
	block        int
	first, cells int
	read, write  [][]float64
}

// storeCacheValues is how many decoded values a Store keeps (two days of
// 256 OSTs at 5 s, 141 MB): job windows come in clusters around a day,
// and AID's windows of 20 minutes slide by less than a block.
const storeCacheValues = 2 * 2 * 256 * 17280

// chunkHeader is a chunk's header, checked against the store.
type chunkHeader struct {
	version int
	start   int64
	cells   int
	cols    []int // the store's index of each OST the chunk holds
	blocks  []chunkBlock
}

// chunkBlock locates one block's frame in its chunk. raw is the block's
// decompressed length, -1 in a version 1 chunk (whose frame is checked
// against the bounds the cells give).
type chunkBlock struct {
	first, cells int
	off, n       int64
	raw          int
}

// IsStore tells whether dir holds a store.
func IsStore(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, indexName))
	return err == nil && st.Mode().IsRegular()
}

// OpenStore opens the store in dir for reading. Its rates are on the
// store's own step: an opts.Step that differs is an error (import again
// into a store of that step instead).
func OpenStore(dir string, opts Options) (Source, error) {
	s, err := openStore(dir)
	if err != nil {
		return nil, err
	}
	if opts.Step != 0 && int64(opts.Step) != s.idx.StepNS {
		return nil, fmt.Errorf("%s: the store's step is %v, not %v", dir, time.Duration(s.idx.StepNS), opts.Step)
	}
	return s, nil
}

func openStore(dir string) (*Store, error) {
	b, err := os.ReadFile(filepath.Join(dir, indexName))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: not an iopred store (no %s; create one with iopred serverlog import)", dir, indexName)
		}
		return nil, err
	}
	s := &Store{dir: dir}
	if err := json.Unmarshal(b, &s.idx); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, indexName), err)
	}
	if s.idx.Version < 1 || s.idx.Version > storeVersion {
		return nil, fmt.Errorf("%s: store version %d, this iopred reads 1 to %d", dir, s.idx.Version, storeVersion)
	}
	if s.idx.StepNS <= 0 {
		return nil, fmt.Errorf("%s: step %d ns", filepath.Join(dir, indexName), s.idx.StepNS)
	}
	s.pos = map[string]int{}
	for i, n := range s.idx.OSTs {
		s.pos[n] = i
	}
	return s, nil
}

// Span covers the cells from the first one any OST knows to the last.
func (s *Store) Span() (from, to time.Time, step time.Duration, err error) {
	step = time.Duration(s.idx.StepNS)
	if len(s.idx.Days) == 0 {
		return time.Time{}, time.Time{}, step, fmt.Errorf("%s: empty store", s.dir)
	}
	first, last := s.idx.Days[0], s.idx.Days[len(s.idx.Days)-1]
	return time.Unix(0, first.StartNS+int64(first.First)*s.idx.StepNS),
		time.Unix(0, last.StartNS+int64(last.Last+1)*s.idx.StepNS), step, nil
}

// OSTs lists the store's OSTs in the order they were first imported.
func (s *Store) OSTs() ([]string, error) { return slices.Clone(s.idx.OSTs), nil }

// Close releases the decoded blocks.
func (s *Store) Close() error {
	s.mu.Lock()
	s.dropCache()
	s.mu.Unlock()
	return nil
}

// dropCache forgets decoded blocks and headers (the caller holds s.mu or
// owns s).
func (s *Store) dropCache() {
	s.heads, s.cache, s.held = nil, nil, 0
}

// Window returns the rates of [from, to), clipped to the span, on the
// store's grid; zero times mean the span's edges.
func (s *Store) Window(from, to time.Time) (*Rates, error) {
	f, t, step, err := s.Span()
	if err != nil {
		return nil, err
	}
	st := int64(step)
	k0, k1 := f.UnixNano()/st, t.UnixNano()/st
	if !from.IsZero() {
		k0 = max(k0, floorDiv(from.UnixNano(), st))
	}
	if !to.IsZero() {
		k1 = min(k1, ceilDiv(to.UnixNano(), st))
	}
	n := int(max(k1-k0, 0))
	r := &Rates{Start: time.Unix(0, k0*st), Step: step, OSTs: slices.Clone(s.idx.OSTs),
		Read: make([][]float64, len(s.idx.OSTs)), Write: make([][]float64, len(s.idx.OSTs))}
	back := make([]float64, 2*n*len(s.idx.OSTs))
	for i := range back {
		back[i] = math.NaN()
	}
	for i := range s.idx.OSTs {
		r.Read[i], r.Write[i] = back[2*i*n:(2*i+1)*n:(2*i+1)*n], back[(2*i+1)*n:(2*i+2)*n:(2*i+2)*n]
	}
	lo := sort.Search(len(s.idx.Days), func(i int) bool {
		d := s.idx.Days[i]
		return d.StartNS+int64(d.Cells)*st > k0*st
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.idx.Days[lo:] {
		dk0 := d.StartNS / st
		if dk0 >= k1 {
			break
		}
		a, b := int(max(k0, dk0)-dk0), int(min(k1, dk0+int64(d.Cells))-dk0) // cells of the day
		if err := s.readDay(d, a, b, func(bd *blockData) {
			c0, c1 := max(a, bd.first), min(b, bd.first+bd.cells)
			for i := range bd.read {
				if bd.read[i] == nil {
					continue
				}
				out := int(dk0 + int64(c0) - k0)
				copy(r.Read[i][out:out+c1-c0], bd.read[i][c0-bd.first:c1-bd.first])
				copy(r.Write[i][out:out+c1-c0], bd.write[i][c0-bd.first:c1-bd.first])
			}
		}); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readDay gives use the decoded blocks of day d that overlap its cells
// [a, b), from the cache when they are there. The caller holds s.mu.
func (s *Store) readDay(d storeDay, a, b int, use func(*blockData)) error {
	path := filepath.Join(s.dir, daysDir, d.File)
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	open := func() error {
		if f != nil {
			return nil
		}
		var err error
		f, err = os.Open(path)
		return err
	}
	h := s.heads[d.File]
	if h == nil {
		if err := open(); err != nil {
			return err
		}
		var err error
		if h, err = readChunkHeader(f, s.pos, len(s.idx.OSTs), s.idx.StepNS); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		if h.start != d.StartNS || h.cells != d.Cells {
			return fmt.Errorf("%s: corrupt chunk: %d cells from %d, the index says %d from %d", path, h.cells, h.start, d.Cells, d.StartNS)
		}
		if s.heads == nil {
			s.heads = map[string]*chunkHeader{}
		}
		s.heads[d.File] = h
	}
	first := sort.Search(len(h.blocks), func(i int) bool { return h.blocks[i].first+h.blocks[i].cells > a })
	for bi := first; bi < len(h.blocks) && h.blocks[bi].first < b; bi++ {
		if bd := s.cached(d.File, bi); bd != nil {
			use(bd)
			continue
		}
		if err := open(); err != nil {
			return err
		}
		blk := h.blocks[bi]
		frame := make([]byte, blk.n)
		if _, err := f.ReadAt(frame, blk.off); err != nil {
			return fmt.Errorf("%s: block %d: %v", path, bi, err)
		}
		bd := &blockData{file: d.File, block: bi, first: blk.first, cells: blk.cells,
			read: make([][]float64, len(s.idx.OSTs)), write: make([][]float64, len(s.idx.OSTs))}
		back := make([]float64, 2*len(h.cols)*blk.cells)
		rd, wr := make([][]float64, len(h.cols)), make([][]float64, len(h.cols))
		for i, j := range h.cols {
			rd[i] = back[2*i*blk.cells : (2*i+1)*blk.cells : (2*i+1)*blk.cells]
			wr[i] = back[(2*i+1)*blk.cells : (2*i+2)*blk.cells]
			bd.read[j], bd.write[j] = rd[i], wr[i]
		}
		if err := decodeBlock(frame, blk, len(h.cols), s.idx.StepNS, rd, wr); err != nil {
			return fmt.Errorf("%s: corrupt chunk: block %d: %v", path, bi, err)
		}
		s.decoded++
		s.keep(bd, len(back))
		use(bd)
	}
	return nil
}

// cached returns a decoded block from the cache, nil when it is not there.
func (s *Store) cached(file string, block int) *blockData {
	for i, c := range s.cache {
		if c.file == file && c.block == block {
			s.cache = append(append(s.cache[:i:i], s.cache[i+1:]...), c)
			return c
		}
	}
	return nil
}

// keep adds a decoded block of size values to the cache, dropping the
// least recently used ones beyond storeCacheValues.
func (s *Store) keep(bd *blockData, size int) {
	s.cache = append(s.cache, bd)
	s.held += size
	for s.held > storeCacheValues && len(s.cache) > 1 {
		old := s.cache[0]
		s.held -= 2 * nonNil(old.read) * old.cells
		s.cache = s.cache[1:]
	}
}

func nonNil(cols [][]float64) int {
	n := 0
	for _, c := range cols {
		if c != nil {
			n++
		}
	}
	return n
}

var (
	zstdDec     *zstd.Decoder
	zstdDecOnce sync.Once
)

func decoder() *zstd.Decoder {
	zstdDecOnce.Do(func() {
		// DecodeAll decodes no more than the capacity it is given, which
		// decodeBlock sets from the checked header.
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true))
	})
	return zstdDec
}

// errHeaderCut says the bytes given end inside the chunk's header.
var errHeaderCut = errors.New("corrupt chunk: header cut")

// readChunkHeader reads and checks the header of an open chunk, reading
// more of the file only while the header needs it.
func readChunkHeader(f *os.File, pos map[string]int, n int, step int64) (*chunkHeader, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	for want := int64(64 << 10); ; want *= 4 {
		b := make([]byte, min(want, size))
		if _, err := f.ReadAt(b, 0); err != nil {
			return nil, err
		}
		h, _, err := parseChunkHeader(b, size, pos, n, step)
		if err == errHeaderCut && int64(len(b)) < size {
			continue
		}
		return h, err
	}
}

// parseChunkHeader checks a chunk's header (in b, the chunk's first
// bytes; size is the whole chunk's) against the store: its step, the
// cells of the day it starts, OSTs the index knows, and a block table
// that covers the cells and the rest of the chunk exactly. It returns the
// header's length.
func parseChunkHeader(b []byte, size int64, pos map[string]int, n int, step int64) (*chunkHeader, int, error) {
	bad := func(what string) error { return fmt.Errorf("corrupt chunk: %s", what) }
	const fixed = len(chunkMagic) + 4 + 8 + 8 + 4 + 4
	if len(b) < len(chunkMagic) || string(b[:len(chunkMagic)]) != chunkMagic {
		if int64(len(b)) < size && len(b) < len(chunkMagic) {
			return nil, 0, errHeaderCut
		}
		return nil, 0, bad("no header")
	}
	if len(b) < fixed+4 {
		if int64(len(b)) < size {
			return nil, 0, errHeaderCut
		}
		return nil, 0, bad("no header")
	}
	p := b[len(chunkMagic):]
	h := &chunkHeader{version: int(binary.LittleEndian.Uint32(p))}
	if h.version != 1 && h.version != 2 {
		return nil, 0, fmt.Errorf("chunk version %d, this iopred reads 1 and 2", h.version)
	}
	h.start = int64(binary.LittleEndian.Uint64(p[4:]))
	h.cells = int(binary.LittleEndian.Uint32(p[20:]))
	if st := int64(binary.LittleEndian.Uint64(p[12:])); st != step {
		return nil, 0, bad(fmt.Sprintf("step %d ns, the store's is %d", st, step))
	}
	nost := int(binary.LittleEndian.Uint32(p[24:]))
	p = p[28:]
	if k0, cells := dayCells(h.start, step); h.start != k0*step || h.cells != cells || nost > n {
		return nil, 0, bad("header off the store's grid")
	}
	nblocks := 1
	if h.version == 2 {
		nblocks = int(binary.LittleEndian.Uint32(p))
		p = p[4:]
		if nblocks < 1 || nblocks > h.cells {
			return nil, 0, bad(fmt.Sprintf("%d blocks for %d cells", nblocks, h.cells))
		}
	}
	h.cols = make([]int, nost)
	seen := make(map[int]bool, nost)
	for i := range nost {
		if len(p) < 2 {
			return nil, 0, errHeaderCut
		}
		l := int(binary.LittleEndian.Uint16(p))
		if len(p) < 2+l {
			return nil, 0, errHeaderCut
		}
		name := string(p[2 : 2+l])
		p = p[2+l:]
		j, ok := pos[name]
		if !ok || seen[j] {
			return nil, 0, bad(fmt.Sprintf("OST %q not in the index or listed twice", name))
		}
		seen[j] = true
		h.cols[i] = j
	}
	if h.version == 1 {
		end := len(b) - len(p)
		h.blocks = []chunkBlock{{first: 0, cells: h.cells, off: int64(end), n: size - int64(end), raw: -1}}
		return h, end, nil
	}
	if len(p) < nblocks*blockEntrySize {
		return nil, 0, errHeaderCut
	}
	end := int64(len(b) - len(p) + nblocks*blockEntrySize)
	h.blocks = make([]chunkBlock, nblocks)
	cell, off := 0, end
	for i := range h.blocks {
		e := p[i*blockEntrySize:]
		blk := chunkBlock{first: int(binary.LittleEndian.Uint32(e)), cells: int(binary.LittleEndian.Uint32(e[4:])),
			off: int64(binary.LittleEndian.Uint64(e[8:])), n: int64(binary.LittleEndian.Uint32(e[16:])),
			raw: int(binary.LittleEndian.Uint32(e[20:]))}
		if blk.first != cell || blk.cells < 1 || blk.cells > h.cells-cell {
			return nil, 0, bad(fmt.Sprintf("block %d of cells %d+%d after cell %d of %d", i, blk.first, blk.cells, cell, h.cells))
		}
		if blk.off != off || blk.n > size-off {
			return nil, 0, bad(fmt.Sprintf("block %d: frame of %d bytes at %d, past the chunk's %d bytes or out of order", i, blk.n, blk.off, size))
		}
		// Each column holds its shift and one to ten bytes per cell.
		if blk.raw < 2*nost*(blk.cells+1) || blk.raw > 2*nost*(10*blk.cells+1) {
			return nil, 0, bad(fmt.Sprintf("block %d: %d bytes of columns for %d OSTs of %d cells", i, blk.raw, nost, blk.cells))
		}
		h.blocks[i] = blk
		cell += blk.cells
		off += blk.n
	}
	if cell != h.cells || off != size {
		return nil, 0, bad(fmt.Sprintf("blocks cover %d cells and %d bytes, the chunk has %d and %d", cell, off, h.cells, size))
	}
	return h, int(end), nil
}

// decodeBlock decodes a block's frame into the read and write columns of
// the chunk's nost OSTs, each as long as the block's cells. Its
// decompressed size is checked against the table (or, in a version 1
// chunk, the bounds the cells give) before it is allocated.
func decodeBlock(frame []byte, blk chunkBlock, nost int, step int64, rd, wr [][]float64) error {
	least, most := uint64(2*nost*(blk.cells+1)), uint64(2*nost*(10*blk.cells+1))
	if blk.raw >= 0 {
		least, most = uint64(blk.raw), uint64(blk.raw)
	}
	var zh zstd.Header
	if err := zh.Decode(frame); err != nil {
		return err
	}
	if zh.HasFCS { // zstd leaves the size out of small frames
		if zh.FrameContentSize < least || zh.FrameContentSize > most {
			return errors.New("column block of the wrong size")
		}
		most = zh.FrameContentSize
	}
	raw, err := decoder().DecodeAll(frame, make([]byte, 0, most))
	if err != nil {
		return err
	}
	if uint64(len(raw)) < least {
		return errors.New("columns shorter than the header says")
	}
	secs := float64(step) / 1e9
	for i := range nost {
		if raw, err = decodeColumn(raw, rd[i], secs); err != nil {
			return err
		}
		if raw, err = decodeColumn(raw, wr[i], secs); err != nil {
			return err
		}
	}
	if len(raw) != 0 {
		return errors.New("data after the last column")
	}
	return nil
}

// readChunk decodes a whole chunk into columns indexed by pos (OST name
// to the store's index) among n OSTs, on the store's step (ns).
func readChunk(path string, pos map[string]int, n int, step int64) (*dayData, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dd, err := decodeChunk(b, pos, n, step)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	dd.file = filepath.Base(path)
	return dd, nil
}

// decodeChunk decodes a whole chunk of either version held in b.
func decodeChunk(b []byte, pos map[string]int, n int, step int64) (*dayData, error) {
	h, _, err := parseChunkHeader(b, int64(len(b)), pos, n, step)
	if err != nil {
		return nil, err
	}
	dd := &dayData{version: h.version, start: h.start, cells: h.cells, read: make([][]float64, n), write: make([][]float64, n)}
	back := make([]float64, 2*len(h.cols)*h.cells)
	for i, j := range h.cols {
		dd.read[j] = back[2*i*h.cells : (2*i+1)*h.cells : (2*i+1)*h.cells]
		dd.write[j] = back[(2*i+1)*h.cells : (2*i+2)*h.cells]
	}
	rd, wr := make([][]float64, len(h.cols)), make([][]float64, len(h.cols))
	for bi, blk := range h.blocks {
		for i, j := range h.cols {
			rd[i], wr[i] = dd.read[j][blk.first:blk.first+blk.cells], dd.write[j][blk.first:blk.first+blk.cells]
		}
		if err := decodeBlock(b[blk.off:blk.off+blk.n], blk, len(h.cols), step, rd, wr); err != nil {
			return nil, fmt.Errorf("corrupt chunk: block %d: %v", bi, err)
		}
	}
	return dd, nil
}

func decodeColumn(b []byte, out []float64, step float64) ([]byte, error) {
	if len(b) < 1 || b[0] > 63 {
		return nil, errors.New("column shift")
	}
	shift := b[0]
	b = b[1:]
	for k := range out {
		var x uint64
		// uvarint, inlined: this loop is the store's read speed.
		var s uint
		for i := 0; ; i++ {
			if i >= len(b) || i == 10 {
				return nil, errors.New("column cut")
			}
			c := b[i]
			if c < 0x80 {
				x |= uint64(c) << s
				b = b[i+1:]
				break
			}
			x |= uint64(c&0x7f) << s
			s += 7
		}
		if x == 0 {
			out[k] = math.NaN()
		} else {
			out[k] = float64((x-1)<<shift) / step
		}
	}
	return b, nil
}

// blockCells is how many cells of the step a block holds.
func blockCells(step time.Duration) int { return max(1, int(blockSpan/step)) }

// encodeChunk writes a day as a version 2 chunk: its first cell's start,
// the step, and the columns of the OSTs that have any known cell, block
// by block.
func encodeChunk(start int64, step time.Duration, names []string, read, write [][]float64) ([]byte, error) {
	return encodeChunkBlocks(start, step, names, read, write, blockCells(step))
}

// encodeChunkBlocks is encodeChunk with blocks of bc cells.
func encodeChunkBlocks(start int64, step time.Duration, names []string, read, write [][]float64, bc int) ([]byte, error) {
	cells := 0
	var keep []int
	for i := range names {
		if hasKnown(read[i]) || hasKnown(write[i]) {
			keep = append(keep, i)
			cells = len(read[i])
		}
	}
	nblocks := max(1, (cells+bc-1)/bc)
	var h bytes.Buffer
	h.WriteString(chunkMagic)
	var u [8]byte
	put32 := func(v uint32) {
		binary.LittleEndian.PutUint32(u[:4], v)
		h.Write(u[:4])
	}
	put64 := func(v uint64) {
		binary.LittleEndian.PutUint64(u[:], v)
		h.Write(u[:])
	}
	put32(storeVersion)
	put64(uint64(start))
	put64(uint64(step))
	put32(uint32(cells))
	put32(uint32(len(keep)))
	put32(uint32(nblocks))
	for _, i := range keep {
		if len(names[i]) > math.MaxUint16 {
			return nil, fmt.Errorf("OST name of %d bytes", len(names[i]))
		}
		binary.LittleEndian.PutUint16(u[:2], uint16(len(names[i])))
		h.Write(u[:2])
		h.WriteString(names[i])
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	sec := step.Seconds()
	off := int64(h.Len() + nblocks*blockEntrySize)
	var frames []byte
	raw := make([]byte, 0, len(keep)*bc*6)
	for b := range nblocks {
		a, z := b*bc, min(cells, (b+1)*bc)
		raw = raw[:0]
		for _, i := range keep {
			raw = encodeColumn(raw, read[i][a:z], sec)
			raw = encodeColumn(raw, write[i][a:z], sec)
		}
		if len(raw) > math.MaxUint32 {
			return nil, fmt.Errorf("a block of %d bytes", len(raw))
		}
		n := len(frames)
		frames = enc.EncodeAll(raw, frames)
		put32(uint32(a))
		put32(uint32(z - a))
		put64(uint64(off))
		put32(uint32(len(frames) - n))
		put32(uint32(len(raw)))
		off += int64(len(frames) - n)
	}
	return append(h.Bytes(), frames...), nil
}

func hasKnown(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) {
			return true
		}
	}
	return false
}

// cellBytes is a cell's rate as whole bytes.
func cellBytes(v, sec float64) uint64 {
	b := math.Round(v * sec)
	if b <= 0 {
		return 0
	}
	if b >= 1<<62 {
		return 1 << 62
	}
	return uint64(b)
}

func encodeColumn(out []byte, v []float64, sec float64) []byte {
	shift := 63
	for _, x := range v {
		if math.IsNaN(x) {
			continue
		}
		if b := cellBytes(x, sec); b != 0 {
			shift = min(shift, bits.TrailingZeros64(b))
		}
	}
	if shift == 63 {
		shift = 0
	}
	out = append(out, byte(shift))
	for _, x := range v {
		if math.IsNaN(x) {
			out = append(out, 0)
			continue
		}
		out = binary.AppendUvarint(out, cellBytes(x, sec)>>shift+1)
	}
	return out
}

// dayOf names the UTC day of a time.
func dayOf(ns int64) string { return time.Unix(0, ns).UTC().Format(time.DateOnly) }

// dayCells returns the cells of the UTC day holding ns: the first cell
// whose start is in the day, and how many.
func dayCells(ns, step int64) (k0 int64, n int) {
	t := time.Unix(0, ns).UTC()
	d0 := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	k0 = ceilDiv(d0.UnixNano(), step)
	k1 := ceilDiv(d0.AddDate(0, 0, 1).UnixNano(), step)
	return k0, int(k1 - k0)
}

// info describes the store for iopred serverlog info.
func (s *Store) info() storeInfo {
	in := storeInfo{Dir: s.dir, Days: len(s.idx.Days), OSTs: len(s.idx.OSTs), Sources: s.idx.Sources}
	for _, r := range s.idx.Resets {
		in.Resets = append(in.Resets, CounterReset{OST: r.OST, After: time.Unix(0, r.AfterNS).UTC(), Before: time.Unix(0, r.BeforeNS).UTC()})
	}
	if b, err := os.Stat(filepath.Join(s.dir, indexName)); err == nil {
		in.Bytes += b.Size()
	}
	for _, d := range s.idx.Days {
		in.Bytes += d.Bytes
		in.Samples += d.Samples
		in.ReadBytes += d.ReadBytes
		in.WriteBytes += d.WriteBytes
	}
	return in
}

type storeInfo struct {
	Dir                   string
	Days, OSTs            int
	Bytes, Samples        int64
	ReadBytes, WriteBytes float64
	Sources               []string
	Resets                []CounterReset
}

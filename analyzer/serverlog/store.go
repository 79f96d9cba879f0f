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
// served by time window at the speed of decompression.
//
// Layout of a store directory:
//
//	index.json             the index: version, step, OSTs, days (written last, atomically)
//	days/YYYY-MM-DD.G.day  one chunk per UTC day, G its generation
//
// A chunk holds the cells whose start falls in its day, on the grid of
// the store's step aligned to the Unix epoch. It starts with a header
// (magic "iopredSL", version, the start of its first cell and the step in
// ns, the cell count, the OST names), then one zstd frame holding, per
// OST, its read column and then its write column. A column is a byte of
// shift s, then per cell a uvarint: 0 for an unknown cell (NaN), else
// 1 + (the cell's bytes, rounded to a whole byte, >> s), where s is the
// number of trailing zero bits all of the column's byte counts share
// (Lustre moves whole pages: 12 bits saved per value). Rates come back as
// bytes / step.
//
// Every write goes to a new file that is renamed into place, and the
// index naming it is replaced the same way only after the chunk is on
// disk; the old chunk is removed last. An interrupted import leaves the
// previous index and its chunks, readable; files no index names are
// removed by the next import.

const (
	storeVersion = 1
	chunkMagic   = "iopredSL"
	indexName    = "index.json"
	daysDir      = "days"
)

type storeIndex struct {
	Version int        `json:"version"`
	StepNS  int64      `json:"step_ns"`
	OSTs    []string   `json:"osts"`
	Days    []storeDay `json:"days"`
	Gen     int64      `json:"generation"`
	Sources []string   `json:"sources,omitempty"` // what was imported, as flags
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

	mu    sync.Mutex
	cache []*dayData // most recently used last
}

// dayData is one decoded chunk, its columns indexed like the store's OSTs
// (nil: no data for that OST that day).
type dayData struct {
	file        string
	start       int64
	cells       int
	read, write [][]float64
}

// storeCacheDays is how many decoded days a Store keeps: job windows come
// in clusters around a day, and a day of 256 OSTs at 5 s is 70 MB.
const storeCacheDays = 2

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
	if s.idx.Version != storeVersion {
		return nil, fmt.Errorf("%s: store version %d, this iopred reads %d", dir, s.idx.Version, storeVersion)
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

// Close releases the decoded days.
func (s *Store) Close() error {
	s.mu.Lock()
	s.cache = nil
	s.mu.Unlock()
	return nil
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
	for _, d := range s.idx.Days[lo:] {
		dk0 := d.StartNS / st
		if dk0 >= k1 {
			break
		}
		dd, err := s.day(d)
		if err != nil {
			return nil, err
		}
		a, b := max(k0, dk0), min(k1, dk0+int64(d.Cells))
		for i := range dd.read {
			if dd.read[i] == nil {
				continue
			}
			copy(r.Read[i][a-k0:b-k0], dd.read[i][a-dk0:b-dk0])
			copy(r.Write[i][a-k0:b-k0], dd.write[i][a-dk0:b-dk0])
		}
	}
	return r, nil
}

// day returns a decoded chunk, from the cache when it is there.
func (s *Store) day(d storeDay) (*dayData, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.cache {
		if c.file == d.File {
			s.cache = append(append(s.cache[:i:i], s.cache[i+1:]...), c)
			return c, nil
		}
	}
	dd, err := readChunk(filepath.Join(s.dir, daysDir, d.File), s.pos, len(s.idx.OSTs), s.idx.StepNS)
	if err != nil {
		return nil, err
	}
	if len(s.cache) >= storeCacheDays {
		s.cache = s.cache[1:]
	}
	s.cache = append(s.cache, dd)
	return dd, nil
}

var (
	zstdDec     *zstd.Decoder
	zstdDecOnce sync.Once
)

func decoder() *zstd.Decoder {
	zstdDecOnce.Do(func() {
		// DecodeAll decodes no more than the capacity it is given, which
		// decodeChunk sets from the checked header.
		zstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true))
	})
	return zstdDec
}

// readChunk decodes a chunk into columns indexed by pos (OST name to the
// store's index) among n OSTs, on the store's step (ns).
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

// decodeChunk checks the header against the store (its step, the cells
// of the day it starts, OSTs the index knows) and the decompressed size
// against the header before it allocates anything the header claims.
func decodeChunk(b []byte, pos map[string]int, n int, step int64) (*dayData, error) {
	bad := func(what string) error { return fmt.Errorf("corrupt chunk: %s", what) }
	if len(b) < len(chunkMagic)+4+8+8+4+4 || string(b[:len(chunkMagic)]) != chunkMagic {
		return nil, bad("no header")
	}
	p := b[len(chunkMagic):]
	if v := binary.LittleEndian.Uint32(p); v != storeVersion {
		return nil, fmt.Errorf("chunk version %d, this iopred reads %d", v, storeVersion)
	}
	dd := &dayData{start: int64(binary.LittleEndian.Uint64(p[4:])),
		cells: int(binary.LittleEndian.Uint32(p[20:])), read: make([][]float64, n), write: make([][]float64, n)}
	if st := int64(binary.LittleEndian.Uint64(p[12:])); st != step {
		return nil, bad(fmt.Sprintf("step %d ns, the store's is %d", st, step))
	}
	nost := int(binary.LittleEndian.Uint32(p[24:]))
	p = p[28:]
	if k0, cells := dayCells(dd.start, step); dd.start != k0*step || dd.cells != cells || nost > n {
		return nil, bad("header off the store's grid")
	}
	cols := make([]int, nost)
	seen := make(map[int]bool, nost)
	for i := range nost {
		if len(p) < 2 {
			return nil, bad("OST names cut")
		}
		l := int(binary.LittleEndian.Uint16(p))
		if len(p) < 2+l {
			return nil, bad("OST names cut")
		}
		name := string(p[2 : 2+l])
		p = p[2+l:]
		j, ok := pos[name]
		if !ok || seen[j] {
			return nil, bad(fmt.Sprintf("OST %q not in the index or listed twice", name))
		}
		seen[j] = true
		cols[i] = j
	}
	// Each column holds its shift and one to ten bytes per cell.
	least, most := uint64(2*nost*(dd.cells+1)), uint64(2*nost*(10*dd.cells+1))
	var zh zstd.Header
	if err := zh.Decode(p); err != nil {
		return nil, bad(err.Error())
	}
	if zh.HasFCS { // zstd leaves the size out of small frames
		if zh.FrameContentSize < least || zh.FrameContentSize > most {
			return nil, bad("column block of the wrong size")
		}
		most = zh.FrameContentSize
	}
	raw, err := decoder().DecodeAll(p, make([]byte, 0, most))
	if err != nil {
		return nil, bad(err.Error())
	}
	if uint64(len(raw)) < least {
		return nil, bad("columns shorter than the header says")
	}
	back := make([]float64, 2*nost*dd.cells)
	secs := float64(step) / 1e9
	for i, j := range cols {
		rd, wr := back[2*i*dd.cells:(2*i+1)*dd.cells:(2*i+1)*dd.cells], back[(2*i+1)*dd.cells:(2*i+2)*dd.cells]
		if raw, err = decodeColumn(raw, rd, secs); err != nil {
			return nil, bad(err.Error())
		}
		if raw, err = decodeColumn(raw, wr, secs); err != nil {
			return nil, bad(err.Error())
		}
		dd.read[j], dd.write[j] = rd, wr
	}
	if len(raw) != 0 {
		return nil, bad("data after the last column")
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

// encodeChunk writes a day: its first cell's start, the step, and the
// columns of the OSTs that have any known cell.
func encodeChunk(start int64, step time.Duration, names []string, read, write [][]float64) ([]byte, error) {
	cells := 0
	var keep []int
	for i := range names {
		if hasKnown(read[i]) || hasKnown(write[i]) {
			keep = append(keep, i)
			cells = len(read[i])
		}
	}
	var h bytes.Buffer
	h.WriteString(chunkMagic)
	var u [8]byte
	binary.LittleEndian.PutUint32(u[:4], storeVersion)
	h.Write(u[:4])
	binary.LittleEndian.PutUint64(u[:], uint64(start))
	h.Write(u[:])
	binary.LittleEndian.PutUint64(u[:], uint64(step))
	h.Write(u[:])
	binary.LittleEndian.PutUint32(u[:4], uint32(cells))
	h.Write(u[:4])
	binary.LittleEndian.PutUint32(u[:4], uint32(len(keep)))
	h.Write(u[:4])
	for _, i := range keep {
		if len(names[i]) > math.MaxUint16 {
			return nil, fmt.Errorf("OST name of %d bytes", len(names[i]))
		}
		binary.LittleEndian.PutUint16(u[:2], uint16(len(names[i])))
		h.Write(u[:2])
		h.WriteString(names[i])
	}
	sec := step.Seconds()
	raw := make([]byte, 0, len(keep)*cells*3)
	for _, i := range keep {
		raw = encodeColumn(raw, read[i], sec)
		raw = encodeColumn(raw, write[i], sec)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	return enc.EncodeAll(raw, h.Bytes()), nil
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
}

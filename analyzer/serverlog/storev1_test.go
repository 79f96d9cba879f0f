package serverlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// encodeChunkV1 is the version 1 chunk writer as iopred had it before
// store version 2 (one zstd frame per day), kept to make the stores that
// version 2 must still read.
func encodeChunkV1(start int64, step time.Duration, names []string, read, write [][]float64) ([]byte, error) {
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
	binary.LittleEndian.PutUint32(u[:4], 1)
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

// downgradeStore rewrites every chunk of the store in dir as version 1
// and marks its index version 1, as the iopred before version 2 left it.
func downgradeStore(tb testing.TB, dir string) {
	tb.Helper()
	s, err := openStore(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for i, d := range s.idx.Days {
		path := filepath.Join(dir, daysDir, d.File)
		dd, err := readChunk(path, s.pos, len(s.idx.OSTs), s.idx.StepNS)
		if err != nil {
			tb.Fatal(err)
		}
		b, err := encodeChunkV1(dd.start, time.Duration(s.idx.StepNS), s.idx.OSTs, dd.read, dd.write)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			tb.Fatal(err)
		}
		s.idx.Days[i].Bytes = int64(len(b))
	}
	s.idx.Version = 1
	b, _ := json.MarshalIndent(&s.idx, "", " ")
	if err := os.WriteFile(filepath.Join(dir, indexName), b, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// chunkVersions lists the version of each chunk the store's index names.
func chunkVersions(t *testing.T, dir string) (index int, chunks []int) {
	t.Helper()
	s, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range s.idx.Days {
		b, err := os.ReadFile(filepath.Join(dir, daysDir, d.File))
		if err != nil || len(b) < 12 {
			t.Fatalf("%s: %v", d.File, err)
		}
		chunks = append(chunks, int(binary.LittleEndian.Uint32(b[len(chunkMagic):])))
	}
	return s.idx.Version, chunks
}

// TestStoreVersion1 proves that a store written by the version 1 code
// reads back exactly, whole and by windows; that importing into it writes
// version 2 chunks beside the version 1 ones it keeps, marks the index
// version 2, and still serves every sample; and that a store from a
// later iopred is refused with its version.
func TestStoreVersion1(t *testing.T) {
	lmt, _ := storeFixture(t)
	src, err := OpenLMT(lmt, Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	want := windowOf(t, src)
	dir := filepath.Join(t.TempDir(), "store")
	if _, err := Import(context.Background(), dir, []Spec{{Path: lmt}}, Options{TZ: time.UTC}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	downgradeStore(t, dir)
	if v, cs := chunkVersions(t, dir); v != 1 || len(cs) != 2 || cs[0] != 1 || cs[1] != 1 {
		t.Fatalf("downgraded store: index version %d, chunks %v", v, cs)
	}
	check := func(what string) {
		st, err := OpenStore(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		sameWindow(t, what, windowOf(t, st), want)
		for _, w := range [][2]int{{1400, 1500}, {0, 10}, {2870, 2880}, {700, 960}} {
			a, b := want.Time(w[0]).Add(time.Second), want.Time(w[1])
			ws, _ := src.Window(a, b)
			gs, err := st.Window(a, b)
			if err != nil {
				t.Fatal(err)
			}
			sameWindow(t, what+" window", gs, ws)
		}
	}
	check("version 1 store")

	// The first day is complete and kept as it is; the second is
	// imported again, as version 2.
	stats, err := Import(context.Background(), dir, []Spec{{Path: lmt}}, Options{TZ: time.UTC}, ImportOptions{})
	if err != nil || stats.Days != 1 || stats.Skipped != 1 {
		t.Fatalf("import into a version 1 store: %+v, %v", stats, err)
	}
	if v, cs := chunkVersions(t, dir); v != 2 || len(cs) != 2 || cs[0] != 1 || cs[1] != 2 {
		t.Fatalf("after the import: index version %d, chunks %v; want 2 and [1 2]", v, cs)
	}
	check("mixed store")

	b, _ := os.ReadFile(filepath.Join(dir, indexName))
	os.WriteFile(filepath.Join(dir, indexName), bytes.Replace(b, []byte(`"version": 2`), []byte(`"version": 3`), 1), 0o644)
	if _, err := OpenStore(dir, Options{}); err == nil || !strings.Contains(err.Error(), "store version 3") {
		t.Errorf("store of version 3: %v", err)
	}
}

// TestStoreWindowBlocks proves that a window decodes only the blocks it
// overlaps (a 20-minute window of a day of 15-minute blocks: 2 or 3),
// serves them from the cache when read again, and gives the same samples
// as the day read whole.
func TestStoreWindowBlocks(t *testing.T) {
	day := synthRates(5, 17280, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), 5*time.Second)
	day.Read[2][5000] = math.NaN()
	src, err := NewRatesSource(day)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "store")
	if _, err := ImportFrom(context.Background(), dir, src, "day", ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		from, to time.Time
		blocks   int
	}{
		{day.Time(4800), day.Time(5040), 2},                // 06:40-07:00: blocks 26 and 27
		{day.Time(4830), day.Time(5070), 3},                // 06:42:30-07:02:30
		{day.Time(900).Add(time.Second), day.Time(901), 1}, // one cell
		{day.Time(17280 - 240), day.End(), 2},              // the day's last 20 minutes
		{day.Start.Add(-time.Hour), day.Time(100), 1},      // clipped at the start
		{day.Start, day.End(), 96},                         // the whole day
	} {
		st, err := openStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Window(c.from, c.to)
		if err != nil {
			t.Fatal(err)
		}
		if st.decoded != c.blocks {
			t.Errorf("%v-%v: %d blocks decoded, want %d", c.from, c.to, st.decoded, c.blocks)
		}
		ws, _ := src.Window(c.from, c.to)
		sameWindow(t, "window", got, ws)
		again, err := st.Window(c.from, c.to)
		if err != nil {
			t.Fatal(err)
		}
		if st.decoded != c.blocks {
			t.Errorf("%v-%v again: %d blocks decoded in all, want the %d of the first read from the cache", c.from, c.to, st.decoded, c.blocks)
		}
		sameWindow(t, "window from the cache", again, ws)
		st.Close()
	}
}

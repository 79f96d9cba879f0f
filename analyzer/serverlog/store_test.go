package serverlog

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sameWindow fails the test unless two rates hold the same OSTs, grid and
// values (NaN where NaN).
func sameWindow(t *testing.T, what string, got, want *Rates) {
	t.Helper()
	if !got.Start.Equal(want.Start) || got.Step != want.Step || got.Len() != want.Len() ||
		strings.Join(got.OSTs, ",") != strings.Join(want.OSTs, ",") {
		t.Fatalf("%s: %d samples from %v by %v of %v; want %d from %v by %v of %v", what,
			got.Len(), got.Start, got.Step, got.OSTs, want.Len(), want.Start, want.Step, want.OSTs)
	}
	for i := range want.OSTs {
		for k := range want.Len() {
			if !sameRate(got.Read[i][k], want.Read[i][k]) || !sameRate(got.Write[i][k], want.Write[i][k]) {
				t.Fatalf("%s: %s sample %d (%v): %v/%v, want %v/%v", what, want.OSTs[i], k, want.Time(k),
					got.Read[i][k], got.Write[i][k], want.Read[i][k], want.Write[i][k])
			}
		}
	}
}

func windowOf(t *testing.T, src Source) *Rates {
	t.Helper()
	r, err := src.Window(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// storeFixture is four hours of 4 OSTs at 5 s across a UTC midnight,
// with a lost timestamp, written as an LMT database.
func storeFixture(t *testing.T) (string, *Rates) {
	start := time.Date(2024, 2, 29, 22, 0, 0, 0, time.UTC)
	r := synthRates(4, 4*720, start, 5*time.Second)
	lost := make([]bool, r.Len())
	lost[1000] = true
	return writeLMT(t, r, lost, LMTWriterOptions{TZ: time.UTC}), r
}

// TestStoreRoundTrip proves that a store serves exactly what its source
// gives, sample for sample over two days and through any window, that
// re-importing changes no sample, and that the store is found by
// OpenSource from its directory alone.
func TestStoreRoundTrip(t *testing.T) {
	lmt, _ := storeFixture(t)
	src, err := OpenLMT(lmt, Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	want := windowOf(t, src)
	dir := filepath.Join(t.TempDir(), "store")
	var days []string
	stats, err := Import(context.Background(), dir, []Spec{{Path: lmt}}, Options{TZ: time.UTC},
		ImportOptions{Progress: func(p ImportProgress) { days = append(days, p.Day) }})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Days != 2 || strings.Join(days, ",") != "2024-02-29,2024-03-01" {
		t.Errorf("import: %+v, days %v", stats, days)
	}
	st, err := OpenSource(Spec{Path: dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameWindow(t, "store", windowOf(t, st), want)
	// A window across the midnight, cut mid-sample at both ends.
	a, b := want.Time(1400).Add(2*time.Second), want.Time(1500).Add(time.Second)
	wa, _ := src.Window(a, b)
	sa, _ := st.Window(a, b)
	sameWindow(t, "window across midnight", sa, wa)
	st.Close()

	// Again: the first day is complete and skipped, the second (the
	// source ends in it) is read again, to the same samples, and not
	// rewritten: the index and the chunks stay byte for byte.
	idx0, _ := os.ReadFile(filepath.Join(dir, indexName))
	stats, err = Import(context.Background(), dir, []Spec{{Path: lmt}}, Options{TZ: time.UTC}, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Days != 0 || stats.Skipped != 1 || stats.Unchanged != 1 {
		t.Errorf("re-import: %+v, want 0 days written, 1 skipped and 1 unchanged", stats)
	}
	stats, err = Import(context.Background(), dir, []Spec{{Path: lmt}}, Options{TZ: time.UTC}, ImportOptions{All: true})
	if err != nil || stats.Days != 0 || stats.Unchanged != 2 {
		t.Errorf("re-import of all: %+v, %v; want 2 days unchanged", stats, err)
	}
	if idx1, _ := os.ReadFile(filepath.Join(dir, indexName)); string(idx1) != string(idx0) {
		t.Errorf("re-imports changed the index:\n%s\nwas\n%s", idx1, idx0)
	}
	st2, err := OpenStore(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	sameWindow(t, "store after re-imports", windowOf(t, st2), want)
	ents, _ := os.ReadDir(filepath.Join(dir, daysDir))
	if len(ents) != 2 {
		t.Errorf("%d files in days/ after re-imports, want the 2 the index names", len(ents))
	}
}

// TestStoreIncremental proves that days append: the first hour imported
// from one database, the next from another (which, as the writer makes
// it, opens with a reading at its start), give exactly the whole; and
// that two sources of different OSTs fill the same days side by side.
func TestStoreIncremental(t *testing.T) {
	start := time.Date(2024, 2, 29, 23, 0, 0, 0, time.UTC)
	all := synthRates(3, 1440, start, 5*time.Second)
	first := writeLMT(t, all.Slice(all.Start, all.Time(720)), nil, LMTWriterOptions{TZ: time.UTC})
	second := writeLMT(t, all.Slice(all.Time(720), all.End()), nil, LMTWriterOptions{TZ: time.UTC})
	dir := filepath.Join(t.TempDir(), "store")
	for _, p := range []string{first, second} {
		if _, err := Import(context.Background(), dir, []Spec{{Kind: "lmt", Path: p}}, Options{TZ: time.UTC}, ImportOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got := whole(t)(OpenStore(dir, Options{}))
	want := all
	sameWindow(t, "two imports", got, want)

	// Another file system's OSTs over the same hours.
	other := synthRates(2, 1440, start, 5*time.Second)
	for i := range other.OSTs {
		other.OSTs[i] = "other-" + other.OSTs[i]
	}
	op := writeLMT(t, other, nil, LMTWriterOptions{TZ: time.UTC})
	if _, err := Import(context.Background(), dir, []Spec{{Kind: "lmt", Path: op}}, Options{TZ: time.UTC}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	both := whole(t)(OpenStore(dir, Options{}))
	if len(both.OSTs) != 5 || both.OSTs[0] != "fs-OST0000" || both.OSTs[3] != "other-fs-OST0000" {
		t.Fatalf("OSTs %v", both.OSTs)
	}
	for k := range 1440 {
		if !sameRate(both.Write[0][k], want.Write[0][k]) || both.Write[3][k] != other.Write[0][k] {
			t.Fatalf("sample %d: %v and %v, want %v and %v", k, both.Write[0][k], both.Write[3][k], want.Write[0][k], other.Write[0][k])
		}
	}
}

// TestStoreInterrupted proves that an import stopped between days (as
// Ctrl-C does) leaves a readable store with the days written, that files
// a crash leaves behind (a chunk the index does not name, a temporary
// index) are removed by the next import, which completes the store, and
// that a second import cannot write while one holds the store.
func TestStoreInterrupted(t *testing.T) {
	lmt, _ := storeFixture(t)
	src, err := OpenLMT(lmt, Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	want := windowOf(t, src)
	src.Close()
	dir := filepath.Join(t.TempDir(), "store")
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Import(ctx, dir, []Spec{{Path: lmt}}, Options{TZ: time.UTC},
		ImportOptions{Progress: func(ImportProgress) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled import: %v", err)
	}
	st, err := OpenStore(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, to, _, _ := st.Span()
	if !to.Equal(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("after the interruption the store ends at %v, want the first day's end", to)
	}
	st.Close()
	os.WriteFile(filepath.Join(dir, daysDir, "2024-03-01.99.day"), []byte("half a chunk"), 0o644)
	os.WriteFile(filepath.Join(dir, indexName+".tmp"), []byte("{"), 0o644)

	unlock, err := lockStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Import(context.Background(), dir, []Spec{{Path: lmt}}, Options{TZ: time.UTC}, ImportOptions{}); err == nil ||
		!strings.Contains(err.Error(), "another import") {
		t.Errorf("import while locked: %v", err)
	}
	unlock()
	if _, err := Import(context.Background(), dir, []Spec{{Path: lmt}}, Options{TZ: time.UTC}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, daysDir, "2024-03-01.99.day")); err == nil {
		t.Error("the orphan chunk is still there")
	}
	st, err = OpenStore(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sameWindow(t, "completed store", windowOf(t, st), want)
}

// TestStoreCorrupt proves that a damaged chunk or index is an error that
// names the file, not a panic or wrong rates, and that asking a store for
// another step is refused.
func TestStoreCorrupt(t *testing.T) {
	lmt, _ := storeFixture(t)
	dir := filepath.Join(t.TempDir(), "store")
	if _, err := Import(context.Background(), dir, []Spec{{Path: lmt}}, Options{TZ: time.UTC}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(dir, Options{Step: time.Minute}); err == nil || !strings.Contains(err.Error(), "the store's step is 5s, not 1m0s") {
		t.Errorf("another step: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, daysDir))
	chunk := filepath.Join(dir, daysDir, ents[0].Name())
	b, _ := os.ReadFile(chunk)
	for _, cut := range []int{10, 60, len(b) - 7} {
		os.WriteFile(chunk, b[:cut], 0o644)
		st, err := OpenStore(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.Window(time.Time{}, time.Time{})
		if err == nil || !strings.Contains(err.Error(), chunk) {
			t.Errorf("chunk cut at %d bytes: %v", cut, err)
		}
	}
	// A block table entry that claims more decompressed bytes than the
	// block's cells can hold.
	h, _, err := parseChunkHeader(b, int64(len(b)), map[string]int{"fs-OST0000": 0, "fs-OST0001": 1, "fs-OST0002": 2, "fs-OST0003": 3}, 4, int64(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	at := int(h.blocks[0].off) - len(h.blocks)*blockEntrySize + 20
	cut := slices.Clone(b)
	binary.LittleEndian.PutUint32(cut[at:], 1<<30)
	os.WriteFile(chunk, cut, 0o644)
	st, _ := OpenStore(dir, Options{})
	if _, err := st.Window(time.Time{}, time.Time{}); err == nil || !strings.Contains(err.Error(), chunk) || !strings.Contains(err.Error(), "bytes of columns") {
		t.Errorf("block of 1 GiB: %v", err)
	}
	os.WriteFile(filepath.Join(dir, indexName), []byte(`{"version": 7}`), 0o644)
	if _, err := OpenStore(dir, Options{}); err == nil || !strings.Contains(err.Error(), "store version 7") {
		t.Errorf("index of another version: %v", err)
	}
	if _, err := OpenStore(t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "not an iopred store") {
		t.Errorf("empty directory: %v", err)
	}
}

// TestColumnCodec proves the column encoding on the values it must keep:
// NaN, zero, whole bytes per cell, values sharing trailing zero bits (the
// shift) and values that do not.
func TestColumnCodec(t *testing.T) {
	nan := math.NaN()
	for _, col := range [][]float64{
		{nan, 0, 4096.0 / 5, 8192.0 / 5, nan, 1 << 40},
		{1.0 / 5, 3.0 / 5, 0, nan},
		{nan, nan},
		{0, 0, 0},
	} {
		enc := encodeColumn(nil, col, 5)
		got := make([]float64, len(col))
		rest, err := decodeColumn(enc, got, 5)
		if err != nil || len(rest) != 0 {
			t.Fatalf("%v: %v, %d bytes left", col, err, len(rest))
		}
		for k := range col {
			if !sameRate(got[k], col[k]) {
				t.Errorf("%v: cell %d = %v", col, k, got[k])
			}
		}
	}
}

// TestImportFrom proves importing rates held in memory (the simulator's
// way into a store): they read back exactly, and rates on another step or
// off the store's epoch-aligned grid are refused with a reason.
func TestImportFrom(t *testing.T) {
	day := synthRates(3, 600, time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), 5*time.Second)
	src, err := NewRatesSource(day)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "store")
	if _, err := ImportFrom(context.Background(), dir, src, "sim", ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameWindow(t, "from memory", windowOf(t, st), day)
	st.Close()
	for _, c := range []struct {
		r    *Rates
		want string
	}{
		{synthRates(3, 10, day.End(), 10*time.Second), "sample width 10s, the store's is 5s"},
		{synthRates(3, 10, day.End().Add(time.Second), 5*time.Second), "not on a whole multiple of 5s"},
	} {
		s, _ := NewRatesSource(c.r)
		if _, err := ImportFrom(context.Background(), dir, s, "bad", ImportOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	if _, err := NewRatesSource(&Rates{Step: time.Second, OSTs: []string{"a"}}); err == nil {
		t.Error("rates without series accepted")
	}
}

// FuzzDecodeChunk proves that no damaged chunk of either version makes
// the store panic or allocate what its header or block table claims
// without the data to back it, and that what decodes has the cells the
// header says.
func FuzzDecodeChunk(f *testing.F) {
	// A day of hourly cells in blocks of 5 (the last of 4) keeps the
	// inputs small enough to mutate fast.
	const step = time.Hour
	k0, n := dayCells(1_700_000_000e9, int64(step))
	day := synthRates(2, n, time.Unix(0, k0*int64(step)), step)
	day.Write[1][7] = math.NaN()
	pos := map[string]int{day.OSTs[0]: 0, day.OSTs[1]: 1}
	v2 := func(start int64, step time.Duration, names []string, read, write [][]float64) ([]byte, error) {
		return encodeChunkBlocks(start, step, names, read, write, 5)
	}
	for _, enc := range []func(int64, time.Duration, []string, [][]float64, [][]float64) ([]byte, error){v2, encodeChunkV1} {
		good, err := enc(day.Start.UnixNano(), day.Step, day.OSTs, day.Read, day.Write)
		if err != nil {
			f.Fatal(err)
		}
		if _, err := decodeChunk(good, pos, 2, int64(step)); err != nil {
			f.Fatal(err)
		}
		f.Add(good)
		f.Add(good[:40])
		f.Add(good[:len(good)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dd, err := decodeChunk(b, pos, 2, int64(step))
		if err != nil {
			return
		}
		for i := range dd.read {
			if dd.read[i] != nil && (len(dd.read[i]) != dd.cells || len(dd.write[i]) != dd.cells) {
				t.Fatalf("column %d of %d/%d cells, header says %d", i, len(dd.read[i]), len(dd.write[i]), dd.cells)
			}
		}
	})
}

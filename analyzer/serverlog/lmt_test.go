package serverlog

import (
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iopred/tests/interop"
)

const (
	snx   = "lmt/snx11025_2018-01-28.sqlite3"
	reset = "lmt/lmtdb-reset.sqlite3"
)

// TestLMTRealRates proves the reader on a production LMT database: its
// span, grid and OSTs, and rates equal to differences of the counters
// computed by hand from the rows (sqlite3 snx11025_2018-01-28.sqlite3
// "select * from OST_DATA where OST_ID=1 order by TS_ID limit 5").
func TestLMTRealRates(t *testing.T) {
	src, err := OpenLMT(interop.Path(t, snx), Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	from, to, step, err := src.Span()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2018, 1, 28, 0, 0, 0, 0, time.UTC)
	if !from.Equal(t0) || !to.Equal(t0.Add(5*time.Minute)) || step != 5*time.Second {
		t.Fatalf("span %v .. %v by %v, want 2018-01-28 00:00 .. 00:05 by 5 s", from, to, step)
	}
	r, err := src.Window(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.OSTs) != 24 || r.Len() != 60 || r.OSTs[0] != "snx11025-OST0000" || r.OSTs[23] != "snx11025-OST0017" {
		t.Fatalf("%d OSTs (%s .. %s), %d samples; want 24 OSTs, 60 samples", len(r.OSTs), r.OSTs[0], r.OSTs[len(r.OSTs)-1], r.Len())
	}
	cases := []struct {
		what   string
		got    float64
		want   float64
		counts string
	}{
		// OST_ID 1, TS 8921898 -> 8921899: WRITE_BYTES 38397984548046 -> 38397984567232.
		{"OST0000 write, sample 0", r.Write[0][0], (38397984567232 - 38397984548046) / 5.0, "19186 B in 5 s"},
		// TS 8921901 -> 8921902: READ_BYTES 19579878608896 -> 19579878617088.
		{"OST0000 read, sample 3", r.Read[0][3], (19579878617088 - 19579878608896) / 5.0, "8192 B in 5 s"},
		// TS 8921901 -> 8921902: WRITE_BYTES 38397984600507 -> 38399206206257.
		{"OST0000 write, sample 3", r.Write[0][3], (38399206206257 - 38397984600507) / 5.0, "1221605750 B in 5 s"},
		// TS 8921898 -> 8921899: READ_BYTES unchanged at 19579878608896.
		{"OST0000 read, sample 0", r.Read[0][0], 0, "no read"},
	}
	for _, c := range cases {
		if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("%s = %v B/s, want %v (%s)", c.what, c.got, c.want, c.counts)
		}
	}
	// The aggregate against SQL's own sum of the counters' differences
	// between the last and first timestamps, over the whole file.
	db, err := sql.Open("sqlite", sqliteURI(interop.Path(t, snx), true))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var total float64
	err = db.QueryRow(`SELECT SUM(b.WRITE_BYTES - a.WRITE_BYTES) FROM OST_DATA a JOIN OST_DATA b
		ON a.OST_ID = b.OST_ID AND a.TS_ID = 8921898 AND b.TS_ID = 8921958`).Scan(&total)
	if err != nil {
		t.Fatal(err)
	}
	_, write := r.Aggregate()
	sum := 0.0
	for _, v := range write {
		if math.IsNaN(v) {
			t.Fatal("NaN in a file without gaps")
		}
		sum += v * 5
	}
	if math.Abs(sum-total) > 1e-9*total {
		t.Errorf("aggregate write volume %.0f B, SQL says %.0f B", sum, total)
	}
}

// TestLMTReset proves that a database whose counters reset (a server
// restart, 40 timestamps without rows, then counters from zero) gives no
// negative rate, NaN where rows are missing, and real rates on both sides.
func TestLMTReset(t *testing.T) {
	r := whole(t)(OpenLMT(interop.Path(t, reset), Options{TZ: time.UTC}))
	// TS 16486100 .. 16486164 are 64 intervals; rows exist for 100..106
	// and 146..164, so samples 6..45 (intervals 106->146) are unknown.
	if r.Len() != 64 {
		t.Fatalf("%d samples, want 64", r.Len())
	}
	for k := 0; k < r.Len(); k++ {
		for _, v := range []float64{r.Read[0][k], r.Write[0][k]} {
			gap := k >= 6 && k < 46
			if gap != math.IsNaN(v) || v < 0 || v > 1e10 {
				t.Errorf("sample %d: %v (gap %v)", k, v, gap)
			}
		}
	}
	// TS 16486100 -> 16486101: WRITE_BYTES 274819451570722 -> 274819593402818.
	if want := (274819593402818 - 274819451570722) / 5.0; r.Write[0][0] != want {
		t.Errorf("write sample 0 = %v, want %v", r.Write[0][0], want)
	}
	// TS 16486163 -> 16486164, after the reset: 774221064 -> 796777736.
	if want := (796777736 - 774221064) / 5.0; r.Write[0][63] != want {
		t.Errorf("write sample 63 = %v, want %v", r.Write[0][63], want)
	}
}

// writeLMT writes rates to a new LMT SQLite file and returns its path.
func writeLMT(t *testing.T, r *Rates, lost []bool, opts LMTWriterOptions) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lmt.sqlite3")
	w, err := CreateLMT(path, r.OSTs, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Two writes of halves prove that appending continues the counters.
	h := r.Len() / 2
	first, second := r.Slice(r.Start, r.Time(h)), r.Slice(r.Time(h), r.End())
	if err := w.WriteLost(first, lost); err != nil {
		t.Fatal(err)
	}
	var rest []bool
	if len(lost) > h {
		rest = lost[h:]
	}
	if err := w.WriteLost(second, rest); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// synthRates makes rates of whole bytes per sample, so that counters hold
// them exactly and the reader must return them bit for bit.
func synthRates(osts, n int, start time.Time, step time.Duration) *Rates {
	r := &Rates{Start: start, Step: step}
	sec := step.Seconds()
	for i := range osts {
		r.OSTs = append(r.OSTs, "fs-OST"+strings.ToUpper(strings.TrimPrefix(hex4(i), "0x")))
		rd, wr := make([]float64, n), make([]float64, n)
		for k := range n {
			rd[k] = float64((k*7919+i*104729)%1000003) / sec
			if (k/10+i)%3 == 0 {
				wr[k] = float64(((k+1)*(i+3)*65537)%50000017) / sec
			}
		}
		r.Read, r.Write = append(r.Read, rd), append(r.Write, wr)
	}
	return r
}

func hex4(i int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[i>>12&15], digits[i>>8&15], digits[i>>4&15], digits[i&15]})
}

func sameRate(a, b float64) bool {
	return a == b || math.IsNaN(a) && math.IsNaN(b)
}

// TestLMTWriterRoundTrip proves that the writer's database reads back to
// the rates it was given, sample for sample, in the writer's zone; that a
// NaN (no row) and a lost timestamp (no row, counters still counting)
// each become a gap of two samples, the lost sample and the next, as one
// missing reading leaves two intervals unknown; and that a reader in
// another zone sees the times shifted by the zones' offset.
func TestLMTWriterRoundTrip(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 3, 5, 23, 50, 0, 0, berlin)
	want := synthRates(3, 40, start, 5*time.Second)
	want.Write[1][7] = math.NaN()
	lost := make([]bool, 40)
	lost[30] = true
	path := writeLMT(t, want, lost, LMTWriterOptions{TZ: berlin, InitialRead: []uint64{1e12, 2e12, 3e12}})

	src, err := OpenLMT(path, Options{TZ: berlin})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := src.Window(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Start.Equal(start) || got.Len() != 40 || got.Step != want.Step {
		t.Fatalf("read %d samples from %v by %v, want 40 from %v", got.Len(), got.Start, got.Step, start)
	}
	for i := range want.OSTs {
		if got.OSTs[i] != want.OSTs[i] {
			t.Fatalf("OST %d is %q, want %q", i, got.OSTs[i], want.OSTs[i])
		}
		for k := range 40 {
			wr, ww := want.Read[i][k], want.Write[i][k]
			switch {
			case k == 30 || k == 31:
				wr, ww = math.NaN(), math.NaN()
			case i == 1 && (k == 7 || k == 8):
				wr, ww = math.NaN(), math.NaN()
			}
			if !sameRate(got.Read[i][k], wr) || !sameRate(got.Write[i][k], ww) {
				t.Errorf("OST %d sample %d: read %v write %v, want %v and %v", i, k, got.Read[i][k], got.Write[i][k], wr, ww)
			}
		}
	}
	utc, err := OpenLMT(path, Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer utc.Close()
	from, _, _, _ := utc.Span()
	if d := from.Sub(start); d != time.Hour {
		t.Errorf("read in UTC, the span starts %v after the Berlin start, want 1h (CET is UTC+1)", d)
	}
}

// TestLMTWriterRefuses proves the writer's checks: rates that do not
// continue the database, of other OSTs, or negative.
func TestLMTWriterRefuses(t *testing.T) {
	r := synthRates(2, 10, time.Unix(1_700_000_000, 0), 5*time.Second)
	path := filepath.Join(t.TempDir(), "x.sqlite3")
	w, err := CreateLMT(path, r.OSTs, LMTWriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(r); err == nil || !strings.Contains(err.Error(), "do not continue") {
		t.Errorf("rewriting the same window: %v", err)
	}
	other := synthRates(3, 10, r.End(), 5*time.Second)
	if err := w.Write(other); err == nil {
		t.Error("rates of 3 OSTs accepted by a database of 2")
	}
	neg := synthRates(2, 10, r.End(), 5*time.Second)
	neg.Read[1][4] = -1
	if err := w.Write(neg); err == nil || !strings.Contains(err.Error(), "sample 4") {
		t.Errorf("negative rate: %v", err)
	}
	if _, err := CreateLMT(path, r.OSTs, LMTWriterOptions{}); err == nil {
		t.Error("CreateLMT over an existing file succeeded")
	}
}

// TestLMTCountersAnomalies proves the reader against what real counters
// do, on rows the test rewrites: a counter that goes down (a reset) makes
// its interval NaN, never negative; a single glitched reading far above
// its neighbours makes both intervals around it NaN (the rate it implies
// is beyond MaxRate) instead of a huge spike; the other direction of the
// same OST is unaffected.
func TestLMTCountersAnomalies(t *testing.T) {
	r := synthRates(1, 20, time.Unix(1_700_000_000, 0), 5*time.Second)
	path := writeLMT(t, r, nil, LMTWriterOptions{TZ: time.UTC})
	db, err := sql.Open("sqlite", sqliteURI(path, false))
	if err != nil {
		t.Fatal(err)
	}
	// TS_ID k+1 is the reading at the start of sample k.
	for _, q := range []string{
		// A reset at the end of sample 4: the counter restarts near zero
		// and counts on by the same differences.
		"UPDATE OST_DATA SET READ_BYTES = READ_BYTES - (SELECT READ_BYTES FROM OST_DATA WHERE TS_ID = 6) + 10 WHERE TS_ID >= 6",
		"UPDATE OST_DATA SET WRITE_BYTES = WRITE_BYTES + 1e16 WHERE TS_ID = 13", // glitch at the end of sample 11
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	got := whole(t)(OpenLMT(path, Options{TZ: time.UTC}))
	for k := range 20 {
		wr, ww := r.Read[0][k], r.Write[0][k]
		if k == 4 {
			wr = math.NaN()
		}
		if k == 11 || k == 12 {
			ww = math.NaN()
		}
		if !sameRate(got.Read[0][k], wr) {
			t.Errorf("read sample %d = %v, want %v", k, got.Read[0][k], wr)
		}
		if !sameRate(got.Write[0][k], ww) {
			t.Errorf("write sample %d = %v, want %v", k, got.Write[0][k], ww)
		}
	}
}

// TestLMTBadInput proves the errors a person gets for a missing table, a
// file that is not a database, an unparsable TIMESTAMP and a NULL
// counter, each naming the file and the table (and row), and that
// SkipBad reads on and counts what it left out.
func TestLMTBadInput(t *testing.T) {
	r := synthRates(2, 6, time.Unix(1_700_000_000, 0), 5*time.Second)
	mk := func(q string) string {
		path := writeLMT(t, r, nil, LMTWriterOptions{TZ: time.UTC})
		db, err := sql.Open("sqlite", sqliteURI(path, false))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
		return path
	}
	junk := filepath.Join(t.TempDir(), "junk.sqlite3")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a database\n", 300)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		want       []string
		skipped    int // rows SkipBad leaves out; -1: still an error
	}{
		{"missing table", mk("DROP TABLE OST_INFO"), []string{"table OST_INFO", "no such table"}, -1},
		{"not a database", junk, []string{"junk.sqlite3", "not a database"}, -1},
		{"bad time", mk("UPDATE TIMESTAMP_INFO SET TIMESTAMP = 'yesterday' WHERE TS_ID = 3"),
			[]string{"table TIMESTAMP_INFO, row 3", "yesterday"}, 1},
		{"null counter", mk("UPDATE OST_DATA SET WRITE_BYTES = NULL WHERE TS_ID = 4 AND OST_ID = 2"),
			[]string{"table OST_DATA, OST_ID 2, TS_ID 4", "NULL"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := readAll(c.path, Options{TZ: time.UTC})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(c.want, c.path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			var bad BadRows
			err = readAll(c.path, Options{TZ: time.UTC, SkipBad: true, Bad: &bad})
			if c.skipped < 0 {
				if err == nil {
					t.Error("SkipBad read a broken database")
				}
				return
			}
			if err != nil || bad.Count() != c.skipped {
				t.Errorf("with SkipBad: %v, %d skipped, want %d", err, bad.Count(), c.skipped)
			}
		})
	}
}

func readAll(path string, opts Options) error {
	src, err := OpenLMT(path, opts)
	if err != nil {
		return err
	}
	defer src.Close()
	_, err = src.Window(time.Time{}, time.Time{})
	return err
}

// TestLMTWindow proves that a window is cut on the grid of the whole
// source: the same samples as the whole span's, from the cell holding
// from to the cell before the one holding to, clipped to the span.
func TestLMTWindow(t *testing.T) {
	src, err := OpenLMT(interop.Path(t, snx), Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	all, err := src.Window(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := all.Start
	w, err := src.Window(t0.Add(62*time.Second), t0.Add(121*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// 62 s is in cell 12; 121 s in cell 24, so cells 12..24.
	if w.Len() != 13 || !w.Start.Equal(t0.Add(60*time.Second)) {
		t.Fatalf("window: %d samples from %v", w.Len(), w.Start)
	}
	for i := range all.OSTs {
		for k := range w.Len() {
			if !sameRate(w.Write[i][k], all.Write[i][k+12]) || !sameRate(w.Read[i][k], all.Read[i][k+12]) {
				t.Fatalf("OST %d sample %d differs from the full read", i, k)
			}
		}
	}
	before, err := src.Window(t0.Add(-time.Hour), t0.Add(10*time.Second))
	if err != nil || before.Len() != 2 || !before.Start.Equal(t0) {
		t.Errorf("window overlapping the start: %v, %d samples from %v", err, before.Len(), before.Start)
	}
}

// TestLMTRepeatedHour proves that an LMT database written in local time
// across the night clocks go back (Europe/Berlin, 27 October 2024: 03:00
// CEST becomes 02:00 CET, so 02:00-02:59 is written twice) reads back to
// every sample in its place, with no gap and no doubled hour.
func TestLMTRepeatedHour(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 10, 26, 23, 0, 0, 0, time.UTC) // 01:00 CEST
	want := synthRates(2, 4*720, start, 5*time.Second)      // to 04:00 CET
	path := writeLMT(t, want, nil, LMTWriterOptions{TZ: berlin})
	db, err := sql.Open("sqlite", sqliteURI(path, true))
	if err != nil {
		t.Fatal(err)
	}
	var twice int
	db.QueryRow("SELECT COUNT(*) FROM TIMESTAMP_INFO WHERE TIMESTAMP = '2024-10-27 02:30:00'").Scan(&twice)
	db.Close()
	if twice != 2 {
		t.Fatalf("02:30 written %d times, want 2 (the test needs the repeated hour)", twice)
	}
	sameWindow(t, "across the repeated hour", whole(t)(OpenLMT(path, Options{TZ: berlin})), want)
}

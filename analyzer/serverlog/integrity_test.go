package serverlog

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iopred/tests/interop"
)

const realLMT = "lmt/snx11025_2018-01-28.sqlite3"

// copyLMT copies a real LMT file to a writable temporary one and applies
// the SQL statements to it.
func copyLMT(t *testing.T, name string, stmts ...string) string {
	t.Helper()
	in, err := os.Open(interop.Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(t.TempDir(), filepath.Base(name))
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
	if len(stmts) > 0 {
		db, err := sql.Open("sqlite", sqliteURI(path, false))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range stmts {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	return path
}

// snapshot reads every file of a store directory.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() && e.Name() != ".lock" {
			b, _ := os.ReadFile(p)
			files[strings.TrimPrefix(p, dir)] = string(b)
		}
		return nil
	})
	return files
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d files, want %d", what, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s changed", what, k)
		}
	}
}

// TestStoreNeverChangesSilently proves the store's guarantees on the real
// LMT file: the same file imported again changes no byte of the store;
// read in another zone it is refused, under its own name and as a copy
// under another; a copy whose counters differ for two OSTs is refused
// with those OSTs and the time range named and leaves the store as it
// was; with Replace the copy's samples win and are counted.
func TestStoreNeverChangesSilently(t *testing.T) {
	lmt := interop.Path(t, realLMT)
	dir := filepath.Join(t.TempDir(), "store")
	utc := Options{TZ: time.UTC}
	if _, err := Import(context.Background(), dir, []Spec{{Path: lmt}}, utc, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	want := whole(t)(OpenStore(dir, Options{}))

	stats, err := Import(context.Background(), dir, []Spec{{Path: lmt}}, utc, ImportOptions{All: true})
	if err != nil || stats.Days != 0 || stats.Unchanged != 1 {
		t.Errorf("the same file again: %+v, %v; want 1 day unchanged", stats, err)
	}
	sameFiles(t, "the same file again", snapshot(t, dir), before)

	la, _ := time.LoadLocation("America/Los_Angeles")
	_, err = Import(context.Background(), dir, []Spec{{Path: lmt}}, Options{TZ: la}, ImportOptions{Replace: true})
	if err == nil || err.Error() != "--lmt "+lmt+": already in the store read in zone UTC, now in America/Los_Angeles: its times would move and its bytes count twice; import it with --tz UTC (or into a new store)" {
		t.Errorf("another zone: %v", err)
	}
	cp := copyLMT(t, realLMT)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	_, err = Import(context.Background(), dir, []Spec{{Path: cp}}, Options{TZ: berlin}, ImportOptions{})
	if err == nil || err.Error() != "--lmt "+cp+": the same log as --lmt "+lmt+", already in the store read in zone UTC, now in Europe/Berlin: its times would move and its bytes count twice; import it with --tz UTC (or into a new store)" {
		t.Errorf("a copy in another zone: %v", err)
	}
	sameFiles(t, "after the refused zones", snapshot(t, dir), before)

	// Another source for the same OSTs and day: 1.5 GB more written on
	// OST0003 and OST0010 from the reading at 00:04:20 on, so the
	// interval 00:04:15-00:04:20 of each differs.
	other := copyLMT(t, realLMT, "UPDATE OST_DATA SET WRITE_BYTES = WRITE_BYTES + 1500000000 WHERE TS_ID >= 8921950 AND OST_ID IN "+
		"(SELECT OST_ID FROM OST_INFO WHERE OST_NAME IN ('snx11025-OST0003', 'snx11025-OST0010'))")
	_, err = Import(context.Background(), dir, []Spec{{Path: other}}, utc, ImportOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) || err.Error() != "--lmt "+other+": 2 OST samples differ from what the store holds from --lmt "+lmt+
		": 2 OSTs (snx11025-OST0003, snx11025-OST0010) from 2018-01-28 00:04:15 UTC to 2018-01-28 00:04:20 UTC; nothing was imported (--replace overwrites them with this source's)" {
		t.Errorf("a different source for the same OSTs: %v", err)
	}
	sameFiles(t, "after the refused source", snapshot(t, dir), before)

	stats, err = Import(context.Background(), dir, []Spec{{Path: other}}, utc, ImportOptions{Replace: true})
	if err != nil || stats.Replaced != 2 || stats.Days != 1 {
		t.Fatalf("--replace: %+v, %v", stats, err)
	}
	got := whole(t)(OpenStore(dir, Options{}))
	k := got.Index(time.Date(2018, 1, 28, 0, 4, 15, 0, time.UTC))
	for i, o := range got.OSTs {
		for c := range got.Len() {
			d := got.Write[i][c] - want.Write[i][c]
			if (o == "snx11025-OST0003" || o == "snx11025-OST0010") && c == k {
				if d != 1500000000/5.0 {
					t.Errorf("%s at 00:04:15: %v more, want the 300 MB/s the copy adds", o, d)
				}
			} else if d != 0 || got.Read[i][c] != want.Read[i][c] {
				t.Errorf("%s sample %d changed by --replace", o, c)
			}
		}
	}
	// The files the replaced day left are gone.
	if ents, _ := os.ReadDir(filepath.Join(dir, daysDir)); len(ents) != 1 {
		t.Errorf("%d chunks after --replace, want 1", len(ents))
	}
}

// TestLMTDisorderedTimestamps proves that TIMESTAMP_INFO rows out of time
// order (two swapped) or repeating a time (one duplicated) on the real
// LMT file are left out with a warning that counts them, and that no
// byte is made of them: every known sample is the clean file's, and the
// samples around them are unknown. (Read as they were, the swapped pair
// looked like a counter reset and the bytes around it counted twice.)
func TestLMTDisorderedTimestamps(t *testing.T) {
	clean := whole(t)(OpenLMT(interop.Path(t, realLMT), Options{TZ: time.UTC}))
	for _, c := range []struct {
		name, sql, warning string
		unknown            int // samples per OST made unknown
	}{
		{"swapped", "UPDATE TIMESTAMP_INFO SET TIMESTAMP = CASE TS_ID WHEN 8921910 THEN '2018-01-28 00:01:05' ELSE '2018-01-28 00:01:00' END WHERE TS_ID IN (8921910, 8921911)",
			"table TIMESTAMP_INFO: 1 timestamps out of time order or repeating an earlier time (TS_ID 8921910) left out; the intervals around them are unknown", 3},
		{"duplicated", "UPDATE TIMESTAMP_INFO SET TIMESTAMP = '2018-01-28 00:01:05' WHERE TS_ID = 8921910",
			"table TIMESTAMP_INFO: 1 timestamps out of time order or repeating an earlier time (TS_ID 8921910) left out; the intervals around them are unknown", 2},
	} {
		path := copyLMT(t, realLMT, c.sql)
		var warnings []string
		got := whole(t)(OpenLMT(path, Options{TZ: time.UTC, Warn: func(m string) { warnings = append(warnings, m) }}))
		if len(warnings) != 1 || warnings[0] != path+": "+c.warning {
			t.Errorf("%s: warnings %q", c.name, warnings)
		}
		if got.Len() != clean.Len() {
			t.Fatalf("%s: %d samples, want %d", c.name, got.Len(), clean.Len())
		}
		unknown := 0
		var gotW, cleanW float64
		for i := range got.OSTs {
			for k := range got.Len() {
				g := got.Write[i][k]
				if math.IsNaN(g) {
					unknown++
					continue
				}
				if g != clean.Write[i][k] || got.Read[i][k] != clean.Read[i][k] {
					t.Fatalf("%s: %s sample %d is %v/%v, the clean file's %v/%v", c.name, got.OSTs[i], k,
						got.Read[i][k], g, clean.Read[i][k], clean.Write[i][k])
				}
				gotW += g
				cleanW += clean.Write[i][k]
			}
		}
		if unknown != c.unknown*len(got.OSTs) {
			t.Errorf("%s: %d unknown samples, want %d per OST", c.name, unknown, c.unknown)
		}
		if gotW > cleanW {
			t.Errorf("%s: %v bytes/s written in all, more than the clean file's %v", c.name, gotW, cleanW)
		}
	}
}

// TestTextRepeatedReadings proves the text logs' repair: rows out of time
// order are sorted (their counters go with them, so their samples are
// exact), a time given twice with the same counters is kept once, and a
// time given twice with different counters leaves the intervals on both
// sides unknown; the warning counts both.
func TestTextRepeatedReadings(t *testing.T) {
	csv := "time,ost,read_bytes,write_bytes\n" +
		"0,A,0,0\n10,A,100,1000\n5,A,50,500\n15,A,150,1500\n15,A,150,1500\n20,A,200,2000\n25,A,250,2500\n25,A,999,9999\n30,A,300,3000\n35,A,350,3500\n"
	path := filepath.Join(t.TempDir(), "log.csv")
	os.WriteFile(path, []byte(csv), 0o644)
	var warnings []string
	got := whole(t)(OpenCSV(path, Options{TZ: time.UTC, Warn: func(m string) { warnings = append(warnings, m) }}))
	if len(warnings) != 1 || warnings[0] != path+": 1 readings out of time order (sorted) and 2 repeating a time (kept once; where their counters differ, the intervals around that time are unknown)" {
		t.Errorf("warnings %q", warnings)
	}
	for k, want := range []float64{100, 100, 100, 100, math.NaN(), math.NaN(), 100} {
		if !sameRate(got.Write[0][k], want) {
			t.Errorf("write sample %d = %v, want %v", k, got.Write[0][k], want)
		}
	}
}

// TestCounterResetsReported proves that the reset in the real LMT file
// (OST snx11168-OST00ad, counters from zero after a restart) is reported
// by the import, with its OST and the readings around it, kept in the
// store's index, and described by Describe; the file without one reports
// none.
func TestCounterResetsReported(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	stats, err := Import(context.Background(), dir, []Spec{{Path: interop.Path(t, reset)}}, Options{TZ: time.UTC}, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := CounterReset{OST: "snx11168-OST00ad", After: time.Date(2018, 4, 18, 7, 35, 45, 0, time.UTC), Before: time.Date(2018, 4, 18, 7, 39, 5, 0, time.UTC)}
	if len(stats.Resets) != 1 || stats.Resets[0] != want {
		t.Errorf("import reported %+v, want %+v", stats.Resets, want)
	}
	s, err := Describe(Spec{Path: dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Resets) != 1 || s.Resets[0] != want {
		t.Errorf("info of the store: %+v", s.Resets)
	}
	if !strings.Contains(s.Text(time.UTC), "resets 1 counter resets on 1 OSTs\n         snx11168-OST00ad between 2018-04-18 07:35:45 UTC and 2018-04-18 07:39:05 UTC") {
		t.Errorf("info text:\n%s", s.Text(time.UTC))
	}
	stats, err = Import(context.Background(), filepath.Join(t.TempDir(), "s2"), []Spec{{Path: interop.Path(t, realLMT)}}, Options{TZ: time.UTC}, ImportOptions{})
	if err != nil || len(stats.Resets) != 0 {
		t.Errorf("the file without a reset: %+v, %v", stats.Resets, err)
	}
}

// TestCheckOverlap proves the error for a job log and a throughput log of
// different times, both spans named, and that one job inside is enough.
func TestCheckOverlap(t *testing.T) {
	src := whole(t)(OpenLMT(interop.Path(t, realLMT), Options{TZ: time.UTC}))
	rs, _ := NewRatesSource(src)
	late := []Job{{ID: "1", Start: time.Date(2019, 1, 28, 0, 0, 0, 0, time.UTC), End: time.Date(2019, 1, 28, 0, 3, 0, 0, time.UTC)},
		{ID: "2", Start: time.Date(2019, 1, 29, 0, 0, 0, 0, time.UTC), End: time.Date(2019, 1, 29, 1, 0, 0, 0, time.UTC)}}
	err := CheckOverlap(rs, "lmt.db", late, "sacct.txt")
	if err == nil || err.Error() != "the logs do not overlap in time: sacct.txt holds jobs from 2019-01-28 00:00:00 UTC to 2019-01-29 01:00:00 UTC (2 jobs), lmt.db holds rates from 2018-01-28 00:00:00 UTC to 2018-01-28 00:05:00 UTC" {
		t.Errorf("no overlap: %v", err)
	}
	inside := append(late, Job{ID: "3", Start: time.Date(2018, 1, 27, 23, 0, 0, 0, time.UTC), End: time.Date(2018, 1, 28, 0, 1, 0, 0, time.UTC)})
	if err := CheckOverlap(rs, "lmt.db", inside, "sacct.txt"); err != nil {
		t.Errorf("a job across the log's start: %v", err)
	}
	if err := CheckOverlap(rs, "lmt.db", nil, "sacct.txt"); err == nil || err.Error() != "sacct.txt: no job that ran and ended" {
		t.Errorf("no job: %v", err)
	}
}

// TestClip proves that a clipped source shows only its window, to the
// sample, in its span and its windows.
func TestClip(t *testing.T) {
	r := synthRates(2, 100, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), 5*time.Second)
	src, _ := NewRatesSource(r)
	c := Clip(src, r.Start.Add(12*time.Second), r.Start.Add(61*time.Second))
	from, to, _, err := c.Span()
	if err != nil || !from.Equal(r.Time(2)) || !to.Equal(r.Start.Add(61*time.Second)) {
		t.Errorf("span %v .. %v, %v", from, to, err)
	}
	w, err := c.Window(time.Time{}, r.End())
	if err != nil || !w.Start.Equal(r.Time(2)) || w.Len() != 11 || w.Write[1][0] != r.Write[1][2] {
		t.Errorf("window: %v, %d samples from %v", err, w.Len(), w.Start)
	}
}

// TestIncreasingSubsequence proves on random timestamp tables (swaps,
// repeats, far outliers) that the timestamps kept strictly increase and
// are as many as the longest such subsequence (checked by the quadratic
// recurrence), so that dropDisordered leaves out the fewest rows.
func TestIncreasingSubsequence(t *testing.T) {
	seed := uint64(1)
	rnd := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	for trial := range 500 {
		n := rnd(40)
		rows := make([]tsRow, n)
		for i := range rows {
			rows[i] = tsRow{id: int64(i), t: int64(i) * 5}
			switch rnd(8) {
			case 0:
				rows[i].t = int64(rnd(n+1)) * 5 // anywhere, repeats included
			case 1:
				rows[i].t += 1000
			}
		}
		keep := increasingSubsequence(rows)
		for j := 1; j < len(keep); j++ {
			if keep[j] <= keep[j-1] || rows[keep[j]].t <= rows[keep[j-1]].t {
				t.Fatalf("trial %d: kept %v of %v: not increasing", trial, keep, rows)
			}
		}
		best := make([]int, n)
		longest := 0
		for i := range rows {
			best[i] = 1
			for j := range i {
				if rows[j].t < rows[i].t {
					best[i] = max(best[i], best[j]+1)
				}
			}
			longest = max(longest, best[i])
		}
		if len(keep) != longest {
			t.Fatalf("trial %d: kept %d rows, the longest increasing run has %d", trial, len(keep), longest)
		}
	}
}

// FuzzCSVRates proves on any plain CSV (rows out of order, times given
// twice with other counters, resets) that reading it to rates neither
// panics nor gives a negative rate, and that every reset it reports is a
// counter that went down.
func FuzzCSVRates(f *testing.F) {
	f.Add([]byte("time,ost,read_bytes,write_bytes\n0,A,0,0\n10,A,100,1000\n5,A,50,500\n10,A,99,1000\n15,A,5,5\n20,A,10,10\n"))
	f.Add([]byte("time,ost,read_bytes,write_bytes\n0,A,0,0\n5,B,1,1\n5,A,3,3\n0,B,0,0\n10,A,9,9\n10,B,2,2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "log.csv")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := OpenCSV(path, Options{TZ: time.UTC, SkipBad: true, Warn: func(string) {}})
		if err != nil {
			return
		}
		defer src.Close()
		from, to, step, err := src.Span()
		if err != nil || to.Sub(from)/step > 100000 {
			return
		}
		r, err := src.Window(time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.OSTs {
			for k := range r.Len() {
				if r.Read[i][k] < 0 || r.Write[i][k] < 0 {
					t.Fatalf("%s sample %d: %v/%v", r.OSTs[i], k, r.Read[i][k], r.Write[i][k])
				}
			}
		}
		for _, x := range src.(ResetReporter).CounterResets() {
			if !x.After.Before(x.Before) {
				t.Fatalf("reset %+v: not after the reading before it", x)
			}
		}
	})
}

package serverlog

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iopred/tests/fuzzinput"
	"iopred/tests/interop"
)

// TestLustreRealSnapshot proves the parsers on the real files of one OST:
// the stats file's snapshot time and write_bytes sum (its read_bytes line
// is absent: no reads, so zero), and the job_stats file's 35 jobs with
// their sums as written (job 24: write sum 215147593728, read 0).
func TestLustreRealSnapshot(t *testing.T) {
	b, err := os.ReadFile(interop.Path(t, "lustre/OST0000.stats"))
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := parseLustre("OST0000.stats", b, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 1 || snaps[0].ost != "OST0000" || snaps[0].t != 1510782606789180921 ||
		snaps[0].w != 16552048697344 || snaps[0].r != 0 {
		t.Errorf("stats: %+v", snaps)
	}
	b, err = os.ReadFile(interop.Path(t, "lustre/OST0000.job_stats"))
	if err != nil {
		t.Fatal(err)
	}
	snaps, err = parseLustre(filepath.Join("1510782606", "OST0000.job_stats"), b, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 1 || len(snaps[0].jobs) != 35 || snaps[0].jobs["24"] != [2]uint64{0, 215147593728} ||
		snaps[0].t != 1510782606e9 {
		t.Errorf("job_stats: %d sections, %d jobs, job 24 %v, time %d", len(snaps), len(snaps[0].jobs), snaps[0].jobs["24"], snaps[0].t)
	}
}

// lustreSeries writes n snapshots 5 s apart of two OSTs, built from the
// real files: OST0000 as bare files in a directory per time (the layout
// of the real files), OST0001 as lctl get_param sections in one file per
// time. Its write counter grows by 5,000*(k+1) bytes in interval k; job
// 24 writes 1 MB per interval on both OSTs; job 26 is dropped from
// snapshot 4 on (Lustre purged it) and comes back in snapshot 6 with a
// fresh count of 300 bytes.
func lustreSeries(t *testing.T, n int) (string, int64) {
	t.Helper()
	stats, err := os.ReadFile(interop.Path(t, "lustre/OST0000.stats"))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := os.ReadFile(interop.Path(t, "lustre/OST0000.job_stats"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t0 := int64(1510782606)
	var w uint64 = 16552048697344
	for k := range n {
		if k > 0 {
			w += uint64(5000 * k)
		}
		at := t0 + 5*int64(k)
		st := strings.Replace(string(stats), "1510782606.789180921", fmt.Sprintf("%d.000000000", at), 1)
		st = strings.Replace(st, "16552048697344", fmt.Sprint(w), 1)
		js := strings.Replace(string(jobs), "sum:    215147593728", fmt.Sprintf("sum:    %d", 215147593728+uint64(k)*1e6), 1)
		switch {
		case k >= 4 && k < 6:
			js = dropJob(js, "26")
		case k >= 6:
			js = strings.Replace(js, "sum:    185838792704", "sum:    300", 1)
		}
		sub := filepath.Join(dir, fmt.Sprint(at))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(sub, "OST0000.stats"), []byte(st), 0o644)
		os.WriteFile(filepath.Join(sub, "OST0000.job_stats"), []byte(js), 0o644)
		both := "obdfilter.fs-OST0001.stats=\n" + st + "obdfilter.fs-OST0001.kbytesfree=123\n" +
			"obdfilter.fs-OST0001.job_stats=\n" + js
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("all-%d.txt", at)), []byte(both), 0o644)
	}
	return dir, t0
}

// dropJob removes one job's entry from job_stats text.
func dropJob(js, id string) string {
	lines := strings.Split(js, "\n")
	var out []string
	skip := false
	for _, l := range lines {
		if strings.HasPrefix(l, "- job_id:") {
			skip = strings.TrimSpace(strings.TrimPrefix(l, "- job_id:")) == id
		}
		if !skip {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestLustreSeries proves the Lustre source and job stats on a written
// series: rates are the counters' differences over 5 s on both layouts,
// a job's bytes come from its own counters (and a purged job that comes
// back counts from zero, never negative), and job_stats alone give the
// OST's rate as the sum over its jobs.
func TestLustreSeries(t *testing.T) {
	dir, t0 := lustreSeries(t, 8)
	r := whole(t)(OpenSource(Spec{Path: dir}, Options{}))
	// Readings from t0 = 1510782606 to t0+35 s on the grid of 5 s since
	// the epoch: cells from 1510782605 to 1510782645, 8 of them.
	if r.Len() != 8 || !r.Start.Equal(time.Unix(t0-1, 0)) {
		t.Fatalf("%d samples from %v, want 8 from %v", r.Len(), r.Start, time.Unix(t0-1, 0))
	}
	if strings.Join(r.OSTs, ",") != "OST0000,fs-OST0001" {
		t.Fatalf("OSTs %v", r.OSTs)
	}
	// t0 is 1 s past a multiple of 5 s: interval k puts 4/5 of its bytes
	// in cell k and 1/5 in cell k+1. Cell 0 is known for 4 s only (its
	// rate, 4,000 B / 4 s, times 5 s counts 5,000 bytes for 4,000), cell
	// 7 for 1 s (NaN: it loses 1/5 of interval 6's 35,000 bytes):
	// 140,000 bytes in all, less 7,000, plus 1,000.
	for i := range r.OSTs {
		sum := 0.0
		for k := range r.Len() {
			if !math.IsNaN(r.Write[i][k]) {
				sum += r.Write[i][k] * 5
			}
		}
		if want := 5000.0*28 - 7000 + 1000; math.Abs(sum-want) > 1e-6 {
			t.Errorf("%s: %.0f bytes written on the grid, want about %.0f", r.OSTs[i], sum, want)
		}
	}
	// On a grid aligned to the snapshots (Step 5 s from t0) each cell is
	// one interval: 5,000*(k+1)/5 B/s.
	exact, err := OpenLustre(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer exact.Close()
	cs := exact.(*counterSource)
	rs, _ := cs.log.readings(t0*1e9, (t0+35)*1e9)
	g := gridReadings(rs, cs.log.names(), t0*1e9, 5*time.Second, 7, int64(7500*time.Millisecond), DefaultMaxRate)
	for i := range g.OSTs {
		for k := range 7 {
			if want := 5000 * float64(k+1) / 5; g.Write[i][k] != want || g.Read[i][k] != 0 {
				t.Errorf("%s interval %d: write %v read %v, want %v and 0", g.OSTs[i], k, g.Write[i][k], g.Read[i][k], want)
			}
		}
	}

	js, err := ReadJobStats(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(js.Jobs) != 35 || len(js.OSTs) != 2 {
		t.Fatalf("%d jobs on %d OSTs", len(js.Jobs), len(js.OSTs))
	}
	_, w24 := js.Bytes("24")
	_, w26 := js.Bytes("26")
	for i := range js.OSTs {
		if w24[i] != 7e6 {
			t.Errorf("job 24 on %s: %d bytes, want 7 MB (1 MB in each of 7 intervals)", js.OSTs[i], w24[i])
		}
		// Job 26: its count drops to absent (0) at snapshot 4, then 300.
		if w26[i] != 300 {
			t.Errorf("job 26 on %s: %d bytes, want the 300 of its second life", js.OSTs[i], w26[i])
		}
	}
	jr, err := js.Rates("24", time.Time{}, time.Time{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range jr.OSTs {
		for k := range jr.Len() {
			if v := jr.Write[i][k]; v < 0 || math.IsNaN(v) && k > 0 && k < jr.Len()-1 {
				t.Errorf("job 24 rate on %s sample %d: %v", jr.OSTs[i], k, v)
			}
		}
	}

	// The same directory without stats files and sections: job_stats
	// alone give each OST's rates as the sum over the jobs.
	onlyJobs := t.TempDir()
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".job_stats") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		os.MkdirAll(filepath.Join(onlyJobs, filepath.Dir(rel)), 0o755)
		b, _ := os.ReadFile(p)
		return os.WriteFile(filepath.Join(onlyJobs, rel), b, 0o644)
	})
	fr := whole(t)(OpenLustre(onlyJobs, Options{}))
	total := 0.0
	for k := range fr.Len() {
		if !math.IsNaN(fr.Write[0][k]) {
			total += fr.Write[0][k] * 5
		}
	}
	// Job 24's 7 MB and job 26's 300 bytes, the only jobs that moved.
	if math.Abs(total-(7e6+300)) > 1 {
		t.Errorf("job_stats alone: %.0f bytes written, want 7000300", total)
	}
}

// TestLustreBadInput proves the errors for a file that is not lctl
// output, a stats line without its sum and a job_stats sum that is not a
// number, each naming the file and line; SkipBad reads on; a snapshot cut
// in the middle of its last line keeps the lines before it.
func TestLustreBadInput(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"not lctl", "hello world\n", "line 1: not lctl get_param output"},
		{"short stats", "snapshot_time 1510782606.5 secs.nsecs\nwrite_bytes 3 samples [bytes] 1 2\n", "line 2: write_bytes"},
		{"bad sum", "job_stats:\n- job_id: 7\n  write_bytes: { samples: 1, unit: bytes, min: 1, max: 1, sum: lots }\n", "line 3: job 7: write_bytes"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		path := filepath.Join(dir, "OST0000")
		os.WriteFile(path, []byte(c.text), 0o644)
		_, err := OpenLustre(dir, Options{})
		if err == nil || !strings.Contains(err.Error(), path+": "+c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		var bad BadRows
		OpenLustre(dir, Options{SkipBad: true, Bad: &bad})
		if bad.Count() != 1 {
			t.Errorf("%s: SkipBad counted %d bad lines, want 1", c.name, bad.Count())
		}
	}
	cut := "snapshot_time 1510782606.5 secs.nsecs\nwrite_bytes 3 samples [bytes] 1 2 300\nread_bytes 3 sam"
	snaps, err := parseLustre("cut", []byte(cut), &Options{})
	if err != nil || len(snaps) != 1 || snaps[0].w != 300 {
		t.Errorf("truncated snapshot: %v, %+v", err, snaps)
	}
}

// FuzzParseLustre proves that no input makes the Lustre parser panic or
// hang. The seeds are the first lines of the real files, and small edits
// of them: Go's fuzzer minimises each input that finds new code at a cost
// quadratic in its length (tests/fuzzinput).
func FuzzParseLustre(f *testing.F) {
	for _, p := range []string{"lustre/OST0000.stats", "lustre/OST0000.job_stats"} {
		b, err := os.ReadFile(filepath.Join(interop.Dir(), p))
		if err != nil {
			f.Fatal(err)
		}
		for _, in := range fuzzinput.Edits(fuzzinput.Lines(b, 6), 4) {
			f.Add(in)
		}
	}
	f.Add([]byte("obdfilter.a-OST0000.stats=\nsnapshot_time 1.5 secs.nsecs\nread_bytes 1 samples [bytes] 1 1 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		snaps, err := parseLustre("1510782606", b, &Options{SkipBad: true})
		if err != nil {
			return
		}
		for _, s := range snaps {
			if s.ost == "" {
				t.Fatalf("section without an OST: %+v", s)
			}
		}
	})
}

package lmtdb

import (
	"database/sql"
	"math"
	"path/filepath"
	"testing"
	"time"

	"iopred/analyzer/centersim"
	"iopred/analyzer/serverlog"
)

// lmtRates reads an LMT database back the plain way: per OST, the
// counter differences between consecutive timestamps over their time
// difference, keyed by the interval's start.
func lmtRates(t *testing.T, path string) (names []string, write map[string]map[time.Time]float64, steps map[time.Time]time.Duration) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT OST_NAME FROM OST_INFO ORDER BY OST_ID")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	rows, err = db.Query(`SELECT i.OST_NAME, t.TIMESTAMP, d.WRITE_BYTES FROM OST_DATA d
		JOIN OST_INFO i ON i.OST_ID = d.OST_ID JOIN TIMESTAMP_INFO t ON t.TS_ID = d.TS_ID ORDER BY d.OST_ID, d.TS_ID`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	write, steps = map[string]map[time.Time]float64{}, map[time.Time]time.Duration{}
	var prevName string
	var prevT time.Time
	var prevW int64
	for rows.Next() {
		var name, ts string
		var w int64
		if err := rows.Scan(&name, &ts, &w); err != nil {
			t.Fatal(err)
		}
		at, err := time.ParseInLocation("2006-01-02 15:04:05", ts, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if name == prevName {
			if write[name] == nil {
				write[name] = map[time.Time]float64{}
			}
			write[name][prevT] = float64(w-prevW) / at.Sub(prevT).Seconds()
			steps[prevT] = at.Sub(prevT)
		}
		prevName, prevT, prevW = name, at, w
	}
	return names, write, steps
}

// The LMT database holds cumulative counters from which a reader gets
// back the simulated rates (to the byte per sample); a lost sample has
// no timestamp, so the interval around it is one longer difference whose
// rate is the mean of the samples it spans; the aggregate form holds one
// pseudo-OST, the sum of all.
func TestLMTWriter(t *testing.T) {
	s, _ := centersim.Preset("small")
	s.Days, s.Outages = 0.25, 1
	dir := t.TempDir()
	names := s.OSTNames()
	per, err := Create(filepath.Join(dir, "per.sqlite3"), s.FS, names, false, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	agg, err := Create(filepath.Join(dir, "agg.sqlite3"), s.FS, names, true, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	// The simulator's own true rates, for reference (chunks as given).
	var truth []float64 // OST 3's write rate per sample
	var lostAt []bool
	ref := sinkFunc(func(r []float64, lost []bool) { truth = append(truth, r...); lostAt = append(lostAt, lost...) })
	res, mem := run(t, s, centersim.Options{Seed: 4, Sinks: []centersim.Sink{per, agg, ref}, ChunkSamples: 500})
	if err := per.Close(); err != nil {
		t.Fatal(err)
	}
	if err := agg.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Samples != len(truth) {
		t.Fatalf("%d samples, reference saw %d", res.Samples, len(truth))
	}
	got, write, steps := lmtRates(t, filepath.Join(dir, "per.sqlite3"))
	if len(got) != s.OSTs || got[3] != names[3] {
		t.Fatalf("OST names %v", got)
	}
	lost, long := 0, 0
	for k, v := range truth {
		at := s.Start.Add(time.Duration(k) * s.Step())
		if lostAt[k] {
			lost++
			continue
		}
		if k > 0 && lostAt[k-1] {
			continue // this sample is part of the difference that spans the gap
		}
		w, ok := write[names[3]][at]
		if !ok || steps[at] != s.Step() || math.Abs(w-v)*5 > 1 {
			t.Fatalf("sample %d: LMT gives %v (%v, step %v), simulated %.3f", k, w, ok, steps[at], v)
		}
	}
	for _, d := range steps {
		if d > s.Step() {
			long++
		}
	}
	if lost == 0 || long != 1 {
		t.Errorf("%d samples lost, %d longer intervals; want some lost in one gap", lost, long)
	}
	// The aggregate is the sum of the OSTs.
	_, aw, _ := lmtRates(t, filepath.Join(dir, "agg.sqlite3"))
	all, err := mem.Window(s.Start, s.End())
	if err != nil {
		t.Fatal(err)
	}
	_, sum := all.Aggregate()
	checked := 0
	for k, v := range sum {
		at := s.Start.Add(time.Duration(k) * s.Step())
		if math.IsNaN(v) || (k > 0 && lostAt[k-1]) {
			continue
		}
		if a := aw[s.FS+"-total"][at]; math.Abs(a-v) > 1e-5*math.Abs(v) && math.Abs(a-v)*5 > float64(s.OSTs) {
			t.Fatalf("sample %d: aggregate %.6g, sum of OSTs %.6g", k, a, v)
		}
		checked++
	}
	if checked < len(sum)-300 {
		t.Errorf("only %d of %d aggregate samples checked", checked, len(sum))
	}
}

// sinkFunc is a CounterSink that hands OST 3's write rates to a function.
type sinkFunc func(write []float64, lost []bool)

func (f sinkFunc) WriteRates(r *serverlog.Rates) error { return nil }
func (f sinkFunc) WriteCounters(r *serverlog.Rates, lost []bool) error {
	f(append([]float64(nil), r.Write[3]...), append([]bool(nil), lost...))
	return nil
}

func run(t *testing.T, s *centersim.Scenario, opt centersim.Options) (*centersim.Result, *centersim.MemoryLog) {
	t.Helper()
	names := s.OSTNames()
	mem := centersim.NewMemoryLog(s.Start, s.Step(), names)
	opt.Sinks = append(opt.Sinks, mem)
	res, err := centersim.Run(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res, mem
}

// BenchmarkIOSIScaleLMT simulates three months at 2 s with 80,000 jobs
// and writes the aggregate LMT database, as IOSI's scale test reads it.
func BenchmarkIOSIScaleLMT(b *testing.B) {
	s, _ := centersim.Preset("iosi-scale")
	for b.Loop() {
		w, err := Create(filepath.Join(b.TempDir(), "lmt.sqlite3"), s.FS, make([]string, s.OSTs), true, time.UTC)
		if err != nil {
			b.Fatal(err)
		}
		res, err := centersim.Run(s, centersim.Options{Seed: 1, Sinks: []centersim.Sink{w}})
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(res.Jobs)), "jobs")
	}
}

// BenchmarkLMTRows measures the per-OST LMT writer alone: rows per second.
func BenchmarkLMTRows(b *testing.B) {
	s, _ := centersim.Preset("small")
	s.Days, s.Foreign.Jobs = 1, 0
	names := s.OSTNames()
	mem := centersim.NewMemoryLog(s.Start, s.Step(), names)
	if _, err := centersim.Run(s, centersim.Options{Seed: 1, Sinks: []centersim.Sink{mem}}); err != nil {
		b.Fatal(err)
	}
	r, _ := mem.Window(s.Start, s.End())
	for b.Loop() {
		w, err := Create(filepath.Join(b.TempDir(), "lmt.sqlite3"), s.FS, names, false, time.UTC)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.WriteRates(r); err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
	b.ReportMetric(float64(b.N*r.Len()*s.OSTs)/b.Elapsed().Seconds(), "rows/s")
}

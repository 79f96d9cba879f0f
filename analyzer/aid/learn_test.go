package aid

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"iopred/analyzer/centersim"
	"iopred/analyzer/serverlog"
)

// testCenter is a small center over two days: two I/O-intensive
// applications (one n-to-1, one n-to-m), one with too few runs, one
// nested in the first's runs, one with random bursts, and foreign jobs.
func testCenter() *centersim.Scenario {
	tgt := func(user, name string, nodes, runs int, l centersim.Layout, ph centersim.Phase, iters [2]int, bw float64) centersim.AppSpec {
		return centersim.AppSpec{User: user, Name: name, Nodes: nodes, Class: centersim.ClassIOIntensive, Runs: runs, RunsWithoutIO: 1,
			Iterations: iters, Cycle: []centersim.Phase{ph}, TailS: 60, Layout: l, Bandwidth: bw, Jitter: 0.03, RunNoise: 0.03}
	}
	s := &centersim.Scenario{Name: "aidtest", Days: 2, StepS: 5, FS: "t", OSTs: 32, OSTBandwidth: 400e6, ContentionPenalty: 0.15,
		Background:  centersim.Background{WriteMean: 3e6, ReadMean: 2e6, Sigma: 0.5, Correlation: 0.98, Diurnal: 0.5},
		Interactive: centersim.Interactive{PerHour: 1, MedianBytes: 10e9, Sigma: 1, Bandwidth: 1e9, MaxOSTs: 4, ReadFraction: 0.5},
		Apps: []centersim.AppSpec{
			tgt("ana", "ckpt", 64, 7, centersim.Layout{Model: "n-to-1", Stripe: 16}, centersim.Phase{ComputeS: 240, WriteBytes: 200e9}, [2]int{8, 10}, 5e9),
			tgt("ben", "sim", 128, 6, centersim.Layout{Model: "n-to-m", Files: 2, Stripe: 4}, centersim.Phase{ComputeS: 150, WriteBytes: 100e9}, [2]int{10, 14}, 3e9),
			tgt("pia", "dev", 32, 2, centersim.Layout{Model: "n-to-m", Files: 4, Stripe: 4}, centersim.Phase{ComputeS: 200, WriteBytes: 150e9}, [2]int{6, 8}, 5e9),
			{User: "nia", Name: "mon", Nodes: 1, Class: centersim.ClassNested, Runs: 5, Within: "ana/ckpt/64", DurationS: [2]float64{600, 600}, Layout: centersim.Layout{Model: "n-to-1", Stripe: 1}},
			{User: "ray", Name: "adhoc", Nodes: 8, Class: centersim.ClassRandom, Runs: 6, DurationS: [2]float64{3600, 7200},
				RandomPerHour: 3, RandomBytes: 60e9, Bandwidth: 3e9, Layout: centersim.Layout{Model: "n-to-m", Files: 2, Stripe: 4}},
		},
		Foreign: centersim.Foreign{Jobs: 80, Apps: 12, Users: 5, MedianS: 1800, Sigma: 1, MaxS: 20000, Light: 0.3, Random: 0.2,
			LightRate: 10e6, RandomPerHour: 2, RandomBytes: 10e9}}
	return s
}

type simLog struct {
	log  *centersim.MemoryLog
	res  *centersim.Result
	jobs []serverlog.Job
}

var simCache *simLog

// nilTB lets the crash test's helper process simulate outside a test.
type nilTB struct{ testing.TB }

func (nilTB) Helper()           {}
func (nilTB) Fatal(args ...any) { os.Exit(4) }
func t0ctx() context.Context    { return context.Background() }

func simulate(t testing.TB) *simLog {
	t.Helper()
	if simCache != nil {
		return simCache
	}
	s := testCenter()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	m, res, jobs, err := centersim.RunInMemory(s, 3)
	if err != nil {
		t.Fatal(err)
	}
	sl := &simLog{log: m, res: res, jobs: jobs}
	simCache = sl
	return sl
}

func learn(t *testing.T, dir string, sl *simLog, from, to time.Time) LearnStats {
	t.Helper()
	st, err := Learn(context.Background(), dir, LearnInput{Source: sl.log, SourceName: "sim", Jobs: sl.jobs, From: from, To: to,
		Now: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestLearnFindsTheApplications proves the whole learning chain on a
// simulated center: the two I/O-intensive applications are found with
// their pattern close to the truth, the one with two runs waits on
// probation, the nested and random ones are not I/O-intensive.
func TestLearnFindsTheApplications(t *testing.T) {
	sl := simulate(t)
	dir := t.TempDir()
	st := learn(t, dir, sl, time.Time{}, time.Time{})
	k := st.Knowledge
	want := map[string]string{"ana/ckpt/64": ClassIOIntensive, "ben/sim/128": ClassIOIntensive, "pia/dev/32": ClassProbation,
		"nia/mon/1": ClassNot, "ray/adhoc/8": ClassNot}
	for id, class := range want {
		app, _ := serverlog.ParseApp(id)
		a := k.Find(app.User, app.Name, app.Nodes)
		if a == nil {
			t.Errorf("%s: not in the knowledge base", id)
			continue
		}
		if a.Class != class {
			t.Errorf("%s: class %s (%s), want %s", id, a.Class, a.Reason, class)
		}
	}
	for _, a := range k.Apps {
		if a.Class == ClassIOIntensive && want[a.ID()] != ClassIOIntensive {
			t.Errorf("false positive: %s (%s)", a.ID(), a.Reason)
		}
	}
	c := Check(k, sl.res.Truth)
	if c.Found != 2 || c.MaxError > 0.1 {
		var b []byte
		b, _ = json.Marshal(c.Rows)
		t.Errorf("found %d of 2, largest error %.3f: %s", c.Found, c.MaxError, b)
	}
}

// TestLearnIdempotent proves that learning the same logs again changes
// nothing, not even a file.
func TestLearnIdempotent(t *testing.T) {
	sl := simulate(t)
	dir := t.TempDir()
	first := learn(t, dir, sl, time.Time{}, time.Time{})
	before := snapshot(t, dir)
	again := learn(t, dir, sl, time.Time{}, time.Time{})
	if !again.Unchanged || again.DaysRead != 0 || again.Generation != first.Generation {
		t.Errorf("second learn: unchanged %v, %d days read, generation %d (first %d)", again.Unchanged, again.DaysRead, again.Generation, first.Generation)
	}
	after := snapshot(t, dir)
	if len(before) != len(after) {
		t.Fatalf("files %v, then %v", keys(before), keys(after))
	}
	for f, b := range before {
		if after[f] != b {
			t.Errorf("%s changed", f)
		}
	}
}

// TestLearnIncremental proves that learning day by day gives what
// learning both days at once gives, and that the second day reads only
// itself and the day before it.
func TestLearnIncremental(t *testing.T) {
	sl := simulate(t)
	start := sl.res.Truth.Start
	whole, inc := t.TempDir(), t.TempDir()
	w := learn(t, whole, sl, time.Time{}, time.Time{})
	learn(t, inc, sl, time.Time{}, start.Add(24*time.Hour))
	i := learn(t, inc, sl, time.Time{}, time.Time{})
	if i.DaysRead != 2 {
		t.Errorf("the increment read %d days, want 2 (the new one and the one before it, whose bursts were not final)", i.DaysRead)
	}
	a, _ := json.Marshal(w.Knowledge)
	b, _ := json.Marshal(i.Knowledge)
	if string(a) != string(b) {
		t.Errorf("incremental knowledge differs from learning at once:\n%s\n%s", a, b)
	}
}

func snapshot(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = info.ModTime().String() + string(b)
		}
		return nil
	})
	return out
}

func keys(m map[string]string) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	return k
}

// TestDetectVolumes proves the detector's measurements on a known
// series: two rectangular bursts over a flat background, their volume,
// rate and read share exact up to the edges' sampling.
func TestDetectVolumes(t *testing.T) {
	const n, step = 2000, 5
	s := &series{startNS: 0, stepNS: step * 1e9, read: make([]float64, n), write: make([]float64, n)}
	for i := range n {
		s.write[i], s.read[i] = 1e9+1e7*math.Sin(float64(i)), 5e8
	}
	// 30 GB at 2 GB/s from t=1002.5 s (15 s), 60 GB read at 3 GB/s from 5000 s.
	add := func(x []float64, from, dur, rate float64) {
		for i := range n {
			a, b := max(from, float64(i*step)), min(from+dur, float64((i+1)*step))
			if b > a {
				x[i] += rate * (b - a) / step
			}
		}
	}
	add(s.write, 1002.5, 15, 2e9)
	add(s.read, 5000, 20, 3e9)
	o := DefaultOptions()
	bs := detect(s, 0, n*step*1e9, o, func(x []float64) []float64 { return gaussian(x, o.Sigma) })
	if len(bs) != 2 {
		t.Fatalf("%d bursts, want 2: %+v", len(bs), bs)
	}
	for i, w := range []struct{ bytes, rate, read float64 }{{30e9, 2e9, 0}, {60e9, 3e9, 60e9}} {
		b := bs[i]
		if math.Abs(b.Bytes-w.bytes) > 0.02*w.bytes || math.Abs(b.Rate-w.rate) > 0.03*w.rate || math.Abs(b.Read-w.read) > 0.02*w.bytes {
			t.Errorf("burst %d: %.3g bytes at %.3g/s, %.3g read; want %.3g at %.3g, %.3g", i, b.Bytes, b.Rate, b.Read, w.bytes, w.rate, w.read)
		}
	}
}

package centersim

import (
	"math"
	"slices"
	"testing"
	"time"

	"iopred/analyzer/serverlog"
)

// quiet returns a scenario without background, transfers or foreign
// jobs: only the listed applications move bytes.
func quiet(osts int, bw, penalty float64, apps ...AppSpec) *Scenario {
	return &Scenario{Name: "quiet", Days: 1, StepS: 5, OSTs: osts, OSTBandwidth: bw, ContentionPenalty: penalty, Apps: apps}
}

// burstApp runs one burst of the given size after compute seconds, at
// submission time at.
func burstApp(name string, nodes int, compute, bytes, bw float64, l Layout, at ...float64) AppSpec {
	return AppSpec{User: "u", Name: name, Nodes: nodes, Class: ClassIOIntensive, Runs: len(at), SubmitS: at,
		Cycle: []Phase{{ComputeS: compute, WriteBytes: bytes}}, Iterations: [2]int{1, 1}, Bandwidth: bw, Layout: l}
}

func runQuiet(t *testing.T, s *Scenario, opt Options) (*Result, *MemoryLog) {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	names := s.OSTNames()
	mem := NewMemoryLog(s.Start, s.Step(), names)
	opt.Sinks = append(opt.Sinks, mem)
	res, err := Run(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res, mem
}

func jobOf(t *testing.T, res *Result, name string) []JobRecord {
	t.Helper()
	var out []JobRecord
	for _, j := range res.Jobs {
		if j.Name == name {
			out = append(out, j)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no job of %s", name)
	}
	return out
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b)) }

// One OST of 100 MB/s with a seek penalty of 0.5: a 1 GB burst alone
// takes 10 s; two such bursts at once share 100/1.5 MB/s and both take
// 30 s (slowdown 3), and the job log and the OST log both show it: the
// bytes in the log are the bytes the jobs wrote.
func TestContentionSharesAnOST(t *testing.T) {
	l := Layout{Model: "n-to-1", Stripe: 1}
	s := quiet(1, 100e6, 0.5, burstApp("a", 1, 100, 1e9, 1e9, l, 0), burstApp("b", 1, 100, 1e9, 1e9, l, 0), burstApp("c", 1, 100, 1e9, 1e9, l, 3600))
	res, mem := runQuiet(t, s, Options{Seed: 1})
	for _, name := range []string{"a", "b"} {
		j := jobOf(t, res, name)[0]
		if !near(j.IOAloneS, 10, 1e-9) || !near(j.IOTimeS, 30, 1e-6) {
			t.Errorf("%s: I/O %.3f s, alone %.3f s; want 30 and 10", name, j.IOTimeS, j.IOAloneS)
		}
		if j.End.Sub(j.Start) != 130*time.Second {
			t.Errorf("%s ran %v, want 130 s", name, j.End.Sub(j.Start))
		}
	}
	c := jobOf(t, res, "c")[0]
	if !near(c.IOTimeS, 10, 1e-6) || !near(c.Slowdown(), 1, 1e-6) {
		t.Errorf("c alone: I/O %.3f s, slowdown %.3f; want 10 s and 1", c.IOTimeS, c.Slowdown())
	}
	_, write := mustWindow(t, mem, s.Start, s.End()).Aggregate()
	total := 0.0
	for _, v := range write {
		total += v * 5
	}
	if !near(total, 3e9, 1e-6) { // the memory log keeps 4-byte floats
		t.Errorf("log holds %.6g bytes, jobs wrote 3e9", total)
	}
}

func mustWindow(t *testing.T, m *MemoryLog, from, to time.Time) *serverlog.Rates {
	t.Helper()
	r, err := m.Window(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The bandwidth sharing is weighted max-min: worked by hand for three
// flows on two OSTs of 100 MB/s without penalty. f1 (OST 0, asks 100)
// and f2 (half on each OST, asks 200) saturate OST 0 at theta 0.5 (f1 50,
// f2 100 of which 50 on OST 0); f3 (OST 1, asks 80) then grows alone on
// OST 1, which has 50 left, to theta 0.625 (50).
func TestShareMaxMin(t *testing.T) {
	s := quiet(2, 100e6, 0)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	e := newEngine(s, Options{}, &workload{})
	f1 := &flow{p: placement{osts: []int32{0}, w: []float64{1}}, demand: 100e6, remaining: 1}
	f2 := &flow{p: placement{osts: []int32{0, 1}, w: []float64{.5, .5}}, demand: 200e6, remaining: 1}
	f3 := &flow{p: placement{osts: []int32{1}, w: []float64{1}}, demand: 80e6, remaining: 1}
	for _, f := range []*flow{f1, f2, f3} {
		e.addFlow(f)
	}
	e.share()
	for i, c := range []struct {
		f    *flow
		want float64
	}{{f1, 50e6}, {f2, 100e6}, {f3, 50e6}} {
		if !near(c.f.rate, c.want, 1e-9) {
			t.Errorf("flow %d: rate %.6g, want %.6g", i+1, c.f.rate, c.want)
		}
	}
	// Alone, f3 gets what it asks.
	e.removeFlow(f1)
	e.removeFlow(f2)
	e.share()
	if f3.rate != 80e6 {
		t.Errorf("f3 alone: %.6g, want 8e7", f3.rate)
	}
}

// A run alone on a quiet file system writes exactly its signature: the
// per-OST log, summed and cut at the run's start, equals the truth's
// sampled signature (the run starts on a sample boundary), and the
// footprint of every burst is the layout's.
func TestAloneRunIsItsSignature(t *testing.T) {
	app := AppSpec{User: "u", Name: "sig", Nodes: 8, Class: ClassIOIntensive, Runs: 1, SubmitS: []float64{600},
		Cycle: []Phase{{ComputeS: 42, WriteBytes: 30e9}, {ComputeS: 61, WriteBytes: 12e9, ReadBytes: 3e9}}, Iterations: [2]int{5, 5},
		Prologue: &Phase{ComputeS: 7, ReadBytes: 20e9}, TailS: 33, Bandwidth: 2e9, Layout: Layout{Model: "n-to-m", Files: 3, Stripe: 4}}
	s := quiet(32, 250e6, 0.1, app)
	res, mem := runQuiet(t, s, Options{Seed: 7})
	j := jobOf(t, res, "sig")[0]
	at := res.Truth.Apps[0]
	sig := at.Signature
	if at.OSTFootprint != 12 || at.Runs != 1 {
		t.Fatalf("truth: footprint %d, runs %d; want 12 and 1", at.OSTFootprint, at.Runs)
	}
	r := mustWindow(t, mem, j.Start, j.Start.Add(time.Duration(len(sig.TS))*s.Step()))
	read, write := r.Aggregate()
	for k := range sig.TS {
		if !near(write[k], sig.Write[k], 1e-6) && math.Abs(write[k]-sig.Write[k]) > 1 {
			t.Fatalf("sample %d: log writes %.6g B/s, signature %.6g", k, write[k], sig.Write[k])
		}
		if !near(read[k], sig.Read[k], 1e-6) && math.Abs(read[k]-sig.Read[k]) > 1 {
			t.Fatalf("sample %d: log reads %.6g B/s, signature %.6g", k, read[k], sig.Read[k])
		}
	}
	if len(j.Bursts) != 6 || len(sig.Bursts) != 6 {
		t.Fatalf("%d bursts run, %d in the signature; want 6", len(j.Bursts), len(sig.Bursts))
	}
	for i, b := range j.Bursts {
		if b.OSTs != 12 || !near(b.StartS, sig.Bursts[i].StartS, 1e-9) || !near(b.EndS, sig.Bursts[i].EndS, 1e-9) {
			t.Errorf("burst %d: %+v, signature %+v", i, b, sig.Bursts[i])
		}
	}
	if p := at.Pattern; !near(p.BurstsPerRun, 5, 1e-12) || !near(p.BurstBytes, (3*30e9+2*15e9)/5, 1e-9) || !near(p.Throughput, 2e9, 1e-9) {
		t.Errorf("pattern %+v", *p)
	}
}

// With contention, the bursts of a run drift and its run time grows, but
// the bytes it writes do not change.
func TestContentionProlongsRuns(t *testing.T) {
	l := Layout{Model: "n-to-m", Files: 4, Stripe: 2}
	heavy := AppSpec{User: "h", Name: "heavy", Nodes: 4, Class: ClassLight, Runs: 1, SubmitS: []float64{0}, DurationS: [2]float64{80000, 80000},
		LightRate: 1.5e9, Bandwidth: 2e9, Layout: Layout{Model: "n-to-m", Files: 8, Stripe: 1}}
	s := quiet(8, 200e6, 0.2, burstApp("t", 2, 300, 200e9, 1.6e9, l, 1000), heavy)
	res, _ := runQuiet(t, s, Options{Seed: 3})
	j := jobOf(t, res, "t")[0]
	if j.Slowdown() < 1.5 {
		t.Errorf("slowdown %.2f under a steady 1.5 GB/s on the same 8 OSTs: want > 1.5", j.Slowdown())
	}
	if b := j.Bursts[0]; !near(b.WriteBytes, 200e9, 1e-9) {
		t.Errorf("burst wrote %.6g bytes, want 2e11", b.WriteBytes)
	}
}

// The same scenario and seed give the same log and job log; another seed
// gives others.
func TestDeterministic(t *testing.T) {
	run := func(seed uint64) (*Result, *MemoryLog) {
		s, err := Preset("small")
		if err != nil {
			t.Fatal(err)
		}
		s.Days = 0.25
		return runQuiet(t, s, Options{Seed: seed})
	}
	r1, m1 := run(5)
	r2, m2 := run(5)
	r3, m3 := run(6)
	if len(r1.Jobs) != len(r2.Jobs) || m1.Len() != m2.Len() {
		t.Fatal("same seed, different sizes")
	}
	for i := range r1.Jobs {
		a, b := r1.Jobs[i], r2.Jobs[i]
		if a.ID != b.ID || !a.Start.Equal(b.Start) || !a.End.Equal(b.End) || a.IOTimeS != b.IOTimeS {
			t.Fatalf("job %d differs: %+v / %+v", i, a.Job, b.Job)
		}
	}
	same := func(x, y *MemoryLog) bool {
		for i := range x.write {
			for k := range x.write[i] {
				if x.write[i][k] != y.write[i][k] && !(math.IsNaN(float64(x.write[i][k])) && math.IsNaN(float64(y.write[i][k]))) {
					return false
				}
			}
		}
		return true
	}
	if !same(m1, m2) {
		t.Error("same seed, different logs")
	}
	if same(m1, m3) && len(r3.Jobs) == len(r1.Jobs) {
		t.Error("seeds 5 and 6 gave the same log")
	}
}

// Monitoring outages lose samples (NaN in the log as read) but not the
// bytes: the other samples are those of the same run without outages.
func TestOutagesAreGaps(t *testing.T) {
	mk := func(outages int) *MemoryLog {
		s, _ := Preset("small")
		s.Days, s.Outages = 0.5, outages
		_, m := runQuiet(t, s, Options{Seed: 2})
		return m
	}
	with, without := mk(3), mk(0)
	lost := 0
	for k := range with.write[0] {
		a, b := with.write[0][k], without.write[0][k]
		if math.IsNaN(float64(a)) {
			lost++
			continue
		}
		if a != b {
			t.Fatalf("sample %d: %g with outages, %g without", k, a, b)
		}
	}
	if lost < 3*60 { // at least 5 minutes each at 5 s
		t.Errorf("%d samples lost to 3 outages, want >= 180", lost)
	}
}

func computeApp(name string, nodes int, d float64, at ...float64) AppSpec {
	return AppSpec{User: "u", Name: name, Nodes: nodes, Class: ClassNone, Runs: len(at), SubmitS: at, DurationS: [2]float64{d, d}}
}

// On a 10-node machine, a 2-node job submitted behind a blocked 8-node
// job waits under FIFO but starts at once with EASY backfill, since its
// time limit ends before the blocked job's reservation; the blocked job
// starts when the first one ends, under both.
func TestSchedulerPolicies(t *testing.T) {
	for _, c := range []struct {
		policy string
		smallS float64
	}{{"fifo", 1000}, {"backfill", 2}} {
		s := quiet(1, 1e9, 0, computeApp("big1", 8, 1000, 0), computeApp("big2", 8, 1000, 1), computeApp("small", 2, 100, 2))
		s.Nodes, s.Policy = 10, c.policy
		res, _ := runQuiet(t, s, Options{Seed: 1})
		start := func(name string) float64 { return jobOf(t, res, name)[0].Start.Sub(s.Start).Seconds() }
		if start("big1") != 0 || start("big2") != 1000 || start("small") != c.smallS {
			t.Errorf("%s: starts big1 %g, big2 %g, small %g; want 0, 1000, %g", c.policy, start("big1"), start("big2"), start("small"), c.smallS)
		}
	}
}

// delayWhile says "delay" to one application while another runs.
type delayWhile struct {
	target, busy string
	asked        int
}

func (d *delayWhile) Advise(req AdviceRequest) (Advice, error) {
	d.asked++
	if req.App.Name != d.target {
		return Advice{Run: true, Reason: "not watched"}, nil
	}
	if req.Log == nil {
		return Advice{}, errDummy
	}
	for _, r := range req.Running {
		if r.App.Name == d.busy {
			return Advice{Run: false, Reason: d.busy + " is running"}, nil
		}
	}
	return Advice{Run: true, Reason: "quiet"}, nil
}

type dummyError struct{}

func (dummyError) Error() string { return "no log given to the advisor" }

var errDummy = dummyError{}

// Advice followed holds a job until the scheduling event after the
// reason to delay is gone (here the end of the busy job), and the job
// starts on "run"; advice not followed is only recorded ("delay"), and a
// hold never lasts past MaxDelayS.
func TestAdviceHoldsJobs(t *testing.T) {
	mk := func() *Scenario {
		s := quiet(1, 1e9, 0, computeApp("busy", 4, 1000, 0), computeApp("target", 4, 100, 10))
		s.Nodes = 100
		return s
	}
	res, _ := runQuiet(t, mk(), Options{Seed: 1, Advisor: &delayWhile{target: "target", busy: "busy"}, FollowAdvice: true})
	j := jobOf(t, res, "target")[0]
	if got := j.Start.Sub(j.Submit).Seconds(); got != 990 || j.Advice != "run" || j.Held == 0 {
		t.Errorf("followed: waited %g s (want 990), advice %q (want run), held %d", got, j.Advice, j.Held)
	}
	res, _ = runQuiet(t, mk(), Options{Seed: 1, Advisor: &delayWhile{target: "target", busy: "busy"}})
	j = jobOf(t, res, "target")[0]
	if j.WaitS() != 0 || j.Advice != "delay" || j.Reason != "busy is running" {
		t.Errorf("recorded only: waited %g s, advice %q (%s); want 0 and delay", j.WaitS(), j.Advice, j.Reason)
	}
	s := mk()
	s.MaxDelayS = 300
	res, _ = runQuiet(t, s, Options{Seed: 1, Advisor: &delayWhile{target: "target", busy: "busy"}, FollowAdvice: true})
	j = jobOf(t, res, "target")[0]
	if w := j.WaitS(); w < 300 || w > 300+s.TickS || j.Advice != "delay" {
		t.Errorf("max delay 300 s: waited %g s, advice %q; want 300 to %g s and delay", w, j.Advice, 300+s.TickS)
	}
}

// hinter says "run" with a fixed placement hint, and records the OSTs
// the running jobs were placed on as the scheduler reports them.
type hinter struct {
	hint    []int
	running [][]int
}

func (h *hinter) Advise(req AdviceRequest) (Advice, error) {
	for _, r := range req.Running {
		h.running = append(h.running, r.OSTs)
	}
	return Advice{Run: true, Reason: "hinted", OSTs: h.hint}, nil
}

// A job started on advice with Options.Place puts every burst's bytes on
// the hinted OSTs: exactly those when the hint has the burst's footprint
// (4 OSTs here), the first ones of it when it has more, the hinted ones
// and as many others when it has fewer; without Place, or with advice
// only recorded, the allocator's 4 consecutive OSTs from a random start.
// Its time alone does not change, and the scheduler reports where a
// placed job's files are.
func TestPlacementHint(t *testing.T) {
	l := Layout{Model: "n-to-m", Files: 2, Stripe: 2}
	for _, c := range []struct {
		name          string
		hint          []int
		follow, place bool
		want          []int // nil: 4 consecutive OSTs, whatever the hint
		has           []int // with want nil and a placed job: OSTs it must include
	}{
		{"exact", []int{1, 5, 9, 13}, true, true, []int{1, 5, 9, 13}, nil},
		{"unordered, duplicates", []int{13, 9, 5, 9, 1}, true, true, []int{1, 5, 9, 13}, nil},
		{"longer than the footprint", []int{0, 2, 4, 6, 8, 10}, true, true, []int{0, 2, 4, 6}, nil},
		{"shorter, invalid indices", []int{3, 11, 99, -1}, true, true, nil, []int{3, 11}},
		{"place off", []int{1, 5, 9, 13}, true, false, nil, nil},
		{"advice recorded only", []int{1, 5, 9, 13}, false, true, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := quiet(16, 1e9, 0.15, burstApp("t", 1, 100, 8e9, 4e9, l, 0, 1))
			h := &hinter{hint: c.hint}
			res, mem := runQuiet(t, s, Options{Seed: 3, Advisor: h, FollowAdvice: c.follow, Place: c.place})
			w := mustWindow(t, mem, s.Start, s.End())
			var got []int
			bytes := map[int]float64{}
			for o := range w.OSTs {
				for _, v := range w.Write[o] {
					bytes[o] += v * 5
				}
				if bytes[o] > 1e6 {
					got = append(got, o)
				}
			}
			// Each job's burst puts 2e9 on each of its 4 OSTs.
			quarter := func(o int) bool { return near(bytes[o], 2*8e9/4, 1e-6) }
			for _, j := range jobOf(t, res, "t") {
				if !near(j.IOAloneS, 2, 1e-9) {
					t.Errorf("time alone %g s, want 2", j.IOAloneS)
				}
			}
			placed := c.follow && c.place
			switch {
			case c.want != nil:
				if !slices.Equal(got, c.want) || !quarter(c.want[0]) || !quarter(c.want[3]) {
					t.Errorf("bursts on OSTs %v (%v bytes), want %v with a quarter of each burst", got, bytes, c.want)
				}
			case placed:
				// Each burst: the 2 hinted OSTs and 2 others.
				if len(got) < 4 || len(got) > 6 || !quarter(c.has[0]) || !quarter(c.has[1]) {
					t.Errorf("bursts on OSTs %v (%v bytes), want 4 to 6 with %v", got, bytes, c.has)
				}
			default:
				// Both jobs drew a start; each burst is 4 consecutive OSTs,
				// never the hint's 4 spread ones.
				if len(got) < 4 || len(got) > 8 || slices.Equal(got, hintWant(c.hint)) {
					t.Errorf("bursts on OSTs %v, want 4 to 8", got)
				}
			}
			// The second job was asked while the first ran.
			if len(h.running) != 1 {
				t.Fatalf("running jobs reported: %v", h.running)
			}
			if r := h.running[0]; placed != (r != nil) || (c.want != nil && placed && !slices.Equal(r, hintWant(c.hint))) {
				t.Errorf("the running job's OSTs reported as %v (placed: %v)", r, placed)
			}
		})
	}
}

// hintWant is a hint's valid OSTs (of 16), distinct and ascending.
func hintWant(h []int) []int {
	var out []int
	for _, o := range hintSet(h, 16) {
		out = append(out, int(o))
	}
	return out
}

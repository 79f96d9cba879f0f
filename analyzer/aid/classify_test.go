package aid

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestOnRhythm proves when a run with two or three bursts of a cluster
// joins the periodic runs: only when two of its bursts are a whole
// number of the periodic runs' interval apart, of the same bytes, at
// their phase from the run's start, and cover half the run; and never
// without two periodic runs to learn the rhythm from.
func TestOnRhythm(t *testing.T) {
	const s = int64(1e9)
	var bursts []Burst
	add := func(atS int64, bytes float64) int {
		bursts = append(bursts, Burst{StartNS: atS * s, EndNS: (atS + 60) * s, Bytes: bytes, Peak: bytes / 60})
		return len(bursts) - 1
	}
	// Two runs periodic on their own: bursts 300 s after the start, then
	// every 3,600 s.
	var pr []periodicRun
	for _, start := range []int64{0, 20000} {
		on := []int{add(start+300, 1e11), add(start+3900, 1e11), add(start+7500, 1e11)}
		pr = append(pr, periodicRun{run: Run{StartNS: start * s, EndNS: (start + 9000) * s}, bursts: on, interval: 3600})
	}
	run := func(start int64) Run { return Run{StartNS: start * s, EndNS: (start + 9000) * s} }
	cases := []struct {
		name  string
		start int64
		at    []int64
		bytes []float64
		want  bool
	}{
		{"one interval apart, in phase", 40000, []int64{300, 3950}, []float64{1e11, 1e11}, true},
		{"two intervals apart (the middle one merged)", 50000, []int64{320, 7450}, []float64{1e11, 1.05e11}, true},
		{"a foreign burst between them", 60000, []int64{300, 2000, 7500}, []float64{1e11, 1e11, 1e11}, true},
		{"out of phase", 70000, []int64{1900, 5500}, []float64{1e11, 1e11}, false},
		{"not a whole number of intervals", 80000, []int64{300, 5700}, []float64{1e11, 1e11}, false},
		{"other bytes", 90000, []int64{300, 3900}, []float64{1e11, 1.5e11}, false},
		{"covering too little of a long run", 100000, []int64{300, 3900}, []float64{1e11, 1e11}, false},
	}
	for _, c := range cases {
		var times []int
		for i, a := range c.at {
			times = append(times, add(c.start+a, c.bytes[i]))
		}
		r := run(c.start)
		if c.name == "covering too little of a long run" {
			r.EndNS = (c.start + 20000) * s
		}
		got := onRhythm(bursts, pr, [][]int{times}, []Run{r})
		if (len(got) == 1) != c.want {
			t.Errorf("%s: periodic %v, want %v", c.name, len(got) == 1, c.want)
		}
		if none := onRhythm(bursts, pr[:1], [][]int{times}, []Run{r}); len(none) != 0 {
			t.Errorf("%s: periodic with one periodic run to learn from", c.name)
		}
	}
}

// TestSharedRhythm proves how runs none of which is periodic on its own
// (two or three bursts each, as an hourly checkpointer's) support an
// application: when three runs or more keep one interval at one phase
// from their starts, with the same bytes, they are its periodic runs;
// two such runs, runs whose pairs keep different intervals or phases,
// and pairs of different bytes are not.
func TestSharedRhythm(t *testing.T) {
	const s = int64(1e9)
	type run struct {
		at    []int64
		bytes []float64
	}
	cases := []struct {
		name string
		runs []run
		want int
	}{
		{"three runs at one rhythm", []run{{[]int64{300, 3900}, []float64{1e11, 1e11}}, {[]int64{320, 3950, 7480}, []float64{1e11, 1.05e11, 1e11}},
			{[]int64{290, 7500}, []float64{1e11, 1e11}}}, 3},
		{"three runs, a foreign burst in one", []run{{[]int64{300, 3900}, []float64{1e11, 1e11}}, {[]int64{300, 2000, 3900}, []float64{1e11, 1e11, 1e11}},
			{[]int64{310, 3920}, []float64{1e11, 1e11}}}, 3},
		{"two runs only", []run{{[]int64{300, 3900}, []float64{1e11, 1e11}}, {[]int64{320, 3950}, []float64{1e11, 1e11}}}, 0},
		{"other phases", []run{{[]int64{300, 3900}, []float64{1e11, 1e11}}, {[]int64{1500, 5100}, []float64{1e11, 1e11}},
			{[]int64{2600, 6200}, []float64{1e11, 1e11}}}, 0},
		{"other intervals", []run{{[]int64{300, 3900}, []float64{1e11, 1e11}}, {[]int64{300, 2800}, []float64{1e11, 1e11}},
			{[]int64{300, 5200}, []float64{1e11, 1e11}}}, 0},
		{"other bytes", []run{{[]int64{300, 3900}, []float64{1e11, 1.5e11}}, {[]int64{320, 3950}, []float64{1e11, 1.5e11}},
			{[]int64{290, 3880}, []float64{1.5e11, 1e11}}}, 0},
	}
	for _, c := range cases {
		var bursts []Burst
		var few [][]int
		var runs []Run
		for i, r := range c.runs {
			start := int64(i) * 20000
			var times []int
			for k, a := range r.at {
				bursts = append(bursts, Burst{StartNS: (start + a) * s, EndNS: (start + a + 60) * s, Bytes: r.bytes[k]})
				times = append(times, len(bursts)-1)
			}
			few = append(few, times)
			runs = append(runs, Run{StartNS: start * s, EndNS: (start + 9000) * s})
		}
		if got := sharedRhythm(bursts, few, runs); len(got) != c.want {
			t.Errorf("%s: %d periodic runs, want %d", c.name, len(got), c.want)
		}
	}
}

// TestInStep proves which periodic runs keep one rhythm together: the
// same interval (a run stretched as a whole keeps its phase, measured in
// its own interval) and the same phase from the run's start; a run at
// another phase or another interval is left out, and runs each at a
// phase of its own keep no rhythm together.
func TestInStep(t *testing.T) {
	const s = int64(1e9)
	var bursts []Burst
	// periodic builds a run starting at start whose rhythm's first burst
	// is at phase s after the start, every iv seconds.
	periodic := func(start, phase int64, iv float64) periodicRun {
		var on []int
		for k := range 3 {
			at := start + phase + int64(float64(k)*iv)
			bursts = append(bursts, Burst{StartNS: at * s, EndNS: (at + 60) * s, Bytes: 1e11})
			on = append(on, len(bursts)-1)
		}
		return periodicRun{run: Run{StartNS: start * s, EndNS: (start + int64(3*iv) + 300) * s}, bursts: on, interval: iv}
	}
	cases := []struct {
		name string
		runs [][2]float64 // phase (s), interval (s)
		want int
	}{
		{"all in step", [][2]float64{{1200, 3600}, {1250, 3650}, {1180, 3580}, {1220, 3600}}, 4},
		{"one stretched by 30% as a whole", [][2]float64{{1200, 3600}, {1250, 3650}, {1180, 3580}, {1560, 4680}}, 3},
		{"one at another phase", [][2]float64{{1200, 3600}, {1250, 3650}, {1180, 3580}, {3000, 3600}}, 3},
		{"one at another interval", [][2]float64{{1200, 3600}, {1250, 3650}, {1180, 3580}, {1200, 1800}}, 3},
		{"a phase near a whole interval is near zero", [][2]float64{{3550, 3600}, {20, 3600}, {3590, 3600}, {60, 3600}}, 4},
		{"phases of their own", [][2]float64{{200, 3600}, {1100, 3600}, {2000, 3600}, {2900, 3600}}, 1},
	}
	for _, c := range cases {
		var pr []periodicRun
		for i, r := range c.runs {
			pr = append(pr, periodic(int64(i+1)*100000, int64(r[0]), r[1]))
		}
		if got := len(inStep(bursts, pr)); got != c.want {
			t.Errorf("%s: %d runs in step, want %d", c.name, got, c.want)
		}
	}
}

// TestContinuing proves how the scope check follows a pattern beyond a
// run: a host's rhythm going on is followed over one lost burst, and
// stops at a second; bursts of the same size that fall into the rhythm
// once, or near it but outside the run's own tolerance, are not a
// pattern going on; the walk never goes further than asked.
func TestContinuing(t *testing.T) {
	const s = int64(1e9)
	const iv = 600.0
	match := func(b Burst) bool { return b.Bytes > 0.9e11 && b.Bytes < 1.1e11 }
	// The run: bursts at 100, 700, 1300 s; it ends at 1500 s.
	run := periodicRun{run: Run{StartNS: 0, EndNS: 1500 * s}, interval: iv}
	cases := []struct {
		name  string
		after []int64 // bursts after the run, s from its start
		bytes float64
		want  int
	}{
		// Three intervals are looked at beyond the run's end (1500 s):
		// the burst at 3700 s is past them.
		{"the host goes on", []int64{1900, 2500, 3100, 3700}, 1e11, 3},
		{"the host goes on over a lost burst", []int64{1900, 3100, 3700}, 1e11, 2},
		{"two lost bursts end it", []int64{1900, 3700, 4300}, 1e11, 1},
		{"another size", []int64{1900, 2500, 3100}, 2e11, 0},
		{"one in the rhythm, the rest at random", []int64{1900, 2230, 2790, 3420}, 1e11, 1},
		{"close, but outside the run's tolerance", []int64{1990, 2590, 3190}, 1e11, 0},
		{"beyond the intervals looked at", []int64{1900 + 5*600, 2500 + 5*600}, 1e11, 0},
	}
	for _, c := range cases {
		bursts := []Burst{{StartNS: 100 * s, Bytes: 1e11}, {StartNS: 700 * s, Bytes: 1e11}, {StartNS: 1300 * s, Bytes: 1e11}}
		for _, a := range c.after {
			bursts = append(bursts, Burst{StartNS: a * s, Bytes: c.bytes})
		}
		p := run
		p.bursts = []int{0, 1, 2}
		tol := rhythmTolerance(bursts, p, 5*s)
		if want := int64((0.03*iv + 5) * 1e9); tol != want {
			t.Errorf("%s: tolerance %d ns, want %d (3%% of an interval and a step)", c.name, tol, want)
		}
		if got := continuing(bursts, match, bursts[2].StartNS, iv, tol, p.run.EndNS, int64(3*iv)*s); got != c.want {
			t.Errorf("%s: %d bursts of the pattern beyond the run, want %d", c.name, got, c.want)
		}
		if got := continuing(bursts, match, bursts[0].StartNS, iv, tol, p.run.StartNS, -int64(5*iv)*s); got != 0 {
			t.Errorf("%s: %d bursts of the pattern before the run, want 0", c.name, got)
		}
	}
	// A run whose gaps wander 40 s has a wider tolerance, at most
	// chainSlack of an interval.
	bursts := []Burst{{StartNS: 0}, {StartNS: 640 * s}, {StartNS: 1200 * s}, {StartNS: 1840 * s}}
	p := periodicRun{bursts: []int{0, 1, 2, 3}, interval: iv}
	if tol, want := rhythmTolerance(bursts, p, 5*s), int64(chainSlack*iv*1e9); tol != want {
		t.Errorf("wandering run: tolerance %d ns, want %d", tol, want)
	}
}

// TestOneInterval proves which periodic runs keep the application's
// interval (within 30% of the median, or within 10% of 2 to 4 times or
// a half to a quarter of it; two runs each against the other), and that
// a cluster most of whose periodic runs keep an interval of their own
// gets no support however many runs are periodic.
func TestOneInterval(t *testing.T) {
	const s = int64(1e9)
	cases := []struct {
		name string
		ivs  []float64
		want int
	}{
		{"one interval, a run stretched by 25%", []float64{1000, 1010, 990, 1250}, 4},
		{"whole ratios of it", []float64{1000, 1000, 2050, 490, 2960}, 5},
		{"between ratios", []float64{1000, 1000, 1000, 1600, 2500}, 3},
		{"each its own (seed 510's irr1/adhoc_1)", []float64{430, 660, 1340, 500, 1960, 2260}, 2},
		// Two runs are measured against each other, not against their
		// midpoint, within 30% of which both of these fall.
		{"two runs at one interval", []float64{1000, 1250}, 2},
		{"two runs, one at twice the other's", []float64{1000, 2060}, 2},
		{"two runs 1.78 times apart", []float64{464, 261}, 0},
		{"two runs 1.5 times apart", []float64{1000, 1500}, 0},
	}
	for _, c := range cases {
		var bursts []Burst
		var runs []Run
		var perRun [][]int
		var pr []periodicRun
		for i, iv := range c.ivs {
			start := int64(i) * 100000
			r := Run{StartNS: start * s, EndNS: (start + int64(4*iv)) * s}
			var on []int
			for k := range 4 {
				at := start + 100 + int64(float64(k)*iv)
				bursts = append(bursts, Burst{StartNS: at * s, EndNS: (at + 30) * s, Bytes: 1e11})
				on = append(on, len(bursts)-1)
			}
			runs, perRun = append(runs, r), append(perRun, on)
			pr = append(pr, periodicRun{run: r, bursts: on, interval: iv})
		}
		if got := len(oneInterval(pr)); got != c.want {
			t.Errorf("%s: %d runs at the application's interval, want %d", c.name, got, c.want)
		}
		presence, _, got := clusterSupport(bursts, runs, perRun, func(int) bool { return true }, func(int) bool { return true })
		if supported := 2*c.want >= len(c.ivs); (presence > 0) != supported {
			t.Errorf("%s: presence %.2f with %d of %d periodic runs (%d) at one interval", c.name, presence, c.want, len(c.ivs), len(got))
		}
	}
}

// TestChanceRhythmsAtMoreRuns proves that a foreign application whose
// runs only see other jobs' bursts does not become I/O-intensive as its
// runs pass the 5 needed to leave probation, while an application that
// writes every interval among the same bursts is found at 5 runs. It
// models the `aid` month's two foreign applications once on probation
// (u0000/qe_scf_109, no I/O of its own, and u0003/cp2k_82): other jobs'
// single-OST bursts of about 3 GB at 16 MB/s, a few an hour at random
// times, runs of 20 to 60 minutes at random times over a month. Each
// count of runs from 5 to 10 is drawn on 20 months.
func TestChanceRhythmsAtMoreRuns(t *testing.T) {
	const s = int64(1e9)
	const step = 5 * s
	o := DefaultOptions()
	month := int64(30 * 86400)
	background := func(rng *rand.Rand) []Burst {
		var bs []Burst
		for at := int64(0); at < month; at += int64(rng.ExpFloat64() * 900) {
			d := int64(150 + rng.IntN(150))
			bytes := 3e9 * (0.8 + 0.4*rng.Float64())
			bs = append(bs, Burst{StartNS: at * s, EndNS: (at + d) * s, Bytes: bytes, Peak: 1.2 * bytes / float64(d), Rate: bytes / float64(d), OSTs: 1, PerOST: true})
		}
		return bs
	}
	runsAt := func(rng *rand.Rand, n int) []Run {
		var rs []Run
		for range n {
			start := rng.Int64N(month - 4000)
			rs = append(rs, Run{StartNS: start * s, EndNS: (start + 1200 + rng.Int64N(2400)) * s})
		}
		slices.SortFunc(rs, func(a, b Run) int { return cmp.Compare(a.StartNS, b.StartNS) })
		return rs
	}
	key := appKey{user: "u0000", name: "qe_scf", nodes: 256}
	for n := 5; n <= 10; n++ {
		intensive, probation := 0, 0
		for seed := range 20 {
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(n)))
			bs := background(rng)
			a := classifyApp(key, runsAt(rng, n), bs, nil, step, o)
			switch a.Class {
			case ClassIOIntensive:
				intensive++
			case ClassProbation:
				probation++
			}
		}
		if intensive > 0 || probation > 0 {
			t.Errorf("%d runs: %d of 20 months I/O-intensive, %d on probation; want none", n, intensive, probation)
		}
	}
	// The control: the same months, and an application writing 3 GB on
	// one OST every 350 s in each of its 5 runs, is found.
	found := 0
	for seed := range 20 {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		bs := background(rng)
		rs := runsAt(rng, 5)
		for _, r := range rs {
			for at := r.StartNS/s + 200; at+200 < r.EndNS/s; at += 350 {
				bs = append(bs, Burst{StartNS: at * s, EndNS: (at + 180) * s, Bytes: 3e9, Peak: 1.2 * 3e9 / 180, Rate: 3e9 / 180, OSTs: 1, PerOST: true})
			}
		}
		slices.SortFunc(bs, func(a, b Burst) int { return cmp.Compare(a.StartNS, b.StartNS) })
		if classifyApp(key, rs, bs, nil, step, o).Class == ClassIOIntensive {
			found++
		}
	}
	if found < 18 {
		t.Errorf("an application writing every 350 s in 5 runs found in %d of 20 months, want 18 at least", found)
	}
}

// TestOutOfScope proves when the scope check puts a periodic run out of
// scope: two bursts on its rhythm outside it, on one side or one on
// each side; or one, when another application's job encloses the run
// and the burst falls inside that job's run at the rhythm's next step
// with the run's bytes. One burst on the rhythm with no host around
// the run, beyond the host's end, or of other bytes that the cluster's
// spread lets match, is a coincidence.
func TestOutOfScope(t *testing.T) {
	const s = int64(1e9)
	const iv = 3600.0
	o := DefaultOptions()
	match := func(b Burst) bool { return b.Bytes > 0.5e11 && b.Bytes < 2e11 }
	// The run: bursts at 4200, 7800, 11400 s; it lasts from 3000 to
	// 13000 s.
	host := &Run{User: "bea", Name: "fusion_b", Nodes: 256, StartNS: 0, EndNS: 16000 * s}
	short := &Run{User: "bea", Name: "fusion_b", Nodes: 256, StartNS: 2000 * s, EndNS: 14000 * s}
	cases := []struct {
		name   string
		beyond []int64 // bursts outside the run, s
		host   *Run
		want   bool
		bytes  float64 // of the bursts beyond, when not the run's
	}{
		{"nothing beyond", nil, nil, false, 0},
		{"one before", []int64{600}, nil, false, 0},
		{"one after", []int64{15000}, nil, false, 0},
		{"one on each side", []int64{600, 15000}, nil, true, 0},
		{"one on each side, one step passed over", []int64{600, 18600}, nil, true, 0},
		{"two after", []int64{15000, 18600}, nil, true, 0},
		{"one on each side, one off the rhythm", []int64{1400, 15000}, nil, false, 0},
		{"nothing beyond, in a host", nil, host, false, 0},
		{"one after, in the host's run", []int64{15000}, host, true, 0},
		{"one before, in the host's run", []int64{600}, host, true, 0},
		{"one after, beyond the host's end", []int64{15000}, short, false, 0},
		{"one after, off the rhythm, in the host's run", []int64{15500}, host, false, 0},
		{"one after, in the host's run, 30% more bytes", []int64{15000}, host, false, 1.3e11},
		{"one after, a step passed over, in the host's run", []int64{18600}, &Run{StartNS: 0, EndNS: 20000 * s}, false, 0},
		{"two after, 30% more bytes", []int64{15000, 18600}, nil, true, 1.3e11},
	}
	for _, c := range cases {
		bursts := []Burst{}
		for _, at := range []int64{4200, 7800, 11400} {
			bursts = append(bursts, Burst{StartNS: at * s, EndNS: (at + 60) * s, Bytes: 1e11})
		}
		for _, at := range c.beyond {
			bursts = append(bursts, Burst{StartNS: at * s, EndNS: (at + 60) * s, Bytes: cmp.Or(c.bytes, 1e11)})
		}
		slices.SortFunc(bursts, func(a, b Burst) int { return cmp.Compare(a.StartNS, b.StartNS) })
		var on []int
		for i, b := range bursts {
			if b.StartNS >= 3000*s && b.StartNS < 13000*s {
				on = append(on, i)
			}
		}
		p := periodicRun{run: Run{StartNS: 3000 * s, EndNS: 13000 * s}, bursts: on, interval: iv}
		if got := outOfScope(bursts, match, p, c.host, 5*s, o); got != c.want {
			t.Errorf("%s: out of scope %v, want %v", c.name, got, c.want)
		}
	}
}

// TestHostOf proves which job hosts a run: one of another application
// that starts before it and ends after it, the longest of several.
func TestHostOf(t *testing.T) {
	key := appKey{"pig1", "monitor_1", 1}
	r := Run{User: "pig1", Name: "monitor_1", Nodes: 1, StartNS: 100, EndNS: 200}
	jobs := []Run{
		{User: "pig1", Name: "monitor_1", Nodes: 1, StartNS: 0, EndNS: 1000}, // its own application
		{User: "bea", Name: "a", Nodes: 4, StartNS: 150, EndNS: 1000},        // starts inside it
		{User: "bea", Name: "b", Nodes: 4, StartNS: 0, EndNS: 190},           // ends inside it
		{User: "bea", Name: "c", Nodes: 4, StartNS: 90, EndNS: 210},
		{User: "bea", Name: "d", Nodes: 4, StartNS: 50, EndNS: 400},
	}
	if h := hostOf(jobs, key, r); h == nil || h.Name != "d" {
		t.Errorf("host %+v, want bea/d", h)
	}
	if h := hostOf(jobs[:3], key, r); h != nil {
		t.Errorf("host %+v, want none", h)
	}
}

// TestNestedInHourlyHost proves that a light application whose runs
// all sit inside the runs of an hourly checkpointer, and whose only
// bursts are the host's, is not taken for an I/O-intensive one, as
// judged seed 812's pig1/monitor_1 inside bea/fusion_b: runs of 1 to 2
// hours that see two of the host's three checkpoints (the third an
// hour after their last, none before; sharedRhythm makes them
// periodic), and runs of 2.5 hours in longer host runs that see three
// with one before and one after. The control is a genuine hourly
// application among other jobs' bursts of its size, about one an hour
// at random times, every run of which a long foreign job encloses: it
// is found, although now and then a foreign burst falls on its rhythm
// just before or after a run, inside the foreign job.
func TestNestedInHourlyHost(t *testing.T) {
	const s = int64(1e9)
	const step = 5 * s
	const iv = 3600
	o := DefaultOptions()
	checkpoint := func(rng *rand.Rand, at int64) Burst {
		bytes := 1e11 * (0.97 + 0.06*rng.Float64())
		return Burst{StartNS: at * s, EndNS: (at + 120) * s, Bytes: bytes, Peak: bytes / 100, Rate: bytes / 120, OSTs: 16}
	}
	guestKey := appKey{"pig1", "monitor_1", 1}
	for _, c := range []struct {
		name               string
		hostBursts         int
		fromMin, fromSpan  int64 // s after the host's first checkpoint
		untilMin, lastSpan int64 // s after the guest's last checkpoint
	}{
		{"two checkpoints a run", 3, -1500, 1200, 300, 1800},
		{"three checkpoints a run", 5, 3000, 400, 300, 1800},
	} {
		nested := 0
		for seed := range 20 {
			rng := rand.New(rand.NewPCG(uint64(seed), 812))
			var bs []Burst
			var guest, jobs []Run
			for h := range 10 {
				start := int64(h)*86400 + rng.Int64N(3600)
				first := start + 1500 + rng.Int64N(600)
				var at []int64
				for k := range c.hostBursts {
					at = append(at, first+int64(k)*iv+rng.Int64N(60))
					bs = append(bs, checkpoint(rng, at[k]))
				}
				jobs = append(jobs, Run{User: "bea", Name: "fusion_b", Nodes: 512, StartNS: start * s, EndNS: (at[len(at)-1] + 600) * s})
				from := first + c.fromMin + rng.Int64N(c.fromSpan)
				seen := 2
				if c.hostBursts == 5 {
					seen = 3
				}
				lastSeen := at[0]
				for _, a := range at {
					if a >= from && seen > 0 {
						lastSeen, seen = a, seen-1
					}
				}
				g := Run{User: guestKey.user, Name: guestKey.name, Nodes: guestKey.nodes, StartNS: from * s, EndNS: (lastSeen + 120 + c.untilMin + rng.Int64N(c.lastSpan)) * s}
				guest = append(guest, g)
				jobs = append(jobs, g)
			}
			slices.SortFunc(bs, func(a, b Burst) int { return cmp.Compare(a.StartNS, b.StartNS) })
			if a := classifyApp(guestKey, guest, bs, jobs, step, o); a.Class != ClassNot {
				nested++
				t.Logf("%s, seed %d: nested job %s (%d of %d periodic runs out of scope): %s", c.name, seed, a.Class, a.OutOfScope, a.Periodic, a.Reason)
			}
		}
		if nested > 0 {
			t.Errorf("%s: the nested job is a candidate in %d of 20 draws, want none", c.name, nested)
		}
	}

	found := 0
	for seed := range 20 {
		rng := rand.New(rand.NewPCG(uint64(seed), 813))
		// 8 runs of 4.5 hours, a day apart, 5 checkpoints an hour
		// apart in each; each run inside a foreign job that starts 1
		// to 3 hours before it and ends 1 to 3 hours after it.
		var bs []Burst
		var own, jobs []Run
		key := appKey{"bea", "fusion_b", 256}
		for h := range 8 {
			start := int64(h)*86400 + 4*3600 + rng.Int64N(3600)
			r := Run{User: key.user, Name: key.name, Nodes: key.nodes, StartNS: start * s, EndNS: (start + 16200) * s}
			own = append(own, r)
			jobs = append(jobs, r, Run{User: "u0001", Name: "long", Nodes: 64, StartNS: (start - 3600 - rng.Int64N(7200)) * s, EndNS: (start + 16200 + 3600 + rng.Int64N(7200)) * s})
			for k := range 5 {
				bs = append(bs, checkpoint(rng, start+600+int64(k)*iv+rng.Int64N(60)))
			}
		}
		for at := int64(0); at < 8*86400; at += int64(rng.ExpFloat64() * iv) {
			bs = append(bs, checkpoint(rng, at))
		}
		slices.SortFunc(bs, func(a, b Burst) int { return cmp.Compare(a.StartNS, b.StartNS) })
		if a := classifyApp(key, own, bs, jobs, step, o); a.Class == ClassIOIntensive {
			found++
		} else {
			t.Logf("seed %d: genuine hourly application %s (%d of %d periodic runs out of scope): %s", seed, a.Class, a.OutOfScope, a.Periodic, a.Reason)
		}
	}
	if found < 19 {
		t.Errorf("the genuine hourly application found in %d of 20 draws, want 19 at least", found)
	}
}

// TestWeakRhythms proves which periodic runs count as weak rhythms:
// two or three bursts on the rhythm with more bursts like the
// cluster's (match) off it in the run; not a rhythm of more bursts,
// nor one with as many off it, nor bursts unlike the cluster's or
// outside the run.
func TestWeakRhythms(t *testing.T) {
	const s = int64(1e9)
	like := func(b Burst) bool { return b.Bytes > 5e11 && b.Bytes < 2e12 }
	cases := []struct {
		name string
		on   []int64   // the rhythm's bursts, s from the run's start
		off  []int64   // other bursts
		offB []float64 // their bytes
		want int
	}{
		{"three on, four like them off", []int64{600, 3600, 6600}, []int64{1500, 2100, 4700, 5300}, []float64{7e11, 1.2e12, 9e11, 6e11}, 1},
		{"two on, three like them off", []int64{600, 6600}, []int64{1500, 2100, 4700}, []float64{7e11, 1.2e12, 9e11}, 1},
		{"three on, three like them off", []int64{600, 3600, 6600}, []int64{1500, 2100, 4700}, []float64{7e11, 1.2e12, 9e11}, 0},
		{"four on, five like them off", []int64{600, 2600, 4600, 6600}, []int64{1500, 2100, 4700, 5300, 7000}, []float64{7e11, 1.2e12, 9e11, 6e11, 9e11}, 0},
		{"three on, four off of another kind", []int64{600, 3600, 6600}, []int64{1500, 2100, 4700, 5300}, []float64{5e10, 5e10, 3e12, 5e10}, 0},
		{"three on, four like them after the run", []int64{600, 3600, 6600}, []int64{9500, 9800, 10100, 10400}, []float64{9e11, 9e11, 9e11, 9e11}, 0},
	}
	for _, c := range cases {
		var bursts []Burst
		var on []int
		for _, at := range c.on {
			on = append(on, len(bursts))
			bursts = append(bursts, Burst{StartNS: at * s, EndNS: (at + 160) * s, Bytes: 9e11})
		}
		for i, at := range c.off {
			bursts = append(bursts, Burst{StartNS: at * s, EndNS: (at + 160) * s, Bytes: c.offB[i]})
		}
		slices.SortStableFunc(bursts, func(a, b Burst) int { return cmp.Compare(a.StartNS, b.StartNS) })
		on = on[:0]
		for i, b := range bursts {
			if slices.Contains(c.on, b.StartNS/s) {
				on = append(on, i)
			}
		}
		pr := []periodicRun{{run: Run{StartNS: 0, EndNS: 9000 * s}, bursts: on, interval: 3000}}
		if got := weakRhythms(bursts, pr, like, 6*s); got != c.want {
			t.Errorf("%s: %d weak rhythms, want %d", c.name, got, c.want)
		}
	}
}

// TestForeignBurstsOfItsKindInAFewRuns proves that a checkpointer
// writing three bursts a run is still found when other jobs' bursts of
// its kind, at random times, fall into a few of its runs: its rhythm is
// weak there (weakRhythms), but not in half of its periodic runs.
func TestForeignBurstsOfItsKindInAFewRuns(t *testing.T) {
	const s = int64(1e9)
	const step = 6 * s
	const rate = 5.6e9
	o := DefaultOptions()
	burst := func(at int64, bytes float64) Burst {
		d := int64(bytes / rate)
		return Burst{StartNS: at * s, EndNS: (at + d) * s, Bytes: bytes, Peak: rate, Rate: rate, OSTs: 32, Refined: bytes}
	}
	key := appKey{user: "abe", name: "ckpt", nodes: 64}
	found := 0
	for seed := range 20 {
		rng := rand.New(rand.NewPCG(uint64(seed), 911))
		var rs []Run
		at := int64(0)
		for range 10 {
			at += 20000 + rng.Int64N(40000)
			rs = append(rs, Run{StartNS: at * s, EndNS: (at + 9000 + rng.Int64N(1200)) * s})
			at = rs[len(rs)-1].EndNS / s
		}
		var bs []Burst
		for i, r := range rs {
			for k := range 3 {
				bs = append(bs, burst(r.StartNS/s+400+int64(k)*3000, 9e11))
			}
			if i%3 == 1 {
				// Another job's bursts of its kind, 2 an hour.
				for at := r.StartNS/s + int64(rng.ExpFloat64()*1800); at < r.EndNS/s-300; at += int64(rng.ExpFloat64() * 1800) {
					bs = append(bs, burst(at, 9e11*math.Exp(0.3*rng.NormFloat64())))
				}
			}
		}
		slices.SortFunc(bs, func(a, b Burst) int { return cmp.Compare(a.StartNS, b.StartNS) })
		if classifyApp(key, rs, bs, nil, step, o).Class == ClassIOIntensive {
			found++
		}
	}
	if found < 19 {
		t.Errorf("a three-burst checkpointer among foreign bursts of its kind in 3 of 10 runs found in %d of 20 draws, want 19 at least", found)
	}
}

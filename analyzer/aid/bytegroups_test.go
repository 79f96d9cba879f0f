package aid

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestByteGroups proves which bursts byteGroups puts together: those
// whose bytes agree within byteGroupTol of their median, at least
// minPts of them, densest first; bursts whose bytes scatter form no
// group.
func TestByteGroups(t *testing.T) {
	cases := []struct {
		name  string
		bytes []float64
		want  [][]int // the groups, as indices into bytes
	}{
		{"own bursts among scattered foreign ones",
			[]float64{1.80e11, 1.5e11, 1.81e11, 2.6e11, 1.79e11, 3.0e11, 1.82e11, 1.2e11, 1.80e11, 2.2e11},
			[][]int{{0, 2, 4, 6, 8}}},
		{"two applications 1.25x apart",
			[]float64{1.80e11, 2.25e11, 1.81e11, 2.24e11, 1.79e11, 2.26e11, 1.82e11, 2.25e11, 1.80e11, 2.23e11, 2.25e11},
			[][]int{{1, 3, 5, 7, 9, 10}, {0, 2, 4, 6, 8}}},
		{"sizes within a third, none within 4%",
			[]float64{1.5e11, 1.65e11, 1.8e11, 1.95e11, 2.1e11, 2.3e11, 2.5e11},
			nil},
		{"too few alike", []float64{1.80e11, 1.81e11, 1.79e11, 1.82e11, 3e11, 5e11}, nil},
		{"a burst 6% off its group is left out",
			[]float64{1.00e11, 1.01e11, 0.99e11, 1.00e11, 1.02e11, 1.065e11},
			[][]int{{0, 1, 2, 3, 4}}},
	}
	for _, c := range cases {
		bursts := make([]Burst, len(c.bytes))
		idx := make([]int, len(c.bytes))
		for i, v := range c.bytes {
			bursts[i] = Burst{StartNS: int64(i) * 1e12, EndNS: int64(i)*1e12 + 60e9, Bytes: v}
			idx[i] = i
		}
		got := byteGroups(bursts, idx, 5)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d groups, want %d (%v)", c.name, len(got), len(c.want), got)
			continue
		}
		for k, g := range got {
			var members []int
			for b := range g {
				members = append(members, b)
			}
			slices.Sort(members)
			if !slices.Equal(members, c.want[k]) {
				t.Errorf("%s: group %d is %v, want %v", c.name, k, members, c.want[k])
			}
		}
	}
}

// TestOwnBytesAmongForeignOfItsRate proves that an application whose
// bursts share their rate and size, within a third, with other jobs'
// bursts in its runs is found by the bytes of its own (byte groups),
// as judged seed 1106's eli/quake_e was not: 1.8e11 B every 430 to
// 520 s, its runs full of another application's 2.25e11 B every 380 s
// and of single bursts of 1.3 to 3e11 B, all at the same peak rate;
// some of its bursts met a foreign one and are lost. Without byte
// groups (OPTICS's clusters only) it is found in fewer draws, and the
// test states how many the byte groups find.
func TestOwnBytesAmongForeignOfItsRate(t *testing.T) {
	const s = int64(1e9)
	const step = 8 * s
	o := DefaultOptions()
	key := appKey{user: "eli", name: "quake_e", nodes: 512}
	draw := func(seed uint64) ([]Run, []Burst) {
		rng := rand.New(rand.NewPCG(seed, 1106))
		burst := func(at int64, bytes float64) Burst {
			rate := 3e9 * math.Exp(0.25*rng.NormFloat64())
			d := int64(bytes / rate)
			return Burst{StartNS: at * s, EndNS: (at + d) * s, Bytes: bytes, Peak: rate, Rate: rate, OSTs: 32, Refined: bytes}
		}
		var rs []Run
		var bs []Burst
		at := int64(0)
		for i := range 10 {
			at += 2000 + rng.Int64N(20000)
			runS := 11000 + rng.Int64N(3000)
			r := Run{StartNS: at * s, EndNS: (at + runS) * s}
			rs = append(rs, r)
			iv := 430 + rng.Int64N(90)
			for t := at + 150; t < at+runS-100; t += iv + rng.Int64N(20) - 10 {
				if rng.Float64() < 0.15 {
					// Met another job's burst: seen as one larger burst.
					bs = append(bs, burst(t, 1.8e11+1.5e11*rng.Float64()))
					continue
				}
				bs = append(bs, burst(t, 1.8e11*math.Exp(0.01*rng.NormFloat64())))
			}
			if i%2 == 0 {
				// Another application's checkpoints through the run.
				for t := at + rng.Int64N(380); t < at+runS-100; t += 370 + rng.Int64N(20) {
					bs = append(bs, burst(t, 2.25e11*math.Exp(0.01*rng.NormFloat64())))
				}
			}
			for t := at + int64(rng.ExpFloat64()*1200); t < at+runS-100; t += int64(rng.ExpFloat64() * 1200) {
				bs = append(bs, burst(t, 1.3e11*math.Exp(0.85*rng.Float64())))
			}
			at += runS
		}
		slices.SortFunc(bs, func(a, b Burst) int { return cmp.Compare(a.StartNS, b.StartNS) })
		return rs, bs
	}
	found := 0
	for seed := range uint64(10) {
		rs, bs := draw(seed)
		if a := classifyApp(key, rs, bs, nil, step, o); a.Class == ClassIOIntensive {
			found++
		} else {
			t.Logf("draw %d: %s", seed, a.Reason)
		}
	}
	if found < 10 {
		t.Errorf("found in %d of 10 draws, want 10", found)
	}
}

// TestWeakClusterDoesNotHideAnother proves that the weak-rhythm rule
// is applied to every candidate cluster before one is chosen: a cluster
// of larger bursts (more bytes, the tie-break) whose rhythm is three
// bursts with four like them off it in one of its two periodic runs has
// no support, and the application's own checkpoints, periodic in all
// three runs, are chosen. Checked after the choice, as before, the weak
// cluster won and the application was "not" (seed 603's
// pro0/newcode_0).
func TestWeakClusterDoesNotHideAnother(t *testing.T) {
	const s = int64(1e9)
	burst := func(at int64, bytes float64) Burst {
		return Burst{StartNS: at * s, EndNS: (at + 60) * s, Bytes: bytes, Peak: 2e9, Rate: 2e9, OSTs: 8, Refined: bytes}
	}
	var bs []Burst
	var runs []Run
	for r := range int64(3) {
		at := r * 10000
		runs = append(runs, Run{StartNS: at * s, EndNS: (at + 3000) * s})
		for k := range int64(8) {
			bs = append(bs, burst(at+300+360*k, 1.22e11)) // the application's own
		}
	}
	// Larger bursts: periodic in run 0; in run 1 three on a rhythm with
	// four like them (1.2 times their bytes) off it.
	for _, at := range []int64{100, 820, 1540, 2260, 10100, 10820, 11540} {
		bs = append(bs, burst(at, 1e12))
	}
	for _, at := range []int64{12000, 12150, 12400, 12700} {
		bs = append(bs, burst(at, 1.2e12))
	}
	slices.SortFunc(bs, func(a, b Burst) int { return cmp.Compare(a.StartNS, b.StartNS) })
	perRun := make([][]int, len(runs))
	for i, r := range runs {
		perRun[i] = inRun(bs, r, 6*s)
	}
	own := candidate{func(b int) bool { return bs[b].Bytes < 2e11 }, func(b int) bool { return bs[b].Bytes < 2e11 }}
	large := candidate{func(b int) bool { return bs[b].Bytes > 5e11 }, func(b int) bool { return bs[b].Bytes > 5e11 }}
	o := DefaultOptions()
	cases := []struct {
		name         string
		cands        []candidate
		wantPeriodic int
		wantWeak     bool
	}{
		{"the weak cluster first", []candidate{large, own}, 3, true},
		{"the weak cluster last", []candidate{own, large}, 3, true},
		{"the weak cluster alone", []candidate{large}, 0, true},
		{"the application's own alone", []candidate{own}, 3, false},
	}
	for _, c := range cases {
		presence, pr, weak := bestCluster(bs, runs, perRun, c.cands, 6*s, o)
		got := 0
		if presence >= o.Presence {
			got = len(pr)
		}
		if got != c.wantPeriodic || (weak != "") != c.wantWeak {
			t.Errorf("%s: %d periodic runs at presence %.2f, weak reason %q; want %d periodic runs, a weak reason %v", c.name, got, presence, weak, c.wantPeriodic, c.wantWeak)
		}
	}
}

// TestIdenticalBurstsAtRandomTimes proves that byte groups do not make
// an application periodic by its bytes alone: one that writes bursts
// of the same bytes (within 1%) at random times (exponential gaps of
// 500 s on average) through ten runs is not found in any of 20 draws.
// A byte group holds exactly such bursts; the rhythm rules
// (periodic, oneInterval, inStep) must still reject it.
func TestIdenticalBurstsAtRandomTimes(t *testing.T) {
	const s = int64(1e9)
	o := DefaultOptions()
	key := appKey{user: "irr", name: "adhoc", nodes: 64}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 77))
		var rs []Run
		var bs []Burst
		at := int64(0)
		for range 10 {
			at += 2000 + rng.Int64N(20000)
			runS := 9000 + rng.Int64N(4000)
			rs = append(rs, Run{StartNS: at * s, EndNS: (at + runS) * s})
			for t := at + int64(rng.ExpFloat64()*500); t < at+runS-100; t += 60 + int64(rng.ExpFloat64()*440) {
				v := 1.8e11 * math.Exp(0.01*rng.NormFloat64())
				bs = append(bs, Burst{StartNS: t * s, EndNS: (t + 60) * s, Bytes: v, Peak: 3e9, Rate: 3e9, OSTs: 32, Refined: v})
			}
			at += runS
		}
		if a := classifyApp(key, rs, bs, nil, 8*s, o); a.Class != ClassNot {
			t.Errorf("draw %d: %s (%s), want not", seed, a.Class, a.Reason)
		}
	}
}

// TestByteGroupCountsRunsOfItsKind proves that a byte group's support
// is counted among the runs that show a burst of its kind (an OPTICS
// cluster one of its bursts is in), not only of the group: a light job
// inside an hourly host's runs shows the host's checkpoints (1.4e12 B)
// on the rhythm in 5 of its 9 runs, one of them in 2 runs, and bursts
// of that kind but other bytes (1.2e12 to 1.65e12 B, outside the
// group's 4%, in the group's OPTICS cluster) in 2 more. Its rhythm is
// in 5 of the 9 runs of its kind, under 60%. Counted among the 7 runs
// that show the group itself, 5 of 7 passed (seed 406's
// pig1/monitor_1, a false positive), which fails this test.
func TestByteGroupCountsRunsOfItsKind(t *testing.T) {
	const s = int64(1e9)
	var runs []Run
	var bs []Burst
	label := map[int]int{}
	add := func(at int64, bytes float64, l int) {
		label[len(bs)] = l
		bs = append(bs, Burst{StartNS: at * s, EndNS: (at + 100) * s, Bytes: bytes, Peak: 1.4e10, Rate: 1.4e10, OSTs: 64, Refined: bytes})
	}
	for i := range int64(9) {
		at := i * 40000
		runs = append(runs, Run{StartNS: at * s, EndNS: (at + 10800) * s})
		switch {
		case i < 5:
			for k := range int64(3) {
				add(at+600+3600*k+10*i, 1.4e12, 0)
			}
		case i < 7:
			add(at+2000, 1.4e12, 0)
		default:
			add(at+900, 1.2e12, 0)
			add(at+5000, 1.65e12, 0)
		}
	}
	add(500000, 1e11, -1) // noise, in no run
	perRun := make([][]int, len(runs))
	for i, r := range runs {
		perRun[i] = inRun(bs, r, 10*s)
	}
	g := map[int]bool{}
	for b := range bs {
		if math.Abs(math.Log(bs[b].Bytes/1.4e12)) <= byteGroupTol {
			g[b] = true
		}
	}
	c := byteGroupCandidate(g, label)
	presence, _, pr := clusterSupport(bs, runs, perRun, c.in, c.shows)
	if len(pr) != 5 || presence >= DefaultOptions().Presence {
		t.Errorf("%d periodic runs, presence %.3f; want 5 periodic runs of the 9 that show the group's kind (%.3f), under %.2f",
			len(pr), presence, 5.0/9, DefaultOptions().Presence)
	}
}

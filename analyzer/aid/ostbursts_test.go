package aid

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"iopred/analyzer/serverlog"
)

// quietOSTs is an hour of n OSTs at 5 s idling at about 1.5 MB/s each,
// with a little noise.
func quietOSTs(n int, seed uint64) *serverlog.Rates {
	rng := rand.New(rand.NewPCG(seed, 7))
	const samples = 720
	r := &serverlog.Rates{Start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Step: 5 * time.Second}
	for i := range n {
		r.OSTs = append(r.OSTs, "OST"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		w, rd := make([]float64, samples), make([]float64, samples)
		for t := range w {
			w[t] = 1.5e6 * (1 + 0.2*rng.NormFloat64())
			rd[t] = 0.9e6 * (1 + 0.2*rng.NormFloat64())
		}
		r.Write, r.Read = append(r.Write, w), append(r.Read, rd)
	}
	return r
}

// addBurst writes rate bytes/s on each of the OSTs from first to
// first+k-1 over samples [at, at+d).
func addBurst(r *serverlog.Rates, first, k, at, d int, rate float64) {
	for o := first; o < first+k; o++ {
		for t := at; t < at+d; t++ {
			r.Write[o][t] += rate
		}
	}
}

// TestOSTGroupsFindWhatTheAggregateCannot proves the per-OST detector
// on what the aggregate misses: a modest writer's burst on three OSTs of
// 256 (60 MB/s each, 180 MB/s in all, under the aggregate's 1 GB/s
// floor) is found as one burst of three OSTs with its bytes, beside
// another job's burst on two other OSTs that starts later; bursts that
// share their time but not their start and end are two groups.
func TestOSTGroupsFindWhatTheAggregateCannot(t *testing.T) {
	r := quietOSTs(256, 1)
	addBurst(r, 10, 3, 200, 24, 60e6)  // 120 s: 21.6 GB
	addBurst(r, 40, 2, 210, 40, 80e6)  // another job, overlapping in time
	addBurst(r, 100, 4, 500, 12, 30e6) // a third, alone
	o := DefaultOptions()
	from, to := r.Start.UnixNano(), r.Time(r.Len()).UnixNano()
	read, write := r.Aggregate()
	agg := detect(&series{startNS: from, stepNS: int64(r.Step), read: read, write: write}, from, to, o,
		func(x []float64) []float64 { return gaussian(x, o.Sigma) })
	if len(agg) != 0 {
		t.Errorf("the aggregate found %d bursts; the test wants bursts it cannot see", len(agg))
	}
	got := ostGroups(r, from, to, o)
	want := []struct {
		atS          float64
		osts         int
		bytes, slack float64
	}{{1000, 3, 21.6e9, 0.05}, {1050, 2, 32e9, 0.05}, {2500, 4, 7.2e9, 0.05}}
	if len(got) != len(want) {
		t.Fatalf("%d groups, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		at := float64(g.StartNS-from) / 1e9
		if math.Abs(at-w.atS) > 10 || g.OSTs != w.osts || math.Abs(g.Bytes/w.bytes-1) > w.slack || !g.PerOST || g.Refined != g.Bytes {
			t.Errorf("group %d: at %.0f s on %d OSTs, %.4g B (per OST %v); want %.0f s, %d OSTs, %.4g B", i, at, g.OSTs, g.Bytes, g.PerOST, w.atS, w.osts, w.bytes)
		}
	}
	o.OSTMinPeak = -1
	if off := ostGroups(r, from, to, o); len(off) != 0 {
		t.Errorf("ost_min_peak -1: %d groups, want none", len(off))
	}
	if quiet := ostGroups(quietOSTs(64, 2), from, to, DefaultOptions()); len(quiet) != 0 {
		t.Errorf("idle OSTs: %d groups, want none: %+v", len(quiet), quiet)
	}
}

// TestMergeOSTGroups proves how the OST groups join the aggregate's
// bursts: a group that is most of an aggregate burst is dropped, and so
// is one of its bytes around it (seen longer on the OSTs), two
// sizeable groups inside one replace it, a small one under a large
// burst and one outside every burst are kept, and the result is in time
// order.
func TestMergeOSTGroups(t *testing.T) {
	const s = int64(1e9)
	b := func(at, d int64, bytes float64, perOST bool) Burst {
		return Burst{StartNS: at * s, EndNS: (at + d) * s, Bytes: bytes, PerOST: perOST}
	}
	cases := []struct {
		name        string
		agg, groups []Burst
		want        []Burst
	}{
		{"the aggregate burst seen on its OSTs", []Burst{b(100, 60, 1e11, false)}, []Burst{b(100, 60, 0.9e11, true)},
			[]Burst{b(100, 60, 1e11, false)}},
		{"two jobs met in time", []Burst{b(100, 100, 1.2e11, false)}, []Burst{b(100, 60, 0.8e11, true), b(150, 50, 0.4e11, true)},
			[]Burst{b(100, 60, 0.8e11, true), b(150, 50, 0.4e11, true)}},
		{"a small job under a large burst", []Burst{b(100, 100, 1e12, false)}, []Burst{b(100, 100, 0.95e12, true), b(120, 30, 5e9, true)},
			[]Burst{b(100, 100, 1e12, false), b(120, 30, 5e9, true)}},
		{"under the aggregate's threshold", []Burst{b(100, 60, 1e11, false)}, []Burst{b(40, 30, 5e9, true), b(300, 30, 5e9, true)},
			[]Burst{b(40, 30, 5e9, true), b(100, 60, 1e11, false), b(300, 30, 5e9, true)}},
		{"the aggregate burst seen longer on its OSTs", []Burst{b(131, 30, 7.4e10, false)}, []Burst{b(111, 70, 7.55e10, true)},
			[]Burst{b(131, 30, 7.4e10, false)}},
		{"another job's longer burst around a short one", []Burst{b(131, 30, 7.4e10, false)}, []Burst{b(111, 70, 3e10, true)},
			[]Burst{b(111, 70, 3e10, true), b(131, 30, 7.4e10, false)}},
		{"no groups", []Burst{b(100, 60, 1e11, false)}, nil, []Burst{b(100, 60, 1e11, false)}},
	}
	for _, c := range cases {
		got := mergeOSTGroups(c.agg, c.groups)
		if len(got) != len(c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: burst %d is %+v, want %+v", c.name, i, got[i], c.want[i])
			}
		}
	}
}

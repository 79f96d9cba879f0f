package aid

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"iopred/analyzer/serverlog"
)

func ratesOf(osts int, start time.Time, n int, rate func(o, t int) float64) *serverlog.Rates {
	r := &serverlog.Rates{Start: start, Step: 5 * time.Second, Read: make([][]float64, osts), Write: make([][]float64, osts)}
	for o := range osts {
		r.OSTs = append(r.OSTs, "fs-OST"+string(rune('a'+o)))
		r.Read[o], r.Write[o] = make([]float64, n), make([]float64, n)
		for t := range n {
			r.Write[o][t] = rate(o, t)
		}
	}
	return r
}

// TestIOLT proves the load table's shares: an OST busy at 100 MB/s half
// of every window has half its time in band 3, the rest in band 0.
func TestIOLT(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	r := ratesOf(2, start, 720, func(o, t int) float64 {
		if o == 1 && t%2 == 0 {
			return 100e6
		}
		return 1e6
	})
	src, _ := serverlog.NewRatesSource(r)
	io, err := BuildIOLT(src, start.Add(time.Hour), 30e6, 14, 4, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if io.F[0][0] != 1 || math.Abs(io.F[1][0]-0.5) > 1e-9 || math.Abs(io.F[1][3]-0.5) > 1e-9 {
		t.Errorf("shares %v and %v", io.F[0], io.F[1])
	}
}

// TestAdvise proves the decision: an unknown application runs with the
// reason; a known one runs on idle OSTs and is delayed when every OST is
// saturated; a newborn I/O-intensive job raises the score (α).
func TestAdvise(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	k := &Knowledge{Apps: []AppInfo{{User: "ana", Name: "ckpt", Nodes: 64, Class: ClassIOIntensive,
		RunS: 7200, Pattern: Pattern{OSTFootprint: 2, Throughput: 760e6, IntervalS: 300, BurstS: 150}}}}
	a := NewAdvisor(k, nil)
	adv, _ := a.Advise(Request{App: serverlog.App{User: "bob", Name: "x", Nodes: 1}, At: start})
	if adv.Advice != "run" || !strings.Contains(adv.Reason, "nothing is known") {
		t.Errorf("unknown application: %+v", adv)
	}
	app := serverlog.App{User: "ana", Name: "ckpt", Nodes: 64}
	for _, c := range []struct {
		name string
		rate float64
		want string
	}{{"idle", 1e6, "run"}, {"saturated", 420e6, "delay"}} {
		src, _ := serverlog.NewRatesSource(ratesOf(4, start, 720, func(o, t int) float64 { return c.rate }))
		adv, err := a.Advise(Request{App: app, At: start.Add(time.Hour), Log: src})
		if err != nil {
			t.Fatal(err)
		}
		if adv.Advice != c.want || adv.OSTFootprint != 2 || len(adv.OSTs) != 2 {
			t.Errorf("%s: %+v, want %s on 2 OSTs", c.name, adv, c.want)
		}
	}
	src, _ := serverlog.NewRatesSource(ratesOf(4, start, 720, func(o, t int) float64 { return 1e6 }))
	at := start.Add(time.Hour)
	quiet, _ := a.Advise(Request{App: app, At: at, Log: src})
	busy, _ := a.Advise(Request{App: app, At: at, Log: src, Running: []Running{
		{App: app, Start: at.Add(-2 * time.Minute)}, {App: app, Start: at.Add(-3 * time.Minute)}}})
	if busy.Adjusted != 2 || !(busy.Score > quiet.Score) {
		t.Errorf("two newborn runs: score %v (adjusted %d), without them %v", busy.Score, busy.Adjusted, quiet.Score)
	}
}

// TestAlphaOverlap proves the α of running jobs by their overlap with the
// candidate's run: a job that has run through the whole table and runs
// on past the candidate's run moves nothing (the table holds it already);
// one that ends a few minutes into the candidate's run is taken off the
// busy OSTs (lower score); the paper's α ignores a job ending in 30
// minutes, the overlap α takes most of it off; the born-only α (the
// default) takes off neither.
func TestAlphaOverlap(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	app := serverlog.App{User: "ana", Name: "ckpt", Nodes: 64}
	k := &Knowledge{Apps: []AppInfo{{User: "ana", Name: "ckpt", Nodes: 64, Class: ClassIOIntensive,
		RunS: 7200, Pattern: Pattern{OSTFootprint: 4, Throughput: 1600e6, IntervalS: 300, BurstS: 150}},
		{User: "bob", Name: "long", Nodes: 64, Class: ClassIOIntensive,
			RunS: 36000, Pattern: Pattern{OSTFootprint: 4, Throughput: 1600e6, IntervalS: 300, BurstS: 150}}}}
	long := serverlog.App{User: "bob", Name: "long", Nodes: 64}
	// Every OST busy at 400 MB/s half of the time: a running ckpt.
	src, _ := serverlog.NewRatesSource(ratesOf(4, start, 720, func(o, t int) float64 {
		if t%60 < 30 {
			return 400e6
		}
		return 1e6
	}))
	at := start.Add(time.Hour)
	for _, c := range []struct {
		name        string
		since, left time.Duration
		alpha       string
		adjusted    int
		lower       bool
	}{
		{"runs on", 3 * time.Hour, 4 * time.Hour, "overlap", 0, false},
		{"ends in 5 min", 3 * time.Hour, 5 * time.Minute, "overlap", 1, true},
		{"ends in 30 min", 3 * time.Hour, 30 * time.Minute, "overlap", 1, true},
		{"ends in 5 min, paper", 3 * time.Hour, 5 * time.Minute, "paper", 1, true},
		{"ends in 30 min, paper", 3 * time.Hour, 30 * time.Minute, "paper", 0, false},
		{"ends in 5 min, born", 3 * time.Hour, 5 * time.Minute, "born", 0, false},
		{"ends in 30 min, born", 3 * time.Hour, 30 * time.Minute, "born", 0, false},
	} {
		a := NewAdvisor(k, nil)
		a.Alpha = c.alpha
		alone, _ := a.Advise(Request{App: app, At: at, Log: src})
		r := Running{App: long, Start: at.Add(-c.since), Limit: at.Add(c.left)}
		adv, err := a.Advise(Request{App: app, At: at, Log: src, Running: []Running{r}})
		if err != nil {
			t.Fatal(err)
		}
		if adv.Adjusted != c.adjusted || (adv.Score < alone.Score) != c.lower {
			t.Errorf("%s: score %v (adjusted %d), without the job %v; want adjusted %d, lower %v", c.name, adv.Score, adv.Adjusted, alone.Score, c.adjusted, c.lower)
		}
	}
}

// TestHoldRelax proves that a held job's threshold grows with the time
// held, up to (1 + HoldRelax) times its allowance at the hold limit.
func TestHoldRelax(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	app := serverlog.App{User: "ana", Name: "ckpt", Nodes: 64}
	k := &Knowledge{Apps: []AppInfo{{User: "ana", Name: "ckpt", Nodes: 64, Class: ClassIOIntensive,
		RunS: 7200, Pattern: Pattern{OSTFootprint: 2, Throughput: 200e6, IntervalS: 300, BurstS: 150}}}}
	src, _ := serverlog.NewRatesSource(ratesOf(4, start, 720, func(o, t int) float64 { return 1e6 }))
	a := NewAdvisor(k, nil)
	a.HoldRelax = 2
	l0 := a.Threshold(&k.Apps[0].Pattern)
	for _, c := range []struct {
		held time.Duration
		want float64
	}{{0, l0}, {time.Hour, 1 + (l0-1)*2}, {2 * time.Hour, 1 + (l0-1)*3}, {5 * time.Hour, 1 + (l0-1)*3}} {
		adv, err := a.Advise(Request{App: app, At: start.Add(time.Hour), Log: src, Held: c.held, MaxHold: 2 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(adv.Threshold-c.want) > 2e-3 {
			t.Errorf("held %v: threshold %v, want %v", c.held, adv.Threshold, c.want)
		}
	}
}

// TestSpreadAlpha proves where α puts a newborn job: on the K idlest OSTs
// without SpreadAlpha, so that a candidate's K least-loaded OSTs (of 4, K = 2)
// stay idle beside it; spread over every OST (K/n each) with
// SpreadAlpha (the default), so that they see half of its load.
func TestSpreadAlpha(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	app := serverlog.App{User: "ana", Name: "ckpt", Nodes: 64}
	k := &Knowledge{Apps: []AppInfo{{User: "ana", Name: "ckpt", Nodes: 64, Class: ClassIOIntensive,
		RunS: 7200, Pattern: Pattern{OSTFootprint: 2, Throughput: 800e6, IntervalS: 300, BurstS: 150}}}}
	src, _ := serverlog.NewRatesSource(ratesOf(4, start, 720, func(o, t int) float64 { return 1e6 }))
	at := start.Add(time.Hour)
	run := []Running{{App: app, Start: at.Add(-2 * time.Minute)}}
	a := NewAdvisor(k, nil)
	a.SpreadAlpha = false
	idle, _ := a.Advise(Request{App: app, At: at, Log: src})
	packed, _ := a.Advise(Request{App: app, At: at, Log: src, Running: run})
	a.SpreadAlpha = true
	spread, _ := a.Advise(Request{App: app, At: at, Log: src, Running: run})
	w := a.Weights.W
	want := idle.Score + 0.25*(w[len(w)-1]-w[0]) // duty 1/2 on 2 of 4 OSTs
	if packed.Score != idle.Score || math.Abs(spread.Score-want) > 2e-3 {
		t.Errorf("idle %v, α on the idlest %v (want %v), spread %v (want %v)", idle.Score, packed.Score, idle.Score, spread.Score, want)
	}
}

// halfLoaded is an hour of 8 OSTs, fs-OST0000 to fs-OST0007, at 5 s
// steps: load[o] is OST o's rate half of the time (1 MB/s the other
// half).
func halfLoaded(start time.Time, load []float64) serverlog.Source {
	r := ratesOf(8, start, 720, func(o, t int) float64 {
		if t%2 == 0 {
			return load[o]
		}
		return 1e6
	})
	for o := range r.OSTs {
		r.OSTs[o] = fmt.Sprintf("fs-OST%04x", o)
	}
	src, _ := serverlog.NewRatesSource(r)
	return src
}

// TestPlacementHint proves the hint: the κ least-loaded OSTs (α of the
// running jobs included), distinct, by index ascending with their names
// and the lfs line; a newborn job placed by an earlier hint loads its own
// OSTs, so the next hint avoids them; an application that is unknown or
// not I/O-intensive gets no hint.
func TestPlacementHint(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := start.Add(time.Hour)
	k := &Knowledge{Apps: []AppInfo{
		{User: "ana", Name: "ckpt", Nodes: 64, Class: ClassIOIntensive, RunS: 7200,
			Pattern: Pattern{OSTFootprint: 3, Throughput: 1200e6, IntervalS: 300, BurstS: 150}},
		{User: "bob", Name: "big", Nodes: 64, Class: ClassIOIntensive, RunS: 7200,
			Pattern: Pattern{OSTFootprint: 5, Throughput: 2000e6, IntervalS: 300, BurstS: 150}},
		{User: "cy", Name: "calc", Nodes: 8, Class: ClassNot, Reason: "no recurring pattern"}}}
	ana := serverlog.App{User: "ana", Name: "ckpt", Nodes: 64}
	bob := serverlog.App{User: "bob", Name: "big", Nodes: 64}
	log := func(load ...float64) serverlog.Source { return halfLoaded(start, load) }
	busy := 400e6
	for _, c := range []struct {
		name    string
		app     serverlog.App
		load    []float64
		running []Running
		want    []int
		lfs     string
	}{
		{"three idle", ana, []float64{busy, 1e6, busy, 1e6, busy, busy, 1e6, busy}, nil, []int{1, 3, 6}, "lfs setstripe -c 3 -o 1,3,6 DIR"},
		// 220 MB/s is in band 7 (w 1.107), 250 MB/s in band 8 (2.22).
		{"least loaded first", ana, []float64{busy, 250e6, busy, 1e6, busy, busy, 220e6, busy}, nil, []int{1, 3, 6}, "lfs setstripe -c 3 -o 1,3,6 DIR"},
		{"placed newborn job avoided", ana, []float64{1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 250e6, 250e6},
			[]Running{{App: bob, Start: at.Add(-time.Minute), OSTs: []int{0, 1, 3, 4, 5}}}, []int{2, 6, 7}, "lfs setstripe -c 3 -o 2,6-7 DIR"},
		{"unknown", serverlog.App{User: "zed", Name: "x", Nodes: 1}, []float64{1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6}, nil, nil, ""},
		{"not I/O-intensive", serverlog.App{User: "cy", Name: "calc", Nodes: 8}, []float64{1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6}, nil, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			adv, err := NewAdvisor(k, nil).Advise(Request{App: c.app, At: at, Log: log(c.load...), Running: c.running})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(adv.OSTs, c.want) || adv.Setstripe != c.lfs {
				t.Fatalf("hint %v (%q), want %v (%q)", adv.OSTs, adv.Setstripe, c.want, c.lfs)
			}
			if c.want == nil {
				return
			}
			if adv.OSTFootprint != len(c.want) || len(adv.OSTNames) != len(c.want) {
				t.Errorf("footprint %d, names %v: want %d", adv.OSTFootprint, adv.OSTNames, len(c.want))
			}
			for i, o := range c.want {
				if adv.OSTNames[i] != fmt.Sprintf("fs-OST%04x", o) {
					t.Errorf("name %d: %s for OST %d", i, adv.OSTNames[i], o)
				}
			}
		})
	}
	// The placed job's α goes on its own OSTs: unplaced (spread over all
	// 8), the same job leaves OSTs 0 to 5 idlest, all alike.
	adv, _ := NewAdvisor(k, nil).Advise(Request{App: ana, At: at, Log: log(1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 250e6, 250e6),
		Running: []Running{{App: bob, Start: at.Add(-time.Minute)}}})
	if len(adv.OSTs) != 3 || adv.OSTs[2] > 5 || adv.Adjusted != 1 {
		t.Errorf("unplaced newborn job: hint %v (adjusted %d), want 3 of OSTs 0 to 5", adv.OSTs, adv.Adjusted)
	}
	// OSTs that score alike are taken from a start that depends on the
	// question: the same question gets the same hint, and questions at
	// other times (minutes apart) spread over the idle OSTs instead of all naming the
	// first five.
	idle := log(1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, busy)
	firsts := map[int]bool{}
	for h := range 8 {
		req := Request{App: bob, At: at.Add(-time.Duration(h) * time.Minute), Log: idle}
		a1, _ := NewAdvisor(k, nil).Advise(req)
		a2, _ := NewAdvisor(k, nil).Advise(req)
		if !slices.Equal(a1.OSTs, a2.OSTs) {
			t.Fatalf("the same question, two hints: %v and %v", a1.OSTs, a2.OSTs)
		}
		if len(a1.OSTs) != 5 || slices.Contains(a1.OSTs, 7) {
			t.Fatalf("hint %v %d min before: want 5 of the idle OSTs 0 to 6", a1.OSTs, h)
		}
		firsts[a1.OSTs[0]] = true
	}
	if len(firsts) < 2 {
		t.Errorf("8 questions over idle OSTs all start their hints at OST %v", firsts)
	}
	// A question the log has no sample for (after its end) is answered
	// "run" with the reason and no hint, not from a table taken as idle.
	late, _ := NewAdvisor(k, nil).Advise(Request{App: bob, At: at.Add(24 * time.Hour), Log: idle})
	if late.Advice != "run" || late.OSTs != nil || !strings.Contains(late.Reason, "no sample") {
		t.Errorf("advice a day after the log: %+v", late)
	}
}

// TestFootprintFromDarshan proves that a job whose files already lie on
// known OSTs (an earlier run's Darshan LUSTRE records) is scored on those
// OSTs: with three idle OSTs to choose from it would run, but its own
// OSTs are busy, so it is delayed, with no placement hinted; on idle own
// OSTs it runs; OSTs the log does not have are refused by name.
func TestFootprintFromDarshan(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := start.Add(time.Hour)
	k := &Knowledge{Apps: []AppInfo{{User: "ana", Name: "ckpt", Nodes: 64, Class: ClassIOIntensive, RunS: 7200,
		Pattern: Pattern{OSTFootprint: 3, Throughput: 1200e6, IntervalS: 300, BurstS: 150}}}}
	ana := serverlog.App{User: "ana", Name: "ckpt", Nodes: 64}
	busy := 400e6
	src := halfLoaded(start, []float64{busy, 1e6, busy, 1e6, busy, busy, 1e6, busy})
	guessed, err := NewAdvisor(k, nil).Advise(Request{App: ana, At: at, Log: src})
	if err != nil || guessed.Advice != "run" {
		t.Fatalf("footprint guessed: %+v, %v; want run on the idle OSTs", guessed, err)
	}
	for _, c := range []struct {
		name      string
		footprint []int
		want      string
	}{
		{"own OSTs busy", []int{0, 2, 4, 5}, "delay"},
		{"own OSTs idle", []int{1, 3}, "run"},
	} {
		adv, err := NewAdvisor(k, nil).Advise(Request{App: ana, At: at, Log: src, Footprint: c.footprint})
		if err != nil {
			t.Fatal(err)
		}
		if adv.Advice != c.want || !slices.Equal(adv.OSTs, c.footprint) || adv.OSTFootprint != len(c.footprint) ||
			adv.Setstripe != "" || !strings.Contains(adv.Reason, fmt.Sprintf("the job's %d OSTs", len(c.footprint))) {
			t.Errorf("%s: %+v, want %s on OSTs %v with no lfs hint", c.name, adv, c.want, c.footprint)
		}
	}
	if _, err := NewAdvisor(k, nil).Advise(Request{App: ana, At: at, Log: src, Footprint: []int{40, 41}}); err == nil || !strings.Contains(err.Error(), "40-41") {
		t.Errorf("a footprint the log lacks: %v", err)
	}
}

// TestRangeList proves the compact OST lists of the lfs line, and the
// OST indices read from Lustre's names (hexadecimal) or, failing that,
// the table's order.
func TestRangeList(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{
		{nil, ""}, {[]int{5}, "5"}, {[]int{0, 1, 2, 3}, "0-3"}, {[]int{7, 1, 2, 9, 3, 10}, "1-3,7,9-10"},
		{[]int{4, 4, 5}, "4-5"}, {[]int{0, 2, 4}, "0,2,4"},
	} {
		if got := RangeList(c.in); got != c.want {
			t.Errorf("RangeList(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := SetstripeCommand([]int{3, 1, 2, 2}); got != "lfs setstripe -c 3 -o 1-3 DIR" {
		t.Errorf("SetstripeCommand: %q", got)
	}
	for _, c := range []struct {
		names []string
		want  []int
	}{
		{[]string{"scratch-OST0000", "scratch-OST00a1", "scratch-OST0010"}, []int{0, 161, 16}},
		{[]string{"ost-a", "ost-b"}, []int{0, 1}},
		{[]string{"x-OST0001", "y-OST0001"}, []int{0, 1}}, // duplicate indices: positions
	} {
		if got := (&IOLT{OSTs: c.names}).Indices(); !slices.Equal(got, c.want) {
			t.Errorf("Indices(%v) = %v, want %v", c.names, got, c.want)
		}
	}
}

package aid

import (
	"math"
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

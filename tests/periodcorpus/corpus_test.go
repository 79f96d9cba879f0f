// Package periodcorpus holds a labelled corpus of traces recorded from real
// programs (record.sh re-records it with build/libiopred.so) and measures
// how far `iopred period`'s verdict can be trusted on it: the precision and
// recall of its "periodic" verdict, and whether each period found is within
// 5% of the one the program was given.
package periodcorpus

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"iopred/analyzer/ftio"
	"iopred/analyzer/job"
	"iopred/tracefmt"
)

// run is one labelled recording.
type run struct {
	name     string
	periodic bool
	// period is the period the program was given, or measured from the
	// trace (bursts write bursts to file) when the label gives 0.
	period float64
	bursts int
	file   string
	// half is "tune" (the half the verdict was tuned on), "held" (the
	// half that judges it), split by program and seed (record.sh),
	// "fresh" (recorded by record_fresh.sh before the verdict's last
	// change, mostly from other generators, to judge it), or "fresh2"
	// (record_fresh.sh's second set, recorded after that change was
	// written: the first fresh set was looked at while making it), or
	// "fresh3" (recorded after the stream test, the steady part, the
	// smaller spread and the joined shares, from other generators, to
	// judge those unseen), or "fresh4" (recorded after the clock's null
	// model kept clusters, from other generators again: a C program,
	// gawk, perl, Python's interval timer), or "fresh5" (recorded
	// before any verdict on it was looked at, from other generators
	// again: a bash while loop, a C program stepping with nanosleep,
	// Python timers, asyncio, renewal processes).
	half string
}

// readLabels reads labels.tsv.
func readLabels(t testing.TB) []run {
	t.Helper()
	f, err := os.Open("labels.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var runs []run
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 6 {
			t.Fatalf("labels.tsv:%d: %d fields, want 6", line, len(c))
		}
		r := run{name: c[0], periodic: c[1] == "periodic", file: c[4], half: c[5]}
		if r.half != "tune" && r.half != "held" && r.half != "fresh" && r.half != "fresh2" && r.half != "fresh3" && r.half != "fresh4" && r.half != "fresh5" {
			t.Fatalf("labels.tsv:%d: half %q, want tune, held, fresh, fresh2, fresh3, fresh4 or fresh5", line, r.half)
		}
		if c[1] != "periodic" && c[1] != "aperiodic" {
			t.Fatalf("labels.tsv:%d: class %q", line, c[1])
		}
		if r.period, err = strconv.ParseFloat(c[2], 64); err != nil {
			t.Fatalf("labels.tsv:%d: period: %v", line, err)
		}
		if r.bursts, err = strconv.Atoi(c[3]); err != nil {
			t.Fatalf("labels.tsv:%d: bursts: %v", line, err)
		}
		runs = append(runs, r)
	}
	return runs
}

// measuredPeriod is the mean interval between the starts of the r.bursts
// write bursts to the files whose names end in r.file: the writes are
// cut into bursts at the r.bursts-1 longest pauses between them.
func measuredPeriod(t testing.TB, dir string, r run) float64 {
	t.Helper()
	traces, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ start, end int64 }
	var writes []span
	for _, p := range traces {
		s, err := tracefmt.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var flow tracefmt.DataFlow
		err = s.Each(func(rec tracefmt.Record) error {
			e := rec.Event
			if e == nil {
				return nil
			}
			if flow.Of(e) == tracefmt.Write && e.Errno == 0 && strings.HasSuffix(e.Path, r.file) {
				// Unix ns, so that processes share a clock.
				off := s.Header().StartUnixNs // event times are since the trace's start
				writes = append(writes, span{e.StartNs + off, e.EndNs + off})
			}
			return nil
		})
		s.Close()
		// The shells of the runs recorded before the library closed
		// traces in _exit (dash leaves by _exit) left theirs without a
		// footer; every record before the cut has been read, as the
		// job's analysis reads them.
		var cut *tracefmt.TruncatedError
		if err != nil && !errors.As(err, &cut) {
			t.Fatal(err)
		}
	}
	sort.Slice(writes, func(i, j int) bool { return writes[i].start < writes[j].start })
	if len(writes) < r.bursts {
		t.Fatalf("%s: %d writes to *%s, want at least %d bursts", r.name, len(writes), r.file, r.bursts)
	}
	type gap struct {
		i   int
		len int64
	}
	var gaps []gap
	end := writes[0].end
	for i := 1; i < len(writes); i++ {
		gaps = append(gaps, gap{i, writes[i].start - end})
		end = max(end, writes[i].end)
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].len > gaps[j].len })
	last := 0
	for _, g := range gaps[:r.bursts-1] {
		last = max(last, g.i)
	}
	return float64(writes[last].start-writes[0].start) / 1e9 / float64(r.bursts-1)
}

// outcome is the verdict on one run.
type outcome struct {
	run
	want    float64 // the period to find (periodic runs)
	claimed bool    // a period was reported as found
	found   float64
	verdict string
	pValue  *float64
	// test is the test the verdict rests on: "spectrum", or "bursts"
	// with the rhythm found (clock or intervals).
	test string
}

// right tells whether a claimed period is within 5% of the one wanted.
func (o outcome) right() bool { return math.Abs(o.found-o.want) <= 0.05*o.want }

func analyse(t testing.TB, r run) outcome {
	t.Helper()
	dir := filepath.Join("runs", r.name)
	o := outcome{run: r, want: r.period}
	if r.periodic && r.period == 0 {
		o.want = measuredPeriod(t, dir, r)
	}
	traces, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum, _, err := job.FromTracesWith(traces, job.Options{Processes: true, NoAccuracy: true})
	if sum == nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	p := sum.Period.Write
	if p == nil {
		o.verdict = "no writes"
		return o
	}
	o.verdict = p.Verdict
	o.pValue = significancePValue(p)
	if sig := p.Significance; sig != nil {
		o.test = sig.Method
		if b := sig.BurstTest; sig.Method == "bursts" && b.Rhythm != "" {
			o.test += "/" + b.Rhythm
		}
	}
	if p.PeriodS != nil && (p.Verdict == "high" || p.Verdict == "moderate") {
		o.claimed, o.found = true, *p.PeriodS
	}
	return o
}

// table is the confusion table of the corpus.
type table struct {
	tp, wrong, fn, fp, tn int
	rows                  []outcome
}

func (c table) precision() float64 {
	return float64(c.tp) / math.Max(1, float64(c.tp+c.wrong+c.fp))
}
func (c table) recall() float64 {
	return float64(c.tp) / math.Max(1, float64(c.tp+c.wrong+c.fn))
}

func confusion(t testing.TB, runs []run) table {
	var c table
	for _, r := range runs {
		o := analyse(t, r)
		c.rows = append(c.rows, o)
		switch {
		case r.periodic && o.claimed && o.right():
			c.tp++
		case r.periodic && o.claimed:
			c.wrong++
		case r.periodic:
			c.fn++
		case o.claimed:
			c.fp++
		default:
			c.tn++
		}
	}
	return c
}

// A set is the runs of one half of the corpus.
type set struct {
	half, name string
	runs       []run
}

// halves splits the runs into the half the verdict was tuned on, the
// half that judges it and the fresh sets; with PERIODCORPUS_HALF=tune (or
// held, fresh, fresh2) the others are left out, so that tuning need not
// look at them.
func halves(t testing.TB) []set {
	only := os.Getenv("PERIODCORPUS_HALF")
	sets := []set{{half: "tune", name: "tuning half"}, {half: "held", name: "held-out half"},
		{half: "fresh", name: "fresh set"}, {half: "fresh2", name: "second fresh set"},
		{half: "fresh3", name: "third fresh set"}, {half: "fresh4", name: "fourth fresh set"},
		{half: "fresh5", name: "fifth fresh set"}}
	for _, r := range readLabels(t) {
		for i := range sets {
			if r.half == sets[i].half && (only == "" || only == r.half) {
				sets[i].runs = append(sets[i].runs, r)
			}
		}
	}
	return sets
}

// merged is the confusion table of both halves together.
func merged(a, b table) table {
	return table{tp: a.tp + b.tp, wrong: a.wrong + b.wrong, fn: a.fn + b.fn, fp: a.fp + b.fp, tn: a.tn + b.tn,
		rows: append(append([]outcome(nil), a.rows...), b.rows...)}
}

func (c table) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %-9s %9s %9s %-15s %-16s %s\n", "run", "class", "want s", "found s", "verdict", "test", "p")
	for _, o := range c.rows {
		class := "aperiodic"
		want := "-"
		if o.periodic {
			class, want = "periodic", fmt.Sprintf("%.4f", o.want)
		}
		found := "-"
		if o.claimed {
			found = fmt.Sprintf("%.4f", o.found)
			if o.periodic && !o.right() {
				found += "!"
			}
		}
		p := "-"
		if o.pValue != nil {
			p = fmt.Sprintf("%.3f", *o.pValue)
		}
		test := o.test
		if test == "" {
			test = "-"
		}
		fmt.Fprintf(&b, "%-14s %-9s %9s %9s %-15s %-16s %s\n", o.name, class, want, found, o.verdict, test, p)
	}
	fmt.Fprintf(&b, "\n                  claimed periodic   not claimed\n")
	fmt.Fprintf(&b, "periodic (%2d)     %3d right %3d wrong %8d\n", c.tp+c.wrong+c.fn, c.tp, c.wrong, c.fn)
	fmt.Fprintf(&b, "aperiodic (%2d)    %9d %14d\n", c.fp+c.tn, c.fp, c.tn)
	fmt.Fprintf(&b, "precision %.3f  recall %.3f (a claim counts as right when within 5%% of the period)\n", c.precision(), c.recall())
	return b.String()
}

// floors are the corpus's figures on each set, precision then recall:
// what the verdict reaches today, so that a change that loses ground
// fails. The goal (issue 26) is precision >= 0.95 and recall >= 0.90.
// Since the burst test follows the local tempo (bursts.go), the tuning
// half loses tar1 (gzip's blocks, at a locally steady rate that drifts
// 2.6x: a claim), the held-out half gains both LAMMPS runs and loses
// ior100 (its set-up phases drift the tempo, and the mean interval over
// them is 15% long); the fresh set, recorded before that change and
// looked at while making it, went from 0.667 and 0.500 to 0.800 and
// 0.667; the second fresh set, recorded after, gives 1.000 and 1.000
// before and after (README, "Periods and their verdict"). Testing the
// local tempo against the same intervals shuffled took the fresh set's
// shrand2 (random sleeps behind a dead time) off: 0.888 and 0.666.
// Taking a rhythm of intervals whose pauses the reads fill for a stream
// (ftio.Significance.JudgeStreaming) took tar1 off: the tuning half
// 1.000 and 1.000. The period of a rhythm of intervals taken over its
// steady part, and a burst split into halves (by their bytes) counted as
// one, made ior100's period right (0.1340 s, 15% long, to 0.1159 s for
// 0.1161): the held-out half 1.000 and 1.000. The spread of intervals
// taken as the smaller of the spread over the local tempo and over the
// run's median found the fresh set's pystep3 (steady, 0.43 over the run,
// 0.55 over the neighbours): 0.900 and 0.750. A clock whose intervals
// are alike too takes its period from them (shloop1: 0.3865 s, 5.7% long,
// to 0.3656 s): 1.000 and 0.833. Joining a checkpoint's shares that
// ranks out of step wrote apart (ftio's joinParts) found ior60load:
// 1.000 and 0.916. The third fresh set, recorded after all of these
// and judging them unseen: 0.800 and 1.000 (pycluster3, writes in
// clusters at random times, claimed on a clock of 1.54 s: the null model
// places single bursts at random and keeps no clusters). With a null
// model for the clock that keeps the job's clusters (ftio's clustersOf),
// pycluster3 is not significant (p = 0.400): 1.000 and 1.000, fresh3
// now looked at; every other set unchanged. The fourth fresh set,
// recorded after that change from other generators and judged once after
// every change of the session (the clusters, the tempo's phases): 0.833
// and 1.000 (awkrand4, gawk writing after random sleeps of 0.05 to 0.95
// s, claimed on a clock of 0.345 s: coherence 0.57 over 29 bursts, none
// of 199 surrogates as coherent). Not for bounded gaps, as was thought:
// its own intervals shuffled cohere as well in none of 199; but its
// median interval spans two of those cycles. With a clock taken for the
// rhythm only up to 1.5 cycles per median interval (ftio's
// MaxCyclesPerInterval), awkrand4 is "low": 1.000 and 1.000, fresh4
// now looked at (tuned); every other set and row unchanged. The fifth
// fresh set, recorded before that change (and before any verdict on it
// was looked at) from other generators, judged once after it: 1.000 and
// 0.800 (bgwriter5, checkpoints every 0.4 s beside a thread appending
// log lines at random times, is "low": the 68 small log bursts among the
// 25 checkpoints leave a coherence of 0.33; cstep5 at 0.5065 s for
// 0.5275 s, 4.0% off).
var floors = map[string][2]float64{
	"tune":   {1, 1},
	"held":   {1, 1},
	"fresh":  {1, 0.916},
	"fresh2": {1, 1},
	"fresh3": {1, 1},
	"fresh4": {1, 1},
	"fresh5": {1, 0.8},
}

// The corpus of real programs' traces: at least 40 runs, and the
// "periodic" verdict (high or moderate) at least as precise and complete
// as the floors on the half it was tuned on, the held-out half and the
// fresh sets, a claim counting as right only within 5% of the period the
// program was given.
func TestCorpus(t *testing.T) {
	if os.Getenv("PERIODCORPUS_HALF") != "" {
		t.Skip("PERIODCORPUS_HALF set: the benchmark's setting")
	}
	sets := halves(t)
	if n := len(sets[0].runs) + len(sets[1].runs); n < 40 {
		t.Errorf("%d runs in the tuning and held-out halves, want at least 40", n)
	}
	for _, h := range sets {
		if len(h.runs) == 0 {
			continue
		}
		c := confusion(t, h.runs)
		t.Logf("%s:\n%s", h.name, c)
		floor := floors[h.half]
		if p := c.precision(); p < floor[0] {
			t.Errorf("%s: precision %.3f < %g", h.name, p, floor[0])
		}
		if r := c.recall(); r < floor[1] {
			t.Errorf("%s: recall %.3f < %g", h.name, r, floor[1])
		}
	}
}

// BenchmarkCorpus prints the confusion tables of the corpus's tuning
// half, its held-out half, its fresh sets and all together (go test -run
// '^$' -bench Corpus -benchtime 1x ./tests/periodcorpus/;
// PERIODCORPUS_HALF=tune prints the tuning half alone).
func BenchmarkCorpus(b *testing.B) {
	sets := halves(b)
	tables := make([]table, len(sets))
	for i := 0; i < b.N; i++ {
		for k, h := range sets {
			tables[k] = confusion(b, h.runs)
		}
	}
	var all table
	answers, freqs := readFTIOAnswers(b)
	for k, h := range sets {
		if len(h.runs) == 0 {
			continue
		}
		all = merged(all, tables[k])
		b.ReportMetric(tables[k].precision(), "precision-"+h.half)
		b.ReportMetric(tables[k].recall(), "recall-"+h.half)
		fmt.Printf("%s (%d runs):\n%s\n", h.name, len(h.runs), tables[k])
		if answers != nil {
			fmt.Printf("%s beside FTIO v0.0.9 (ftio_answers.tsv; ! marks a wrong claim):\n%s\n", h.name, sideBySide(tables[k], answers, freqs))
		}
	}
	b.ReportMetric(all.precision(), "precision")
	b.ReportMetric(all.recall(), "recall")
	fmt.Printf("all runs: precision %.3f  recall %.3f\n", all.precision(), all.recall())
}

// The phase example (record.sh: 40 checkpoints every 0.25 s, then 15
// every 0.8 s) is reported as two phases with those periods (within 5%),
// the change within 2 s of the 40th checkpoint; no run of the tuning and
// held-out halves, whose programs keep one rhythm or none, is cut into
// phases. The fresh sets' programs need not keep one: a shell loop's
// period is its sleep plus its checkpoint's time, which the machine's
// load moves (shloop4 went from 0.566 s to 0.507 s between checkpoints
// and is cut in two there, as before the local tempo); their phases are
// logged, not judged. Nor need the halves' LAMMPS runs, whose tempo the
// load drives: the phases of a drifting tempo (ftio's tempoPhases) are
// logged too.
func TestPhases(t *testing.T) {
	phases := func(dir string) []ftio.Phase {
		traces, err := tracefmt.Discover(dir)
		if err != nil {
			t.Fatal(err)
		}
		sum, _, err := job.FromTracesWith(traces, job.Options{Processes: true, NoAccuracy: true})
		if sum == nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if sum.Period.Write == nil {
			return nil
		}
		return sum.Period.Write.Phases
	}
	ph := phases("phases")
	t.Logf("%+v", ph)
	if len(ph) != 2 {
		t.Fatalf("%d phases, want 2", len(ph))
	}
	for i, want := range []float64{0.25, 0.8} {
		if math.Abs(ph[i].PeriodS-want) > 0.05*want {
			t.Errorf("phase %d: period %g s, want %g", i, ph[i].PeriodS, want)
		}
	}
	change := measuredChange(t, "phases")
	if math.Abs(ph[0].EndS-change) > 2 {
		t.Errorf("change at %.3f s, want %.3f within 2 s", ph[0].EndS, change)
	}
	for _, r := range readLabels(t) {
		ph := phases(filepath.Join("runs", r.name))
		switch {
		case len(ph) == 0:
		case (r.half == "tune" || r.half == "held") && !ph[0].Tempo:
			t.Errorf("%s: %d phases: %+v", r.name, len(ph), ph)
		default:
			t.Logf("%s (%s): %d phases: %+v", r.name, r.half, len(ph), ph)
		}
	}
}

// measuredChange is when (Unix seconds) the 41st checkpoint of the phase
// example started: the first at the second interval.
func measuredChange(t *testing.T, dir string) float64 {
	traces, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	var starts []float64
	for _, p := range traces {
		s, err := tracefmt.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		off := s.Header().StartUnixNs // event times are since the trace's start
		var flow tracefmt.DataFlow
		writes := 0
		err = s.Each(func(rec tracefmt.Record) error {
			// A checkpoint is 4 writes of 256 KiB (workload.py).
			if e := rec.Event; e != nil && flow.Of(e) == tracefmt.Write && strings.HasSuffix(e.Path, "ckpt.dat") {
				if writes%4 == 0 {
					starts = append(starts, float64(e.StartNs+off)/1e9)
				}
				writes++
			}
			return nil
		})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(starts) != 55 {
		t.Fatalf("%d checkpoints, want 55", len(starts))
	}
	sort.Float64s(starts)
	// The phase boundary lies between the last short interval's end and
	// the first long one's start.
	return (starts[39] + starts[40]) / 2
}

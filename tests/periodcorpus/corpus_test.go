// Package periodcorpus holds a labelled corpus of traces recorded from real
// programs (record.sh re-records it with build/libiopred.so) and measures
// how far `iopred period`'s verdict can be trusted on it: the precision and
// recall of its "periodic" verdict, and whether each period found is within
// 5% of the one the program was given.
package periodcorpus

import (
	"bufio"
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
	// half is "tune" (the half the verdict was tuned on) or "held" (the
	// half that judges it), split by program and seed (record.sh).
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
		if r.half != "tune" && r.half != "held" {
			t.Fatalf("labels.tsv:%d: half %q, want tune or held", line, r.half)
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
		if err != nil {
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

// halves splits the runs into the half the verdict was tuned on and the
// half that judges it; with PERIODCORPUS_HALF=tune (or held) the other
// half is left out, so that tuning need not look at it.
func halves(t testing.TB) (tune, held []run) {
	only := os.Getenv("PERIODCORPUS_HALF")
	for _, r := range readLabels(t) {
		switch {
		case only != "" && r.half != only:
		case r.half == "tune":
			tune = append(tune, r)
		default:
			held = append(held, r)
		}
	}
	return tune, held
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

// Floors of the corpus's figures, on each half: what the verdict reaches
// today (tuning half 1.000 and 1.000, held-out half 1.000 and 0.833), so
// that a change that loses ground fails. The goal (issue 26) is
// precision >= 0.95 and recall >= 0.90: the held-out half misses it by
// its two LAMMPS runs (README, "Periods and their verdict").
const (
	minPrecision = 0.95
	minRecall    = 0.8
)

// The corpus of real programs' traces: at least 40 runs, and the
// "periodic" verdict (high or moderate) at least as precise and complete
// as the floors on the half it was tuned on and on the held-out half, a
// claim counting as right only within 5% of the period the program was
// given.
func TestCorpus(t *testing.T) {
	if os.Getenv("PERIODCORPUS_HALF") != "" {
		t.Skip("PERIODCORPUS_HALF set: the benchmark's setting")
	}
	tune, held := halves(t)
	if n := len(tune) + len(held); n < 40 {
		t.Errorf("%d runs in the corpus, want at least 40", n)
	}
	for _, h := range []struct {
		name string
		runs []run
	}{{"tuning half", tune}, {"held-out half", held}} {
		c := confusion(t, h.runs)
		t.Logf("%s:\n%s", h.name, c)
		if p := c.precision(); p < minPrecision {
			t.Errorf("%s: precision %.3f < %g", h.name, p, minPrecision)
		}
		if r := c.recall(); r < minRecall {
			t.Errorf("%s: recall %.3f < %g", h.name, r, minRecall)
		}
	}
}

// BenchmarkCorpus prints the confusion tables of the corpus's tuning
// half, its held-out half and both (go test -run '^$' -bench Corpus
// -benchtime 1x ./tests/periodcorpus/; PERIODCORPUS_HALF=tune prints the
// tuning half alone).
func BenchmarkCorpus(b *testing.B) {
	tuneRuns, heldRuns := halves(b)
	var tune, held table
	for i := 0; i < b.N; i++ {
		tune, held = confusion(b, tuneRuns), confusion(b, heldRuns)
	}
	all := merged(tune, held)
	if len(tuneRuns) > 0 {
		b.ReportMetric(tune.precision(), "precision-tune")
		b.ReportMetric(tune.recall(), "recall-tune")
	}
	if len(heldRuns) > 0 {
		b.ReportMetric(held.precision(), "precision-held")
		b.ReportMetric(held.recall(), "recall-held")
	}
	b.ReportMetric(all.precision(), "precision")
	b.ReportMetric(all.recall(), "recall")
	answers, freqs := readFTIOAnswers(b)
	if len(tuneRuns) > 0 {
		fmt.Printf("tuning half (%d runs):\n%s\n", len(tuneRuns), tune)
		if answers != nil {
			fmt.Printf("tuning half beside FTIO v0.0.9 (ftio_answers.tsv; ! marks a wrong claim):\n%s\n", sideBySide(tune, answers, freqs))
		}
	}
	if len(heldRuns) > 0 {
		fmt.Printf("held-out half (%d runs):\n%s\n", len(heldRuns), held)
		if answers != nil {
			fmt.Printf("held-out half beside FTIO v0.0.9 (ftio_answers.tsv; ! marks a wrong claim):\n%s\n", sideBySide(held, answers, freqs))
		}
	}
	fmt.Printf("both halves: precision %.3f  recall %.3f\n", all.precision(), all.recall())
}

// The phase example (record.sh: 40 checkpoints every 0.25 s, then 15
// every 0.8 s) is reported as two phases with those periods (within 5%),
// the change within 2 s of the 40th checkpoint; no run of the labelled
// corpus, whose programs keep one rhythm or none, is cut into phases.
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
		if ph := phases(filepath.Join("runs", r.name)); len(ph) > 0 {
			t.Errorf("%s: %d phases: %+v", r.name, len(ph), ph)
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

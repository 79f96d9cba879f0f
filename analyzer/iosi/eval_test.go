package iosi

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"iopred/analyzer/centersim"
	"iopred/analyzer/serverlog"
)

// simulated is one simulated center: its aggregate log, job log and truth.
type simulated struct {
	log   *Log
	jobs  []serverlog.Job
	truth *centersim.Truth
	// records are the simulator's runs by job id (drift family only).
	records map[string]centersim.JobRecord
}

func simulate(tb testing.TB, scenario string, seed uint64, noise float64) *simulated {
	tb.Helper()
	s, err := centersim.Preset(scenario)
	if err != nil {
		tb.Fatal(err)
	}
	if noise > 0 {
		s.Noise = noise
	}
	l := &Log{}
	res, err := centersim.Run(s, centersim.Options{Seed: seed, Sinks: []centersim.Sink{l}})
	if err != nil {
		tb.Fatal(err)
	}
	sim := &simulated{log: l, truth: res.Truth}
	for _, j := range res.Jobs {
		if j.Started() && !j.End.IsZero() {
			sim.jobs = append(sim.jobs, j.Job)
		}
	}
	return sim
}

func truthOf(a centersim.AppTruth) *Truth {
	g := &Truth{StepS: a.Signature.StepS, Write: a.Signature.Write, Read: a.Signature.Read}
	for _, b := range a.Signature.Bursts {
		g.Bursts = append(g.Bursts, Burst(b))
	}
	return g
}

// method names one way of extracting a signature.
type method struct {
	name string
	run  func([]Sample) (*Signature, error)
}

func methods() []method {
	return []method{
		{"IOSI (default)", func(s []Sample) (*Signature, error) { return Extract(s, Default()) }},
		{"IOSI (--paper)", func(s []Sample) (*Signature, error) { return Extract(s, Paper()) }},
		{"DTW", func(s []Sample) (*Signature, error) { return ExtractDTW(s, Paper()) }},
		{"IOSI (no alignment)", func(s []Sample) (*Signature, error) {
			o := Default()
			o.AlignSpread, o.ChooseSpread = 0, 0
			return Extract(s, o)
		}},
		{"IOSI (always aligned)", func(s []Sample) (*Signature, error) { o := Default(); o.BurstAlign = true; return Extract(s, o) }},
	}
}

// scoreAll extracts every target's signature with each method.
func scoreAll(tb testing.TB, sim *simulated, ms []method, verbose bool) map[string][]Score {
	out := map[string][]Score{}
	for _, a := range sim.truth.Apps {
		if a.Signature == nil {
			continue
		}
		app := serverlog.App{User: a.App.User, Name: a.App.Name, Nodes: a.App.Nodes}
		var samples []Sample
		for _, j := range Runs(sim.jobs, app, time.Time{}, time.Time{}) {
			if s, ok := sim.log.Sample(j); ok {
				samples = append(samples, s)
			}
		}
		for _, m := range ms {
			sig, err := m.run(samples)
			if err != nil {
				tb.Fatalf("%s %s: %v", m.name, app, err)
			}
			sc := Compare(sig, truthOf(a))
			if verbose {
				tb.Logf("%-16s %-26s runs %2d/%2d  xcorr %.3f corr %.3f vol %5.1f%% missed %d invented %d (bursts %d, truth %d)",
					m.name, app, sig.RunsUsed, sig.RunsFound, sc.XCorr, sc.Corr, 100*sc.VolumeErr, sc.Missed, sc.Invented, len(sig.Bursts), len(a.Signature.Bursts))
			}
			out[m.name] = append(out[m.name], sc)
		}
	}
	return out
}

// summary is the medians of a method's scores.
type summary struct {
	xcorr, corr, vol float64
	clean, within, n int
}

func summarize(sc []Score) summary {
	var x, c, v []float64
	s := summary{n: len(sc)}
	for _, e := range sc {
		x, c, v = append(x, e.XCorr), append(c, e.Corr), append(v, e.VolumeErr)
		if e.Clean() {
			s.clean++
		}
		if e.VolumeErr <= 0.1 {
			s.within++
		}
	}
	s.xcorr, s.corr, s.vol = median(x), median(c), median(v)
	return s
}

// TestEvaluateCenter is the accuracy figure: on the simulator's
// iosi scenario (seven targets among thousands of foreign jobs, interactive
// transfers and background) over three seeds, the default IOSI must reach
// the figures: a median cross-correlation of 0.90 and a median
// correlation coefficient of 0.85 with the ground truth, no burst missed
// or invented on at least 5 of 6 signatures, a median I/O volume error
// within 10%, and a better correlation coefficient and volume error than
// both the paper's method and DTW. The table gives every method.
// IOPRED_CENTER_HELDOUT=1 runs seeds 4 to 6 instead.
func TestEvaluateCenter(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates three fortnights of a center")
	}
	all := map[string][]Score{}
	ms := methods()
	first, last := uint64(1), uint64(3)
	if os.Getenv("IOPRED_CENTER_HELDOUT") != "" {
		first, last = 4, 6 // the seeds the first family's figures were not tuned on
	}
	for seed := first; seed <= last; seed++ {
		sim := simulate(t, "iosi", seed, 0)
		for k, v := range scoreAll(t, sim, ms, testing.Verbose()) {
			all[k] = append(all[k], v...)
		}
	}
	t.Logf("| method | cross-correlation | correlation | volume error | no burst missed or invented | volume within 10%% |")
	t.Logf("| --- | --- | --- | --- | --- | --- |")
	for _, m := range ms {
		s := summarize(all[m.name])
		t.Logf("| %s | %.3f | %.3f | %.1f%% | %d of %d | %d of %d |", m.name, s.xcorr, s.corr, 100*s.vol, s.clean, s.n, s.within, s.n)
	}
	d := summarize(all[ms[0].name])
	if d.xcorr < 0.90 || d.corr < 0.85 || d.vol > 0.10 || 6*d.clean < 5*d.n {
		t.Errorf("IOSI default: cross-correlation %.3f (want >= 0.90), correlation %.3f (>= 0.85), volume error %.1f%% (<= 10%%), clean %d of %d (>= 5/6)",
			d.xcorr, d.corr, 100*d.vol, d.clean, d.n)
	}
	for _, m := range ms[1:3] { // the paper's method and DTW
		if o := summarize(all[m.name]); o.corr >= d.corr || o.vol <= d.vol {
			t.Errorf("%s: correlation %.3f and volume error %.1f%% not worse than the default's %.3f and %.1f%%", m.name, o.corr, 100*o.vol, d.corr, 100*d.vol)
		}
	}
}

// BenchmarkNoise is how the methods degrade as the noise (background,
// interactive transfers and foreign jobs) grows: seed 1 of the iosi
// scenario at noise 0.5 to 8, medians over the seven targets.
func BenchmarkNoise(b *testing.B) {
	ms := methods()
	for range b.N {
		b.Logf("| noise | %s |", joinNames(ms))
		for _, noise := range []float64{0.5, 1, 2, 4, 8} {
			sim := simulate(b, "iosi", 1, noise)
			sc := scoreAll(b, sim, ms, false)
			row := fmt.Sprintf("| %g |", noise)
			for _, m := range ms {
				s := summarize(sc[m.name])
				row += fmt.Sprintf(" %.3f %.3f %.1f%% %d/%d |", s.xcorr, s.corr, 100*s.vol, s.clean, s.n)
			}
			b.Log(row)
		}
	}
}

func joinNames(ms []method) string {
	var n []string
	for _, m := range ms {
		n = append(n, m.name)
	}
	return fmt.Sprint(slices.Concat(n))
}

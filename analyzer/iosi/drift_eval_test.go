package iosi

import (
	"fmt"
	"os"
	"testing"

	"iopred/analyzer/centersim"
)

// simulateDrift runs a scenario of the second family (centersim's
// FamilyDrift) for one seed, with the OST count capped at maxOSTs (0:
// as drawn) to keep tests quick: IOSI reads the aggregate, which the cap
// changes only through where bursts share OSTs.
func simulateDrift(tb testing.TB, seed uint64, maxOSTs int) *simulated {
	tb.Helper()
	s, err := centersim.Preset("drift")
	if err != nil {
		tb.Fatal(err)
	}
	s.DrawFamily(seed)
	if maxOSTs > 0 && s.OSTs > maxOSTs {
		s.OSTs = maxOSTs
	}
	l := &Log{}
	res, err := centersim.Run(s, centersim.Options{Seed: seed, Sinks: []centersim.Sink{l}})
	if err != nil {
		tb.Fatal(err)
	}
	sim := &simulated{log: l, truth: res.Truth, records: map[string]centersim.JobRecord{}}
	for _, j := range res.Jobs {
		sim.records[j.ID] = j
		if j.Started() && !j.End.IsZero() {
			sim.jobs = append(sim.jobs, j.Job)
		}
	}
	return sim
}

// driftTable scores every method on each seed of the drift family and
// logs one row per seed and method, then the medians over all seeds.
func driftTable(tb testing.TB, seeds []uint64, maxOSTs int, verbose bool) map[string][]Score {
	ms := methods()
	all := map[string][]Score{}
	logf := tb.Logf
	if _, ok := tb.(*testing.B); ok {
		// A benchmark's log is cut to a few lines: the table goes to
		// the standard output whole.
		logf = func(f string, a ...any) { fmt.Printf(f+"\n", a...) }
	}
	logf("| seed | OSTs | step | method | cross-correlation | correlation | volume error | exact burst count | volume within 10%% |")
	logf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, seed := range seeds {
		sim := simulateDrift(tb, seed, maxOSTs)
		sc := scoreAll(tb, sim, ms, verbose)
		for _, m := range ms {
			s := summarize(sc[m.name])
			logf("| %d | %d | %d s | %s | %.3f | %.3f | %.1f%% | %d of %d | %d of %d |", seed, sim.truth.OSTs, sim.truth.StepS,
				m.name, s.xcorr, s.corr, 100*s.vol, s.clean, s.n, s.within, s.n)
			all[m.name] = append(all[m.name], sc[m.name]...)
		}
	}
	for _, m := range ms {
		s := summarize(all[m.name])
		logf("| all | | | %s | %.3f | %.3f | %.1f%% | %d of %d | %d of %d |", m.name, s.xcorr, s.corr, 100*s.vol, s.clean, s.n, s.within, s.n)
	}
	return all
}

// seedsFromEnv reads IOPRED_DRIFT_SEEDS (centersim.ParseSeeds) or
// returns def; a list it cannot read fails the test.
func seedsFromEnv(tb testing.TB, def []uint64) []uint64 {
	v := os.Getenv("IOPRED_DRIFT_SEEDS")
	if v == "" {
		return def
	}
	seeds, err := centersim.ParseSeeds(v)
	if err != nil {
		tb.Fatalf("IOPRED_DRIFT_SEEDS: %v", err)
	}
	return seeds
}

// heldOutSeeds are the drift family's seeds not used for tuning (IOSI
// was tuned on seeds 1 to 6, AID on 1 to 6); they were looked at while
// tuning the earlier selector, so freshSeeds, never looked at before the
// figures in README.md were taken, are reported beside them
// (IOPRED_DRIFT_SEEDS=201,...,206).
var heldOutSeeds = []uint64{101, 102, 103, 104, 105, 106}

// TestEvaluateDrift is IOSI on the second scenario family's held-out
// seeds (3 days each, at most 128 OSTs to keep it quick), where runs are
// stretched unevenly and bursts drift: the default (which aligns burst
// by burst when the runs' lengths spread by more than 5%, and between 3
// and 5% keeps whichever of the two signatures the runs bear out better)
// must do better than the default without alignment and than DTW in
// median cross-correlation and correlation, keep the median volume error
// within 10%, and keep the medians it reached when this test was written
// (cross-correlation 0.821, correlation 0.732, volume error 4.5%) within
// a small margin (0.837, 0.764 and 3.9% since the choice between the
// two signatures looks at which bursts most runs show; 0.873, 0.789 and
// 3.3% since a run covered by a larger burst neither shows nor denies
// one, and the signature with more supported bursts is kept; 0.887,
// 0.815 and 2.3% since bursts the anchor misses are found with other
// runs as the reference, and the aligned signature is kept when the two
// time lines differ by more than 0.75%; 0.887, 0.815 and 1.3%, and 25
// exact of 36 rather than 23, since another job's small burst among an
// hourly checkpointer's few is dropped and the bursts a train's rhythm
// lacks are looked for). The issue's
// goal (0.90, 0.85, 5 of 6 exact) is not met; README.md says where it
// falls short.
func TestEvaluateDrift(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates six centers")
	}
	all := driftTable(t, seedsFromEnv(t, heldOutSeeds), 128, testing.Verbose())
	d := summarize(all[methods()[0].name])
	if d.xcorr < 0.80 || d.corr < 0.71 || d.vol > 0.1 {
		t.Errorf("IOSI default on held-out drift seeds: cross-correlation %.3f (want >= 0.80), correlation %.3f (>= 0.71), volume error %.1f%% (<= 10%%)",
			d.xcorr, d.corr, 100*d.vol)
	}
	for _, name := range []string{"IOSI (no alignment)", "DTW"} {
		if o := summarize(all[name]); o.xcorr >= d.xcorr || o.corr >= d.corr {
			t.Errorf("%s: cross-correlation %.3f, correlation %.3f, not below the default's %.3f, %.3f", name, o.xcorr, o.corr, d.xcorr, d.corr)
		}
	}
}

// BenchmarkDriftTables prints the per-seed table of every method on the
// drift family at full size (the OST count as drawn, 24 to 1,000), on
// the held-out seeds or IOPRED_DRIFT_SEEDS.
func BenchmarkDriftTables(b *testing.B) {
	for range b.N {
		driftTable(b, seedsFromEnv(b, heldOutSeeds), 0, false)
	}
}

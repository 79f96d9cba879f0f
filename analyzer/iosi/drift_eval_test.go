package iosi

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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
	sim := &simulated{log: l, truth: res.Truth}
	for _, j := range res.Jobs {
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
	tb.Logf("| seed | OSTs | step | method | cross-correlation | correlation | volume error | exact burst count | volume within 10%% |")
	tb.Logf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, seed := range seeds {
		sim := simulateDrift(tb, seed, maxOSTs)
		sc := scoreAll(tb, sim, ms, verbose)
		for _, m := range ms {
			s := summarize(sc[m.name])
			tb.Logf("| %d | %d | %d s | %s | %.3f | %.3f | %.1f%% | %d of %d | %d of %d |", seed, sim.truth.OSTs, sim.truth.StepS,
				m.name, s.xcorr, s.corr, 100*s.vol, s.clean, s.n, s.within, s.n)
			all[m.name] = append(all[m.name], sc[m.name]...)
		}
	}
	for _, m := range ms {
		s := summarize(all[m.name])
		tb.Logf("| all | | | %s | %.3f | %.3f | %.1f%% | %d of %d | %d of %d |", m.name, s.xcorr, s.corr, 100*s.vol, s.clean, s.n, s.within, s.n)
	}
	return all
}

// seedsFromEnv reads IOPRED_DRIFT_SEEDS ("7,8,9") or returns def.
func seedsFromEnv(def []uint64) []uint64 {
	v := os.Getenv("IOPRED_DRIFT_SEEDS")
	if v == "" {
		return def
	}
	var out []uint64
	for _, f := range strings.Split(v, ",") {
		if n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func TestDriftTune(t *testing.T) {
	if os.Getenv("IOPRED_DRIFT_SEEDS") == "" {
		t.Skip("set IOPRED_DRIFT_SEEDS")
	}
	driftTable(t, seedsFromEnv(nil), 128, testing.Verbose())
	_ = fmt.Sprint
}

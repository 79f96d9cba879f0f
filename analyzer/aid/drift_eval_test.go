package aid

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"iopred/analyzer/centersim"
)

// simulateDrift runs the second family's AID center (centersim preset
// drift-aid) for one seed over days days, with the OST count and step
// drawn from the seed but the OSTs capped at maxOSTs to bound memory.
func simulateDrift(tb testing.TB, seed uint64, days float64, maxOSTs int) *simLog {
	tb.Helper()
	s, err := centersim.Preset("drift-aid")
	if err != nil {
		tb.Fatal(err)
	}
	s.DrawFamily(seed)
	if days > 0 {
		s.Days = days
	}
	if maxOSTs > 0 && s.OSTs > maxOSTs {
		s.OSTs = maxOSTs
	}
	m, res, jobs, err := centersim.RunInMemory(s, seed)
	if err != nil {
		tb.Fatal(err)
	}
	return &simLog{log: m, res: res, jobs: jobs}
}

// driftCheck learns one drift-aid center and compares with its truth.
func driftCheck(tb testing.TB, seed uint64, days float64, maxOSTs int) (*CheckResult, *centersim.Truth) {
	sl := simulateDrift(tb, seed, days, maxOSTs)
	st, err := Learn(context.Background(), tb.TempDir(), LearnInput{Source: sl.log, SourceName: "sim", Jobs: sl.jobs, Now: time.Unix(0, 0)})
	if err != nil {
		tb.Fatal(err)
	}
	c := Check(st.Knowledge, sl.res.Truth)
	if testing.Verbose() {
		for _, at := range sl.res.Truth.Apps {
			if a := st.Knowledge.Find(at.App.User, at.App.Name, at.App.Nodes); a != nil {
				tb.Logf("%s/%s/%d (%s, %d runs + %d without I/O, footprint %d, burst %.3g B at %.3g B/s every %.0f s): %s: %s", a.User, a.Name, a.Nodes, at.Class, at.Runs, at.RunsWithoutIO,
					at.OSTFootprint, pat(at).BurstBytes, pat(at).Throughput, pat(at).IntervalS, a.Class, a.Reason)
			}
		}
	}
	return c, sl.res.Truth
}

func pat(at centersim.AppTruth) centersim.Pattern {
	if at.Pattern == nil {
		return centersim.Pattern{}
	}
	return *at.Pattern
}

// driftSeeds reads IOPRED_DRIFT_SEEDS (centersim.ParseSeeds) or returns
// def; a list it cannot read fails the test.
func driftSeeds(tb testing.TB, def []uint64) []uint64 {
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

// heldOutSeeds are the drift family's seeds never looked at while
// tuning AID or IOSI (tuning used seeds 1 to 6).
var heldOutSeeds = []uint64{101, 102, 103, 104, 105, 106}

// driftAIDTable learns each seed's drift-aid center and logs one row per
// seed: targets found, false positives, and what the targets missed are.
func driftAIDTable(tb testing.TB, seeds []uint64, days float64, maxOSTs int) (found, targets int, fps []string) {
	logf := tb.Logf
	if _, ok := tb.(*testing.B); ok {
		// A benchmark's log is cut to a few lines: the table goes to
		// the standard output whole.
		logf = func(f string, a ...any) { fmt.Printf(f+"\n", a...) }
	}
	logf("| seed | OSTs | step | found | false positives | missed |")
	logf("| --- | --- | --- | --- | --- | --- |")
	for _, seed := range seeds {
		c, tr := driftCheck(tb, seed, days, maxOSTs)
		var missed []string
		for _, r := range c.Rows {
			if r.TrueClass == centersim.ClassIOIntensive && r.Class != ClassIOIntensive && r.Runs >= 5 {
				missed = append(missed, r.App)
			}
		}
		fp := "none"
		if len(c.FalsePositives) > 0 {
			fp = strings.Join(c.FalsePositives, ", ")
		}
		logf("| %d | %d | %d s | %d of %d | %s | %s |", seed, tr.OSTs, tr.StepS, c.Found, c.Targets, fp, strings.Join(missed, ", "))
		found, targets = found+c.Found, targets+c.Targets
		fps = append(fps, c.FalsePositives...)
	}
	return found, targets, fps
}

// TestEvaluateDriftAID is AID on the second scenario family's seeds 101
// to 106 (10 days, at most 64 OSTs, to keep it quick; IOPRED_DRIFT_SEEDS
// for others): no false positive on any seed (light, irregular,
// piggy-back and probation applications among them), and at least 65%
// of the I/O-intensive applications found (24 of 36 since runs in step
// support an application and the scope check follows the rhythm, 23
// since bursts are also found per OST group, 21 before, 18 before
// hourly checkpointers' runs with two or three bursts could keep the
// rhythm of their periodic runs). The goal, every one found, is
// not met: hourly checkpointers are most of what is missed on held-out
// seeds, and seed 103 loses all six (see README.md).
func TestEvaluateDriftAID(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates six centers")
	}
	found, targets, fps := driftAIDTable(t, driftSeeds(t, heldOutSeeds), 10, 64)
	if len(fps) > 0 {
		t.Errorf("false positives: %v", fps)
	}
	if 100*found < 65*targets {
		t.Errorf("found %d of %d I/O-intensive applications, fewer than 65%%", found, targets)
	}
}

// BenchmarkDriftAID prints the per-seed table of AID on the drift-aid
// centers at their full 20 days (OSTs capped at 128 for memory), on the
// held-out seeds or IOPRED_DRIFT_SEEDS.
func BenchmarkDriftAID(b *testing.B) {
	for range b.N {
		driftAIDTable(b, driftSeeds(b, heldOutSeeds), 0, 128)
	}
}

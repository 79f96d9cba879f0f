package aid

import (
	"fmt"
	"math"
	"testing"
	"time"

	"iopred/analyzer/centersim"
	"iopred/analyzer/serverlog"
)

// TestSummarize proves the replay figures: slowdowns of the finished
// I/O-intensive jobs only, split by the advice they started on; the
// queue's makespan from its first submission to its last end; waits over
// every started job; unfinished jobs of the queue counted.
func TestSummarize(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	h := func(x float64) time.Time { return t0.Add(time.Duration(x * float64(time.Hour))) }
	job := func(sub, start, end float64, io, alone float64, advice string, foreign bool) centersim.JobRecord {
		j := centersim.JobRecord{Job: serverlog.Job{Start: h(start)}, Submit: h(sub), Class: centersim.ClassIOIntensive,
			WithIO: true, IOTimeS: io, IOAloneS: alone, Advice: advice, Foreign: foreign}
		if end > 0 {
			j.End = h(end)
		}
		return j
	}
	res := &centersim.Result{Jobs: []centersim.JobRecord{
		job(1, 1, 3, 200, 100, "run", false),
		job(2, 3, 5, 300, 100, "delay", false),
		job(0, 0.5, 9, 0, 0, "", true),       // foreign: wait counted, not the queue
		job(4, 4, 0, 500, 100, "run", false), // still running: unfinished, no slowdown
	}}
	res.Jobs[2].Class = centersim.ClassNone
	st := Summarize(res, t0)
	if st.IOJobs != 2 || math.Abs(st.MeanSlowdown-2.5) > 1e-9 || st.Worst != 3 || st.RunSlowdown != 2 || st.DelaySlowdown != 3 {
		t.Errorf("slowdowns: %+v", st)
	}
	if st.MakespanS != 4*3600 || st.Unfinished != 1 || st.Jobs != 4 || math.Abs(st.MeanWaitS-(0+3600+1800+0)/4.0) > 1e-9 {
		t.Errorf("makespan %v, unfinished %d, jobs %d, wait %v", st.MakespanS, st.Unfinished, st.Jobs, st.MeanWaitS)
	}
}

// placementScenario is a small center where storage-bound applications
// collide: 32 OSTs, four applications of 8, 8, 8 and 16 OSTs whose
// bursts drive their OSTs at full bandwidth for two minutes of every
// four, 12 runs each over 20 hours; and the knowledge of them.
func placementScenario() (*centersim.Scenario, *Knowledge) {
	s := &centersim.Scenario{Name: "place", Days: 1, StepS: 5, FS: "pl", OSTs: 32, OSTBandwidth: 400e6, ContentionPenalty: 0.15,
		Nodes: 4096, MaxDelayS: 3600,
		Background: centersim.Background{WriteMean: 2e6, ReadMean: 1e6, Sigma: 0.4, Correlation: 0.95}}
	k := &Knowledge{}
	for i, kappa := range []int{8, 8, 8, 16} {
		name := fmt.Sprintf("app%d", i)
		rate := float64(kappa) * s.OSTBandwidth
		s.Apps = append(s.Apps, centersim.AppSpec{User: "u", Name: name, Nodes: 64, Class: centersim.ClassIOIntensive,
			Runs: 12, ToDay: 20.0 / 24, Iterations: [2]int{8, 10}, Cycle: []centersim.Phase{{ComputeS: 120, WriteBytes: rate * 120}},
			TailS: 60, Layout: centersim.Layout{Model: "n-to-1", Stripe: kappa}, Bandwidth: 1.2 * rate, Jitter: 0.03})
		k.Apps = append(k.Apps, AppInfo{User: "u", Name: name, Nodes: 64, Class: ClassIOIntensive, RunS: 2400,
			Pattern: Pattern{OSTFootprint: float64(kappa), Throughput: rate, IntervalS: 240, BurstS: 120, BurstBytes: rate * 120}})
	}
	return s, k
}

// TestReplayPlacement proves what the placement hint is for: with advice
// followed, jobs that place their files on the hinted OSTs suffer less
// than the same jobs, under the same advice, on the allocator's random
// OSTs, on each of three seeds.
func TestReplayPlacement(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		var got [2]ReplayStats
		for i, place := range []bool{false, true} {
			s, k := placementScenario()
			res, err := centersim.Run(s, centersim.Options{Seed: seed, Advisor: &SimAdvisor{A: NewAdvisor(k, nil)}, FollowAdvice: true, Place: place})
			if err != nil {
				t.Fatal(err)
			}
			got[i] = Summarize(res, s.Start)
		}
		t.Logf("seed %d: mean slowdown %.3f on random OSTs, %.3f placed; wait %.1f and %.1f min", seed,
			got[0].MeanSlowdown, got[1].MeanSlowdown, got[0].MeanWaitS/60, got[1].MeanWaitS/60)
		if got[0].IOJobs != 48 || got[1].IOJobs != 48 {
			t.Fatalf("seed %d: %d and %d I/O-intensive jobs finished, want 48", seed, got[0].IOJobs, got[1].IOJobs)
		}
		if !(got[1].MeanSlowdown < 1+0.8*(got[0].MeanSlowdown-1)) {
			t.Errorf("seed %d: mean slowdown %.3f placed, %.3f on random OSTs: want a fifth of the excess off", seed, got[1].MeanSlowdown, got[0].MeanSlowdown)
		}
	}
}

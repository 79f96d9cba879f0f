package aid

import (
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

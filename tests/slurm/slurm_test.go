// Package slurm_test runs AID's gate next to a real Slurm (munged,
// slurmctld, slurmd, slurmdbd on a private MariaDB) with the load read
// from a real Prometheus that scrapes an exporter the test drives.
package slurm_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iopred/analyzer/aid"
)

type jobInfo struct {
	id, name      string
	submit, start time.Time
}

// TestGateHoldsIOIntensiveJobsWhileBusy submits jobs of a known
// I/O-intensive application (root/ckpt/1: dd writing and syncing 64 MiB)
// and of an unknown one (root/compute/1: sha256sum of 64 MiB of zeros)
// to a real Slurm while the OSTs' load, read by the gate from a real
// Prometheus, goes quiet → busy → quiet. It proves that: the ckpt job
// submitted while quiet runs without a hold; the one submitted while
// busy is held until the load falls and then released; the compute jobs
// are never touched and start in the scheduler's first passes; every
// decision is in the gate's log with its score; aid learn reads the real
// accounting through sacct (the jobs' ids and start times). Then it
// proves the gate fails open, each decision logged once: with Prometheus
// stalled (accepting, never answering) two jobs run once the gate's
// --timeout passes (once per pass, not per job); with Prometheus refusing
// connections they run at once; with no gate at all a job starts at the
// begin time job_submit.lua gave it, not before and not much later.
func TestGateHoldsIOIntensiveJobsWhileBusy(t *testing.T) {
	iopred := iopredCommand(t)
	for _, p := range []string{"sbatch", "squeue", "scontrol", "sacct", "sacctmgr", "sinfo"} {
		tool(t, p)
	}
	c := startCluster(t)
	kb := filepath.Join(c.dir, "kb")
	knowledge(t, kb)
	exp, promURL := startLoad(t, c.dir)

	tl := newTimeline()
	tl.now("load quiet (1 MB/s per OST)")
	time.Sleep(25 * time.Second) // Prometheus gathers the quiet table

	gateLog := filepath.Join(c.dir, "gate.log")
	gate := startGate(t, c, kb, gateLog, "--prometheus", promURL, "--prometheus-lookback", "1h",
		"--window", "10s", "--windows", "2", "--interval", "500ms", "--timeout", "5s", "--max-hold", "3m")
	tl.now("gate started (--interval 500ms, --timeout 5s)")
	time.Sleep(2 * time.Second)

	var all []*jobInfo
	submit := func(name string) *jobInfo {
		j := c.submit(t, name, c.script(t, name))
		tl.at(j.submit, "submitted %s %s (root/%s/1)", name, j.id, name)
		all = append(all, j)
		return j
	}
	started := func(js ...*jobInfo) {
		waitStarted(t, c, js...)
		for _, j := range js {
			tl.at(j.start, "job %s (%s) started, %.1f s after submission", j.id, j.name, j.start.Sub(j.submit).Seconds())
		}
	}
	quietCkpt := submit("ckpt")
	quietCompute := submit("compute")
	started(quietCkpt, quietCompute)

	exp.set(390e6)
	tl.now("load busy (390 MB/s per OST)")
	time.Sleep(25 * time.Second)
	busyCkpt := submit("ckpt")
	busyCompute := submit("compute")
	started(busyCompute)
	time.Sleep(20 * time.Second)
	if s := jobState(t, c, busyCkpt.id); s != "PENDING" {
		t.Errorf("ckpt job %s submitted while busy is %s 20 s after its submission, want PENDING (held)", busyCkpt.id, s)
	}
	exp.set(1e6)
	tl.now("load quiet again")
	started(busyCkpt)
	time.Sleep(time.Second)

	decisions := readDecisions(t, gateLog)
	for _, d := range decisions {
		tl.at(d.decided(), "%s", d)
	}
	actions := map[string][]string{}
	for _, d := range decisions {
		actions[d.Job] = append(actions[d.Job], d.Action)
		if d.Action != "untouched" && (d.Reason == "" || d.Threshold == 0 || d.Advice == "") {
			t.Errorf("gate log: a decision without its score, threshold or reason: %+v", d)
		}
	}
	if got := actions[quietCkpt.id]; len(got) != 1 || got[0] != "run" {
		t.Errorf("ckpt job %s submitted while quiet: gate actions %v, want run only", quietCkpt.id, got)
	}
	// A compute job that starts before the gate's next look is not even
	// seen; one that is seen is left untouched.
	for _, j := range []*jobInfo{quietCompute, busyCompute} {
		if got := actions[j.id]; len(got) > 1 || len(got) == 1 && got[0] != "untouched" {
			t.Errorf("compute job %s: gate actions %v, want none but untouched", j.id, got)
		}
	}
	if got := actions[busyCkpt.id]; len(got) < 2 || got[0] != "hold" || got[len(got)-1] != "release" || contains(got, "run") {
		t.Errorf("ckpt job %s submitted while busy: gate actions %v, want hold ... release", busyCkpt.id, got)
	}
	if held := busyCkpt.start.Sub(busyCkpt.submit); held < 20*time.Second {
		t.Errorf("ckpt job %s submitted while busy started %v after submission: not held", busyCkpt.id, held)
	}
	for _, j := range []*jobInfo{quietCkpt, quietCompute, busyCompute} {
		if d := j.start.Sub(j.submit); d > 35*time.Second {
			t.Errorf("job %s (%s) started %v after submission: more than two scheduler passes", j.id, j.name, d)
		}
	}
	gate.stop()
	tl.now("gate stopped")

	// aid learn straight from the accounting: sacct against slurmdbd
	// gives the jobs, with the ids and start times seen here.
	waitDone(t, c, busyCkpt, quietCkpt, quietCompute, busyCompute)
	cmd := exec.Command(iopred, "serverlog", "info", "--jobs", "sacct:")
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "jobs   4 by 1 users, 2 applications") {
		t.Errorf("serverlog info --jobs sacct: %v\n%s", err, out)
	}
	kb2 := filepath.Join(c.dir, "kb2")
	learn := exec.Command(iopred, "aid", "learn", "--prometheus", promURL, "--prometheus-lookback", "1h", "--jobs", "sacct:", "--kb", kb2)
	learn.Env = append(os.Environ(), c.env...)
	lout, err := learn.CombinedOutput()
	if err != nil || !strings.Contains(string(lout), "4 new jobs") {
		t.Errorf("aid learn from the accounting: %v\n%s", err, lout)
	}
	t.Logf("aid learn --jobs sacct: --prometheus %s:\n%s", promURL, lout)
	checkLearnt(t, kb2, quietCkpt, quietCompute, busyCkpt, busyCompute)

	// Fail open. The load is busy, so that a job that runs was let run by
	// the failure, not by the advice.
	exp.set(390e6)
	tl.now("load busy (390 MB/s per OST)")
	time.Sleep(15 * time.Second)
	failOpen := func(name, url string) {
		log := filepath.Join(c.dir, "gate-"+name+".log")
		g := startGate(t, c, kb, log, "--prometheus", url, "--prometheus-lookback", "1h",
			"--window", "10s", "--windows", "2", "--interval", "500ms", "--timeout", "2s", "--max-hold", "3m")
		tl.now("gate started with Prometheus %s (--timeout 2s)", name)
		time.Sleep(2 * time.Second)
		js := []*jobInfo{submit("ckpt"), submit("ckpt")}
		started(js...)
		time.Sleep(time.Second)
		g.stop()
		mine := map[string][]decision{}
		for _, d := range readDecisions(t, log) {
			tl.at(d.decided(), "%s", d)
			mine[d.Job] = append(mine[d.Job], d)
		}
		for _, j := range js {
			ds := mine[j.id]
			if len(ds) != 1 || ds[0].Action != "run" || ds[0].Error == "" || ds[0].Reason != "fail open: no advice" {
				t.Errorf("Prometheus %s: gate decisions about job %s: %+v, want one run that says fail open", name, j.id, ds)
				continue
			}
			// Bounded wait: well before the plugin's begin time (3 minutes).
			if d := j.start.Sub(j.submit); d > 60*time.Second {
				t.Errorf("Prometheus %s: job %s started %v after submission", name, j.id, d)
			}
		}
		if name != "stalled" || t.Failed() {
			return
		}
		// The first job the gate asked about waited the timeout; a
		// second one in the same pass did not wait again.
		a, b := mine[js[0].id][0], mine[js[1].id][0]
		if b.AdviceMS > a.AdviceMS {
			a, b = b, a
		}
		if a.AdviceMS < 2000 || a.AdviceMS > 4000 || !strings.Contains(a.Error, "no advice within 2s") {
			t.Errorf("Prometheus stalled: the gate decided about job %s after %.0f ms (%s), want the 2 s timeout", a.Job, a.AdviceMS, a.Error)
		}
		// Decisions of one pass are milliseconds apart; of two passes,
		// at least the timeout.
		samePass := b.Time.Sub(a.Time).Abs() < time.Second
		if samePass && (b.AdviceMS > 100 || !strings.Contains(b.Error, "earlier in this pass")) {
			t.Errorf("Prometheus stalled: job %s, in the same pass as job %s, waited %.0f ms again (%s)", b.Job, a.Job, b.AdviceMS, b.Error)
		}
	}
	stalled := stalledServer(t)
	failOpen("stalled", stalled)
	failOpen("refusing", fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))

	// No gate at all: the job waits for its begin time, then Slurm
	// starts it.
	c.setMaxHold(t, 20)
	tl.now("no gate; job_submit.lua's MAX_HOLD set to 20 s")
	time.Sleep(time.Second)
	j := submit("ckpt")
	time.Sleep(5 * time.Second)
	if s, r := jobState(t, c, j.id), jobReason(t, c, j.id); s != "PENDING" || r != "BeginTime" {
		t.Errorf("no gate: job %s is %s (%s) 5 s after submission, want PENDING (BeginTime)", j.id, s, r)
	}
	started(j)
	if d := j.start.Sub(j.submit); d < 18*time.Second || d > 65*time.Second {
		t.Errorf("no gate: job %s started %v after submission, want at its begin time 20 s on (the scheduler's passes allowed)", j.id, d)
	}
	t.Logf("timeline:\n%s", tl)
}

// checkLearnt checks that the knowledge base learnt from sacct holds the
// jobs, with the ids and start times the test saw (sacct gives seconds).
func checkLearnt(t *testing.T, dir string, js ...*jobInfo) {
	t.Helper()
	kb, err := aid.OpenKB(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := kb.State()
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]aid.Run{}
	for _, r := range st.Jobs {
		runs[r.ID] = r
	}
	for _, j := range js {
		r, ok := runs[j.id]
		if !ok {
			t.Errorf("aid learn from sacct: job %s is not in the knowledge base's runs (%d runs)", j.id, len(st.Jobs))
			continue
		}
		start := time.Unix(0, r.StartNS)
		if r.User != "root" || r.Name != j.name || r.Nodes != 1 || start.Before(j.submit.Add(-2*time.Second)) || start.After(j.start.Add(2*time.Second)) {
			t.Errorf("aid learn from sacct: job %s is %+v (start %v), want root/%s/1 started between %v and %v",
				j.id, r, start, j.name, j.submit, j.start)
		}
	}
}

package slurm_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iopred/analyzer/aid"
	"iopred/analyzer/aid/slurmgate"
)

// BenchmarkGateLatency measures, on the real cluster and in one run, what
// the gate adds to a job's way from sbatch to its start:
//
//   - submit: sbatch's round trip (slurmctld runs job_submit.lua inside
//     it) without the plugin, and with it for a job of an application it
//     does not list and of one it lists (held jobs: nothing runs). The
//     three are interleaved in every op (3 submissions each, the plugin
//     switched off and on by scontrol reconfigure, one untimed warm-up
//     submission after each), so that the load of a shared machine
//     falls on all three alike; the medians are reported as *-ms, and
//     slurmctld's own time for the submission (sdiag's count and total
//     time of REQUEST_SUBMIT_BATCH_JOB around each) as *-ctld-ms.
//   - start/*: from sbatch to the job's start, for a listed application
//     without the plugin and gate (the scheduler alone) and with both at a
//     quiet load (sbatch, the gate's next look, its advice from
//     Prometheus, scontrol update, the scheduler's pass), with the
//     gate's --interval 500ms (as in the test) and its default 10s, and
//     for an unlisted application with both. Jobs come at random times
//     (an untimed pause of up to one gate interval before each), as
//     they do at a center, not just after the gate's last look.
//
// The gate's own part is reported as decision-s (sbatch's return to the
// gate's decision) and advice-ms, and every start's median as
// median-start-s. Run it with a fixed count, as each start takes seconds,
// and -v for the summary with the ratios:
//
//	go test -run '^$' -bench GateLatency -benchtime 10x -v ./tests/slurm
func BenchmarkGateLatency(b *testing.B) {
	iopredCommand(b)
	c := startCluster(b)
	kb := filepath.Join(c.dir, "kb")
	knowledge(b, kb)
	k, err := aid.OpenKB(kb)
	if err != nil {
		b.Fatal(err)
	}
	know, err := k.Knowledge()
	if err != nil {
		b.Fatal(err)
	}
	// The list job_submit.lua reads, as the gate writes it.
	if err := slurmgate.WriteApps(filepath.Join(kb, "gate-apps.txt"), know); err != nil {
		b.Fatal(err)
	}
	_, promURL := startLoad(b, c.dir)
	time.Sleep(25 * time.Second) // Prometheus gathers the quiet table
	script := c.script(b, "true")
	rng := rand.New(rand.NewPCG(1, 2))

	type figure struct{ perOp, median, decision, advice time.Duration }
	results := map[string]figure{}

	b.Run("submit", func(b *testing.B) {
		kinds := []string{"no-plugin", "plugin-unlisted", "plugin-listed"}
		took := map[string][]time.Duration{}
		inCtld := map[string][]time.Duration{} // slurmctld's own time, from sdiag
		wantComment := map[string]string{}
		one := func(kind, app string) {
			b.StopTimer()
			n0, us0 := submitRPCs(b, c)
			b.StartTimer()
			t0 := time.Now()
			j := c.submit(b, app, script, "--hold")
			took[kind] = append(took[kind], time.Since(t0))
			b.StopTimer()
			n1, us1 := submitRPCs(b, c)
			if n1 != n0+1 {
				b.Fatalf("sdiag counts %d batch submissions for one sbatch", n1-n0)
			}
			inCtld[kind] = append(inCtld[kind], time.Duration(us1-us0)*time.Microsecond)
			b.StartTimer()
			wantComment[j.id] = map[bool]string{true: slurmgate.GateComment}[kind == "plugin-listed"]
		}
		// After a reconfigure, the first submission pays for loading
		// the plugin (or the configuration): one untimed warm-up each.
		warmUp := func(kind, app string) {
			b.StopTimer()
			one(kind, app)
			took[kind] = took[kind][:len(took[kind])-1]
			inCtld[kind] = inCtld[kind][:len(inCtld[kind])-1]
			b.StartTimer()
		}
		for i := range b.N {
			b.StopTimer()
			c.setJobSubmitPlugins(b, false)
			b.StartTimer()
			warmUp("no-plugin", "ckpt")
			for range 3 {
				one("no-plugin", "ckpt")
			}
			b.StopTimer()
			c.setJobSubmitPlugins(b, true)
			b.StartTimer()
			warmUp("plugin-listed", "ckpt")
			for range 3 {
				if i%2 == 0 {
					one("plugin-unlisted", "compute")
					one("plugin-listed", "ckpt")
				} else {
					one("plugin-listed", "ckpt")
					one("plugin-unlisted", "compute")
				}
			}
		}
		b.StopTimer()
		// Each job went through the plugin, or not, as its kind says.
		var ids []string
		for id := range wantComment {
			ids = append(ids, id)
		}
		out, err := c.command(b, tool(b, "squeue"), "--noheader", "--jobs="+strings.Join(ids, ","), "--format=%i|%k").Output()
		if err != nil {
			b.Fatal(err)
		}
		seen := 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			id, comment, _ := strings.Cut(line, "|")
			if comment == "(null)" {
				comment = ""
			}
			if want, ok := wantComment[id]; ok {
				seen++
				if comment != want {
					b.Fatalf("job %s: comment %q, want %q: the plugin was not switched as it should be", id, comment, want)
				}
			}
		}
		if seen != len(ids) {
			b.Fatalf("squeue lists %d of the %d held jobs", seen, len(ids))
		}
		c.run(b, tool(b, "scancel"), ids...)
		for _, kind := range kinds {
			m, ctld := median(took[kind]), median(inCtld[kind])
			b.ReportMetric(float64(m.Microseconds())/1e3, kind+"-ms")
			b.ReportMetric(float64(ctld.Microseconds())/1e3, kind+"-ctld-ms")
			results["submit/"+kind] = figure{median: m}
			results["ctld/"+kind] = figure{median: ctld}
		}
	})

	// From sbatch to the start, one job at a time; with a gate, its log
	// gives when it decided.
	startBench := func(name, app, gateLog string, arrival time.Duration) {
		b.Run(name, func(b *testing.B) {
			var js []*jobInfo
			var starts []time.Duration
			for range b.N {
				b.StopTimer()
				time.Sleep(time.Duration(rng.Int64N(int64(arrival))))
				b.StartTimer()
				j := c.submit(b, app, script)
				waitStartedFine(b, c, j)
				js = append(js, j)
				starts = append(starts, j.start.Sub(j.submit))
			}
			b.StopTimer()
			f := figure{perOp: b.Elapsed() / time.Duration(b.N), median: median(starts)}
			b.ReportMetric(f.median.Seconds(), "median-start-s")
			if gateLog != "" {
				decided := map[string]decision{}
				for _, d := range readDecisions(b, gateLog) {
					if _, ok := decided[d.Job]; !ok {
						decided[d.Job] = d
					}
				}
				var n int
				for _, j := range js {
					d, ok := decided[j.id]
					if !ok {
						continue // started before the gate's next look (unlisted)
					}
					if d.Action != "run" && d.Action != "untouched" {
						b.Fatalf("job %s: the gate's first decision is %s at a quiet load", j.id, d.Action)
					}
					f.decision += d.decided().Sub(j.submit)
					f.advice += time.Duration(d.AdviceMS * float64(time.Millisecond))
					n++
				}
				if n > 0 {
					f.decision /= time.Duration(n)
					f.advice /= time.Duration(n)
					b.ReportMetric(f.decision.Seconds(), "decision-s")
					b.ReportMetric(float64(f.advice.Microseconds())/1e3, "advice-ms")
				}
			}
			results[name] = f
		})
	}
	gate := func(log string, args ...string) *gateProc {
		g := startGate(b, c, kb, log, append([]string{"--prometheus", promURL, "--prometheus-lookback", "1h",
			"--window", "10s", "--windows", "2", "--timeout", "5s", "--max-hold", "3m"}, args...)...)
		time.Sleep(2 * time.Second)
		return g
	}

	c.setJobSubmitPlugins(b, false)
	startBench("start/no-plugin-no-gate/listed", "ckpt", "", 500*time.Millisecond)
	c.setJobSubmitPlugins(b, true)
	log := filepath.Join(c.dir, "gate.log")
	g := gate(log, "--interval", "500ms")
	startBench("start/plugin-gate/listed", "ckpt", log, 500*time.Millisecond)
	startBench("start/plugin-gate/unlisted", "compute", log, 500*time.Millisecond)
	g.stop()
	log10 := filepath.Join(c.dir, "gate10.log")
	g = gate(log10, "--interval", "10s")
	startBench("start/plugin-gate-interval10s/listed", "ckpt", log10, 10*time.Second)
	g.stop()

	ratio := func(a, base string) string {
		if results[base].median == 0 {
			return "?"
		}
		return fmt.Sprintf("%.2fx", float64(results[a].median)/float64(results[base].median))
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1e3) }
	sec := func(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
	var s strings.Builder
	fmt.Fprintf(&s, "sbatch round trip (medians, interleaved): no plugin %s; plugin, unlisted app %s (%s); plugin, listed app %s (%s)\n",
		ms(results["submit/no-plugin"].median),
		ms(results["submit/plugin-unlisted"].median), ratio("submit/plugin-unlisted", "submit/no-plugin"),
		ms(results["submit/plugin-listed"].median), ratio("submit/plugin-listed", "submit/no-plugin"))
	fmt.Fprintf(&s, "  of which inside slurmctld (sdiag's REQUEST_SUBMIT_BATCH_JOB time, medians): no plugin %s; plugin, unlisted app %s (%s); plugin, listed app %s (%s)\n",
		ms(results["ctld/no-plugin"].median),
		ms(results["ctld/plugin-unlisted"].median), ratio("ctld/plugin-unlisted", "ctld/no-plugin"),
		ms(results["ctld/plugin-listed"].median), ratio("ctld/plugin-listed", "ctld/no-plugin"))
	base := "start/no-plugin-no-gate/listed"
	fmt.Fprintf(&s, "sbatch to start (medians): listed app, scheduler alone %s\n", sec(results[base].median))
	for _, n := range []string{"start/plugin-gate/unlisted", "start/plugin-gate/listed", "start/plugin-gate-interval10s/listed"} {
		r := results[n]
		fmt.Fprintf(&s, "  %s: %s (%s)", strings.TrimPrefix(n, "start/"), sec(r.median), ratio(n, base))
		if r.advice > 0 {
			fmt.Fprintf(&s, "; sbatch to the gate's decision %s on average (advice %s)", sec(r.decision), ms(r.advice))
		}
		s.WriteString("\n")
	}
	b.Logf("gate latency, side by side:\n%s", s.String())
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// waitStartedFine waits for one job to start, looking every 50 ms.
func waitStartedFine(t testing.TB, c *cluster, j *jobInfo) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for jobState(t, c, j.id) == "PENDING" {
		if time.Now().After(deadline) {
			t.Fatalf("job %s (%s) still pending after 3 minutes", j.id, j.name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	j.start = time.Now()
}

// setJobSubmitPlugins switches job_submit.lua on or off in slurm.conf
// and has slurmctld read it again.
func (c *cluster) setJobSubmitPlugins(t testing.TB, on bool) {
	t.Helper()
	path := filepath.Join(c.dir, "slurm.conf")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "\n#JobSubmitPlugins=lua\n", "\nJobSubmitPlugins=lua\n", 1)
	if !on {
		s = strings.Replace(s, "\nJobSubmitPlugins=lua\n", "\n#JobSubmitPlugins=lua\n", 1)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	c.run(t, tool(t, "scontrol"), "reconfigure")
}

var sdiagSubmit = regexp.MustCompile(`REQUEST_SUBMIT_BATCH_JOB\s+\(\s*\d+\)\s+count:(\d+)\s+ave_time:\d+\s+total_time:(\d+)`)

// submitRPCs returns how many batch submissions slurmctld handled and
// their total time in microseconds, from sdiag.
func submitRPCs(t testing.TB, c *cluster) (count, us int64) {
	t.Helper()
	out, err := c.command(t, tool(t, "sdiag")).Output()
	if err != nil {
		t.Fatalf("sdiag: %v", err)
	}
	m := sdiagSubmit.FindSubmatch(out)
	if m == nil {
		return 0, 0 // none yet
	}
	count, _ = strconv.ParseInt(string(m[1]), 10, 64)
	us, _ = strconv.ParseInt(string(m[2]), 10, 64)
	return count, us
}

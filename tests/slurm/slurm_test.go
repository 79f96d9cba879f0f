// Package slurm_test runs AID's gate next to a real Slurm (slurmctld,
// slurmd, slurmdbd on a private MariaDB) with the load read from a real
// Prometheus that scrapes an exporter the test drives.
package slurm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"iopred/analyzer/aid"
	"iopred/analyzer/centersim"
	"iopred/analyzer/serverlog"
	"iopred/tests/promtest"
	"iopred/tests/testenv"
)

// tool finds a program, in the sbin directories too.
func tool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	return testenv.Tool(t, name)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func freePort(t *testing.T) int { return promtest.FreePort(t) }

// daemon runs a program in the foreground as a child, stopped at the
// end of the test.
func daemon(t *testing.T, env []string, logf string, prog string, args ...string) {
	t.Helper()
	f, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); f.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

func waitPort(t *testing.T, port int, what, logf string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	b, _ := os.ReadFile(logf)
	t.Fatalf("%s not listening on %d after a minute:\n%s", what, port, b)
}

// cluster is a one-node Slurm with accounting.
type cluster struct {
	env  []string // SLURM_CONF=...
	dir  string
	node string
}

func (c *cluster) run(t *testing.T, prog string, args ...string) string {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(prog), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startCluster starts MariaDB, slurmdbd, slurmctld and slurmd on
// 127.0.0.1 with free ports and a private state. Slurm authenticates
// with auth/none: munge's credentials, restricted to the slurm user, were
// refused by this machine's munged ("Unauthorized credential") whatever
// SlurmUser was, and the test cluster accepts only local connections.
// Jobs go through the shipped job_submit.lua, which makes the jobs of
// I/O-intensive applications wait for the gate (a begin time 3 minutes
// away, which the gate brings forward).
func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "iopred-slurm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{"state", "spool", "log", "jobs"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.Chmod(dir, 0o755)
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	c := &cluster{dir: dir, node: host, env: []string{"SLURM_CONF=" + filepath.Join(dir, "slurm.conf")}}

	// MariaDB for slurmdbd.
	install, mariadbd := tool(t, "mariadb-install-db"), tool(t, "mariadbd")
	var asRoot []string
	if os.Geteuid() == 0 {
		asRoot = []string{"--user=root"}
	}
	if out, err := exec.Command(install, append([]string{"--no-defaults", "--datadir=" + filepath.Join(dir, "db"),
		"--auth-root-authentication-method=normal", "--skip-test-db"}, asRoot...)...).CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	dbPort := freePort(t)
	daemon(t, nil, filepath.Join(dir, "log", "mariadb.log"), mariadbd, append([]string{"--no-defaults", "--datadir=" + filepath.Join(dir, "db"),
		"--socket=" + filepath.Join(dir, "mdb.sock"), "--bind-address=127.0.0.1", fmt.Sprintf("--port=%d", dbPort),
		"--innodb-buffer-pool-size=32M", "--skip-log-bin"}, asRoot...)...)
	waitPort(t, dbPort, "mariadbd", filepath.Join(dir, "log", "mariadb.log"))

	dbdPort, ctldPort, slurmdPort := freePort(t), freePort(t), freePort(t)
	user := "root"
	if os.Geteuid() != 0 {
		t.Fatalf("the Slurm test runs slurmd, which needs root (.ci/run runs as root)")
	}
	dbd := fmt.Sprintf(`AuthType=auth/none
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=%d
SlurmUser=%s
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=%d
StorageUser=root
StorageLoc=slurm_acct_db
PidFile=%s/log/slurmdbd.pid
LogFile=%s/log/slurmdbd.log
`, dbdPort, user, dbPort, dir, dir)
	conf := fmt.Sprintf(`ClusterName=iopredtest
SlurmctldHost=%s(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=%s
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=%s/state
SlurmdSpoolDir=%s/spool
SlurmctldPidFile=%s/log/slurmctld.pid
SlurmdPidFile=%s/log/slurmd.pid
SlurmctldLogFile=%s/log/slurmctld.log
SlurmdLogFile=%s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=%d
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=defer,sched_interval=15,bf_interval=15
JobSubmitPlugins=lua
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=%s NodeAddr=127.0.0.1 CPUs=8 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=%s Default=YES MaxTime=INFINITE State=UP
`, host, ctldPort, slurmdPort, user, dir, dir, dir, dir, dir, dir, dbdPort, host, host)
	if err := os.WriteFile(filepath.Join(dir, "slurmdbd.conf"), []byte(dbd), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The shipped job_submit.lua, pointed at this test's knowledge base
	// and with a hold limit of 3 minutes.
	lua, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "analyzer", "aid", "slurmgate", "job_submit.lua"))
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Replace(string(lua), `"/var/lib/iopred/kb/gate-apps.txt"`, `"`+filepath.Join(dir, "kb", "gate-apps.txt")+`"`, 1)
	script = strings.Replace(script, "MAX_HOLD = 3600", "MAX_HOLD = 180", 1)
	if script == string(lua) {
		t.Fatal("job_submit.lua: its settings were not found")
	}
	if err := os.WriteFile(filepath.Join(dir, "job_submit.lua"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	daemon(t, c.env, filepath.Join(dir, "log", "slurmdbd.out"), tool(t, "slurmdbd"), "-D")
	waitPort(t, dbdPort, "slurmdbd", filepath.Join(dir, "log", "slurmdbd.log"))
	sacctmgr := tool(t, "sacctmgr")
	c.run(t, sacctmgr, "-i", "add", "cluster", "iopredtest")
	c.run(t, sacctmgr, "-i", "add", "account", "iopred")
	c.run(t, sacctmgr, "-i", "add", "user", "root", "account=iopred")
	daemon(t, c.env, filepath.Join(dir, "log", "slurmctld.out"), tool(t, "slurmctld"), "-D")
	waitPort(t, ctldPort, "slurmctld", filepath.Join(dir, "log", "slurmctld.log"))
	daemon(t, c.env, filepath.Join(dir, "log", "slurmd.out"), tool(t, "slurmd"), "-D")
	sinfo := tool(t, "sinfo")
	deadline := time.Now().Add(90 * time.Second)
	for {
		cmd := exec.Command(sinfo, "--noheader", "--format=%T")
		cmd.Env = append(os.Environ(), c.env...)
		out, _ := cmd.Output()
		if strings.TrimSpace(string(out)) == "idle" {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "log", "slurmd.log"))
			t.Fatalf("the node is not idle after 90 s (%q):\n%s", out, b)
		}
		time.Sleep(500 * time.Millisecond)
	}
	return c
}

// exporter serves lustre_exporter's OST counters for n OSTs; every OST
// moves rate bytes/s (writes), which the test sets.
type exporter struct {
	mu      sync.Mutex
	n       int
	rate    float64
	last    time.Time
	written []float64
}

func (e *exporter) set(rate float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance()
	e.rate = rate
}

func (e *exporter) advance() {
	now := time.Now()
	if !e.last.IsZero() {
		for i := range e.written {
			e.written[i] += e.rate * now.Sub(e.last).Seconds()
		}
	}
	e.last = now
}

func (e *exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance()
	var b strings.Builder
	b.WriteString("# TYPE lustre_read_bytes_total counter\n")
	for i := range e.n {
		fmt.Fprintf(&b, "lustre_read_bytes_total{component=\"ost\",target=\"scratch-OST%04x\"} %d\n", i, 1000)
	}
	b.WriteString("# TYPE lustre_write_bytes_total counter\n")
	for i := range e.n {
		fmt.Fprintf(&b, "lustre_write_bytes_total{component=\"ost\",target=\"scratch-OST%04x\"} %.0f\n", i, e.written[i])
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	w.Write([]byte(b.String()))
}

// knowledge learns a knowledge base from a simulated center where
// root/ckpt/1 is I/O-intensive (a checkpointing loop on 32 OSTs) among
// foreign jobs; root/compute/1 never ran there.
func knowledge(t *testing.T, dir string) {
	t.Helper()
	s := &centersim.Scenario{Name: "slurmtest", Days: 2, StepS: 5, FS: "scratch", OSTs: 32, OSTBandwidth: 400e6, ContentionPenalty: 0.15,
		Background: centersim.Background{WriteMean: 3e6, ReadMean: 2e6, Sigma: 0.5, Correlation: 0.98, Diurnal: 0.5},
		Apps: []centersim.AppSpec{{User: "root", Name: "ckpt", Nodes: 1, Class: centersim.ClassIOIntensive, Runs: 8, RunsWithoutIO: 1,
			Iterations: [2]int{8, 10}, Cycle: []centersim.Phase{{ComputeS: 240, WriteBytes: 200e9}}, TailS: 60,
			Layout: centersim.Layout{Model: "n-to-1", Stripe: 16}, Bandwidth: 5e9, Jitter: 0.03, RunNoise: 0.03}},
		Foreign: centersim.Foreign{Jobs: 60, Apps: 10, Users: 5, MedianS: 1800, Sigma: 1, MaxS: 20000, Light: 0.3, Random: 0.2,
			LightRate: 10e6, RandomPerHour: 2, RandomBytes: 10e9}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	osts := make([]string, s.OSTs)
	for i := range osts {
		osts[i] = s.OSTName(i)
	}
	m := centersim.NewMemoryLog(s.Start, s.Step(), osts)
	res, err := centersim.Run(s, centersim.Options{Seed: 2, Sinks: []centersim.Sink{m}})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []serverlog.Job
	for _, j := range res.Jobs {
		if j.Started() {
			jobs = append(jobs, j.Job)
		}
	}
	st, err := aid.Learn(context.Background(), dir, aid.LearnInput{Source: m, SourceName: "sim", Jobs: jobs})
	if err != nil {
		t.Fatal(err)
	}
	a := st.Knowledge.Find("root", "ckpt", 1)
	if a == nil || a.Class != aid.ClassIOIntensive {
		t.Fatalf("the simulated center did not teach that root/ckpt/1 is I/O-intensive: %+v", a)
	}
}

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
// are never touched and start in the scheduler's first pass; every
// decision is in the gate's log with its score; and aid learn reads the
// real accounting through sacct.
func TestGateHoldsIOIntensiveJobsWhileBusy(t *testing.T) {
	testenv.Library(t) // builds build/iopred
	iopred := filepath.Join(testenv.RepoRoot(), "build", "iopred")
	for _, p := range []string{"sbatch", "squeue", "scontrol", "sacct", "sacctmgr", "sinfo"} {
		tool(t, p)
	}
	c := startCluster(t)
	kb := filepath.Join(c.dir, "kb")
	knowledge(t, kb)

	exp := &exporter{n: 32, rate: 1e6, written: make([]float64, 32)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: exp}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	prom := promtest.Start(t, filepath.Join(c.dir, "tsdb"), fmt.Sprintf("  - job_name: lustre\n    scrape_interval: 1s\n    static_configs:\n      - targets: ['%s']\n", l.Addr()))

	t0 := time.Now()
	var timeline []string
	var tmu sync.Mutex
	event := func(format string, args ...any) {
		tmu.Lock()
		defer tmu.Unlock()
		timeline = append(timeline, fmt.Sprintf("%6.1fs  %s", time.Since(t0).Seconds(), fmt.Sprintf(format, args...)))
	}
	event("load quiet (1 MB/s per OST)")
	time.Sleep(25 * time.Second) // Prometheus gathers the quiet table

	gateLog := filepath.Join(c.dir, "gate.log")
	gate := exec.Command(iopred, "aid", "gate", "--kb", kb, "--prometheus", prom.URL, "--prometheus-lookback", "1h",
		"--window", "10s", "--windows", "2", "--interval", "500ms", "--timeout", "5s", "--max-hold", "3m", "--log", gateLog)
	gate.Env = append(os.Environ(), c.env...)
	gout, _ := os.Create(filepath.Join(c.dir, "gate.out"))
	gate.Stdout, gate.Stderr = gout, gout
	if err := gate.Start(); err != nil {
		t.Fatal(err)
	}
	gateDone := make(chan struct{})
	go func() { gate.Wait(); close(gateDone) }()
	t.Cleanup(func() {
		gate.Process.Signal(syscall.SIGTERM)
		select {
		case <-gateDone:
		case <-time.After(30 * time.Second):
			gate.Process.Kill()
		}
	})
	event("gate started")
	time.Sleep(2 * time.Second)

	sbatch := tool(t, "sbatch")
	jobs := map[string]*jobInfo{}
	submit := func(name string) *jobInfo {
		var script string
		switch name {
		case "ckpt":
			script = fmt.Sprintf("#!/bin/sh\ndd if=/dev/zero of=%s/jobs/ckpt.$SLURM_JOB_ID bs=1M count=64 conv=fsync 2>/dev/null\nrm -f %s/jobs/ckpt.$SLURM_JOB_ID\nsleep 2\n", c.dir, c.dir)
		default:
			script = "#!/bin/sh\nhead -c 67108864 /dev/zero | sha256sum >/dev/null\nsleep 2\n"
		}
		path := filepath.Join(c.dir, "jobs", name+".sh")
		os.WriteFile(path, []byte(script), 0o755)
		out := c.run(t, sbatch, "--parsable", "-J", name, "-N", "1", "-n", "1", "-t", "5", "-o", "/dev/null", path)
		j := &jobInfo{id: strings.TrimSpace(out), name: name, submit: time.Now()}
		jobs[j.id] = j
		event("submitted %s %s (root/%s/1)", name, j.id, name)
		return j
	}
	quietCkpt := submit("ckpt")
	quietCompute := submit("compute")
	waitStarted(t, c, quietCkpt, quietCompute)
	event("job %s (ckpt) started, %.1fs after submission", quietCkpt.id, quietCkpt.start.Sub(quietCkpt.submit).Seconds())
	event("job %s (compute) started, %.1fs after submission", quietCompute.id, quietCompute.start.Sub(quietCompute.submit).Seconds())

	exp.set(390e6)
	event("load busy (390 MB/s per OST)")
	time.Sleep(25 * time.Second)
	busyCkpt := submit("ckpt")
	busyCompute := submit("compute")
	waitStarted(t, c, busyCompute)
	event("job %s (compute) started, %.1fs after submission", busyCompute.id, busyCompute.start.Sub(busyCompute.submit).Seconds())
	time.Sleep(20 * time.Second)
	if s := jobState(t, c, busyCkpt.id); s != "PENDING" {
		t.Errorf("ckpt job %s submitted while busy is %s 20 s after its submission, want PENDING (held)", busyCkpt.id, s)
	}
	exp.set(1e6)
	event("load quiet again")
	waitStarted(t, c, busyCkpt)
	event("job %s (ckpt) started, %.1fs after submission", busyCkpt.id, busyCkpt.start.Sub(busyCkpt.submit).Seconds())

	// The gate's log.
	time.Sleep(time.Second)
	b, _ := os.ReadFile(gateLog)
	var decisions []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var d map[string]any
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("gate log line %q: %v", line, err)
		}
		decisions = append(decisions, d)
		when, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(d["time"]))
		tmu.Lock()
		timeline = append(timeline, fmt.Sprintf("%6.1fs  gate: job %v %v: %v (advice %v, score %.3f, threshold %.3f, advice in %.0f ms) %v",
			when.Sub(t0).Seconds(), d["job"], d["app"], d["action"], d["advice"], num(d["score"]), num(d["threshold"]), num(d["advice_ms"]), d["reason"]))
		tmu.Unlock()
	}
	{
		gb, _ := os.ReadFile(filepath.Join(c.dir, "gate.out"))
		t.Logf("gate's standard error:\n%s", gb)
	}
	tmu.Lock()
	sort.SliceStable(timeline, func(a, b int) bool { return timeline[a] < timeline[b] })
	t.Logf("timeline:\n%s", strings.Join(timeline, "\n"))
	tmu.Unlock()

	actions := map[string][]string{}
	for _, d := range decisions {
		id := fmt.Sprint(d["job"])
		actions[id] = append(actions[id], fmt.Sprint(d["action"]))
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

	// aid learn straight from the accounting: the jobs are there.
	waitDone(t, c, busyCkpt)
	cmd := exec.Command(iopred, "serverlog", "info", "--jobs", "sacct:")
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "jobs   4 by 1 users, 2 applications") {
		t.Errorf("serverlog info --jobs sacct: %v\n%s", err, out)
	}
	learn := exec.Command(iopred, "aid", "learn", "--prometheus", prom.URL, "--prometheus-lookback", "1h", "--jobs", "sacct:", "--kb", filepath.Join(c.dir, "kb2"))
	learn.Env = append(os.Environ(), c.env...)
	lout, err := learn.CombinedOutput()
	if err != nil || !strings.Contains(string(lout), "4 new jobs") {
		t.Errorf("aid learn from the accounting: %v\n%s", err, lout)
	}
	// The gate's added latency: a job it lets run waited for its hold,
	// advice and release; the others for nothing.
	for _, d := range decisions {
		if d["action"] == "run" || d["action"] == "hold" {
			t.Logf("gate latency: job %v %v %v: advice in %.0f ms", d["job"], d["app"], d["action"], num(d["advice_ms"]))
		}
	}
	t.Logf("aid learn --jobs sacct: --prometheus %s:\n%s", prom.URL, lout)
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func jobState(t *testing.T, c *cluster, id string) string {
	cmd := exec.Command(tool(t, "squeue"), "--noheader", "--jobs="+id, "--format=%T")
	cmd.Env = append(os.Environ(), c.env...)
	out, _ := cmd.Output()
	s := strings.TrimSpace(string(out))
	if s == "" {
		return "GONE"
	}
	return s
}

// waitStarted waits until each job has started (RUNNING or gone), and
// notes when.
func waitStarted(t *testing.T, c *cluster, js ...*jobInfo) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for _, j := range js {
		for j.start.IsZero() {
			if s := jobState(t, c, j.id); s != "PENDING" {
				j.start = time.Now()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s (%s) still pending after 4 minutes", j.id, j.name)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

func waitDone(t *testing.T, c *cluster, js ...*jobInfo) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, j := range js {
		for jobState(t, c, j.id) != "GONE" {
			if time.Now().After(deadline) {
				t.Fatalf("job %s (%s) not done after 2 minutes", j.id, j.name)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

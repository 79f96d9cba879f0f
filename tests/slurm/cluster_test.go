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
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"iopred/analyzer/aid"
	"iopred/analyzer/centersim"
	"iopred/tests/promtest"
	"iopred/tests/testenv"
)

// tool finds a program, in the sbin directories too.
func tool(t testing.TB, name string) string {
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

func freePort(t testing.TB) int { return promtest.FreePort(t) }

// daemon runs a program in the foreground as a child, stopped at the
// end of the test.
func daemon(t testing.TB, env []string, logf string, prog string, args ...string) {
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

func waitPort(t testing.TB, port int, what, logf string) {
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

func (c *cluster) run(t testing.TB, prog string, args ...string) string {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), c.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(prog), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startMunge starts a munged of the test's own under dir/munge: a fresh
// 1024-bit key (mode 0400, owned by the user running it), its own
// socket, pid file and PRNG seed; its log is dir/log/munged.log. It
// returns the socket once a credential made through it decodes through
// it.
func startMunge(t testing.TB, dir string) string {
	t.Helper()
	munged, mungekey := tool(t, "munged"), tool(t, "mungekey")
	md := filepath.Join(dir, "munge")
	// munged refuses a socket directory others cannot enter, and a key
	// others can read.
	if err := os.Mkdir(md, 0o755); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(md, "munge.key")
	if out, err := exec.Command(mungekey, "--create", "--bits=1024", "--keyfile="+key).CombinedOutput(); err != nil {
		t.Fatalf("mungekey: %v\n%s", err, out)
	}
	if err := os.Chmod(key, 0o400); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(md, "munge.socket")
	logf := filepath.Join(dir, "log", "munged.log")
	daemon(t, nil, logf, munged, "--foreground", "--socket="+sock, "--key-file="+key,
		"--pid-file="+filepath.Join(md, "munged.pid"), "--seed-file="+filepath.Join(md, "munged.seed"),
		"--num-threads=4")
	// Ready when a credential made through the socket decodes through it.
	munge, unmunge := tool(t, "munge"), tool(t, "unmunge")
	deadline := time.Now().Add(30 * time.Second)
	for {
		cred, err := exec.Command(munge, "--socket="+sock, "--no-input").Output()
		var out []byte
		if err == nil {
			dec := exec.Command(unmunge, "--socket="+sock)
			dec.Stdin = strings.NewReader(string(cred))
			out, err = dec.CombinedOutput()
		}
		if err == nil && strings.Contains(string(out), "STATUS:          Success (0)") {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf)
			t.Fatalf("munged: no credential round trip through %s after 30 s: %v %s\n%s", sock, err, out, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return sock
}

// startCluster starts munged, MariaDB, slurmdbd, slurmctld and slurmd on
// 127.0.0.1 with free ports and a private state. Every daemon and client
// authenticates through the test's own munged (its own key and socket,
// named by AuthInfo in slurm.conf and slurmdbd.conf, and by
// AccountingStoragePass in slurm.conf): the machine's own munged, if
// any, is never asked. AuthInfo alone is not enough: the persistent
// connections to slurmdbd (sacctmgr, sacct, slurmctld) make their
// credentials through AccountingStoragePass's socket, else through
// /run/munge/munge.socket.2, which a slurmdbd on a private munged
// rejects. Jobs go through the shipped job_submit.lua, which makes
// the jobs of I/O-intensive applications wait for the gate (a begin time
// 3 minutes away, which the gate brings forward).
func startCluster(t testing.TB) *cluster {
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

	sock := startMunge(t, dir)
	dbdPort, ctldPort, slurmdPort := freePort(t), freePort(t), freePort(t)
	user := "root"
	if os.Geteuid() != 0 {
		t.Fatalf("the Slurm test runs slurmd, which needs root (.ci/run runs as root)")
	}
	dbd := fmt.Sprintf(`AuthType=auth/munge
AuthInfo=socket=%s
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
`, sock, dbdPort, user, dbPort, dir, dir)
	conf := fmt.Sprintf(`ClusterName=iopredtest
SlurmctldHost=%s(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=%s
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%s
CredType=cred/munge
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
AccountingStoragePass=%s
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
`, host, ctldPort, slurmdPort, user, sock, dir, dir, dir, dir, dir, dir, dbdPort, sock, host, host)
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
func knowledge(t testing.TB, dir string) {
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
	m, _, jobs, err := centersim.RunInMemory(s, 2)
	if err != nil {
		t.Fatal(err)
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

// timeline collects what happened, when, relative to its start.
type timeline struct {
	t0      time.Time
	mu      sync.Mutex
	entries []timelineEntry
}

type timelineEntry struct {
	at   time.Duration
	text string
}

func newTimeline() *timeline { return &timeline{t0: time.Now()} }

// at notes an event at a given time.
func (tl *timeline) at(when time.Time, format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.entries = append(tl.entries, timelineEntry{when.Sub(tl.t0), fmt.Sprintf(format, args...)})
}

// now notes an event now.
func (tl *timeline) now(format string, args ...any) { tl.at(time.Now(), format, args...) }

// String lists the events in time order (events at the same time in the
// order they were noted).
func (tl *timeline) String() string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	e := append([]timelineEntry(nil), tl.entries...)
	sort.SliceStable(e, func(a, b int) bool { return e[a].at < e[b].at })
	var b strings.Builder
	for _, x := range e {
		fmt.Fprintf(&b, "%7.2fs  %s\n", x.at.Seconds(), x.text)
	}
	return b.String()
}

// decision is one line of the gate's log.
type decision struct {
	Time      time.Time `json:"time"`
	Job       string    `json:"job"`
	App       string    `json:"app"`
	Action    string    `json:"action"`
	Advice    string    `json:"advice"`
	Score     float64   `json:"score"`
	Threshold float64   `json:"threshold"`
	HeldS     float64   `json:"held_s"`
	Reason    string    `json:"reason"`
	AdviceMS  float64   `json:"advice_ms"`
	Error     string    `json:"error"`
}

// decided is when the gate acted.
func (d decision) decided() time.Time { return d.Time }

// String is the decision as the timeline shows it.
func (d decision) String() string {
	s := fmt.Sprintf("gate: job %s %s: %s", d.Job, d.App, d.Action)
	switch {
	case d.Action == "untouched":
		return s + " (" + d.Reason + ")"
	case d.Error != "":
		return fmt.Sprintf("%s after %.0f ms: %s (%s)", s, d.AdviceMS, d.Reason, d.Error)
	}
	s += fmt.Sprintf(" (advice %s, score %.3f, threshold %.3f, advice in %.0f ms", d.Advice, d.Score, d.Threshold, d.AdviceMS)
	if d.HeldS > 0 {
		s += fmt.Sprintf(", waited %.1f s", d.HeldS)
	}
	return s + ")"
}

// readDecisions reads the gate's log.
func readDecisions(t testing.TB, path string) []decision {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ds []decision
	for n, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var d decision
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%s:%d: %v: %q", path, n+1, err, line)
		}
		ds = append(ds, d)
	}
	return ds
}

// gateProc is a running iopred aid gate.
type gateProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  string
	out  string
}

// startGate runs iopred aid gate on the knowledge base kb against the
// cluster with the given source and options; its decisions go to log.
// It is stopped (SIGTERM: it releases what it holds) at the end of the
// test if not before.
func startGate(t testing.TB, c *cluster, kb, log string, args ...string) *gateProc {
	t.Helper()
	iopred := iopredCommand(t)
	g := &gateProc{log: log, out: strings.TrimSuffix(log, ".log") + ".out", done: make(chan struct{})}
	g.cmd = exec.Command(iopred, append([]string{"aid", "gate", "--kb", kb, "--log", log}, args...)...)
	g.cmd.Env = append(os.Environ(), c.env...)
	out, err := os.Create(g.out)
	if err != nil {
		t.Fatal(err)
	}
	g.cmd.Stdout, g.cmd.Stderr = out, out
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.cmd.Wait(); out.Close(); close(g.done) }()
	t.Cleanup(g.stop)
	return g
}

// stop ends the gate and waits for it.
func (g *gateProc) stop() {
	select {
	case <-g.done:
		return
	default:
	}
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(30 * time.Second):
		g.cmd.Process.Kill()
		<-g.done
	}
}

// startLoad serves lustre_exporter's counters of 32 OSTs moving 1 MB/s
// each, scraped every second by a real Prometheus; it returns the
// exporter (whose rate the test sets) and Prometheus's URL.
func startLoad(t testing.TB, dir string) (*exporter, string) {
	t.Helper()
	exp := &exporter{n: 32, rate: 1e6, written: make([]float64, 32)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: exp}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	prom := promtest.Start(t, filepath.Join(dir, "tsdb"), fmt.Sprintf("  - job_name: lustre\n    scrape_interval: 1s\n    static_configs:\n      - targets: ['%s']\n", l.Addr()))
	return exp, prom.URL
}

// script writes a job script for an application: ckpt writes and syncs
// 64 MiB with dd, compute hashes 64 MiB of zeros, true does nothing.
func (c *cluster) script(t testing.TB, name string) string {
	t.Helper()
	var body string
	switch name {
	case "ckpt":
		body = fmt.Sprintf("#!/bin/sh\ndd if=/dev/zero of=%s/jobs/ckpt.$SLURM_JOB_ID bs=1M count=64 conv=fsync 2>/dev/null\nrm -f %s/jobs/ckpt.$SLURM_JOB_ID\nsleep 2\n", c.dir, c.dir)
	case "compute":
		body = "#!/bin/sh\nhead -c 67108864 /dev/zero | sha256sum >/dev/null\nsleep 2\n"
	default:
		body = "#!/bin/sh\ntrue\n"
	}
	path := filepath.Join(c.dir, "jobs", name+".sh")
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// submit runs sbatch for one job of root/NAME/1 running script.
func (c *cluster) submit(t testing.TB, name, script string, extra ...string) *jobInfo {
	t.Helper()
	args := append([]string{"--parsable", "-J", name, "-N", "1", "-n", "1", "-t", "5", "-o", "/dev/null"}, extra...)
	out := c.run(t, tool(t, "sbatch"), append(args, script)...)
	return &jobInfo{id: strings.TrimSpace(out), name: name, submit: time.Now()}
}

// setMaxHold rewrites job_submit.lua's hold limit; slurmctld reloads the
// script when it changes.
func (c *cluster) setMaxHold(t testing.TB, seconds int) {
	t.Helper()
	path := filepath.Join(c.dir, "job_submit.lua")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`(?m)^local MAX_HOLD = \d+`).ReplaceAllString(string(b), fmt.Sprintf("local MAX_HOLD = %d", seconds))
	if s == string(b) && !strings.Contains(s, fmt.Sprintf("MAX_HOLD = %d", seconds)) {
		t.Fatal("job_submit.lua: MAX_HOLD not found")
	}
	// A new inode and a later mtime: the reload is keyed on the mtime.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(tmp, later, later)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func jobState(t testing.TB, c *cluster, id string) string {
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
// notes when: every job is looked at in each round, so that a start is
// known within a quarter second whatever the order of the jobs.
func waitStarted(t testing.TB, c *cluster, js ...*jobInfo) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		waiting := 0
		for _, j := range js {
			if !j.start.IsZero() {
				continue
			}
			if s := jobState(t, c, j.id); s != "PENDING" {
				j.start = time.Now()
				continue
			}
			waiting++
			if time.Now().After(deadline) {
				t.Fatalf("job %s (%s) still pending after 4 minutes", j.id, j.name)
			}
		}
		if waiting == 0 {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func waitDone(t testing.TB, c *cluster, js ...*jobInfo) {
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

func jobReason(t testing.TB, c *cluster, id string) string {
	cmd := exec.Command(tool(t, "squeue"), "--noheader", "--jobs="+id, "--format=%r")
	cmd.Env = append(os.Environ(), c.env...)
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

// stalledServer accepts connections and never answers: a Prometheus
// that hangs. It returns its URL.
func stalledServer(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

// command is a Slurm command with the cluster's environment.
func (c *cluster) command(t testing.TB, prog string, args ...string) *exec.Cmd {
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), c.env...)
	return cmd
}

// TestMain removes the iopred command the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if iopredPath != "" {
		os.RemoveAll(filepath.Dir(iopredPath))
	}
	os.Exit(code)
}

var (
	iopredOnce sync.Once
	iopredPath string
	iopredErr  error
)

// iopredCommand builds the iopred command from this tree once per test
// binary (build/iopred may be older than the sources: make builds it only
// when it is missing).
func iopredCommand(t testing.TB) string {
	t.Helper()
	iopredOnce.Do(func() {
		dir, err := os.MkdirTemp("", "iopred-slurm-bin")
		if err != nil {
			iopredErr = err
			return
		}
		iopredPath = filepath.Join(dir, "iopred")
		cmd := exec.Command("go", "build", "-o", iopredPath, "iopred/analyzer/cmd/iopred")
		cmd.Dir = testenv.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			iopredErr = fmt.Errorf("go build iopred: %v\n%s", err, out)
		}
	})
	if iopredErr != nil {
		t.Fatal(iopredErr)
	}
	return iopredPath
}

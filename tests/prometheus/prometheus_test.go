// Package prometheus_test reads a simulated center's per-OST log from a
// real Prometheus server and proves that iopred learns the same from it
// as from the same counters in an LMT database.
package prometheus_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"iopred/analyzer/aid"
	"iopred/analyzer/centersim"
	"iopred/analyzer/centersim/lmtdb"
	"iopred/analyzer/iosi"
	"iopred/analyzer/serverlog"
	"iopred/tests/promtest"
	"iopred/tests/testenv"
)

// center is two days at 5 s on 32 OSTs: two I/O-intensive applications,
// one on probation, random and foreign jobs, and monitoring outages
// (scrape gaps in Prometheus, missing rows in LMT).
func center() *centersim.Scenario {
	tgt := func(user, name string, nodes, runs int, l centersim.Layout, ph centersim.Phase, iters [2]int, bw float64) centersim.AppSpec {
		return centersim.AppSpec{User: user, Name: name, Nodes: nodes, Class: centersim.ClassIOIntensive, Runs: runs, RunsWithoutIO: 1,
			Iterations: iters, Cycle: []centersim.Phase{ph}, TailS: 60, Layout: l, Bandwidth: bw, Jitter: 0.03, RunNoise: 0.03}
	}
	return &centersim.Scenario{Name: "promtest", Days: 2, StepS: 5, FS: "scratch", OSTs: 32, OSTBandwidth: 400e6, ContentionPenalty: 0.15,
		Outages:     3,
		Background:  centersim.Background{WriteMean: 3e6, ReadMean: 2e6, Sigma: 0.5, Correlation: 0.98, Diurnal: 0.5},
		Interactive: centersim.Interactive{PerHour: 1, MedianBytes: 10e9, Sigma: 1, Bandwidth: 1e9, MaxOSTs: 4, ReadFraction: 0.5},
		Apps: []centersim.AppSpec{
			tgt("ana", "ckpt", 64, 8, centersim.Layout{Model: "n-to-1", Stripe: 16}, centersim.Phase{ComputeS: 240, WriteBytes: 200e9}, [2]int{8, 10}, 5e9),
			tgt("ben", "sim", 128, 7, centersim.Layout{Model: "n-to-m", Files: 2, Stripe: 4}, centersim.Phase{ComputeS: 150, WriteBytes: 100e9}, [2]int{10, 14}, 3e9),
			tgt("pia", "dev", 32, 2, centersim.Layout{Model: "n-to-m", Files: 4, Stripe: 4}, centersim.Phase{ComputeS: 200, WriteBytes: 150e9}, [2]int{6, 8}, 5e9),
			{User: "ray", Name: "adhoc", Nodes: 8, Class: centersim.ClassRandom, Runs: 6, DurationS: [2]float64{3600, 7200},
				RandomPerHour: 3, RandomBytes: 60e9, Bandwidth: 3e9, Layout: centersim.Layout{Model: "n-to-m", Files: 2, Stripe: 4}},
		},
		Foreign: centersim.Foreign{Jobs: 100, Apps: 12, Users: 5, MedianS: 1800, Sigma: 1, MaxS: 20000, Light: 0.3, Random: 0.2,
			LightRate: 10e6, RandomPerHour: 2, RandomBytes: 10e9}}
}

type fixture struct {
	lmt  string // LMT SQLite file
	prom *promtest.Server
	jobs []serverlog.Job
	s    *centersim.Scenario
}

// setup simulates the center into an LMT database, resets one OST's
// counters part-way (a server restart) in it, exports the database as
// OpenMetrics with lustre_exporter's names (and client-side decoys of
// the same names), backfills a TSDB with promtool and starts Prometheus
// over it.
func setup(t *testing.T) *fixture {
	t.Helper()
	if shared != nil {
		return shared
	}
	dir, err := os.MkdirTemp("", "iopred-prom")
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("IOPRED_PROMTEST_KEEP"); keep != "" {
		// A developer's loop: the simulated data and the TSDB of an
		// earlier run, when that directory holds them.
		os.RemoveAll(dir)
		dir = keep
		os.MkdirAll(dir, 0o755)
	}
	s := center()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	osts := s.OSTNames()
	f := &fixture{lmt: filepath.Join(dir, "lmt.sqlite3"), s: s}
	w, err := lmtdb.Create(f.lmt, s.FS, osts, false, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	res, err := centersim.Run(s, centersim.Options{Seed: 5, Sinks: []centersim.Sink{w}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, j := range res.Jobs {
		if j.Started() {
			f.jobs = append(f.jobs, j.Job)
		}
	}
	db, err := sql.Open("sqlite", f.lmt)
	if err != nil {
		t.Fatal(err)
	}
	// OST 3 restarts 30 hours in: its counters start again from zero.
	const resetTS = 30 * 3600 / 5
	if _, err := db.Exec(`UPDATE OST_DATA SET READ_BYTES = READ_BYTES - (SELECT READ_BYTES FROM OST_DATA WHERE OST_ID = 3 AND TS_ID = ?) + 1000,
		WRITE_BYTES = WRITE_BYTES - (SELECT WRITE_BYTES FROM OST_DATA WHERE OST_ID = 3 AND TS_ID = ?) + 2000 WHERE OST_ID = 3 AND TS_ID >= ?`,
		resetTS, resetTS, resetTS); err != nil {
		t.Fatal(err)
	}
	db.Close()
	om := filepath.Join(dir, "lustre.om")
	tsdb := filepath.Join(dir, "tsdb")
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		promtest.ExportLMT(t, f.lmt, om, promtest.LustreExporter, time.UTC, true)
		start := time.Now()
		promtest.Backfill(t, om, tsdb)
		t.Logf("promtool backfill of %g days × %d OSTs at %v: %v", s.Days, s.OSTs, s.Step(), time.Since(start).Round(time.Millisecond))
		os.Remove(om)
		os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
	}
	if f.prom, err = promtest.Launch(testenv.Tool(t, "prometheus"), tsdb, ""); err != nil {
		t.Fatal(err)
	}
	shared = f
	return f
}

// shared is the fixture both tests read; TestMain stops its server.
var shared *fixture

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.prom.Stop()
		if os.Getenv("IOPRED_PROMTEST_KEEP") == "" {
			os.RemoveAll(filepath.Dir(shared.lmt))
		}
	}
	os.Exit(code)
}

func openBoth(t *testing.T, f *fixture, cfg serverlog.PrometheusConfig) (lmt, prom serverlog.Source) {
	t.Helper()
	lmt, err := serverlog.OpenSource(serverlog.Spec{Kind: "lmt", Path: f.lmt}, serverlog.Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lmt.Close() })
	start := time.Now()
	prom, err = serverlog.OpenSource(serverlog.Spec{Path: f.prom.URL}, serverlog.Options{TZ: time.UTC, Prometheus: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("opened %s (span and OSTs found) in %v", f.prom.URL, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() { prom.Close() })
	return lmt, prom
}

// sameRates tells whether two Rates are the same sample for sample, NaN
// where the other is NaN.
func sameRates(t *testing.T, what string, a, b *serverlog.Rates) {
	t.Helper()
	if !a.Start.Equal(b.Start) || a.Step != b.Step || !reflect.DeepEqual(a.OSTs, b.OSTs) || a.Len() != b.Len() {
		t.Fatalf("%s: LMT %v+%v×%d %d OSTs, Prometheus %v+%v×%d %d OSTs", what, a.Start.UTC(), a.Step, a.Len(), len(a.OSTs),
			b.Start.UTC(), b.Step, b.Len(), len(b.OSTs))
	}
	diff, nan := 0, 0
	for o := range a.OSTs {
		for k := range a.Len() {
			for _, p := range [][2]float64{{a.Read[o][k], b.Read[o][k]}, {a.Write[o][k], b.Write[o][k]}} {
				if math.IsNaN(p[0]) {
					nan++
				}
				if p[0] != p[1] && !(math.IsNaN(p[0]) && math.IsNaN(p[1])) {
					if diff < 5 {
						t.Errorf("%s: %s at %v: LMT %v, Prometheus %v", what, a.OSTs[o], a.Time(k).UTC(), p[0], p[1])
					}
					diff++
				}
			}
		}
	}
	if diff > 0 {
		t.Fatalf("%s: %d samples differ", what, diff)
	}
	if nan == 0 {
		t.Fatalf("%s: no unknown sample: the outages and the reset were not in the data", what)
	}
	t.Logf("%s: %d OSTs × %d samples equal, %d of them unknown (outages, the reset) in both", what, len(a.OSTs), a.Len(), nan)
}

// TestPrometheusEqualsLMT proves that the Prometheus source gives the
// same rates, sample for sample (gaps and the counter reset as NaN in
// the same places, decoy client series left out), the same IOSI
// signatures and the same AID knowledge as the LMT database holding the
// same counters; the whole span is read in queries of at most 10,000
// steps (6,000 here, to split more), under the server's 11,000.
func TestPrometheusEqualsLMT(t *testing.T) {
	f := setup(t)
	lmt, prom := openBoth(t, f, serverlog.PrometheusConfig{MaxPoints: 6000})
	lf, lt, ls, _ := lmt.Span()
	pf, pt, ps, _ := prom.Span()
	if !lf.Equal(pf) || !lt.Equal(pt) || ls != ps {
		t.Fatalf("span: LMT %v-%v at %v, Prometheus %v-%v at %v", lf.UTC(), lt.UTC(), ls, pf.UTC(), pt.UTC(), ps)
	}
	lo, _ := lmt.OSTs()
	po, _ := prom.OSTs()
	if !reflect.DeepEqual(lo, po) {
		t.Fatalf("OSTs: LMT %v, Prometheus %v", lo, po)
	}
	lr, err := lmt.Window(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	pr, err := prom.Window(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Prometheus: the whole span (%d samples × %d OSTs) read in %v", pr.Len(), len(pr.OSTs), time.Since(start).Round(time.Millisecond))
	sameRates(t, "whole span", lr, pr)
	// A window off the grid and across the reset.
	from, to := lf.Add(30*time.Hour-17*time.Minute-2*time.Second), lf.Add(31*time.Hour+3*time.Second)
	lw, _ := lmt.Window(from, to)
	pw, err := prom.Window(from, to)
	if err != nil {
		t.Fatal(err)
	}
	sameRates(t, "window across the reset", lw, pw)

	// IOSI: the signature of each application with enough runs.
	for _, id := range []string{"ana/ckpt/64", "ben/sim/128"} {
		app, _ := serverlog.ParseApp(id)
		runs := iosi.Runs(f.jobs, app, time.Time{}, time.Time{})
		sig := func(src serverlog.Source) *iosi.Signature {
			var samples []iosi.Sample
			for _, j := range runs {
				s, err := iosi.SampleFrom(src, j)
				if err != nil {
					t.Fatal(err)
				}
				samples = append(samples, s)
			}
			sg, err := iosi.Extract(samples, iosi.Default())
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			return sg
		}
		a, b := sig(lmt), sig(prom)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: signatures differ:\nLMT        %+v\nPrometheus %+v", id, a, b)
		} else {
			t.Logf("%s: same signature from both (%d runs used, %d bursts)", id, a.RunsUsed, len(a.Bursts))
		}
	}

	// AID: the same knowledge, learnt from each.
	learn := func(src serverlog.Source, name string) *aid.Knowledge {
		st, err := aid.Learn(context.Background(), t.TempDir(), aid.LearnInput{Source: src, SourceName: name, Jobs: f.jobs, Now: time.Unix(0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return st.Knowledge
	}
	start = time.Now()
	kp := learn(prom, "--prometheus "+f.prom.URL)
	t.Logf("aid learn from Prometheus: %v", time.Since(start).Round(time.Millisecond))
	kl := learn(lmt, "--lmt "+f.lmt)
	a, _ := json.Marshal(kl)
	b, _ := json.Marshal(kp)
	if string(a) != string(b) {
		t.Fatalf("knowledge differs:\nLMT        %s\nPrometheus %s", a, b)
	}
	found := 0
	for _, app := range kl.Apps {
		if app.Class == aid.ClassIOIntensive {
			found++
		}
	}
	if found < 2 {
		t.Fatalf("only %d I/O-intensive applications in the knowledge: the comparison proves little", found)
	}
	t.Logf("same knowledge from both: %d applications, %d I/O-intensive", len(kl.Apps), found)
}

// TestPrometheusCommands runs the iopred command with --prometheus and
// with --lmt on the same data: iopred signature and iopred aid advise
// print the same, and a wrong metric name is an error that says what was
// looked for.
func TestPrometheusCommands(t *testing.T) {
	f := setup(t)
	testenv.Library(t) // builds build/iopred
	bin := filepath.Join(testenv.RepoRoot(), "build", "iopred")
	run := func(args ...string) (string, error) {
		out, err := exec.Command(bin, args...).CombinedOutput()
		return string(out), err
	}
	for _, src := range [][2]string{{"--lmt", f.lmt}, {"--prometheus", f.prom.URL}} {
		if out, err := run("aid", "learn", src[0], src[1], "--jobs", writeSacct(t, f), "--tz", "UTC", "--kb", filepath.Join(t.TempDir(), "kb"+src[0])); err != nil {
			t.Fatalf("aid learn %s: %v\n%s", src[0], err, out)
		}
	}
	sig := func(src [2]string) string {
		out, err := run("signature", src[0], src[1], "--jobs", writeSacct(t, f), "--tz", "UTC", "--app", "ana/ckpt/64")
		if err != nil {
			t.Fatalf("signature %s: %v\n%s", src[0], err, out)
		}
		return out
	}
	a, b := sig([2]string{"--lmt", f.lmt}), sig([2]string{"--prometheus", f.prom.URL})
	if a != b {
		t.Fatalf("iopred signature differs:\n--lmt:\n%s\n--prometheus:\n%s", a, b)
	}
	t.Logf("iopred signature, same from --lmt and --prometheus:\n%s", a)
	out, err := run("serverlog", "info", "--prometheus", f.prom.URL, "--prometheus-read-metric", "lustre_read_bytes", "--tz", "UTC")
	if err == nil || !strings.Contains(out, "lustre_read_bytes{") {
		t.Fatalf("a wrong metric name: err %v, output %s", err, out)
	}
}

var sacctCache = map[*fixture]string{}

func writeSacct(t *testing.T, f *fixture) string {
	if p, ok := sacctCache[f]; ok {
		return p
	}
	p := filepath.Join(t.TempDir(), "sacct.txt")
	var b strings.Builder
	if err := serverlog.WriteSacct(&b, f.jobs, serverlog.SacctWriterOptions{TZ: time.UTC}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sacctCache[f] = p
	return p
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"iopred/analyzer/centersim"
	"iopred/analyzer/centersim/lmtdb"
	"iopred/analyzer/serverlog"
	"iopred/internal/safefile"
)

func init() {
	register(&command{
		name:    "simulate",
		usage:   "center [--scenario NAME|--config FILE] [--seed N] [--days D] [--osts N] [--step S] [--noise X] [--trace-app USER/NAME/NODES=DIR ...] --out DIR",
		summary: "simulate a computing center: its per-OST server log (LMT), job log (sacct) and the ground truth of its applications",
		run:     runSimulate,
	})
}

func runSimulate(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "center":
		return simulateCenter(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintf(stdout, "usage: iopred simulate %s\n%s\n\nRun 'iopred simulate center -h' for its options.\n", commands["simulate"].usage, commands["simulate"].summary)
		return nil
	}
	return fmt.Errorf("unknown simulation %q (want center)", args[0])
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// scenarioFlags are the options that choose and adjust a scenario.
type scenarioFlags struct {
	name, config, start, tz, policy string
	days, noise                     float64
	osts, step, foreign, nodes      int
	traceApps                       stringList
	traceRuns                       int
	traceInterval, traceBytes       float64
	fs                              *flag.FlagSet
}

func addScenarioFlags(fs *flag.FlagSet) *scenarioFlags {
	f := &scenarioFlags{fs: fs}
	fs.StringVar(&f.name, "scenario", "small", "built-in scenario: "+strings.Join(centersim.PresetNames(), ", "))
	fs.StringVar(&f.config, "config", "", "scenario from a JSON `file` (see --print-config) instead of a built-in one")
	fs.Float64Var(&f.days, "days", 0, "simulated `days` (default: the scenario's)")
	fs.IntVar(&f.osts, "osts", 0, "number of OSTs (default: the scenario's)")
	fs.IntVar(&f.step, "step", 0, "log sample width in `seconds` (default: the scenario's)")
	fs.Float64Var(&f.noise, "noise", 0, "scale of the background, interactive and foreign I/O (default: the scenario's)")
	fs.IntVar(&f.foreign, "foreign-jobs", -1, "number of foreign jobs (default: the scenario's)")
	fs.IntVar(&f.nodes, "nodes", -1, "compute nodes of the machine, 0 for unlimited (default: the scenario's)")
	fs.StringVar(&f.policy, "policy", "", "scheduler: fifo or backfill (default: the scenario's)")
	fs.StringVar(&f.start, "start", "", "start of the period: RFC 3339, or YYYY-MM-DD[ HH:MM:SS] in --tz (default: the scenario's)")
	fs.StringVar(&f.tz, "tz", "UTC", "time `zone` of the logs' times without zone, and of --start")
	fs.Var(&f.traceApps, "trace-app", "add an I/O-intensive application `USER/NAME/NODES=DIR` whose bursts come from the traces of one run in DIR (or builtin:ior|lammps|fio); repeatable")
	fs.IntVar(&f.traceRuns, "trace-runs", 10, "runs of each --trace-app application")
	fs.Float64Var(&f.traceInterval, "trace-interval", 150, "median `seconds` between the bursts of a --trace-app application")
	fs.Float64Var(&f.traceBytes, "trace-bytes", 40e9, "median `bytes` of a burst of a --trace-app application")
	return f
}

// scenario builds the scenario the flags describe.
func (f *scenarioFlags) scenario() (*centersim.Scenario, *time.Location, error) {
	loc, err := time.LoadLocation(f.tz)
	if err != nil {
		return nil, nil, fmt.Errorf("--tz %q: %w", f.tz, err)
	}
	var s *centersim.Scenario
	if f.config != "" {
		s, err = centersim.ReadScenario(f.config)
	} else {
		s, err = centersim.Preset(f.name)
	}
	if err != nil {
		return nil, nil, err
	}
	if f.days > 0 {
		s.Days = f.days
	}
	if f.osts > 0 {
		s.OSTs = f.osts
	}
	if f.step > 0 {
		s.StepS = f.step
	}
	if f.noise > 0 {
		s.Noise = f.noise
	}
	if f.foreign >= 0 {
		s.Foreign.Jobs = f.foreign
	}
	if f.nodes >= 0 {
		s.Nodes = f.nodes
	}
	if f.policy != "" {
		s.Policy = f.policy
	}
	if f.start != "" {
		t, err := parseTime(f.start, loc)
		if err != nil {
			return nil, nil, fmt.Errorf("--start: %w", err)
		}
		s.Start = t
	}
	for _, ta := range f.traceApps {
		id, dir, ok := strings.Cut(ta, "=")
		if !ok {
			return nil, nil, fmt.Errorf("--trace-app %q: want USER/NAME/NODES=DIR", ta)
		}
		app, err := serverlog.ParseApp(id)
		if err != nil {
			return nil, nil, fmt.Errorf("--trace-app: %w", err)
		}
		s.Apps = append(s.Apps, centersim.AppSpec{User: app.User, Name: app.Name, Nodes: app.Nodes,
			Class: centersim.ClassIOIntensive, Runs: f.traceRuns, Iterations: [2]int{1, 1}, Trace: dir,
			TraceIntervalS: f.traceInterval, TraceBurstBytes: f.traceBytes, Bandwidth: 2.5e9, TailS: 60,
			Layout: centersim.Layout{Model: "n-to-m", Files: 8, Stripe: 4}, Jitter: 0.02, RunNoise: 0.02})
	}
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	return s, loc, nil
}

// parseTime reads RFC 3339, or a date with an optional time in loc.
func parseTime(v string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q: want RFC 3339 or YYYY-MM-DD HH:MM:SS", v)
}

func simulateCenter(args []string, stdout, stderr io.Writer) error {
	c := &command{name: "simulate center", usage: "[OPTIONS] --out DIR",
		summary: "simulate a center: writes DIR/lmt.sqlite3 (per-OST LMT database), DIR/sacct.txt (sacct --parsable2), DIR/truth.json (ground truth), DIR/jobs.csv (every job's wait, I/O time and slowdown)"}
	fs := newFlagSet(c, stderr)
	sf := addScenarioFlags(fs)
	seed := fs.Uint64("seed", 1, "random seed: the same seed and scenario give the same files")
	out := fs.String("out", "", "output `directory`")
	lmtPath := fs.String("lmt", "", "LMT database `file` (default DIR/lmt.sqlite3; \"none\" to write none)")
	storeDir := fs.String("store", "", "also write the per-OST log into an iopred store `directory` (as iopred serverlog import makes; quicker to read than the LMT database)")
	aggregate := fs.Bool("lmt-aggregate", false, "write one pseudo-OST holding the file system's total instead of every OST (the aggregate log IOSI reads)")
	sacctPath := fs.String("sacct", "", "job log `file` (default DIR/sacct.txt)")
	truthPath := fs.String("truth", "", "ground truth `file` (default DIR/truth.json)")
	jobsPath := fs.String("jobs-csv", "", "per-job results `file` (default DIR/jobs.csv)")
	printConfig := fs.Bool("print-config", false, "print the scenario as JSON (to edit and pass to --config) and exit")
	quiet := fs.Bool("q", false, "print nothing but errors")
	pos, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return errUsage
	}
	s, loc, err := sf.scenario()
	if err != nil {
		return err
	}
	s.DrawFamily(*seed) // the drift family draws its OSTs and step from the seed
	if *printConfig {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		return enc.Encode(s)
	}
	if *out == "" {
		return errUsage
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	def := func(p *string, name string) {
		if *p == "" {
			*p = filepath.Join(*out, name)
		}
	}
	def(lmtPath, "lmt.sqlite3")
	def(sacctPath, "sacct.txt")
	def(truthPath, "truth.json")
	def(jobsPath, "jobs.csv")
	var sinks []centersim.Sink
	var lmt *lmtdb.Writer
	if *lmtPath != "none" {
		osts := s.OSTNames()
		if lmt, err = lmtdb.Create(*lmtPath, s.FS, osts, *aggregate, loc); err != nil {
			return err
		}
		sinks = append(sinks, lmt)
	}
	if *storeDir != "" {
		sinks = append(sinks, &storeSink{dir: *storeDir, name: "simulate:" + s.Name})
	}
	t0 := time.Now()
	res, err := centersim.Run(s, centersim.Options{Seed: *seed, Sinks: sinks})
	if lmt != nil {
		err = errors.Join(err, lmt.Close())
	}
	if err != nil {
		return err
	}
	elapsed := time.Since(t0)
	write := func(path string, fn func(io.Writer) error) error {
		f, err := safefile.Create(path, 0o666)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := fn(f); err != nil {
			return err
		}
		return f.Commit()
	}
	if err := errors.Join(
		write(*sacctPath, func(w io.Writer) error { return centersim.WriteSacct(w, res.Jobs, loc) }),
		write(*truthPath, func(w io.Writer) error { return centersim.WriteTruth(w, res.Truth) }),
		write(*jobsPath, func(w io.Writer) error { return centersim.WriteJobs(w, res.Jobs) }),
	); err != nil {
		return err
	}
	if *quiet {
		return nil
	}
	fmt.Fprintf(stdout, "scenario %s: %g days from %s, %d OSTs at %d s, seed %d\n", s.Name, s.Days,
		s.Start.In(loc).Format("2006-01-02 15:04:05 MST"), s.OSTs, s.StepS, *seed)
	fmt.Fprintf(stdout, "%d jobs (%d foreign), %d log samples, %s moved by jobs and transfers, simulated in %.1f s\n\n",
		len(res.Jobs), res.Truth.Foreign.Jobs, res.Samples, bytesText(res.Bytes), elapsed.Seconds())
	printTruth(stdout, res.Truth)
	files := []string{*sacctPath, *truthPath, *jobsPath}
	if lmt != nil {
		files = append([]string{*lmtPath}, files...)
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", strings.Join(files, ", "))
	return nil
}

func printTruth(w io.Writer, t *centersim.Truth) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "APP\tCLASS\tRUNS\tNO I/O\tMODEL\tOSTS\tBURSTS/RUN\tBURST\tINTERVAL\tDURATION\tTHROUGHPUT")
	for _, a := range t.Apps {
		id := fmt.Sprintf("%s/%s/%d", a.App.User, a.App.Name, a.App.Nodes)
		p := a.Pattern
		if p == nil {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t-\t-\t-\t-\t-\t-\t-\n", id, a.Class, a.Runs, a.RunsWithoutIO)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%d\t%.1f\t%s\t%.0f s\t%.0f s\t%s/s\n", id, a.Class, a.Runs, a.RunsWithoutIO,
			a.FileModel, a.OSTFootprint, p.BurstsPerRun, bytesText(p.BurstBytes), p.IntervalS, p.BurstS, bytesText(p.Throughput))
	}
	tw.Flush()
}

// bytesText writes a byte count with a decimal unit.
func bytesText(b float64) string {
	for _, u := range []string{"B", "kB", "MB", "GB", "TB", "PB"} {
		if b < 1000 || u == "PB" {
			if u == "B" {
				return fmt.Sprintf("%.0f B", b)
			}
			return fmt.Sprintf("%.1f %s", b, u)
		}
		b /= 1000
	}
	return ""
}

// storeSink imports each chunk of the simulated log into a store; chunks
// that share a day are merged by the import.
type storeSink struct{ dir, name string }

func (k *storeSink) WriteRates(r *serverlog.Rates) error {
	src, err := serverlog.NewRatesSource(r)
	if err != nil {
		return err
	}
	_, err = serverlog.ImportFrom(context.Background(), k.dir, src, k.name, serverlog.ImportOptions{All: true})
	return err
}

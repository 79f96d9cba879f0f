package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"iopred/analyzer/aid"
	"iopred/analyzer/centersim"
	"iopred/analyzer/serverlog"
	"iopred/internal/safefile"
	"iopred/tracefmt/darshan"
)

func init() {
	register(&command{
		name:    "aid",
		usage:   "learn|report|advise|train|check|replay|trials [OPTIONS]",
		summary: "AID: find the I/O-intensive applications in center logs, learn their patterns, advise the scheduler",
		run:     runAID,
	})
}

var aidSubs = []struct{ name, summary string }{
	{"learn", "update the knowledge base from the per-OST log and the job log (incremental)"},
	{"report", "show every application the knowledge base knows"},
	{"advise", "say whether an application should start now"},
	{"train", "fit the load score's weights to training measurements"},
	{"check", "compare the knowledge base with a simulation's truth.json"},
	{"replay", "replay a simulated job queue with and without advice"},
	{"trials", "simulate training jobs and write their measurements"},
	{"gate", "hold and release Slurm's pending jobs of I/O-intensive applications by the advice"},
}

func runAID(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "learn":
		return aidLearn(rest, stdout, stderr)
	case "report":
		return aidReport(rest, stdout, stderr)
	case "advise":
		return aidAdvise(rest, stdout, stderr)
	case "train":
		return aidTrain(rest, stdout, stderr)
	case "check":
		return aidCheck(rest, stdout, stderr)
	case "replay":
		return aidReplay(rest, stdout, stderr)
	case "trials":
		return aidTrials(rest, stdout, stderr)
	case "gate":
		return aidGate(rest, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, "usage: iopred aid COMMAND [OPTIONS]")
		for _, s := range aidSubs {
			fmt.Fprintf(stdout, "  %-8s %s\n", s.name, s.summary)
		}
		fmt.Fprintln(stdout, "\nRun 'iopred aid COMMAND -h' for its options.")
		return nil
	}
	return fmt.Errorf("unknown aid command %q (want learn, report, advise, train, check, replay, trials or gate)", sub)
}

func aidFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	summary := ""
	for _, s := range aidSubs {
		if s.name == name {
			summary = s.summary
		}
	}
	return newFlagSet(&command{name: "aid " + name, usage: usage, summary: summary}, stderr)
}

func aidLearn(args []string, stdout, stderr io.Writer) error {
	fs := aidFlagSet("learn", "--lmt SRC|--store DIR|... --jobs FILE --kb DIR [--from T --to T] [--mpi]", stderr)
	var f serverlog.Flags
	f.Register(fs, true)
	kbDir := fs.String("kb", "", "knowledge base `directory` (created if missing)")
	from := fs.String("from", "", "read the log from this time (RFC 3339 or YYYY-MM-DD[ HH:MM:SS] in --tz)")
	to := fs.String("to", "", "read the log up to this time")
	d := aid.DefaultOptions()
	o := d
	fs.StringVar(&o.Detector, "detector", d.Detector, "burst detector: gaussian or wavelet")
	fs.Float64Var(&o.Sigma, "sigma", d.Sigma, "width of the Gaussian low-pass, in samples")
	fs.Float64Var(&o.MinPeak, "min-peak", d.MinPeak, "least rate above the baseline a burst reaches, bytes/s")
	fs.Float64Var(&o.NoiseK, "noise-k", d.NoiseK, "least rate above the baseline a burst reaches, in noise widths")
	fs.Float64Var(&o.OSTMinPeak, "ost-min-peak", d.OSTMinPeak, "least rate above one OST's own baseline a burst found OST by OST reaches, bytes/s (-1: no per-OST detection)")
	fs.IntVar(&o.MinPts, "min-pts", d.MinPts, "OPTICS neighbourhood size")
	fs.Float64Var(&o.Xi, "xi", d.Xi, "OPTICS xi steepness")
	fs.Float64Var(&o.Resolution, "resolution", d.Resolution, "distance in (log10 peak, log10 bytes) under which bursts are equally close")
	fs.Float64Var(&o.Presence, "presence", d.Presence, "share of its runs in which a cluster must recur")
	fs.Float64Var(&o.ScopeIntervals, "scope-intervals", d.ScopeIntervals, "intervals the scope check looks beyond a run")
	fs.Float64Var(&o.ScopeMax, "scope-max", d.ScopeMax, "share of periodic runs whose pattern may continue outside them")
	fs.IntVar(&o.MinSupport, "min-support", d.MinSupport, "runs a candidate needs to leave probation")
	quiet := fs.Bool("q", false, "print nothing but errors")
	useMPI := fs.Bool("mpi", false, "run as one rank of an MPI job (mpirun -n R iopred aid learn ... --mpi): the days to read are split among the ranks, which share --kb; rank 0 writes the knowledge base one process writes")
	pos, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *kbDir == "" {
		return errUsage
	}
	var ranks *mpiRanks
	if *useMPI {
		if f.SkipBad {
			// Each rank would count only the bad rows of its own days.
			return errors.New("--skip-bad is not available with --mpi")
		}
		m, err := startMPI()
		if err != nil {
			return err
		}
		defer m.finish()
		ranks = &mpiRanks{m}
		if !m.root() {
			stdout, stderr = io.Discard, io.Discard // rank 0 reports
		}
	}
	opts, err := f.Options()
	if err != nil {
		return err
	}
	if opts.TZ == nil {
		opts.TZ = time.Local
	}
	in := aid.LearnInput{Options: o}
	for _, p := range []struct {
		v string
		t *time.Time
	}{{*from, &in.From}, {*to, &in.To}} {
		if p.v != "" {
			if *p.t, err = parseTime(p.v, opts.TZ); err != nil {
				return err
			}
		}
	}
	spec, err := f.Spec()
	if err != nil {
		return err
	}
	src, err := f.Open()
	if err != nil {
		return err
	}
	defer src.Close()
	jobs, err := f.ReadJobs()
	if err != nil {
		return err
	}
	// --from and --to hold to the sample, not to the UTC days the
	// learner reads: the rates outside are cut off, and so are the runs
	// that started outside.
	var clipped serverlog.Source = src
	if !in.From.IsZero() || !in.To.IsZero() {
		clipped = serverlog.Clip(src, in.From, in.To)
		kept := jobs[:0:0]
		for _, j := range jobs {
			if (in.From.IsZero() || !j.Start.Before(in.From)) && (in.To.IsZero() || j.Start.Before(in.To)) {
				kept = append(kept, j)
			}
		}
		if len(kept) == 0 && len(jobs) > 0 {
			return fmt.Errorf("%s: none of its %d jobs started between --from and --to", f.Jobs, len(jobs))
		}
		jobs = kept
	}
	if err := serverlog.CheckOverlap(clipped, spec.String(), jobs, f.Jobs); err != nil {
		return err
	}
	in.Source, in.SourceName, in.Jobs = clipped, spec.String(), jobs
	if ranks != nil {
		in.Ranks = ranks
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	t0 := time.Now()
	st, err := aid.Learn(ctx, *kbDir, in)
	if err != nil {
		return err
	}
	if ranks != nil && !ranks.m.root() {
		return nil
	}
	f.Report(stderr)
	if *quiet {
		return nil
	}
	if st.Unchanged {
		fmt.Fprintf(stdout, "unchanged: the knowledge base already holds these logs (generation %d)\n", st.Generation)
		return nil
	}
	counts := map[string]int{}
	for _, a := range st.Knowledge.Apps {
		counts[a.Class]++
	}
	fmt.Fprintf(stdout, "generation %d: %d days read (%d kept), %d OST samples, %d new jobs, in %.1f s\n", st.Generation, st.DaysRead,
		st.DaysSkipped, st.Cells, st.NewJobs, time.Since(t0).Seconds())
	fmt.Fprintf(stdout, "%d applications: %d I/O-intensive, %d on probation, %d not\n", len(st.Knowledge.Apps),
		counts[aid.ClassIOIntensive], counts[aid.ClassProbation], counts[aid.ClassNot])
	return nil
}

// mpiRanks are the ranks of an MPI job, as aid.Learn spreads its days
// over them.
type mpiRanks struct{ m *mpiRun }

func (r *mpiRanks) Rank() int { return r.m.w.Rank() }
func (r *mpiRanks) Size() int { return r.m.w.Size() }

// Gather gathers the ranks' bytes at rank 0; a failed gather ends the
// job, so that no rank waits in it for ever.
func (r *mpiRanks) Gather(b []byte) ([][]byte, error) {
	all, err := r.m.w.Gather(b)
	if err != nil {
		r.m.w.Abort(1)
	}
	return all, err
}

func (r *mpiRanks) Decide(v bool) (bool, error) { return r.m.w.Decide(v) }

// reportRow is one application in `aid report --json`.
type reportRow struct {
	User       string  `json:"user"`
	Name       string  `json:"name"`
	Nodes      int     `json:"nodes"`
	Runs       int     `json:"runs"`
	Periodic   int     `json:"periodic_runs"`
	Class      string  `json:"class"`
	Reason     string  `json:"reason"`
	Bursts     float64 `json:"bursts_per_run"`
	BurstBytes float64 `json:"burst_bytes"`
	AggBytes   float64 `json:"aggregate_burst_bytes"`
	IntervalS  float64 `json:"interval_s"`
	BurstS     float64 `json:"burst_s"`
	Throughput float64 `json:"throughput_bytes_per_s"`
	Direction  string  `json:"direction"`
	ReadFrac   float64 `json:"read_fraction"`
	Footprint  float64 `json:"ost_footprint"`
}

func rowsOf(k *aid.Knowledge) []reportRow {
	rows := make([]reportRow, 0, len(k.Apps))
	for _, a := range k.Apps {
		rows = append(rows, reportRow{User: a.User, Name: a.Name, Nodes: a.Nodes, Runs: a.Runs, Periodic: a.Periodic, Class: a.Class,
			Reason: a.Reason, Bursts: a.BurstsPerRun, BurstBytes: a.BurstBytes, AggBytes: a.AggBytes, IntervalS: a.IntervalS,
			BurstS: a.BurstS, Throughput: a.Throughput, Direction: a.Direction, ReadFrac: a.ReadFraction, Footprint: a.OSTFootprint})
	}
	rank := map[string]int{aid.ClassIOIntensive: 0, aid.ClassProbation: 1, aid.ClassNot: 2}
	sortStable(rows, func(a, b reportRow) bool { return rank[a.Class] < rank[b.Class] })
	return rows
}

func sortStable[T any](x []T, less func(a, b T) bool) {
	for i := 1; i < len(x); i++ {
		for k := i; k > 0 && less(x[k], x[k-1]); k-- {
			x[k], x[k-1] = x[k-1], x[k]
		}
	}
}

func aidReport(args []string, stdout, stderr io.Writer) error {
	fs := aidFlagSet("report", "--kb DIR [--json] [--html FILE]", stderr)
	kbDir := fs.String("kb", "", "knowledge base `directory`")
	asJSON := fs.Bool("json", false, "a JSON list of the applications")
	htmlOut := fs.String("html", "", "also write a self-contained HTML page to `file`")
	all := fs.Bool("all", false, "list the applications that are not I/O-intensive too (text output)")
	pos, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *kbDir == "" {
		return errUsage
	}
	kb, k, err := readKnowledge(*kbDir)
	if err != nil {
		return err
	}
	rows := rowsOf(k)
	if *htmlOut != "" {
		if err := safefile.WriteFile(*htmlOut, []byte(reportHTML(k, rows)), 0o666); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", " ")
		return enc.Encode(rows)
	}
	fmt.Fprintf(stdout, "knowledge base %s: generation %d, log %s to %s, %d OSTs at %g s\n\n", *kbDir, kb.Manifest.Generation,
		k.From.Format(time.DateTime), k.To.Format(time.DateTime), k.OSTs, k.StepS)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "APPLICATION\tCLASS\tRUNS\tBURSTS/RUN\tVOLUME\tINTERVAL\tDURATION\tTHROUGHPUT\tDIRECTION\tOSTS\tREASON")
	hidden := 0
	for _, r := range rows {
		if r.Class == aid.ClassNot && !*all {
			hidden++
			continue
		}
		if r.Class == aid.ClassNot {
			fmt.Fprintf(tw, "%s/%s/%d\t%s\t%d\t\t\t\t\t\t\t\t%s\n", r.User, r.Name, r.Nodes, r.Class, r.Runs, r.Reason)
			continue
		}
		fmt.Fprintf(tw, "%s/%s/%d\t%s\t%d\t%.1f\t%s\t%.0f s\t%.1f s\t%s/s\t%s\t%.0f\t%s\n", r.User, r.Name, r.Nodes, r.Class, r.Runs,
			r.Bursts, bytesText(r.BurstBytes), r.IntervalS, r.BurstS, bytesText(r.Throughput), r.Direction, r.Footprint, r.Reason)
	}
	tw.Flush()
	if hidden > 0 {
		fmt.Fprintf(stdout, "\n%d other applications are not I/O-intensive (--all lists them)\n", hidden)
	}
	return nil
}

func reportHTML(k *aid.Knowledge, rows []reportRow) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>AID knowledge base</title><style>
body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
td:first-child,th:first-child,td.l{text-align:left}tr.io-intensive{background:#fde8e8}tr.probation{background:#fff6d8}</style></head><body>`)
	fmt.Fprintf(&b, "<h1>AID knowledge base</h1><p>Log from %s to %s, %d OSTs at %g s; %d applications.</p>",
		html.EscapeString(k.From.Format(time.DateTime)), html.EscapeString(k.To.Format(time.DateTime)), k.OSTs, k.StepS, len(rows))
	b.WriteString("<table><tr><th>application</th><th>class</th><th>runs</th><th>periodic runs</th><th>bursts/run</th><th>volume</th><th>interval (s)</th><th>duration (s)</th><th>throughput</th><th>direction</th><th>OSTs</th><th>reason</th></tr>")
	for _, r := range rows {
		fmt.Fprintf(&b, `<tr class="%s"><td>%s</td><td class="l">%s</td><td>%d</td><td>%d</td><td>%.1f</td><td>%s</td><td>%.0f</td><td>%.1f</td><td>%s/s</td><td class="l">%s</td><td>%.0f</td><td class="l">%s</td></tr>`,
			html.EscapeString(r.Class), html.EscapeString(fmt.Sprintf("%s/%s/%d", r.User, r.Name, r.Nodes)), html.EscapeString(r.Class), r.Runs, r.Periodic,
			r.Bursts, bytesText(r.BurstBytes), r.IntervalS, r.BurstS, bytesText(r.Throughput), html.EscapeString(r.Direction), r.Footprint, html.EscapeString(r.Reason))
	}
	b.WriteString("</table></body></html>\n")
	return b.String()
}

// readKnowledge reads the knowledge base in dir, which must hold one: a
// mistyped --kb is an error, not a base that knows nothing.
func readKnowledge(dir string) (*aid.KB, *aid.Knowledge, error) {
	kb, err := aid.OpenKB(dir)
	if err != nil {
		return nil, nil, err
	}
	if kb.Empty() {
		return nil, nil, fmt.Errorf("%s: no knowledge base here (run iopred aid learn first)", dir)
	}
	k, err := kb.Knowledge()
	return kb, k, err
}

func readWeights(path string) (*aid.Weights, error) {
	if path == "" {
		return aid.DefaultWeights(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var w aid.Weights
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if w.BandWidth <= 0 || len(w.W) == 0 {
		return nil, fmt.Errorf("%s: weights need band_width and w", path)
	}
	return &w, nil
}

func aidAdvise(args []string, stdout, stderr io.Writer) error {
	fs := aidFlagSet("advise", "--kb DIR --lmt SRC|--store DIR|... --app USER/NAME/NODES --at TIME [--jobs FILE] [--darshan LOG] [--json]", stderr)
	var f serverlog.Flags
	f.Register(fs, true)
	kbDir := fs.String("kb", "", "knowledge base `directory`")
	appFlag := fs.String("app", "", "the application, `USER/NAME/NODES`")
	at := fs.String("at", "", "when: RFC 3339 or YYYY-MM-DD HH:MM:SS in --tz")
	slow := fs.Float64("slowdown", 1.5, "acceptable I/O slowdown factor")
	weights := fs.String("weights", "", "weights `file` from iopred aid train (default: the shipped ones)")
	asJSON := fs.Bool("json", false, "print the advice as JSON")
	darshanLog := fs.String("darshan", "", "an earlier run's Darshan `log`: its LUSTRE records name the OSTs the job's files lie on, scored instead of the guessed footprint")
	pos, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *kbDir == "" || *appFlag == "" || *at == "" {
		return errUsage
	}
	var footprint []int
	if *darshanLog != "" {
		l, err := darshan.Open(*darshanLog)
		if l == nil {
			return err
		}
		for _, o := range l.OSTs() {
			footprint = append(footprint, int(o))
		}
		if len(footprint) == 0 {
			return fmt.Errorf("%s: no LUSTRE records: the job's OSTs are unknown (Darshan records them for files on Lustre)", *darshanLog)
		}
	}
	if !(*slow >= 1) {
		return fmt.Errorf("--slowdown %g: want a factor of at least 1", *slow)
	}
	app, err := serverlog.ParseApp(*appFlag)
	if err != nil {
		return err
	}
	opts, err := f.Options()
	if err != nil {
		return err
	}
	loc := opts.TZ
	if loc == nil {
		loc = time.Local
	}
	when, err := parseTime(*at, loc)
	if err != nil {
		return fmt.Errorf("--at: %w", err)
	}
	_, k, err := readKnowledge(*kbDir)
	if err != nil {
		return err
	}
	w, err := readWeights(*weights)
	if err != nil {
		return err
	}
	adv := aid.NewAdvisor(k, w)
	adv.Slowdown = *slow
	req := aid.Request{App: app, At: when, Footprint: footprint}
	var out aid.Advice
	if a := k.Find(app.User, app.Name, app.Nodes); a == nil || a.Class != aid.ClassIOIntensive {
		// No need for the logs: the answer does not depend on the load.
		out, err = adv.Advise(req)
	} else {
		src, err := f.Open()
		if err != nil {
			return err
		}
		defer src.Close()
		req.Log = src
		if f.Jobs != "" {
			jobs, err := f.ReadJobs()
			if err != nil {
				return err
			}
			for _, j := range jobs {
				if !j.Start.IsZero() && !j.Start.After(when) && (j.End.IsZero() || j.End.After(when)) {
					r := aid.Running{App: j.App(), Start: j.Start}
					if j.Limit > 0 {
						r.Limit = j.Start.Add(j.Limit)
					}
					req.Running = append(req.Running, r)
				}
			}
		}
		out, err = adv.Advise(req)
		if err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	if out.OSTs == nil {
		out.OSTs, out.OSTNames = []int{}, []string{}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "%s at %s: %s\n%s\n", app, when.In(loc).Format(time.DateTime), strings.ToUpper(out.Advice), out.Reason)
	if len(out.OSTs) > 0 {
		fmt.Fprintf(stdout, "score %.3f, threshold %.3f, footprint %d OSTs\n", out.Score, out.Threshold, out.OSTFootprint)
		if out.Setstripe == "" {
			fmt.Fprintf(stdout, "its files lie on OSTs %s (from %s)\n", aid.RangeList(out.OSTs), *darshanLog)
		} else {
			fmt.Fprintf(stdout, "place its files on OSTs %s (the %d least loaded):\n  %s\n", aid.RangeList(out.OSTs), len(out.OSTs), out.Setstripe)
		}
	}
	return nil
}

func aidTrain(args []string, stdout, stderr io.Writer) error {
	fs := aidFlagSet("train", "MEASUREMENTS.csv [-o WEIGHTS.json]", stderr)
	out := fs.String("o", "", "write the weights to `file` (default: standard output)")
	pos, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errUsage
	}
	fh, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer fh.Close()
	m, err := aid.ReadMeasurements(fh, pos[0])
	if err != nil {
		return err
	}
	w, err := aid.Fit(m)
	if err != nil {
		return err
	}
	w.Source = "iopred aid train " + pos[0]
	b, _ := json.MarshalIndent(w, "", " ")
	b = append(b, '\n')
	if *out == "" {
		_, err = stdout.Write(b)
		return err
	}
	fmt.Fprintf(stderr, "%d trials, %d bands, rms %.3f\n", w.Trials, len(w.W), w.RMS)
	return safefile.WriteFile(*out, b, 0o666)
}

func aidCheck(args []string, stdout, stderr io.Writer) error {
	fs := aidFlagSet("check", "--kb DIR --truth truth.json", stderr)
	kbDir := fs.String("kb", "", "knowledge base `directory`")
	truth := fs.String("truth", "", "the simulation's truth.json")
	pos, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *kbDir == "" || *truth == "" {
		return errUsage
	}
	_, k, err := readKnowledge(*kbDir)
	if err != nil {
		return err
	}
	fh, err := os.Open(*truth)
	if err != nil {
		return err
	}
	defer fh.Close()
	t, err := centersim.ReadTruth(fh)
	if err != nil {
		return fmt.Errorf("%s: %w", *truth, err)
	}
	aid.Check(k, t).Write(stdout)
	return nil
}

func aidReplay(args []string, stdout, stderr io.Writer) error {
	fs := aidFlagSet("replay", "--kb DIR [--scenario aid-replay] [--seed N] [--weights FILE] [--slowdown X]", stderr)
	sf := addScenarioFlags(fs)
	kbDir := fs.String("kb", "", "knowledge base `directory` learnt from the same center")
	seed := fs.Uint64("seed", 1, "random seed")
	weights := fs.String("weights", "", "weights `file` (default: the shipped ones)")
	slow := fs.Float64("slowdown", 1.5, "acceptable I/O slowdown factor")
	maxDelay := fs.Float64("max-delay", 0, "longest hold in `seconds` (default: the scenario's)")
	allOSTs := fs.Bool("all-osts", false, "score on the mean of every OST, not the footprint's least-loaded ones (the simulator places files without regard to load)")
	spread := fs.Bool("spread-alpha", true, "spread α over every OST (K/n each); false: on the K least-loaded, as in the paper (for allocators that place files by load)")
	relax := fs.Float64("hold-relax", 0, "widen the threshold's allowance for a held job, by this factor at the hold limit")
	alpha := fs.String("alpha", "born", "which running jobs move the scores: born (born within the load table's span), paper (born or dying), overlap (every job by its overlap with the candidate's run)")
	place := fs.Bool("place", true, "with advice, a job places its files on the OSTs the advice hinted at (false: on any κ, as the allocator does, the figures before hints)")
	csvOut := fs.String("csv", "", "write every I/O-intensive job of both replays to this CSV `file` (mode, application, submit, start, advice, score, threshold, I/O slowdown)")
	pos, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *kbDir == "" {
		return errUsage
	}
	if *alpha != "born" && *alpha != "paper" && *alpha != "overlap" {
		return fmt.Errorf("--alpha %q: want born, paper or overlap", *alpha)
	}
	if sf.name == "small" {
		sf.name = "aid-replay"
	}
	s, _, err := sf.scenario()
	if err != nil {
		return err
	}
	if *maxDelay > 0 {
		s.MaxDelayS = *maxDelay
	}
	aid.ReplayQueue(s)
	_, k, err := readKnowledge(*kbDir)
	if err != nil {
		return err
	}
	w, err := readWeights(*weights)
	if err != nil {
		return err
	}
	type out struct {
		name string
		st   aid.ReplayStats
	}
	var res []out
	var csv strings.Builder
	csv.WriteString("mode,app,submit,start,advice,score,threshold,held,io_slowdown\n")
	for _, follow := range []bool{false, true} {
		adv := aid.NewAdvisor(k, w)
		adv.Slowdown, adv.AllOSTs, adv.Alpha = *slow, *allOSTs, *alpha
		adv.HoldRelax, adv.SpreadAlpha = *relax, *spread
		sa := &aid.SimAdvisor{A: adv}
		r, err := centersim.Run(s, centersim.Options{Seed: *seed, Advisor: sa, FollowAdvice: follow, Place: *place})
		if err != nil {
			return err
		}
		st := aid.Summarize(r, s.Start)
		st.Asked, st.RunAnswers = sa.Asked, sa.Run
		name := "without advice"
		if follow {
			name = "with advice"
		}
		for _, j := range r.Jobs {
			if j.Foreign || !j.Started() || j.Class != centersim.ClassIOIntensive || j.IOAloneS <= 0 {
				continue
			}
			sc := sa.Scores[j.App().String()+"@"+j.Start.UTC().Format(time.RFC3339Nano)]
			fmt.Fprintf(&csv, "%s,%s,%s,%s,%s,%.4f,%.4f,%d,%.4f\n", strings.ReplaceAll(name, " ", "-"), j.App(), j.Submit.UTC().Format(time.RFC3339),
				j.Start.UTC().Format(time.RFC3339), j.Advice, sc[0], sc[1], j.Held, j.Slowdown())
		}
		res = append(res, out{name, st})
	}
	if *csvOut != "" {
		if err := safefile.WriteFile(*csvOut, []byte(csv.String()), 0o666); err != nil {
			return err
		}
	}
	a, b := res[0].st, res[1].st
	fmt.Fprintf(stdout, "scenario %s, seed %d: %d jobs, %d runs of I/O-intensive applications (the queue: submitted over the first %g days)\n\n",
		s.Name, *seed, a.Jobs, a.IOJobs, max(1, s.Days-1))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\twithout advice\twith advice\tchange")
	pct := func(x, y float64) string {
		if x == 0 {
			return "-"
		}
		return fmt.Sprintf("%+.1f%%", 100*(y-x)/x)
	}
	fmt.Fprintf(tw, "I/O-intensive jobs, mean I/O slowdown\t%.3f\t%.3f\t%s\n", a.MeanSlowdown, b.MeanSlowdown, pct(a.MeanSlowdown, b.MeanSlowdown))
	fmt.Fprintf(tw, "I/O-intensive jobs, worst I/O slowdown\t%.3f\t%.3f\t%s\n", a.Worst, b.Worst, pct(a.Worst, b.Worst))
	fmt.Fprintf(tw, "makespan of the queue (h)\t%.2f\t%.2f\t%s\n", a.MakespanS/3600, b.MakespanS/3600, pct(a.MakespanS, b.MakespanS))
	fmt.Fprintf(tw, "mean wait (min)\t%.1f\t%.1f\t%+.1f min\n", a.MeanWaitS/60, b.MeanWaitS/60, (b.MeanWaitS-a.MeanWaitS)/60)
	fmt.Fprintf(tw, "jobs of the queue unfinished at the end\t%d\t%d\t\n", a.Unfinished, b.Unfinished)
	tw.Flush()
	fmt.Fprintf(stdout, "\nwithout advice, jobs started on \"run\": %d, mean slowdown %.3f; on \"delay\": %d, mean slowdown %.3f (the paper's experiment)\n",
		a.RunJobs, a.RunSlowdown, a.DelayJobs, a.DelaySlowdown)
	fmt.Fprintf(stdout, "with advice: %d questions, %d answered \"run\"; %d jobs started on \"delay\" after the longest hold\n", b.Asked, b.RunAnswers, b.DelayJobs)
	return nil
}

func aidTrials(args []string, stdout, stderr io.Writer) error {
	fs := aidFlagSet("trials", "[--scenario aid-replay] [--trials N] [--rate B] [--seed N] --out FILE", stderr)
	sf := addScenarioFlags(fs)
	seed := fs.Uint64("seed", 1, "random seed")
	trials := fs.Int("trials", 400, "training trials")
	rate := fs.Float64("rate", 100e6, "what a training job asks of each OST, bytes/s")
	outPath := fs.String("out", "", "measurements CSV `file`")
	pos, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *outPath == "" {
		return errUsage
	}
	if sf.name == "small" {
		sf.name = "aid-replay"
	}
	s, _, err := sf.scenario()
	if err != nil {
		return err
	}
	s = aid.TrainingScenario(s, *trials, *rate, *seed)
	if err := s.Validate(); err != nil {
		return err
	}
	tr, err := aid.RunTrials(s, *seed, aid.NewAdvisor(&aid.Knowledge{}, nil))
	if err != nil {
		return err
	}
	fh, err := safefile.Create(*outPath, 0o666)
	if err != nil {
		return err
	}
	defer fh.Close()
	w := aid.DefaultWeights()
	err = aid.WriteTrials(fh, tr, w.BandWidth, *rate)
	if err == nil {
		err = fh.Commit()
	}
	if err == nil {
		fmt.Fprintf(stdout, "%d trials written to %s\n", len(tr), *outPath)
	}
	return err
}

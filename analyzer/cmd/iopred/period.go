package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"iopred/analyzer/ftio"
	"iopred/analyzer/ftio/ftioplot"
	"iopred/analyzer/job"
	"iopred/analyzer/pathfilter"
	"iopred/analyzer/summary"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "period",
		usage:   "[--signal auto|job|ftio|heatmap] [--mode write|read|both] [--fs HZ] [--tol X] [--layer posix|mpiio] [--top N] [--fit N] [--autocorrelation] [--start S] [--end S] [--json] [--online] [--per-process] [--plot OUT.svg|.png|.html] [--jobs N] [--mpi] TRACE|DIR...",
		summary: "FTIO periodicity of the I/O: the job's bandwidth on iopred traces, FTIO's sampling on FTIO's JSON, JSON lines, MessagePack",
		run:     runPeriod,
	})
}

func runPeriod(args []string, stdout, stderr io.Writer) error {
	c := commands["period"]
	fs := newFlagSet(c, stderr)
	modeFlag := fs.String("mode", "write", "which requests make the signal: write, read or both")
	hz := fs.Float64("fs", ftio.DefaultFs, "sampling frequency in `HZ`; 0 or negative: chosen from the trace")
	tol := fs.Float64("tol", ftio.DefaultTol, "a candidate's z-score must exceed this fraction of the largest")
	amp := fs.Bool("amplitude", false, "use the amplitude |X| instead of the power |X|^2/N")
	avg := fs.Bool("average", false, "make each sample the mean bandwidth over its interval instead of the bandwidth at its instant (for short bursts)")
	ftioModes := fs.String("ftio-mode", "", "comma-separated FTIO modes to read (default: read_sync and/or write_sync)")
	asJSON := fs.Bool("json", false, "print one JSON object (with --online: one per prediction)")
	online := fs.Bool("online", false, "replay the trace as if it grew, predicting at the end of every I/O phase")
	perProcess := fs.Bool("per-process", false, "analyse every trace file on its own instead of merging them into the application's signal")
	plot := fs.String("plot", "", "write the signal and the spectrum to `FILE` (.svg, .png or .html)")
	signal := fs.String("signal", "auto", "which signal: job (every process's bytes spread over each request's duration on one time grid, FTIO at several resolutions, the period checked against its multiples), ftio (FTIO's sampling, --fs and --average), heatmap (a Darshan log's HEATMAP bins, even when it has DXT: to compare the two), or auto: job for iopred, Darshan and DFTracer traces, a Darshan log's heatmaps when it has no DXT, ftio for FTIO's inputs or when an FTIO sampling option is given")
	jobView := fs.Bool("job", false, "the same as --signal job")
	top := fs.Int("top", 0, "also list the `N` strongest frequencies of the spectrum (FTIO's -n)")
	layer := fs.String("layer", "", "FTIO's sampling of iopred traces and Darshan DXT logs: take only the `posix` (POSIX and stdio, those inside MPI-IO calls too) or the `mpiio` records; unset, every byte once")
	autocorr := fs.Bool("autocorrelation", false, "also estimate the period from the autocorrelation's peaks and merge it with the DFT's as FTIO's --autocorrelation does (FTIO's period and confidence)")
	fitN := fs.Int("fit", 0, "also fit the signal with its mean and `N` waves of the strongest frequencies (FTIO's Fourier fit)")
	start := fs.Float64("start", math.Inf(-1), "analyse only the requests' parts after `S` seconds since the start (FTIO's time window)")
	outlier := fs.String("outlier", "zscore", "FTIO's detector of the spectrum's outlying bins: zscore, dbscan, lof, isoforest (seeded by --seed: FTIO-like, not FTIO's answers) or peaks")
	seed := fs.Int64("seed", 1, "seed of the randomised detector (--outlier isoforest)")
	end := fs.Float64("end", math.Inf(1), "analyse only the requests' parts before `S` seconds since the start")
	jobs := jobsFlag(fs)
	useMPI := mpiFlag(fs)
	paths, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return errUsage
	}
	if err := checkJobs(*jobs); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *jobView {
		*signal = "job"
	}
	mode, err := ftio.ParseMode(*modeFlag)
	if err != nil {
		return err
	}
	det, err := ftio.ParseOutlier(*outlier)
	if err != nil {
		return err
	}
	opt := ftio.Options{Fs: *hz, Tol: *tol, Amplitude: *amp, Average: *avg, Outlier: det, Seed: *seed, Jobs: *jobs}
	if *hz <= 0 {
		opt.Fs = -1
	}
	var modes []string
	if *ftioModes != "" {
		modes = strings.Split(*ftioModes, ",")
	}
	// A Darshan log without DXT may still hold heatmaps.
	if sig, _ := heatmapSources(paths, mode, *signal == "heatmap"); sig != nil {
		return runPeriodHeatmap(sig, opt, set["fs"], *asJSON, stdout)
	} else if *signal == "heatmap" {
		return fmt.Errorf("--signal heatmap: not every input is a Darshan log with HEATMAP records")
	}
	if err := tracefmt.CheckTimeResolved(paths...); err != nil {
		return err
	}
	switch *signal {
	case "auto":
		ftioInput, err := anyFTIOInput(paths)
		if err != nil {
			return err
		}
		if ftioInput {
			*signal = "ftio"
			break
		}
		*signal = "job"
		for _, name := range []string{"fs", "tol", "amplitude", "average", "ftio-mode", "online", "per-process", "start", "end", "top", "fit", "autocorrelation", "layer", "outlier", "seed"} {
			if set[name] {
				*signal = "ftio"
			}
		}
	case "job", "ftio":
	default:
		return fmt.Errorf("--signal %q: want auto, job or ftio", *signal)
	}
	if *signal == "job" {
		if set["start"] || set["end"] || set["top"] || set["fit"] || set["autocorrelation"] || set["layer"] || set["outlier"] || set["seed"] {
			return fmt.Errorf("--start, --end, --top, --fit, --autocorrelation, --layer, --outlier and --seed apply to FTIO's sampling (--signal ftio), not to the job's signal")
		}
		return runPeriodJob(paths, mode, *asJSON, *plot, *jobs, *useMPI, stdout, stderr)
	}
	if *useMPI {
		return fmt.Errorf("--mpi spreads the job's signal (--signal job) over MPI ranks, not FTIO's sampling")
	}
	if !(*start < *end) {
		return fmt.Errorf("--start %g is not before --end %g", *start, *end)
	}
	srcs, err := ftio.FileSourcesWith(paths, mode, modes, ftio.SourceOptions{Filter: pathfilter.Default(), Layer: tracefmt.Layer(*layer)})
	if err != nil {
		return err
	}
	if set["start"] || set["end"] {
		for i := range srcs {
			srcs[i] = ftio.Window(srcs[i], *start, *end)
		}
	}
	if *online {
		return runPeriodOnline(srcs, opt, *asJSON, stdout)
	}
	if *perProcess {
		return runPeriodPerProcess(paths, srcs, opt, *asJSON, stdout)
	}
	res, err := ftio.AnalyzeSources(srcs, opt)
	if err != nil {
		return err
	}
	// FTIO's period and confidence stay as FTIO gives them; the test's
	// verdict is printed beside FTIO's.
	ftioPeriod := 0.0
	if res.PeriodS != nil {
		ftioPeriod = *res.PeriodS
	}
	res.ApplySignificance(ftio.TestPeriod(res.Signal, res.Fs, ftioPeriod), true)
	res.FindPhases()
	if *plot != "" {
		if err := ftioplot.Plot(*plot, res); err != nil {
			return err
		}
	}
	var topN []ftio.Candidate
	if *top > 0 {
		topN = res.TopFrequencies(*top)
	}
	var fit *ftio.Fit
	if *fitN > 0 {
		f := res.FourierFit(*fitN)
		fit = &f
	}
	var merged *ftio.MergedPrediction
	if *autocorr {
		m := res.MergeAutocorrelation()
		merged = &m
	}
	if *asJSON {
		line := struct {
			Signal string `json:"signal"`
			ftio.Result
			Top    []ftio.Candidate       `json:"top_frequencies,omitempty"`
			Fit    *ftio.Fit              `json:"fourier_fit,omitempty"`
			Merged *ftio.MergedPrediction `json:"autocorrelation_merge,omitempty"`
		}{"ftio", res, topN, fit, merged}
		return json.NewEncoder(stdout).Encode(line)
	}
	if err := writeFTIOSignal(stdout, paths, res, *avg); err != nil {
		return err
	}
	if err := ftio.WriteText(stdout, res); err != nil {
		return err
	}
	for i, c := range topN {
		if _, err := fmt.Fprintf(stdout, "top %d: %.6g Hz  period %.6g s  share of power %.4g  z %.3f\n", i+1, c.FreqHz, c.PeriodS, c.Amplitude, c.Z); err != nil {
			return err
		}
	}
	if fit != nil {
		var b strings.Builder
		fmt.Fprintf(&b, "Fourier fit: %.4g B/s", fit.Mean)
		for _, w := range fit.Waves {
			fmt.Fprintf(&b, " + %.4g·cos(2π·%.6g·t %+.3f)", w.Amplitude, w.FreqHz, w.Phase)
		}
		fmt.Fprintf(&b, "; explains %.1f%% of the variance\n", 100*fit.Explained)
		if _, err := io.WriteString(stdout, b.String()); err != nil {
			return err
		}
	}
	if merged != nil {
		return ftio.WriteMerged(stdout, *merged)
	}
	return nil
}

// anyFTIOInput tells whether any input is one of FTIO's formats, whose
// results FTIO's defaults reproduce.
func anyFTIOInput(paths []string) (bool, error) {
	files, err := tracefmt.Discover(paths...)
	if err != nil {
		return false, err
	}
	for _, f := range files {
		format, err := tracefmt.IsFTIOFile(f)
		if err != nil {
			return false, err
		}
		if format != "" {
			return true, nil
		}
	}
	return false, nil
}

// writeFTIOSignal prints which signal FTIO's sampling made and, for
// iopred traces, when the earliest started (the origin of their times).
func writeFTIOSignal(w io.Writer, paths []string, res ftio.Result, average bool) error {
	how := "the bandwidth at instants"
	if average {
		how = "the mean bandwidth over intervals"
	}
	dflt := ""
	if res.Fs == ftio.DefaultFs {
		dflt = " (FTIO's default)"
	}
	if _, err := fmt.Fprintf(w, "signal: FTIO's sampling of the requests: %s %.4g s apart, %.4g Hz%s\n", how, 1/res.Fs, res.Fs, dflt); err != nil {
		return err
	}
	files, err := tracefmt.Discover(paths...)
	if err != nil {
		return err
	}
	var start, mono int64
	for _, f := range files {
		if format, err := tracefmt.IsFTIOFile(f); err != nil || format != "" {
			continue
		}
		r, err := tracefmt.Open(f)
		if err != nil {
			continue
		}
		h := r.Header()
		r.Close()
		if start == 0 || h.StartMonoNs < mono {
			start, mono = h.StartUnixNs, h.StartMonoNs
		}
	}
	if start > 0 {
		_, err = fmt.Fprintf(w, "job start: %s; times are seconds since then\n", summary.FormatDate(start))
	}
	return err
}

// runPeriodPerProcess prints one result per trace file (JSON: one object
// per line, with a "file" field). A file without requests in the mode is
// reported, not fatal.
func runPeriodPerProcess(paths []string, srcs []ftio.Source, opt ftio.Options, asJSON bool, stdout io.Writer) error {
	files, err := tracefmt.Discover(paths...)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for i, src := range srcs {
		res, err := ftio.Analyze(src, opt)
		if asJSON {
			line := struct {
				File  string `json:"file"`
				Error string `json:"error,omitempty"`
				*ftio.Result
			}{File: files[i]}
			if err != nil {
				line.Error = err.Error()
			} else {
				line.Result = &res
			}
			if err := enc.Encode(line); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintf(stdout, "== %s\n", files[i]); err != nil {
			return err
		}
		if err != nil {
			if _, err := fmt.Fprintf(stdout, "%v\n", err); err != nil {
				return err
			}
			continue
		}
		if err := ftio.WriteText(stdout, res); err != nil {
			return err
		}
	}
	return nil
}

// runPeriodOnline replays the requests in order of their end and predicts
// whenever an I/O phase ends, i.e. when the next request starts more than
// one sample interval after everything so far has ended.
func runPeriodOnline(srcs []ftio.Source, opt ftio.Options, asJSON bool, stdout io.Writer) error {
	var reqs []ftio.Request
	for _, src := range srcs {
		if err := src(func(r ftio.Request) error { reqs = append(reqs, r); return nil }); err != nil {
			return err
		}
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Start < reqs[j].Start })
	gap := 1.0 / ftio.DefaultFs
	if opt.Fs > 0 {
		gap = 1 / opt.Fs
	}
	o := ftio.NewOnline(opt, 0)
	enc := json.NewEncoder(stdout)
	end := 0.0
	for i, r := range reqs {
		o.AddRequest(r)
		if r.End > end {
			end = r.End
		}
		if i+1 < len(reqs) && reqs[i+1].Start <= end+gap {
			continue
		}
		res, err := o.Evaluate()
		if err != nil {
			continue // too short to sample yet
		}
		pred := struct {
			At     float64 `json:"at_s"`
			Window float64 `json:"window_s"`
			ftio.Result
		}{end, o.Window(), res}
		if asJSON {
			if err := enc.Encode(pred); err != nil {
				return err
			}
			continue
		}
		p := "none"
		if res.PeriodS != nil {
			p = fmt.Sprintf("%.6g s (%.6g Hz) confidence %.4f", *res.PeriodS, *res.FreqHz, res.Confidence)
		}
		if _, err := fmt.Fprintf(stdout, "at %.4g s: period %s, window %.4g s, %d samples\n", end, p, o.Window(), res.NSamples); err != nil {
			return err
		}
	}
	return nil
}

// runPeriodJob prints the period of a job's signal as the job summary
// finds it (job.Period), from its traces: an MPI job's ranks, or the
// processes of a program without ranks.
func runPeriodJob(paths []string, mode ftio.Mode, asJSON bool, plot string, jobs int, useMPI bool, stdout, stderr io.Writer) error {
	traces, err := tracefmt.Discover(paths...)
	if err != nil && !useMPI {
		return err
	}
	opt := job.Options{Processes: true, NoAccuracy: true, Jobs: jobs}
	var sum *job.Summary
	var warnings []string
	var readErr error
	if useMPI {
		m, merr := startMPI()
		if merr != nil {
			return merr
		}
		defer m.finish()
		if err != nil {
			traces = nil // every rank takes part; rank 0 reports the error below
		}
		sum, warnings, readErr = jobViewMPI(m, traces, opt)
		if !m.root() {
			return nil // rank 0 prints
		}
		if err != nil {
			return err
		}
	} else {
		sum, warnings, readErr = job.FromTracesWith(traces, opt)
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "iopred period: warning: %s\n", w)
	}
	if sum == nil {
		return readErr
	}
	p := map[ftio.Mode]*job.Period{ftio.ModeWrite: sum.Period.Write, ftio.ModeRead: sum.Period.Read, ftio.ModeBoth: sum.Period.Both}[mode]
	if p == nil {
		return fmt.Errorf("the job has no %s requests", mode)
	}
	if plot != "" {
		opt := ftioplot.Options{Origin: float64(sum.StartUnixNs) / 1e9, Start: summary.FormatDate(sum.StartUnixNs), What: map[ftio.Mode]string{ftio.ModeWrite: "the job's writes", ftio.ModeRead: "the job's reads", ftio.ModeBoth: "the job's reads and writes"}[mode]}
		if err := ftioplot.PlotWith(plot, p.Result, opt); err != nil {
			return err
		}
	}
	if asJSON {
		line := struct {
			Signal      string `json:"signal"`
			StartUnixNs int64  `json:"start_unix_ns"`
			*job.Period
		}{"job", sum.StartUnixNs, p}
		if err := json.NewEncoder(stdout).Encode(line); err != nil {
			return err
		}
		return readErr
	}
	// Times since the job's start, which the first lines give once.
	origin := float64(sum.StartUnixNs) / 1e9
	res := p.Result
	res.TStart -= origin
	res.TEnd -= origin
	res.Phases = append([]ftio.Phase(nil), res.Phases...)
	for i := range res.Phases {
		res.Phases[i].StartS -= origin
		res.Phases[i].EndS -= origin
	}
	var b strings.Builder
	what := map[ftio.Mode]string{ftio.ModeWrite: "writes", ftio.ModeRead: "reads", ftio.ModeBoth: "reads and writes"}[mode]
	procs := "processes'"
	if sum.Ranks == 1 {
		procs = "process's"
	}
	// The grid is the histogram's; FTIO runs on it, or on it merged in
	// pairs until at most job.MaxLadderSamples remain, and coarser.
	fmt.Fprintf(&b, "signal: the job's %s: %d %s bytes spread over each request's duration on one grid of %s bins (%.4g Hz)", what, sum.Ranks, procs, formatSeconds(float64(sum.Signal.WidthNs)/1e9), sum.Signal.Fs)
	if n := len(p.Resolutions); n > 0 {
		first, last := p.Resolutions[0], p.Resolutions[n-1]
		fmt.Fprintf(&b, ", FTIO at %d resolutions from %.4g Hz (%d samples) down to %.4g Hz (%d samples)", n, first.Fs, first.NSamples, last.Fs, last.NSamples)
		if n > 1 {
			fmt.Fprintf(&b, "; below, the one at %.4g Hz", res.Fs)
		}
	}
	fmt.Fprintf(&b, "\njob start: %s; times are seconds since then\n", summary.FormatDate(sum.StartUnixNs))
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	if err := ftio.WriteText(stdout, res); err != nil {
		return err
	}
	b.Reset()
	fmt.Fprintf(&b, "resolutions (%d agree):", p.Agreeing)
	for _, r := range p.Resolutions {
		if r.PeriodS == nil {
			fmt.Fprintf(&b, "  %.4g Hz none", r.Fs)
		} else {
			fmt.Fprintf(&b, "  %.4g Hz %.6g s", r.Fs, *r.PeriodS)
		}
	}
	if len(p.Autocorrelation) > 0 {
		b.WriteString("\nautocorrelation at 1 to 4 of FTIO's periods:")
		for _, c := range p.Autocorrelation {
			if c == nil {
				b.WriteString(" -")
			} else {
				fmt.Fprintf(&b, " %.3f", *c)
			}
		}
	}
	if p.Multiple > 1 {
		fmt.Fprintf(&b, "; the signal repeats at %d times FTIO's period, which is its harmonic", p.Multiple)
	}
	b.WriteString("\n")
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	return readErr
}

// formatSeconds prints a duration in seconds in the unit that suits it.
func formatSeconds(s float64) string {
	switch {
	case s < 1e-3:
		return fmt.Sprintf("%.4g µs", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.4g ms", s*1e3)
	}
	return fmt.Sprintf("%.4g s", s)
}

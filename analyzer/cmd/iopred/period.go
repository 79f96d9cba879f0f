package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"iopred/analyzer/ftio"
	"iopred/analyzer/ftio/ftioplot"
	"iopred/analyzer/job"
	"iopred/analyzer/summary"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "period",
		usage:   "[--mode write|read|both] [--fs HZ] [--tol X] [--json] [--online] [--per-process | --job] [--plot OUT.svg|.png|.html] TRACE|DIR...",
		summary: "FTIO periodicity of the I/O (iopred traces or FTIO's JSON, JSON lines, MessagePack)",
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
	jobView := fs.Bool("job", false, "analyse an MPI job's signal as its job summary does: the ranks' bytes on one time grid, FTIO at several resolutions, the period checked against its multiples (--fs, --average, --tol do not apply)")
	paths, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return errUsage
	}
	mode, err := ftio.ParseMode(*modeFlag)
	if err != nil {
		return err
	}
	opt := ftio.Options{Fs: *hz, Tol: *tol, Amplitude: *amp, Average: *avg}
	if *hz <= 0 {
		opt.Fs = -1
	}
	var modes []string
	if *ftioModes != "" {
		modes = strings.Split(*ftioModes, ",")
	}
	if err := tracefmt.CheckTimeResolved(paths...); err != nil {
		return err
	}
	if *jobView {
		return runPeriodJob(paths, mode, *asJSON, *plot, stdout, stderr)
	}
	srcs, err := ftio.FileSources(paths, mode, modes)
	if err != nil {
		return err
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
	if *plot != "" {
		if err := ftioplot.Plot(*plot, res); err != nil {
			return err
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	return ftio.WriteText(stdout, res)
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

// runPeriodJob prints the period of an MPI job's signal as the job
// summary finds it (job.Period), from the ranks' traces.
func runPeriodJob(paths []string, mode ftio.Mode, asJSON bool, plot string, stdout, stderr io.Writer) error {
	traces, err := tracefmt.Discover(paths...)
	if err != nil {
		return err
	}
	sum, warnings, readErr := job.FromTraces(traces)
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
		if err := json.NewEncoder(stdout).Encode(p); err != nil {
			return err
		}
		return readErr
	}
	if err := ftio.WriteText(stdout, p.Result); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "resolutions (%d agree):", p.Agreeing)
	for _, r := range p.Resolutions {
		if r.PeriodS == nil {
			fmt.Fprintf(&b, "  %.4g Hz none", r.Fs)
		} else {
			fmt.Fprintf(&b, "  %.4g Hz %.6g s", r.Fs, *r.PeriodS)
		}
	}
	b.WriteString("\nautocorrelation at 1 to 4 of FTIO's periods:")
	for _, c := range p.Autocorrelation {
		if c == nil {
			b.WriteString(" -")
		} else {
			fmt.Fprintf(&b, " %.3f", *c)
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

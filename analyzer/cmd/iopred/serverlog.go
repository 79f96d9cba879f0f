package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iopred/internal/safefile"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"iopred/analyzer/serverlog"
	"iopred/analyzer/serverlog/ratesout"
)

func init() {
	register(&command{
		name:    "serverlog",
		usage:   "import SRC... --into STORE [--from T] [--to T] [--all] [--replace] | info [--json] STORE|SRC|JOBLOG... | rates SRC|STORE [--ost LIST] [--from T --to T] [--step S] [--format csv|json|parquet] [-o FILE] [--plot FILE.svg|.png|.html]",
		summary: "server-side logs (LMT, Lustre snapshots, LDMS, CSV, job logs): import into a local store, describe, export and draw the per-OST rates",
		run:     runServerlog,
	})
}

func runServerlog(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "import":
		return runServerlogImport(args[1:], stdout, stderr)
	case "info":
		return runServerlogInfo(args[1:], stdout, stderr)
	case "rates":
		return runServerlogRates(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintf(stdout, "usage: iopred serverlog %s\n%s\n", commands["serverlog"].usage, commands["serverlog"].summary)
		fmt.Fprintln(stdout, "\nRun 'iopred serverlog import -h', 'iopred serverlog info -h' or 'iopred serverlog rates -h' for their options.")
		return nil
	}
	return fmt.Errorf("unknown serverlog command %q (import, info or rates)", args[0])
}

// sourceArgs turns positional sources into specs: KIND:PATH names the kind
// (lmt:, lustre:, ldms:, csv:, store:), a bare path or mysql:// address is
// detected from its content.
func sourceArgs(paths []string) []serverlog.Spec {
	var specs []serverlog.Spec
	for _, p := range paths {
		if k, rest, ok := strings.Cut(p, ":"); ok && slices.Contains(serverlog.Kinds(), k) {
			specs = append(specs, serverlog.Spec{Kind: k, Path: rest})
			continue
		}
		specs = append(specs, serverlog.Spec{Path: p})
	}
	return specs
}

func runServerlogImport(args []string, stdout, stderr io.Writer) error {
	c := &command{name: "serverlog import", usage: "SRC... --into STORE [--from T] [--to T] [--all] [--quiet]",
		summary: "read throughput logs into a compact local store, day by day (UTC days); SRC is a path or mysql:// address, its kind found from the content, or KIND:PATH"}
	fs := newFlagSet(c, stderr)
	var f serverlog.Flags
	f.Register(fs, false)
	into := fs.String("into", "", "the store `DIR` (created if missing)")
	fromS := fs.String("from", "", "import from this time on (RFC 3339, YYYY-MM-DD [HH:MM:SS] in --tz, or Unix seconds)")
	toS := fs.String("to", "", "import up to this time")
	all := fs.Bool("all", false, "re-import every day, also those a source already filled completely")
	replace := fs.Bool("replace", false, "let the sources overwrite samples the store holds from other sources with different values (refused otherwise)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	paths, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	specs := append(sourceArgs(paths), f.Specs()...)
	if *into == "" || len(specs) == 0 {
		return errUsage
	}
	opts, err := f.Options()
	if err != nil {
		return err
	}
	iopts := serverlog.ImportOptions{All: *all, Replace: *replace}
	if iopts.From, err = optTime(*fromS, opts.TZ); err != nil {
		return fmt.Errorf("--from: %v", err)
	}
	if iopts.To, err = optTime(*toS, opts.TZ); err != nil {
		return fmt.Errorf("--to: %v", err)
	}
	start := time.Now()
	if !*quiet {
		iopts.Progress = func(p serverlog.ImportProgress) {
			what := "imported"
			switch {
			case p.Skipped:
				what = "already complete"
			case p.Unchanged:
				what = "unchanged"
			case p.Refused:
				what = "differs from the store"
			}
			fmt.Fprintf(stderr, "%s: %s %s (%d/%d days, %.0f s)\n", p.Source, p.Day, what, p.Done, p.Total, time.Since(start).Seconds())
		}
	}
	// Ctrl-C stops between days: the store keeps every day written.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stats, err := serverlog.Import(ctx, *into, specs, opts, iopts)
	f.Report(stderr)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "interrupted: %d days written, the store is readable and a new import resumes it\n", stats.Days)
		return err
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d days written (%d OST samples, %d known), %d already complete, %d unchanged, in %.1f s\n",
		stats.Days, stats.Cells, stats.Known, stats.Skipped, stats.Unchanged, time.Since(start).Seconds())
	if stats.Replaced > 0 {
		fmt.Fprintf(stdout, "%d OST samples of other sources replaced (--replace)\n", stats.Replaced)
	}
	writeResets(stdout, stats.Resets, opts.TZ)
	return nil
}

// writeResets says how many counter resets there were, on which OSTs and
// when.
func writeResets(w io.Writer, resets []serverlog.CounterReset, loc *time.Location) {
	if len(resets) == 0 {
		return
	}
	if loc == nil {
		loc = time.Local
	}
	osts := map[string]bool{}
	for _, r := range resets {
		osts[r.OST] = true
	}
	fmt.Fprintf(w, "%d counter resets on %d OSTs (the intervals across them are unknown):\n", len(resets), len(osts))
	const show = 20
	for i, r := range resets {
		if i == show {
			fmt.Fprintf(w, "  ... %d more\n", len(resets)-show)
			break
		}
		fmt.Fprintf(w, "  %s between %s and %s\n", r.OST, r.After.In(loc).Format("2006-01-02 15:04:05 MST"), r.Before.In(loc).Format("2006-01-02 15:04:05 MST"))
	}
}

// isEmptyDir tells whether dir holds nothing but hidden entries.
func isEmptyDir(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			return false
		}
	}
	return true
}

func optTime(s string, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return serverlog.ParseTime(s, loc)
}

func runServerlogInfo(args []string, stdout, stderr io.Writer) error {
	c := &command{name: "serverlog info", usage: "[--json] STORE|SRC|JOBLOG...",
		summary: "span, step, OSTs and size of throughput logs and stores; jobs, users and applications of job logs"}
	fs := newFlagSet(c, stderr)
	var f serverlog.Flags
	f.Register(fs, true)
	asJSON := fs.Bool("json", false, "print one JSON object per argument, one per line")
	paths, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	specs := append(sourceArgs(paths), f.Specs()...)
	if len(specs) == 0 && f.Jobs == "" {
		return errUsage
	}
	opts, err := f.Options()
	if err != nil {
		return err
	}
	loc := opts.TZ
	if loc == nil {
		loc = time.Local
	}
	enc := json.NewEncoder(stdout)
	// Job logs are read once each (a row left out under --skip-bad is
	// counted once), the throughput logs first.
	type jobLog struct {
		path string
		jobs []serverlog.Job
	}
	var jobLogs []jobLog
	for _, spec := range specs {
		s, err := serverlog.Describe(spec, opts)
		if err != nil {
			// Not a throughput log: perhaps a job log. A job log with a bad
			// record says what is wrong with it.
			// An address (mysql://, http://) is no job log: its own error
			// stands, and the address, with its password, is not repeated.
			if spec.Kind == "" && !strings.Contains(spec.Path, "://") {
				if st, serr := os.Stat(spec.Path); serr == nil && st.IsDir() && isEmptyDir(spec.Path) {
					return fmt.Errorf("%s: empty directory: neither a throughput log, a store nor a job log", spec.Path)
				}
				jobs, jerr := serverlog.ReadJobs(spec.Path, opts)
				if jerr == nil {
					jobLogs = append(jobLogs, jobLog{spec.Path, jobs})
					continue
				}
				if !serverlog.IsUnknownJobLog(jerr) {
					return jerr
				}
			}
			return err
		}
		if *asJSON {
			if err := enc.Encode(s); err != nil {
				return err
			}
		} else {
			fmt.Fprint(stdout, s.Text(loc))
		}
	}
	if f.Jobs != "" {
		jobs, err := serverlog.ReadJobs(f.Jobs, opts)
		if err != nil {
			return err
		}
		jobLogs = append(jobLogs, jobLog{f.Jobs, jobs})
	}
	for _, jl := range jobLogs {
		p, jobs := jl.path, jl.jobs
		s := serverlog.DescribeJobs(p, jobs)
		if *asJSON {
			if err := enc.Encode(s); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(stdout, "%s (job log)\n  jobs   %d by %d users, %d applications (user, name, nodes)\n", p, s.Jobs, s.Users, s.Apps)
		if s.Jobs > 0 {
			fmt.Fprintf(stdout, "  span   %s .. %s\n", s.From.In(loc).Format("2006-01-02 15:04:05 MST"), s.To.In(loc).Format("2006-01-02 15:04:05 MST"))
		}
	}
	f.Report(stderr)
	return nil
}

func runServerlogRates(args []string, stdout, stderr io.Writer) error {
	c := &command{name: "serverlog rates", usage: "SRC|STORE [--ost LIST] [--from T --to T] [--step S] [--format csv|json|parquet] [-o FILE] [--plot FILE.svg|.png|.html]",
		summary: "write the per-OST and aggregate read and write rates (bytes/s) of a throughput log or store, and draw them as a heat map of OSTs against time under the aggregate"}
	fs := newFlagSet(c, stderr)
	var f serverlog.Flags
	f.Register(fs, false)
	osts := fs.String("ost", "", "only these OSTs: comma-separated names or name endings (OST0003)")
	fromS := fs.String("from", "", "from this time on (RFC 3339, YYYY-MM-DD [HH:MM:SS] in --tz, or Unix seconds); default: the log's start")
	toS := fs.String("to", "", "up to this time; default: the log's end")
	format := fs.String("format", "csv", "csv (time,ost,read_bytes_per_s,write_bytes_per_s; the aggregate as ost total), json or parquet")
	outPath := fs.String("o", "", "write the rates to `FILE` (default: standard output; with --plot only, none)")
	plotPath := fs.String("plot", "", "draw the rates to `FILE` (.svg, .png or .html); a bare svg, png or html names the file after the log (LOG.rates.png)")
	paths, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	specs := append(sourceArgs(paths), f.Specs()...)
	if len(specs) != 1 {
		return errUsage
	}
	if *format != "csv" && *format != "json" && *format != "parquet" {
		return fmt.Errorf("--format %q: want csv, json or parquet", *format)
	}
	opts, err := f.Options()
	if err != nil {
		return err
	}
	from, err := optTime(*fromS, opts.TZ)
	if err != nil {
		return fmt.Errorf("--from: %v", err)
	}
	to, err := optTime(*toS, opts.TZ)
	if err != nil {
		return fmt.Errorf("--to: %v", err)
	}
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		return fmt.Errorf("--to %s is not after --from %s", *toS, *fromS)
	}
	spec := specs[0]
	if spec.Kind == "" {
		if spec.Kind, err = serverlog.DetectKind(spec.Path); err != nil {
			return err
		}
	}
	// A store keeps its own step: it is read on it and averaged to --step.
	step := opts.Step
	if spec.Kind == "store" {
		opts.Step = 0
	}
	src, err := serverlog.OpenSource(spec, opts)
	if err != nil {
		return err
	}
	defer src.Close()
	sf, st, _, err := src.Span()
	if err != nil {
		return err
	}
	const layout = "2006-01-02 15:04:05 MST"
	if !from.IsZero() && !from.Before(st) || !to.IsZero() && !to.After(sf) {
		return fmt.Errorf("%v holds rates from %s to %s, not in the window asked", spec, sf.UTC().Format(layout), st.UTC().Format(layout))
	}
	r, err := src.Window(from, to)
	if err != nil {
		return err
	}
	if r, err = ratesout.Select(r, *osts); err != nil {
		return err
	}
	if spec.Kind == "store" {
		if r, err = ratesout.Resample(r, step); err != nil {
			return err
		}
	}
	f.Report(stderr)
	if *plotPath != "" {
		title := filepath.Base(spec.Path)
		if serverlog.IsMySQL(spec.Path) {
			title = spec.Path[strings.LastIndex(spec.Path, "/")+1:]
		}
		p := *plotPath
		if p == "svg" || p == "png" || p == "html" {
			p = strings.TrimSuffix(title, filepath.Ext(title)) + ".rates." + p
		}
		if err := ratesout.WritePlot(p, r, title); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "figure written to %s\n", p)
		if *outPath == "" {
			return nil
		}
	}
	w := stdout
	var file *safefile.File
	if *outPath != "" && *outPath != "-" {
		if file, err = safefile.Create(*outPath, 0o666); err != nil {
			return err
		}
		defer file.Close()
		w = file
	}
	switch *format {
	case "json":
		err = ratesout.WriteJSON(w, r)
	case "parquet":
		err = ratesout.WriteParquet(w, r)
	default:
		err = ratesout.WriteCSV(w, r)
	}
	if err != nil {
		return err
	}
	if file != nil {
		return file.Commit()
	}
	return nil
}

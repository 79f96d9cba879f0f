package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"iopred/analyzer/insights"
	"iopred/analyzer/report"
	"iopred/internal/safefile"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "report",
		usage:   "[-o FILE.html] [--all-paths] [--align SIZE] [--small SIZE] [--jobs N] [--mpi] TRACE|DIR...",
		summary: "the job's I/O report as one self-contained HTML page: facts, findings, time, bandwidth, period, patterns, files",
		run:     runReport,
	})
}

func runReport(args []string, stdout, stderr io.Writer) error {
	c := commands["report"]
	fs := newFlagSet(c, stderr)
	out := fs.String("o", "report.html", "write the page to `FILE`")
	jobs := jobsFlag(fs)
	useMPI := mpiFlag(fs)
	allPaths := fs.Bool("all-paths", false, "keep the system's files (/etc, /dev, /usr, /proc, /sys, ...) and the MPI runtime's session files, which are left out and counted on one line by default")
	align := fs.String("align", "4KiB", "the alignment requests should start at: the file system's block, or the stripe size on Lustre (`SIZE`: 4096, 64KiB, 1MiB)")
	small := fs.String("small", "1MiB", "requests moving fewer bytes are small (`SIZE`)")
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
	th := insights.Thresholds{}
	if th.Align, err = parseSize(*align); err != nil {
		return fmt.Errorf("--align: %w", err)
	}
	if th.SmallBytes, err = parseSize(*small); err != nil {
		return fmt.Errorf("--small: %w", err)
	}
	opt := report.Options{AllPaths: *allPaths, Thresholds: th, Version: Version, Jobs: *jobs,
		Command: "iopred report " + strings.Join(args, " ")}
	var rep *report.Report
	var buildErr error
	if *useMPI {
		// The page names the command that gives the same page in one
		// process.
		opt.Command = "iopred report " + strings.Join(withoutFlag(args, "mpi"), " ")
		m, err := startMPI()
		if err != nil {
			return err
		}
		defer m.finish()
		rep, buildErr = reportMPI(m, paths, opt)
		if !m.root() {
			return nil // rank 0 writes
		}
	} else {
		traces, err := tracefmt.Discover(paths...)
		if err != nil {
			return err
		}
		rep, buildErr = report.Build(traces, opt)
	}
	if rep == nil {
		return buildErr
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(stderr, "iopred report: warning: %s\n", p)
	}
	f, err := safefile.Create(*out, 0o666)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	if err := rep.WriteHTML(w); err != nil {
		return fmt.Errorf("%s: %w", *out, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", *out, err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	counts := map[insights.Severity]int{}
	for _, fd := range rep.Findings {
		counts[fd.Severity]++
	}
	fmt.Fprintf(stdout, "wrote %s: %d high, %d warnings, %d checks passed\n", *out, counts[insights.High], counts[insights.Warning], counts[insights.OK])
	for _, fd := range rep.Findings {
		if fd.Severity == insights.High || fd.Severity == insights.Warning {
			ev := ""
			if len(fd.Evidence) > 0 {
				ev = ": " + fd.Evidence[0]
			}
			fmt.Fprintf(stdout, "  %-7s %s%s\n", fd.Severity, fd.Title, ev)
		}
	}
	return buildErr
}

// parseSize reads a byte count: a number with an optional unit, K/KB/KiB
// (1024), M/MiB, G/GiB.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"k", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a positive size (4096, 64KiB, 1MiB)", s)
	}
	return n * mult, nil
}

// reportMPI is report.Build spread over the ranks of an MPI job (rank 0
// gets the report, the other ranks nil).
func reportMPI(m *mpiRun, paths []string, opt report.Options) (*report.Report, error) {
	sum, col, sumErr := summarizeMPI(m, paths, report.SummaryOptions(opt, nil), opt.Thresholds)
	var rep *report.Report
	if m.root() && sum != nil {
		traces, _ := tracefmt.Discover(paths...) // summarizeMPI read them
		rep = report.New(traces, sum, col, opt)
	}
	// Rank 0 alone knows whether the job view of the processes is needed;
	// every rank follows it into that reading.
	need, err := m.w.Decide(rep != nil && rep.Job == nil)
	if err != nil {
		return nil, err
	}
	if need {
		traces, err := tracefmt.Discover(paths...)
		if err != nil {
			traces = nil
		}
		j, warnings, jerr := jobViewMPI(m, traces, report.ProcessesOptions(opt))
		if m.root() {
			rep.SetProcessesView(j, warnings, jerr)
		}
	}
	if rep == nil {
		return nil, sumErr
	}
	return rep, sumErr
}

// withoutFlag returns args without the boolean flag name (-name, --name,
// --name=true or false).
func withoutFlag(args []string, name string) []string {
	var out []string
	for _, a := range args {
		t := strings.TrimLeft(a, "-")
		if a != t && (t == name || strings.HasPrefix(t, name+"=")) {
			continue
		}
		out = append(out, a)
	}
	return out
}

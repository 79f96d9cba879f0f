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
		usage:   "[-o FILE.html] [--all-paths] [--align SIZE] [--small SIZE] [--jobs N] TRACE|DIR...",
		summary: "the job's I/O report as one self-contained HTML page: facts, findings, time, bandwidth, period, patterns, files",
		run:     runReport,
	})
}

func runReport(args []string, stdout, stderr io.Writer) error {
	c := commands["report"]
	fs := newFlagSet(c, stderr)
	out := fs.String("o", "report.html", "write the page to `FILE`")
	jobs := jobsFlag(fs)
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
	traces, err := tracefmt.Discover(paths...)
	if err != nil {
		return err
	}
	rep, buildErr := report.Build(traces, report.Options{AllPaths: *allPaths, Thresholds: th, Version: Version, Jobs: *jobs,
		Command: "iopred report " + strings.Join(args, " ")})
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

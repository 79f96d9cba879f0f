package main

import (
	"encoding/json"
	"fmt"
	"io"

	"iopred/analyzer/insights"
	"iopred/analyzer/summary"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "summary",
		usage:   "[--json] [--top N] [--all-paths] [--jobs N] TRACE|DIR...",
		summary: "per process and per file: calls, bytes, time in I/O; the top contexts",
		run:     runSummary,
	})
}

func runSummary(args []string, stdout, stderr io.Writer) error {
	c := commands["summary"]
	fs := newFlagSet(c, stderr)
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	top := fs.Int("top", summary.DefaultTop, "list the `N` contexts with the most time in I/O")
	jobs := jobsFlag(fs)
	allPaths := fs.Bool("all-paths", false, "keep the system's files (/etc, /dev, /usr, /proc, /sys, ...) and the MPI runtime's session files, which are left out and counted on one line by default")
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
	traces, err := tracefmt.Discover(paths...)
	if err != nil {
		return err
	}
	col := insights.NewCollector(insights.Thresholds{})
	rep, sumErr := summary.Summarize(traces, summary.Options{Top: *top, AllPaths: *allPaths, Observer: col, Jobs: *jobs})
	if rep == nil {
		return sumErr
	}
	findings := col.Findings()
	for _, p := range rep.Processes {
		if p.Problem != "" {
			fmt.Fprintf(stderr, "iopred summary: warning: %s\n", p.Problem)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(struct {
			*summary.Report
			Findings []insights.Finding `json:"findings"`
		}{rep, findings})
	} else {
		err = summary.WriteText(stdout, rep)
		if err == nil {
			err = writeFindings(stdout, findings)
		}
	}
	if err != nil {
		return err
	}
	return sumErr
}

// writeFindings prints the problems the findings name, with their first
// piece of evidence, or that every check passed.
func writeFindings(w io.Writer, fs []insights.Finding) error {
	var lines []string
	passed := 0
	for _, f := range fs {
		switch f.Severity {
		case insights.High, insights.Warning:
			ev := ""
			if len(f.Evidence) > 0 {
				ev = ": " + f.Evidence[0]
			}
			lines = append(lines, fmt.Sprintf("%-8s%s%s", f.Severity, f.Title, ev))
		case insights.OK:
			passed++
		}
	}
	if _, err := fmt.Fprintf(w, "\nFINDINGS (%d problems, %d checks passed; iopred report shows the evidence, thresholds and advice)\n", len(lines), passed); err != nil {
		return err
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

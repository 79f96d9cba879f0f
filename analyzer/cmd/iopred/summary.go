package main

import (
	"encoding/json"
	"fmt"
	"io"

	"iopred/analyzer/summary"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "summary",
		usage:   "[--json] [--top N] [--all-paths] TRACE|DIR...",
		summary: "per process and per file: calls, bytes, time in I/O; the top contexts",
		run:     runSummary,
	})
}

func runSummary(args []string, stdout, stderr io.Writer) error {
	c := commands["summary"]
	fs := newFlagSet(c, stderr)
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	top := fs.Int("top", summary.DefaultTop, "list the `N` contexts with the most time in I/O")
	allPaths := fs.Bool("all-paths", false, "keep the system's files (/etc, /dev, /usr, /proc, /sys, ...) and the MPI runtime's session files, which are left out and counted on one line by default")
	paths, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return errUsage
	}
	traces, err := tracefmt.Discover(paths...)
	if err != nil {
		return err
	}
	rep, sumErr := summary.Summarize(traces, summary.Options{Top: *top, AllPaths: *allPaths})
	for _, p := range rep.Processes {
		if p.Problem != "" {
			fmt.Fprintf(stderr, "iopred summary: warning: %s\n", p.Problem)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = summary.WriteText(stdout, rep)
	}
	if err != nil {
		return err
	}
	return sumErr
}

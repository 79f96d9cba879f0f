package main

import (
	"encoding/json"
	"io"

	"iopred/analyzer/patterns"
	"iopred/predictor/pattern"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "patterns",
		usage:   "[--json] [--window N] [--jobs N] TRACE|DIR...",
		summary: "per file: each process's access patterns (PLFS pattern units), global patterns, index compression",
		run:     runPatterns,
	})
}

func runPatterns(args []string, stdout, stderr io.Writer) error {
	c := commands["patterns"]
	fs := newFlagSet(c, stderr)
	asJSON := fs.Bool("json", false, `print {"files": [...]} as JSON`)
	window := fs.Int("window", pattern.DefaultWindow, "search window of the detector, in deltas")
	jobs := jobsFlag(fs)
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
	if err := tracefmt.CheckTimeResolved(traces...); err != nil {
		return err
	}
	rep, readErr := patterns.AnalyzeJobs(traces, *window, *jobs)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = patterns.WriteText(stdout, rep)
	}
	if err != nil {
		return err
	}
	return readErr
}

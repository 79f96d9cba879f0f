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
		usage:   "[--json] [--top N] [--all-paths] [--jobs N] [--mpi] TRACE|DIR...",
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
	useMPI := mpiFlag(fs)
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
	opt := summary.Options{Top: *top, AllPaths: *allPaths, Jobs: *jobs}
	var rep *summary.Report
	var col *insights.Collector
	var sumErr error
	if *useMPI {
		m, err := startMPI()
		if err != nil {
			return err
		}
		defer m.finish()
		rep, col, sumErr = summarizeMPI(m, paths, opt, insights.Thresholds{})
		if !m.root() {
			return nil // rank 0 prints
		}
	} else {
		traces, err := tracefmt.Discover(paths...)
		if err != nil {
			return err
		}
		col = insights.NewCollector(insights.Thresholds{})
		opt.Observer = col
		rep, sumErr = summary.Summarize(traces, opt)
	}
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

// summarizeMPI is summary.Summarize with its findings' collector, spread
// over the ranks of an MPI job: each rank reads its share of the traces,
// rank 0 combines the shares' partial summaries and collectors (the
// other ranks get nil).
func summarizeMPI(m *mpiRun, paths []string, opt summary.Options, th insights.Thresholds) (*summary.Report, *insights.Collector, error) {
	traces, err := tracefmt.Discover(paths...)
	var parts [][]byte
	if err == nil {
		lo, hi := m.share(len(traces))
		col := insights.NewShareCollector(th)
		o := opt
		o.Observer = col
		part := summary.Read(traces, lo, hi, o)
		var a, b []byte
		if a, err = part.Encode(); err == nil {
			b, err = col.Encode()
		}
		parts = [][]byte{a, b}
	}
	all, err := m.gather(parts, err)
	if err != nil || !m.root() {
		return nil, nil, err
	}
	sums := make([]*summary.Partial, len(all))
	cols := make([]*insights.Collector, len(all))
	for r, ps := range all {
		if len(ps) != 2 {
			return nil, nil, fmt.Errorf("MPI rank %d sent %d parts, not 2", r, len(ps))
		}
		if sums[r], err = summary.DecodePartial(ps[0], opt); err != nil {
			return nil, nil, fmt.Errorf("MPI rank %d: %w", r, err)
		}
		if cols[r], err = insights.DecodeCollector(ps[1]); err != nil {
			return nil, nil, fmt.Errorf("MPI rank %d: %w", r, err)
		}
		all[r] = nil
	}
	rep, sumErr := summary.Combine(traces, sums, opt)
	return rep, insights.Combine(th, cols), sumErr
}

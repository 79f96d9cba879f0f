package main

import (
	"encoding/json"
	"fmt"
	"io"

	"iopred/analyzer/patterns"
	"iopred/predictor/pattern"
	"iopred/tracefmt"
)

func init() {
	register(&command{
		name:    "patterns",
		usage:   "[--json] [--window N] [--jobs N] [--mpi] TRACE|DIR...",
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
	var rep *patterns.Report
	var readErr error
	if *useMPI {
		m, err := startMPI()
		if err != nil {
			return err
		}
		defer m.finish()
		rep, readErr = patternsMPI(m, paths, *window, *jobs)
		if !m.root() {
			return nil // rank 0 prints
		}
		if rep == nil {
			return readErr
		}
	} else {
		traces, err := tracefmt.Discover(paths...)
		if err != nil {
			return err
		}
		if err := tracefmt.CheckTimeResolved(traces...); err != nil {
			return err
		}
		rep, readErr = patterns.AnalyzeJobs(traces, *window, *jobs)
	}
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

// patternsMPI is patterns.AnalyzeJobs spread over the ranks of an MPI job
// (rank 0 gets the report, the other ranks nil).
func patternsMPI(m *mpiRun, paths []string, window, jobs int) (*patterns.Report, error) {
	traces, err := tracefmt.Discover(paths...)
	if err == nil {
		err = tracefmt.CheckTimeResolved(traces...)
	}
	var parts [][]byte
	if err == nil {
		lo, hi := m.share(len(traces))
		var b []byte
		b, err = patterns.ReadShare(traces, lo, hi, window, jobs).Encode()
		parts = [][]byte{b}
	}
	all, err := m.gather(parts, err)
	if err != nil || !m.root() {
		return nil, err
	}
	shares := make([]*patterns.Share, len(all))
	for r, ps := range all {
		if len(ps) != 1 {
			return nil, fmt.Errorf("MPI rank %d sent %d parts, not 1", r, len(ps))
		}
		if shares[r], err = patterns.DecodeShare(ps[0]); err != nil {
			return nil, fmt.Errorf("MPI rank %d: %w", r, err)
		}
		all[r] = nil
	}
	return patterns.Combine(traces, shares)
}

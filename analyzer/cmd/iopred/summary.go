package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

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
		if *jobs > 1 && len(traces) > 1 {
			rep, col, sumErr = summarizeInShares(traces, opt, insights.Thresholds{}, *jobs)
		} else {
			col = insights.NewCollector(insights.Thresholds{})
			opt.Observer = col
			cpuStart, clock := processCPU(), startShareClock()
			rep, sumErr = summary.Summarize(traces, opt)
			clock.stop()
			if clock.on {
				shareStats.bounds, shareStats.clocks, shareStats.cpuStart, shareStats.cpuDone = []int{0, len(traces)}, []*shareClock{clock}, cpuStart, processCPU()
			}
		}
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

// summarizeInShares is summary.Summarize with its findings' collector on
// jobs goroutines, as the MPI mode spreads it over ranks: each goroutine
// reads a contiguous share of the traces (of about equal bytes) into its
// own partial summary and collector, and the shares are combined in
// order. Unlike decoding ahead of one summarising goroutine, no part of
// the reading is left to a single core.
func summarizeInShares(traces []string, opt summary.Options, th insights.Thresholds, jobs int) (*summary.Report, *insights.Collector, error) {
	bounds := shareBounds(traces, jobs)
	sums := make([]*summary.Partial, len(bounds)-1)
	cols := make([]*insights.Collector, len(bounds)-1)
	clocks := make([]*shareClock, len(bounds)-1)
	cpuStart := processCPU()
	var wg sync.WaitGroup
	for k := range sums {
		wg.Add(1)
		go func() {
			defer wg.Done()
			clocks[k] = startShareClock()
			defer clocks[k].stop()
			col := insights.NewShareCollector(th)
			o := opt
			o.Observer, o.Jobs = col, 1
			sums[k], cols[k] = summary.Read(traces, bounds[k], bounds[k+1], o), col
		}()
	}
	wg.Wait()
	if clocks[0].on {
		shareStats.bounds, shareStats.clocks, shareStats.cpuStart, shareStats.cpuDone = bounds, clocks, cpuStart, processCPU()
	}
	rep, err := summary.Combine(traces, sums, opt)
	return rep, insights.Combine(th, cols), err
}

// shareBounds splits traces into at most n contiguous shares of about
// equal bytes (a trace that cannot be sized counts as the mean), none
// empty: share k is traces[b[k]:b[k+1]].
func shareBounds(traces []string, n int) []int {
	n = max(min(n, len(traces)), 1)
	sizes := make([]int64, len(traces))
	var total int64
	for i, t := range traces {
		sizes[i] = -1
		if st, err := os.Stat(strings.SplitN(t, "#", 2)[0]); err == nil {
			sizes[i] = st.Size()
			total += sizes[i]
		}
	}
	mean := total/int64(len(traces)) + 1
	total = 0
	for i := range sizes {
		if sizes[i] < 0 {
			sizes[i] = mean
		}
		total += sizes[i]
	}
	bounds := []int{0}
	var sum int64
	for i, size := range sizes {
		// Share k ends before trace i when that leaves it nearer its part
		// of the bytes than taking trace i would, or when the traces left
		// are only enough for one per share.
		k := len(bounds)
		left := len(traces) - i
		if k < n && i > bounds[k-1] && left >= n-k && ((2*sum+size)*int64(n) > 2*total*int64(k) || left == n-k) {
			bounds = append(bounds, i)
		}
		sum += size
	}
	return append(bounds, len(traces))
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

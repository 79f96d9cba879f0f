// Package report writes a job's I/O report as one self-contained HTML
// page (styles, script and figures inline; nothing fetched): what the job
// did (its facts, its time in I/O, its bandwidth over time per rank, the
// period of its I/O, its access patterns, the predictor's accuracy, its
// ranks and files in sortable tables) and what to change (the findings of
// package insights, each with its evidence and threshold).
//
// It reads the traces once for the summary and the findings
// (summary.Summarize with an insights.Collector) and once for the job
// view (job.FromTracesWith), so it works on one process's trace, on an
// MPI job's traces and on any format tracefmt.Open reads.
package report

import (
	"errors"
	"fmt"
	"sort"

	"iopred/analyzer/insights"
	"iopred/analyzer/job"
	"iopred/analyzer/summary"
)

// Options tune a report.
type Options struct {
	// AllPaths keeps the system's and the MPI runtime's files.
	AllPaths bool
	// Thresholds of the findings; zero fields take the defaults.
	Thresholds insights.Thresholds
	// Top is how many contexts (call sites) the report lists; 0 means 20.
	Top int
	// Command is the command line that made the report, and Version
	// iopred's version, both shown at its end.
	Command string
	Version string
	// Jobs is how many traces are read at once (summary.Options.Jobs);
	// the report is the same whatever Jobs.
	Jobs int
}

// Report is everything a report page shows.
type Report struct {
	Traces      []string
	Summary     *summary.Report
	Stats       *insights.Collector
	Findings    []insights.Finding
	Job         *job.Summary
	JobWarnings []string
	Options     Options
	// Problems are the traces that could not be read to their end.
	Problems []string
	// HeatmapPeriod is FTIO's analysis of the job's bandwidth from Darshan
	// HEATMAP records (insights.Collector.Heatmap), nil without heatmaps:
	// the period section's when the traced calls give none (a log
	// without DXT), a check of theirs when the log has DXT too.
	HeatmapPeriod *job.Periods
}

// Build reads the traces and computes the report. A trace that is
// truncated or corrupt still counts with what could be read, listed in
// Problems; the error returned then is the first that was not a
// truncation, beside a usable report.
func Build(traces []string, opt Options) (*Report, error) {
	if len(traces) == 0 {
		return nil, errors.New("report: no trace")
	}
	col := insights.NewCollector(opt.Thresholds)
	sum, err := summary.Summarize(traces, SummaryOptions(opt, col))
	if sum == nil {
		return nil, err
	}
	r := New(traces, sum, col, opt)
	if r.Job == nil {
		// No trace carries a rank: the job view of the processes, taken
		// for ranks in the order given.
		r.SetProcessesView(job.FromTracesWith(traces, ProcessesOptions(opt)))
	}
	return r, err
}

// SummaryOptions are the options Build summarises the traces with, the
// findings' figures going to obs.
func SummaryOptions(opt Options, obs summary.Observer) summary.Options {
	if opt.Top == 0 {
		opt.Top = 20
	}
	return summary.Options{Top: opt.Top, AllPaths: opt.AllPaths, Observer: obs, Jobs: opt.Jobs}
}

// ProcessesOptions are the options of the job view Build reads when no
// trace has a rank (SetProcessesView).
func ProcessesOptions(opt Options) job.Options {
	return job.Options{AllPaths: opt.AllPaths, Processes: true, Jobs: opt.Jobs}
}

// New is the report of the summary and the collector its reading filled
// (what Build does once the traces are read: an analysis spread over MPI
// ranks combines them first). When its Job is nil, SetProcessesView
// gives it the job view of the processes.
func New(traces []string, sum *summary.Report, col *insights.Collector, opt Options) *Report {
	if opt.Top == 0 {
		opt.Top = 20
	}
	r := &Report{Traces: traces, Summary: sum, Stats: col, Findings: col.Findings(), Options: opt}
	r.Options.Thresholds = col.Thresholds()
	if col.Heatmap != nil {
		per := col.HeatmapPeriods()
		r.HeatmapPeriod = &per
	}
	for _, p := range sum.Processes {
		if p.Problem != "" {
			r.Problems = append(r.Problems, p.Problem)
		}
	}
	r.Job, r.JobWarnings = sum.Job, sum.JobWarnings
	return r
}

// SetProcessesView sets the job view of traces without ranks, as
// job.FromTracesWith returns it with ProcessesOptions.
func (r *Report) SetProcessesView(j *job.Summary, warnings []string, jerr error) {
	r.Job = j
	if j == nil && jerr != nil {
		warnings = append(warnings, "no job view: "+jerr.Error())
	}
	r.JobWarnings = append(r.JobWarnings, dedupe(warnings, r.Problems)...)
}

// dedupe drops the warnings already among the problems.
func dedupe(ws, known []string) []string {
	seen := map[string]bool{}
	for _, k := range known {
		seen[k] = true
	}
	var out []string
	for _, w := range ws {
		if !seen[w] {
			out = append(out, w)
		}
	}
	return out
}

// start is the job's start in wall-clock ns.
func (r *Report) start() int64 { return r.Summary.StartUnixNs }

// end is the end of the last process, in ns since the job's start.
func (r *Report) end() int64 {
	var end int64
	for _, p := range r.Stats.Procs {
		end = max(end, p.StartUnixNs-r.start()+p.DurationNs)
	}
	return end
}

// procs returns the processes in rank order (traces without a rank
// after, in their order).
func (r *Report) procs() []*insights.Proc {
	ps := append([]*insights.Proc(nil), r.Stats.Procs...)
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].Rank, ps[j].Rank
		switch {
		case a != nil && b != nil:
			return *a < *b
		case a != nil:
			return true
		}
		return false
	})
	return ps
}

// period returns the job's period analysis worth showing: the writes',
// else the reads', else both's, preferring one that found a period; from
// the traced calls, else from the Darshan heatmaps (fromHeatmap).
func (r *Report) period() (p *job.Period, what string, fromHeatmap bool) {
	if r.Job != nil {
		if p, what = pickPeriod(r.Job.Period); p != nil {
			return p, what, false
		}
	}
	if r.HeatmapPeriod != nil {
		if p, what = pickPeriod(*r.HeatmapPeriod); p != nil {
			return p, what, true
		}
	}
	return nil, "", false
}

// pickPeriod returns the writes', else the reads', else both's analysis,
// preferring one that found a period.
func pickPeriod(per job.Periods) (*job.Period, string) {
	cands := []struct {
		p    *job.Period
		what string
	}{{per.Write, "writes"}, {per.Read, "reads"}, {per.Both, "reads and writes"}}
	for _, c := range cands {
		if c.p != nil && c.p.PeriodS != nil {
			return c.p, c.what
		}
	}
	for _, c := range cands {
		if c.p != nil {
			return c.p, c.what
		}
	}
	return nil, ""
}

func secs(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e9) }

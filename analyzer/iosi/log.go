package iosi

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"iopred/analyzer/serverlog"
)

// Runs returns the runs of app in the job log that ended normally
// (COMPLETED, or no state given) and started in [from, to) (zero times
// leave that side open), by start time. Failed and cancelled runs are
// left out: they stop part-way and would only be trimmed to nothing.
func Runs(jobs []serverlog.Job, app serverlog.App, from, to time.Time) []serverlog.Job {
	var out []serverlog.Job
	for _, j := range jobs {
		if j.App() != app || !completed(j) {
			continue
		}
		if !from.IsZero() && j.Start.Before(from) || !to.IsZero() && !j.Start.Before(to) {
			continue
		}
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b serverlog.Job) int { return a.Start.Compare(b.Start) })
	return out
}

func completed(j serverlog.Job) bool {
	return (j.State == "" || j.State == "COMPLETED") && j.End.After(j.Start)
}

// AppRuns is an application and how many completed runs the job log has.
type AppRuns struct {
	App  serverlog.App
	Runs int
}

// Apps lists the applications of the job log with their completed runs in
// [from, to), most runs first, then by name.
func Apps(jobs []serverlog.Job, from, to time.Time) []AppRuns {
	n := map[serverlog.App]int{}
	for _, j := range jobs {
		if !completed(j) || !from.IsZero() && j.Start.Before(from) || !to.IsZero() && !j.Start.Before(to) {
			continue
		}
		n[j.App()]++
	}
	out := make([]AppRuns, 0, len(n))
	for a, k := range n {
		out = append(out, AppRuns{a, k})
	}
	slices.SortFunc(out, func(a, b AppRuns) int {
		return cmp.Or(b.Runs-a.Runs, cmp.Compare(a.App.String(), b.App.String()))
	})
	return out
}

// SampleFrom cuts a run's sample out of a throughput log: the aggregate
// write and read rates of the intervals from the one holding the run's
// start to the one holding its end.
func SampleFrom(src serverlog.Source, j serverlog.Job) (Sample, error) {
	r, err := src.Window(j.Start, j.End)
	if err != nil {
		return Sample{}, fmt.Errorf("job %s: %w", j.ID, err)
	}
	rd, wr := r.Aggregate()
	return Sample{JobID: j.ID, Start: r.Start, StepS: r.Step.Seconds(), Write: wr, Read: rd}, nil
}

// Log is the whole file system's aggregate throughput held in memory (4
// bytes a value), for extracting the signatures of many applications
// from one reading of a long log.
type Log struct {
	Start time.Time
	Step  time.Duration
	Write []float32
	Read  []float32
}

// ReadLog reads the aggregate rates of src over [from, to) (zero times:
// the source's span), a day at a time so that only one day's per-OST
// rates are in memory at once.
func ReadLog(src serverlog.Source, from, to time.Time) (*Log, error) {
	s0, s1, step, err := src.Span()
	if err != nil {
		return nil, err
	}
	if from.IsZero() || from.Before(s0) {
		from = s0
	}
	if to.IsZero() || to.After(s1) {
		to = s1
	}
	l := &Log{Step: step}
	const day = 24 * time.Hour
	for t := from; t.Before(to); {
		next := t.Truncate(day).Add(day)
		if next.After(to) {
			next = to
		}
		r, err := src.Window(t, next)
		if err != nil {
			return nil, err
		}
		if l.Start.IsZero() {
			l.Start, l.Step = r.Start, r.Step
		}
		if want := l.Start.Add(time.Duration(len(l.Write)) * l.Step); r.Len() > 0 && !r.Start.Equal(want) {
			// Windows of one source follow each other on its grid; if
			// they overlap by the sample holding the boundary, skip it.
			skip := int(want.Sub(r.Start) / l.Step)
			if skip < 0 || skip > r.Len() {
				return nil, fmt.Errorf("log window at %v does not follow the previous one (want %v)", r.Start, want)
			}
			r = r.Slice(r.Time(skip), r.End())
		}
		rd, wr := r.Aggregate()
		for i := range wr {
			l.Write = append(l.Write, float32(wr[i]))
			l.Read = append(l.Read, float32(rd[i]))
		}
		t = next
	}
	return l, nil
}

// Sample cuts a run's sample out of the log, as SampleFrom does; ok is
// false when the run lies outside the log.
func (l *Log) Sample(j serverlog.Job) (Sample, bool) {
	idx := func(t time.Time) int {
		d := t.Sub(l.Start)
		i := int(d / l.Step)
		if d < 0 && d%l.Step != 0 {
			i--
		}
		return i
	}
	lo, hi := idx(j.Start), idx(j.End)
	if !j.End.Equal(l.Start.Add(time.Duration(hi) * l.Step)) {
		hi++
	}
	lo, hi = max(lo, 0), min(hi, len(l.Write))
	if hi-lo < 1 {
		return Sample{}, false
	}
	s := Sample{JobID: j.ID, Start: l.Start.Add(time.Duration(lo) * l.Step), StepS: l.Step.Seconds(),
		Write: make([]float64, hi-lo), Read: make([]float64, hi-lo)}
	for i := lo; i < hi; i++ {
		s.Write[i-lo], s.Read[i-lo] = float64(l.Write[i]), float64(l.Read[i])
	}
	return s, true
}

// WriteRates appends a chunk of per-OST rates to the log as their
// aggregate, so that a Log is a sink of the center simulator
// (centersim.Sink) and months of simulated log can be kept in memory
// without their per-OST detail. The chunk must follow the last one on the
// same grid.
func (l *Log) WriteRates(r *serverlog.Rates) error {
	if l.Start.IsZero() && len(l.Write) == 0 {
		l.Start, l.Step = r.Start, r.Step
	}
	if r.Step != l.Step {
		return fmt.Errorf("log of %v: chunk of %v", l.Step, r.Step)
	}
	if want := l.Start.Add(time.Duration(len(l.Write)) * l.Step); !r.Start.Equal(want) {
		return fmt.Errorf("chunk at %v does not follow the log (want %v)", r.Start, want)
	}
	rd, wr := r.Aggregate()
	for i := range wr {
		l.Write = append(l.Write, float32(wr[i]))
		l.Read = append(l.Read, float32(rd[i]))
	}
	return nil
}

package aid

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"iopred/analyzer/serverlog"
)

// LearnInput is what one learn reads.
type LearnInput struct {
	Source serverlog.Source
	// SourceName names the source in the knowledge base ("--store DIR").
	SourceName string
	Jobs       []serverlog.Job
	// From and To limit the days read (zero: the source's span).
	From, To time.Time
	Options  Options
	// Progress, when set, is told of each day read.
	Progress func(day string, done, total int)
	// Now stamps the manifest (zero: the clock).
	Now time.Time
}

// LearnStats sums up a learn.
type LearnStats struct {
	DaysRead, DaysSkipped int
	Cells                 int64 // OST samples read
	NewJobs               int
	Unchanged             bool // nothing to write: the knowledge base was already up to date
	Generation            int64
	Knowledge             *Knowledge
}

// margin is how much of the neighbouring days the burst detector and the
// footprint's baselines see around a day.
const margin = time.Hour

// Learn brings the knowledge base in dir up to date with the source and
// the jobs: it reads the days of the source it has not read completely
// (and the last one again when the next has come), merges the jobs, and
// classifies every application again from the bursts and runs kept. The
// same input twice leaves the knowledge base as it was.
func Learn(ctx context.Context, dir string, in LearnInput) (LearnStats, error) {
	var stats LearnStats
	if err := os.MkdirAll(filepath.Join(dir, aggDir), 0o755); err != nil {
		return stats, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return stats, err
	}
	defer unlock()
	kb, err := OpenKB(dir)
	if err != nil {
		return stats, err
	}
	st, err := kb.State()
	if err != nil {
		return stats, err
	}
	old, _ := json.Marshal(st)
	opts := in.Options.withDefaults()
	if err := opts.check(); err != nil {
		return stats, err
	}
	st.Options = opts
	from, to, step, err := in.Source.Span()
	if err != nil {
		return stats, err
	}
	osts, err := in.Source.OSTs()
	if err != nil {
		return stats, err
	}
	if st.StepNS == 0 {
		st.StepNS = int64(step)
	} else if st.StepNS != int64(step) {
		return stats, fmt.Errorf("the source's step %v is not the knowledge base's %v", step, time.Duration(st.StepNS))
	}
	st.OSTs = max(st.OSTs, len(osts))
	if in.SourceName != "" && !slices.Contains(st.Sources, in.SourceName) {
		st.Sources = append(st.Sources, in.SourceName)
		sort.Strings(st.Sources)
	}
	if !in.From.IsZero() && in.From.After(from) {
		from = in.From
	}
	if !in.To.IsZero() && in.To.Before(to) {
		to = in.To
	}
	stats.NewJobs = mergeJobs(st, in.Jobs)

	gen := kb.Manifest.Generation + 1
	l := &learner{dir: dir, st: st, src: in.Source, opts: opts, gen: gen, step: step, spanEnd: to}
	days := l.daysToRead(from, to)
	for i, d := range days {
		if err := ctx.Err(); err != nil {
			return stats, err
		}
		n, err := l.readDay(d)
		if err != nil {
			return stats, err
		}
		stats.Cells += n
		if in.Progress != nil {
			in.Progress(d.Format(time.DateOnly), i+1, len(days))
		}
	}
	if err := l.flush(); err != nil {
		return stats, err
	}
	stats.DaysRead = len(days)
	stats.DaysSkipped = len(st.Days) - len(days)
	k := Classify(st)
	stats.Knowledge = k
	now, _ := json.Marshal(st)
	oldK, _ := kb.Knowledge()
	if bytes.Equal(old, now) && oldK != nil && sameKnowledge(oldK, k) {
		stats.Unchanged, stats.Generation = true, kb.Manifest.Generation
		return stats, nil
	}
	t := in.Now
	if t.IsZero() {
		t = time.Now()
	}
	if err := kb.commit(gen, st, k, t); err != nil {
		return stats, err
	}
	stats.Generation = gen
	return stats, nil
}

func sameKnowledge(a, b *Knowledge) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// mergeJobs adds the ended jobs of the log to the state, a job already
// there (same id) replaced; it returns how many were new.
func mergeJobs(st *State, jobs []serverlog.Job) int {
	idx := make(map[string]int, len(st.Jobs))
	for i, r := range st.Jobs {
		idx[r.ID] = i
	}
	added := 0
	for _, j := range jobs {
		if j.End.IsZero() || j.Start.IsZero() || !j.End.After(j.Start) || j.Nodes <= 0 || j.ID == "" {
			continue
		}
		r := Run{ID: j.ID, User: j.User, Name: j.Name, Nodes: j.Nodes, StartNS: j.Start.UnixNano(), EndNS: j.End.UnixNano(), State: j.State}
		if i, ok := idx[r.ID]; ok {
			st.Jobs[i] = r
			continue
		}
		idx[r.ID] = len(st.Jobs)
		st.Jobs = append(st.Jobs, r)
		added++
	}
	sortRuns(st.Jobs)
	return added
}

type learner struct {
	dir     string
	st      *State
	src     serverlog.Source
	opts    Options
	gen     int64
	step    time.Duration
	spanEnd time.Time
	// pending is the day read last, whose bursts wait for the next day's
	// aggregate.
	pending *dayWork
}

type dayWork struct {
	day   time.Time
	idx   int // in st.Days
	rates *serverlog.Rates
}

func dayStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// daysToRead lists the UTC days of [from, to) that are new, were
// incomplete, or were the last read before the next came.
func (l *learner) daysToRead(from, to time.Time) []time.Time {
	var out []time.Time
	have := map[string]Day{}
	for _, d := range l.st.Days {
		have[d.Day] = d
	}
	for d := dayStart(from); d.Before(to); d = d.AddDate(0, 0, 1) {
		old, ok := have[d.Format(time.DateOnly)]
		nextThere := !d.AddDate(0, 0, 1).Add(margin).After(to)
		if ok && old.Complete && (old.Final || !nextThere) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// readDay reads one day's per-OST rates, stores its aggregate, and
// detects the bursts of the day before (whose context is now complete).
func (l *learner) readDay(d time.Time) (int64, error) {
	r, err := l.src.Window(d.Add(-margin), d.AddDate(0, 0, 1).Add(margin))
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", d.Format(time.DateOnly), err)
	}
	cells := int64(r.Len()) * int64(len(r.OSTs))
	lo, hi := r.Index(d), r.Index(d.AddDate(0, 0, 1))
	lo, hi = max(lo, 0), min(hi, r.Len())
	read, write := r.Aggregate()
	known := 0
	for t := lo; t < hi; t++ {
		if !math.IsNaN(write[t]) {
			known++
		}
	}
	name := d.Format(time.DateOnly)
	day := Day{Day: name, StartNS: r.Time(lo).UnixNano(), Cells: hi - lo, Known: known,
		Complete: !l.spanEnd.Before(d.AddDate(0, 0, 1))}
	idx := l.upsertDay(day)
	if err := l.storeAgg(idx, read[lo:hi], write[lo:hi]); err != nil {
		return 0, err
	}
	if p := l.pending; p != nil && p.day.AddDate(0, 0, 1).Equal(d) {
		if err := l.detectDay(p, true); err != nil {
			return 0, err
		}
	} else if err := l.flush(); err != nil {
		return 0, err
	}
	l.pending = &dayWork{day: d, idx: l.dayIndex(name), rates: r}
	return cells, nil
}

// flush detects the bursts of the pending day with what is known after it.
func (l *learner) flush() error {
	p := l.pending
	if p == nil {
		return nil
	}
	l.pending = nil
	next := p.day.AddDate(0, 0, 1).Format(time.DateOnly)
	final := false
	for _, d := range l.st.Days {
		if d.Day == next && d.Known > 0 {
			final = true
		}
	}
	return l.detectDay(p, final)
}

func (l *learner) dayIndex(name string) int {
	i := sort.Search(len(l.st.Days), func(i int) bool { return l.st.Days[i].Day >= name })
	return i
}

func (l *learner) upsertDay(d Day) int {
	i := l.dayIndex(d.Day)
	if i < len(l.st.Days) && l.st.Days[i].Day == d.Day {
		old := l.st.Days[i]
		d.File, d.Bursts, d.Final = old.File, old.Bursts, old.Final
		l.st.Days[i] = d
		return i
	}
	l.st.Days = slices.Insert(l.st.Days, i, d)
	return i
}

// storeAgg writes the day's aggregate under the new generation unless
// the file already there holds the same values.
func (l *learner) storeAgg(i int, read, write []float64) error {
	d := &l.st.Days[i]
	if d.File != "" {
		s0, st0, r0, w0, err := readAgg(filepath.Join(l.dir, aggDir, d.File))
		if err == nil && s0 == d.StartNS && st0 == l.st.StepNS && sameF32(r0, read) && sameF32(w0, write) {
			return nil
		}
	}
	d.File = fmt.Sprintf("%s.%d.agg", d.Day, l.gen)
	return writeAgg(filepath.Join(l.dir, aggDir, d.File), d.StartNS, l.st.StepNS, read, write)
}

func sameF32(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := float32(a[i]), float32(b[i])
		if x != y && !(x != x && y != y) {
			return false
		}
	}
	return true
}

// seriesAround assembles the aggregate from the day before to the day
// after d, from the day files.
func (l *learner) seriesAround(d time.Time) (*series, error) {
	stepNS := l.st.StepNS
	a := d.Add(-margin).UnixNano() / stepNS * stepNS
	b := d.AddDate(0, 0, 1).Add(margin).UnixNano() / stepNS * stepNS
	n := int((b - a) / stepNS)
	s := &series{startNS: a, stepNS: stepNS, read: make([]float64, n), write: make([]float64, n)}
	for i := range n {
		s.read[i], s.write[i] = math.NaN(), math.NaN()
	}
	for _, off := range []int{-1, 0, 1} {
		name := d.AddDate(0, 0, off).Format(time.DateOnly)
		i := l.dayIndex(name)
		if i >= len(l.st.Days) || l.st.Days[i].Day != name || l.st.Days[i].File == "" {
			continue
		}
		s0, _, r, w, err := readAgg(filepath.Join(l.dir, aggDir, l.st.Days[i].File))
		if err != nil {
			return nil, err
		}
		for k := range r {
			t := int((s0 + int64(k)*stepNS - a) / stepNS)
			if t >= 0 && t < n {
				s.read[t], s.write[t] = r[k], w[k]
			}
		}
	}
	return s, nil
}

// detectDay finds the day's bursts in the aggregate and measures each
// on the per-OST rates.
func (l *learner) detectDay(p *dayWork, final bool) error {
	s, err := l.seriesAround(p.day)
	if err != nil {
		return err
	}
	smooth := func(x []float64) []float64 { return gaussian(x, l.opts.Sigma) }
	if l.opts.Detector == "wavelet" {
		smooth = waveletSmooth
	}
	bursts := detect(s, p.day.UnixNano(), p.day.AddDate(0, 0, 1).UnixNano(), l.opts, smooth)
	for k := range bursts {
		footprint(&bursts[k], p.rates)
	}
	bursts = mergeOSTGroups(bursts, ostGroups(p.rates, p.day.UnixNano(), p.day.AddDate(0, 0, 1).UnixNano(), l.opts))
	i := l.dayIndex(p.day.Format(time.DateOnly))
	l.st.Days[i].Bursts = bursts
	l.st.Days[i].Final = final
	return nil
}

// footprint measures a burst on the per-OST log: per OST the bytes of
// the burst above the OST's own level around it (the median of as many
// samples before and after, at least a minute each side). The OSTs that
// carried the burst are those with at least 40% of the typical excess of
// the clearly active ones (a twentieth of the largest or more); the
// refined volume is their excess only.
func footprint(b *Burst, r *serverlog.Rates) {
	a, e := r.Index(time.Unix(0, b.StartNS)), r.Index(time.Unix(0, b.EndNS))
	a, e = max(a, 0), min(e, r.Len())
	if e <= a {
		return
	}
	w := max(12, e-a)
	stepS := r.Step.Seconds()
	ex := make([]float64, len(r.OSTs))
	side := make([]float64, 0, 2*w)
	for i := range r.OSTs {
		side = side[:0]
		for _, t := range [][2]int{{a - w, a}, {e, e + w}} {
			for k := max(t[0], 0); k < min(t[1], r.Len()); k++ {
				if v := r.Read[i][k] + r.Write[i][k]; !math.IsNaN(v) {
					side = append(side, v)
				}
			}
		}
		base := 0.0
		if len(side) > 0 {
			slices.Sort(side)
			base = side[len(side)/2]
		}
		sum := 0.0
		for k := a; k < e; k++ {
			if v := r.Read[i][k] + r.Write[i][k]; !math.IsNaN(v) {
				sum += (v - base) * stepS
			}
		}
		ex[i] = sum
	}
	sorted := slices.Clone(ex)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	if len(sorted) == 0 || sorted[0] <= 0 {
		return
	}
	var active []float64
	for _, v := range sorted {
		if v >= sorted[0]/20 {
			active = append(active, v)
		}
	}
	typical := active[len(active)/2]
	n, sum := 0, 0.0
	for _, v := range sorted {
		if v >= 0.4*typical {
			n++
			sum += v
		}
	}
	b.OSTs, b.Refined = n, sum
}

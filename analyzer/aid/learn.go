package aid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"iopred/analyzer/serverlog"
	"iopred/internal/msgcheck"
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
	// Ranks spreads the days over the processes of a job; nil reads
	// them all in this one.
	Ranks Ranks
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

// Ranks are the processes of a learn spread over a job (an MPI job's
// ranks, say). Every rank calls Learn with the same input; the days to
// read are split among them in contiguous blocks, and rank 0 locks and
// commits the knowledge base, which must be the same directory for all.
type Ranks interface {
	// Rank is this process's rank, from 0; Size how many there are.
	Rank() int
	Size() int
	// Gather sends b to rank 0, which gets every rank's bytes in rank
	// order; the other ranks get nil.
	Gather(b []byte) ([][]byte, error)
	// Decide returns rank 0's v on every rank.
	Decide(v bool) (bool, error)
}

// Learn brings the knowledge base in dir up to date with the source and
// the jobs: it reads the days of the source it has not read completely
// (and the last one again when the next has come), merges the jobs, and
// classifies every application again from the bursts and runs kept. The
// same input twice leaves the knowledge base as it was.
//
// With in.Ranks, each rank reads its block of the days (and writes their
// aggregates); a day's bursts are found on the aggregates of the days on
// each side, so a rank also reads the day before its block and the day
// after when another rank reads them, for their aggregates alone. Rank 0
// gathers the days' records and writes the knowledge base one process
// writes, byte for byte; the other ranks return empty stats and no error
// (their errors reach rank 0, which returns the first in the days' order).
func Learn(ctx context.Context, dir string, in LearnInput) (LearnStats, error) {
	var stats LearnStats
	rank, size := 0, 1
	if in.Ranks != nil {
		rank, size = in.Ranks.Rank(), in.Ranks.Size()
	}
	var unlock func()
	var err error
	if rank == 0 {
		if err = os.MkdirAll(filepath.Join(dir, aggDir), 0o755); err == nil {
			unlock, err = lock(dir)
		}
	}
	if size > 1 {
		// The others read the knowledge base only once rank 0 holds it.
		ok, derr := in.Ranks.Decide(err == nil)
		if derr != nil {
			return stats, derr
		}
		if !ok && rank != 0 {
			return stats, nil
		}
	}
	if err != nil {
		return stats, err
	}
	if unlock != nil {
		defer unlock()
	}
	run, err := startLearn(dir, in, &stats)
	var cells int64
	if err == nil {
		cells, err = run.readShare(ctx, in.Progress, rank, size)
	}
	if size > 1 {
		var ok bool
		ok, err = run.gatherDays(in.Ranks, rank, cells, err)
		if !ok {
			return LearnStats{}, err
		}
	} else {
		stats.Cells = cells
	}
	if err != nil {
		return stats, err
	}
	if size > 1 {
		stats.Cells = run.cells
	}
	return run.finish(&stats, in.Now)
}

// learnRun is one learn between reading the knowledge base and
// committing it.
type learnRun struct {
	kb    *KB
	l     *learner
	old   []byte // the state as read
	days  []time.Time
	cells int64 // every rank's, on rank 0
}

// startLearn reads the knowledge base and the source's span and lists the
// days to read.
func startLearn(dir string, in LearnInput, stats *LearnStats) (*learnRun, error) {
	kb, err := OpenKB(dir)
	if err != nil {
		return nil, err
	}
	st, err := kb.State()
	if err != nil {
		return nil, err
	}
	old, _ := json.Marshal(st)
	opts := in.Options.withDefaults()
	if err := opts.check(); err != nil {
		return nil, err
	}
	st.Options = opts
	from, to, step, err := in.Source.Span()
	if err != nil {
		return nil, err
	}
	osts, err := in.Source.OSTs()
	if err != nil {
		return nil, err
	}
	if st.StepNS == 0 {
		st.StepNS = int64(step)
	} else if st.StepNS != int64(step) {
		return nil, fmt.Errorf("the source's step %v is not the knowledge base's %v", step, time.Duration(st.StepNS))
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
	return &learnRun{kb: kb, l: l, old: old, days: l.daysToRead(from, to)}, nil
}

// readShare reads rank's block of the days (all of them for one rank)
// and detects their bursts; it returns the OST samples read.
func (run *learnRun) readShare(ctx context.Context, progress func(string, int, int), rank, size int) (int64, error) {
	l, days := run.l, run.days
	lo, hi := rank*len(days)/size, (rank+1)*len(days)/size
	if lo == hi {
		return 0, nil
	}
	if lo > 0 && days[lo-1].AddDate(0, 0, 1).Equal(days[lo]) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := l.readNeighbour(days[lo-1]); err != nil {
			return 0, err
		}
	}
	var cells int64
	for i := lo; i < hi; i++ {
		if err := ctx.Err(); err != nil {
			return cells, err
		}
		n, err := l.readDay(days[i])
		if err != nil {
			return cells, err
		}
		cells += n
		if progress != nil {
			progress(days[i].Format(time.DateOnly), i+1-lo, hi-lo)
		}
	}
	if hi < len(days) && days[hi-1].AddDate(0, 0, 1).Equal(days[hi]) {
		// The next rank reads the next day; its bursts are final here
		// as they are when one process reads on into that day.
		if err := ctx.Err(); err != nil {
			return cells, err
		}
		if err := l.readNeighbour(days[hi]); err != nil {
			return cells, err
		}
		p := l.pending
		l.pending = nil
		return cells, l.detectDay(p, true)
	}
	return cells, l.flush()
}

// rankDays is what a rank sends rank 0: the records of the days it read,
// or why it could not.
type rankDays struct {
	Err   string `msgpack:"err"`
	Days  []Day  `msgpack:"days"`
	Cells int64  `msgpack:"cells"`
}

// gatherDays sends this rank's days' records to rank 0, which puts them
// into its state. It returns false on the ranks other than 0, and rank
// 0's error is then the first rank's error (in rank order, so in the
// days' order).
func (run *learnRun) gatherDays(ranks Ranks, rank int, cells int64, err error) (bool, error) {
	msg := rankDays{Cells: cells}
	if err != nil {
		msg.Err = err.Error()
	} else {
		lo, hi := rank*len(run.days)/ranks.Size(), (rank+1)*len(run.days)/ranks.Size()
		for _, d := range run.days[lo:hi] {
			name := d.Format(time.DateOnly)
			msg.Days = append(msg.Days, run.l.st.Days[run.l.dayIndex(name)])
		}
	}
	b, merr := msgcheck.Marshal(&msg)
	if merr != nil {
		b, _ = msgcheck.Marshal(&rankDays{Err: merr.Error()})
	}
	all, gerr := ranks.Gather(b)
	if gerr != nil {
		return rank == 0, gerr
	}
	if rank != 0 {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	for r, b := range all[1:] {
		var got rankDays
		if err := msgcheck.Unmarshal(b, &got); err != nil {
			return true, fmt.Errorf("rank %d: %w", r+1, err)
		}
		if got.Err != "" {
			return true, errors.New(got.Err)
		}
		run.cells += got.Cells
		for _, d := range got.Days {
			run.l.putDay(d)
		}
	}
	run.cells += cells
	return true, nil
}

// finish classifies the applications and commits the knowledge base
// unless nothing changed.
func (run *learnRun) finish(stats *LearnStats, now time.Time) (LearnStats, error) {
	st, kb := run.l.st, run.kb
	stats.DaysRead = len(run.days)
	stats.DaysSkipped = len(st.Days) - len(run.days)
	k := Classify(st)
	stats.Knowledge = k
	cur, _ := json.Marshal(st)
	oldK, _ := kb.Knowledge()
	if bytes.Equal(run.old, cur) && oldK != nil && sameKnowledge(oldK, k) {
		stats.Unchanged, stats.Generation = true, kb.Manifest.Generation
		return *stats, nil
	}
	if now.IsZero() {
		now = time.Now()
	}
	if err := kb.commit(run.l.gen, st, k, now); err != nil {
		return *stats, err
	}
	stats.Generation = run.l.gen
	return *stats, nil
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
	// neighbours holds the aggregates of the days next to a rank's block
	// that another rank reads and stores.
	neighbours map[string]dayAgg
}

// dayAgg is a day's aggregate as its file holds it (float32 values).
type dayAgg struct {
	startNS     int64
	read, write []float64
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

// window reads the per-OST rates around day d and their aggregate over
// the day's cells [lo, hi).
func (l *learner) window(d time.Time) (r *serverlog.Rates, lo, hi int, read, write []float64, err error) {
	r, err = l.src.Window(d.Add(-margin), d.AddDate(0, 0, 1).Add(margin))
	if err != nil {
		return nil, 0, 0, nil, nil, fmt.Errorf("reading %s: %w", d.Format(time.DateOnly), err)
	}
	lo, hi = r.Index(d), r.Index(d.AddDate(0, 0, 1))
	lo, hi = max(lo, 0), min(hi, r.Len())
	read, write = r.Aggregate()
	return r, lo, hi, read, write, nil
}

// readDay reads one day's per-OST rates, stores its aggregate, and
// detects the bursts of the day before (whose context is now complete).
func (l *learner) readDay(d time.Time) (int64, error) {
	r, lo, hi, read, write, err := l.window(d)
	if err != nil {
		return 0, err
	}
	cells := int64(r.Len()) * int64(len(r.OSTs))
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

// readNeighbour reads day d, which another rank reads and stores, for
// its aggregate alone, rounded as its file will hold it.
func (l *learner) readNeighbour(d time.Time) error {
	r, lo, hi, read, write, err := l.window(d)
	if err != nil {
		return err
	}
	agg := dayAgg{startNS: r.Time(lo).UnixNano(), read: make([]float64, hi-lo), write: make([]float64, hi-lo)}
	for k := range hi - lo {
		agg.read[k] = float64(float32(read[lo+k]))
		agg.write[k] = float64(float32(write[lo+k]))
	}
	if l.neighbours == nil {
		l.neighbours = map[string]dayAgg{}
	}
	l.neighbours[d.Format(time.DateOnly)] = agg
	return nil
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

// putDay puts another rank's record of a day it read into the state.
func (l *learner) putDay(d Day) {
	i := l.dayIndex(d.Day)
	if i < len(l.st.Days) && l.st.Days[i].Day == d.Day {
		l.st.Days[i] = d
		return
	}
	l.st.Days = slices.Insert(l.st.Days, i, d)
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
		var s0 int64
		var r, w []float64
		if agg, ok := l.neighbours[name]; ok {
			s0, r, w = agg.startNS, agg.read, agg.write
		} else {
			i := l.dayIndex(name)
			if i >= len(l.st.Days) || l.st.Days[i].Day != name || l.st.Days[i].File == "" {
				continue
			}
			var err error
			if s0, _, r, w, err = readAgg(filepath.Join(l.dir, aggDir, l.st.Days[i].File)); err != nil {
				return nil, err
			}
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

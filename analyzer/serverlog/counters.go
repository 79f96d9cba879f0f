package serverlog

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// reading is one reading of an OST's cumulative byte counters.
type reading struct {
	t    int64 // Unix nanoseconds
	r, w uint64
	gap  bool // the interval that ends here is unknown whatever the counters say
}

// counterLog is what every counter-based log (LMT, Lustre snapshots,
// LDMS, CSV) gives: per-OST counter readings. counterSource turns it into
// a Source, so that gaps, resets and the grid are handled once.
type counterLog interface {
	// names lists the OSTs; readings are indexed the same way.
	names() []string
	// what names the log in messages.
	what() string
	// bounds returns the times of the first and last readings and the
	// log's own sample width.
	bounds() (first, last int64, step time.Duration)
	// readings returns, per OST, its readings with from <= t <= to,
	// sorted by time.
	readings(from, to int64) ([][]reading, error)
	close() error
}

// counterSource is a Source over a counterLog.
type counterSource struct {
	log     counterLog
	resets  map[CounterReset]bool // found by the windows read so far
	step    time.Duration         // grid width
	maxIv   int64                 // longest interval taken as measured, ns
	maxRate float64
}

func newCounterSource(log counterLog, opts *Options) *counterSource {
	_, _, native := log.bounds()
	step := native
	if opts != nil && opts.Step > 0 {
		step = opts.Step
	}
	if r, ok := log.(interface{ repairs() (int, int) }); ok {
		if dis, rep := r.repairs(); dis+rep > 0 {
			opts.warn(fmt.Sprintf("%s: %d readings out of time order (sorted) and %d repeating a time (kept once; where their counters differ, the intervals around that time are unknown)",
				log.what(), dis, rep))
		}
	}
	return &counterSource{log: log, step: step,
		maxIv: int64(opts.maxInterval(native)), maxRate: opts.maxRate()}
}

// Span covers the cells from the one holding the first reading to the one
// holding the last.
func (s *counterSource) Span() (from, to time.Time, step time.Duration, err error) {
	first, last, _ := s.log.bounds()
	st := int64(s.step)
	return time.Unix(0, floorDiv(first, st)*st), time.Unix(0, ceilDiv(last, st)*st), s.step, nil
}

func (s *counterSource) OSTs() ([]string, error) { return slices.Clone(s.log.names()), nil }

func (s *counterSource) Close() error { return s.log.close() }

// Window grids the readings of [from, to), clipped to the span, on cells
// aligned to whole multiples of the step since the Unix epoch (so that
// windows and days of one source line up). A zero from or to means the
// span's edge.
func (s *counterSource) Window(from, to time.Time) (*Rates, error) {
	k0, k1 := s.cells(from, to)
	st := int64(s.step)
	start, end := k0*st, k1*st
	rs, err := s.log.readings(start-s.maxIv, end+s.maxIv)
	if err != nil {
		return nil, err
	}
	s.findResets(rs, start, end)
	return gridReadings(rs, s.log.names(), start, s.step, int(k1-k0), s.maxIv, s.maxRate), nil
}

// CounterReset is a counter of an OST that went down between two
// readings: a server restart, a wrap or a counter cleared by hand. The
// interval is unknown (NaN), and the counting starts again after it.
type CounterReset struct {
	OST    string
	After  time.Time // the last reading before the reset
	Before time.Time // the first reading after it
}

// ResetReporter is a Source that tells the counter resets it met in the
// windows read so far.
type ResetReporter interface {
	CounterResets() []CounterReset
}

// Identity names the log's content, wherever it is and whatever zone it
// is read in, when the log can tell (LMT: its OSTs and first timestamp);
// empty otherwise.
func (s *counterSource) Identity() string {
	if l, ok := s.log.(interface{ identity() string }); ok {
		return l.identity()
	}
	return ""
}

// CounterResets returns the resets of the windows read so far, by time.
func (s *counterSource) CounterResets() []CounterReset {
	out := make([]CounterReset, 0, len(s.resets))
	for r := range s.resets {
		out = append(out, r)
	}
	sortResets(out)
	return out
}

func sortResets(rs []CounterReset) {
	slices.SortFunc(rs, func(a, b CounterReset) int {
		if c := a.Before.Compare(b.Before); c != 0 {
			return c
		}
		return cmpString(a.OST, b.OST)
	})
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// findResets notes the counters that went down at a reading in [start,
// end), however long the interval before it.
func (s *counterSource) findResets(rs [][]reading, start, end int64) {
	names := s.log.names()
	for i, ost := range rs {
		for j := 1; j < len(ost); j++ {
			a, b := ost[j-1], ost[j]
			if b.t < start || b.t >= end || b.t <= a.t || b.r >= a.r && b.w >= a.w {
				continue
			}
			if s.resets == nil {
				s.resets = map[CounterReset]bool{}
			}
			s.resets[CounterReset{OST: names[i], After: time.Unix(0, a.t).UTC(), Before: time.Unix(0, b.t).UTC()}] = true
		}
	}
}

// cells returns the range of grid cells [k0, k1) of the window, clipped
// to the span.
func (s *counterSource) cells(from, to time.Time) (k0, k1 int64) {
	first, last, _ := s.log.bounds()
	st := int64(s.step)
	lo, hi := floorDiv(first, st), ceilDiv(last, st)
	k0, k1 = lo, hi
	if !from.IsZero() {
		k0 = max(lo, floorDiv(from.UnixNano(), st))
	}
	if !to.IsZero() {
		k1 = min(hi, ceilDiv(to.UnixNano(), st))
	}
	if k1 < k0 {
		k1 = k0
	}
	return k0, k1
}

// gridReadings turns counter readings into rates on n cells of width step
// from start (Unix ns). Each interval between two successive readings of
// an OST is a known rate when it is no longer than maxIv, its counter did
// not go down (a reset or a wrap leaves the interval unknown) and the rate
// it implies is at most maxRate; its bytes go to the cells it overlaps in
// proportion to the overlap. A cell is the mean rate over its known part,
// or NaN when less than half of it is known.
func gridReadings(rs [][]reading, names []string, start int64, step time.Duration, n int, maxIv int64, maxRate float64) *Rates {
	out := &Rates{Start: time.Unix(0, start), Step: step, OSTs: names,
		Read: make([][]float64, len(names)), Write: make([][]float64, len(names))}
	g := gridder{start: start, step: int64(step), n: n, maxIv: maxIv, maxRate: maxRate,
		bytesR: make([]float64, n), coverR: make([]float64, n),
		bytesW: make([]float64, n), coverW: make([]float64, n)}
	back := make([]float64, 2*n*len(names))
	for i := range names {
		out.Read[i], out.Write[i] = back[2*i*n:(2*i+1)*n:(2*i+1)*n], back[(2*i+1)*n:(2*i+2)*n:(2*i+2)*n]
		var ost []reading
		if i < len(rs) {
			ost = rs[i]
		}
		g.series(ost, out.Read[i], out.Write[i])
	}
	return out
}

type gridder struct {
	start, step    int64
	n              int
	maxIv          int64
	maxRate        float64
	bytesR, coverR []float64 // per cell: read bytes attributed, seconds known
	bytesW, coverW []float64
}

func (g *gridder) series(rs []reading, read, write []float64) {
	clear(g.bytesR)
	clear(g.coverR)
	clear(g.bytesW)
	clear(g.coverW)
	for j := 1; j < len(rs); j++ {
		a, b := rs[j-1], rs[j]
		dt := b.t - a.t
		if dt <= 0 || dt > g.maxIv || b.gap {
			continue
		}
		sec := float64(dt) / 1e9
		// A counter that went down was reset or wrapped: the bytes of the
		// interval are unknown, never negative.
		okR := b.r >= a.r && float64(b.r-a.r)/sec <= g.maxRate
		okW := b.w >= a.w && float64(b.w-a.w)/sec <= g.maxRate
		if !okR && !okW {
			continue
		}
		dr, dw := float64(b.r-a.r), float64(b.w-a.w)
		k := max(floorDiv(a.t-g.start, g.step), 0)
		for ; k < int64(g.n); k++ {
			cs := g.start + k*g.step
			if cs >= b.t {
				break
			}
			ov := min(b.t, cs+g.step) - max(a.t, cs)
			// The interval's bytes in proportion to the overlap, so that an
			// interval that is exactly one cell gives exactly its
			// difference.
			share, ovs := float64(ov)/float64(dt), float64(ov)/1e9
			if okR {
				g.bytesR[k] += dr * share
				g.coverR[k] += ovs
			}
			if okW {
				g.bytesW[k] += dw * share
				g.coverW[k] += ovs
			}
		}
	}
	half := float64(g.step) / 2e9
	for k := range read {
		read[k], write[k] = math.NaN(), math.NaN()
		if g.coverR[k] >= half {
			read[k] = g.bytesR[k] / g.coverR[k]
		}
		if g.coverW[k] >= half {
			write[k] = g.bytesW[k] / g.coverW[k]
		}
	}
}

// sortReadings orders one OST's readings by time. Readings of the same
// time are kept once: the later one, unless their counters differ, when
// neither can be trusted and the intervals on both sides of that time are
// left unknown (the reading is kept only as a gap marker). It returns how
// many readings were out of order and how many repeated a time.
func sortReadings(rs []reading) (out []reading, disordered, repeated int) {
	for i := 1; i < len(rs); i++ {
		if rs[i].t < rs[i-1].t {
			disordered++
		}
	}
	if disordered > 0 {
		slices.SortStableFunc(rs, func(a, b reading) int { return cmpInt64(a.t, b.t) })
	}
	out = rs[:0]
	clash := false
	for _, x := range rs {
		if n := len(out); n > 0 && out[n-1].t == x.t {
			repeated++
			if out[n-1].r != x.r || out[n-1].w != x.w {
				clash = true
			}
			out[n-1] = x
			if clash {
				out[n-1].gap = true
			}
			continue
		}
		if clash {
			x.gap, clash = true, false
		}
		out = append(out, x)
	}
	return out, disordered, repeated
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// nativeStep is the typical interval between successive times (the
// median), rounded to whole seconds above one second and to milliseconds
// below: collectors started by cron or a daemon drift by a few
// milliseconds around their configured period.
func nativeStep(ts []int64) (time.Duration, error) {
	var iv []int64
	for i := 1; i < len(ts); i++ {
		if d := ts[i] - ts[i-1]; d > 0 {
			iv = append(iv, d)
		}
	}
	if len(iv) == 0 {
		return 0, fmt.Errorf("fewer than two distinct reading times: no interval")
	}
	slices.Sort(iv)
	d := time.Duration(iv[len(iv)/2])
	if d >= time.Second {
		d = d.Round(time.Second)
	} else {
		d = max(d.Round(time.Millisecond), time.Millisecond)
	}
	return d, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

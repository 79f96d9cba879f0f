package pattern

import "sort"

// Detector runs Detect over values as they come: Add them one at a time,
// Close, then Units gives what Detect gives for the whole sequence. It
// holds the level-0 spans Algorithm 1 found (a pattern each, kept with
// its deltas) and a window of values on either side of the position it
// has reached, so its memory grows with the patterns of the sequence and
// not with its length: a strided stream of millions of values is one
// span.
//
// Algorithm 1 at position p looks at most window deltas back and ahead,
// and may fold only the spans that cover the last window deltas; so a
// step is taken once window deltas past p are known, and a span becomes
// final once the spans after it cover window deltas. The regrouping of
// spans into longer units and the tail of Detect work on the spans alone.
type Detector struct {
	window int
	n      int64
	first  int64   // the first value
	buf    []int64 // values base .. base+len(buf)-1
	base   int64
	p      int64 // delta position of the walk
	st     []dspan
	done   []dspan
	closed bool
}

// dspan is a span with its values: reps repetitions of deltas from the
// value init at delta position start.
type dspan struct {
	start, init, reps int64
	deltas            []int64
}

func (s *dspan) cover() int64 { return int64(len(s.deltas)) * s.reps }

// NewDetector returns a detector with the given window (DefaultWindow
// when window <= 0).
func NewDetector(window int) *Detector {
	if window <= 0 {
		window = DefaultWindow
	}
	return &Detector{window: window}
}

// Len is the number of values added.
func (d *Detector) Len() int64 { return d.n }

// Add appends the next value. It panics after Close.
func (d *Detector) Add(v int64) {
	if d.closed {
		panic("pattern: Detector.Add after Close")
	}
	if d.n == 0 {
		d.first = v
	}
	d.buf = append(d.buf, v)
	d.n++
	d.walk()
}

// Close ends the sequence: the walk finishes over the last deltas.
func (d *Detector) Close() {
	if !d.closed {
		d.closed = true
		d.walk()
	}
}

// value returns the value at index i (within the buffer).
func (d *Detector) value(i int64) int64 { return d.buf[i-d.base] }

// delta returns delta i: value i+1 minus value i.
func (d *Detector) delta(i int64) int64 { return d.value(i+1) - d.value(i) }

func (d *Detector) equalDeltas(a, b, k int64) bool {
	for i := int64(0); i < k; i++ {
		if d.delta(a+i) != d.delta(b+i) {
			return false
		}
	}
	return true
}

// walk takes the steps of Algorithm 1 whose lookahead is known.
func (d *Detector) walk() {
	w := int64(d.window)
	known := d.n - 1 // deltas known
	for d.p < known && (d.closed || d.p+w <= known) {
		d.step(known)
	}
	// Spans covered by window deltas after them are final.
	above, keep := int64(0), len(d.st)
	for keep > 0 && above < w {
		keep--
		above += d.st[keep].cover()
	}
	if above >= w && keep > 0 {
		d.done = append(d.done, d.st[:keep]...)
		d.st = append(d.st[:0], d.st[keep:]...)
	}
	// Keep the values from window deltas before the walk on.
	if drop := d.p - w - d.base; drop > 0 && drop >= int64(len(d.buf))/2 {
		d.buf = append(d.buf[:0], d.buf[drop:]...)
		d.base += drop
	}
}

// step is one iteration of detectSpans at d.p over known deltas.
func (d *Detector) step(known int64) {
	p := d.p
	if n := len(d.st); n > 0 {
		top := &d.st[n-1]
		l := int64(len(top.deltas))
		if p+l <= known {
			same := true
			for i := int64(0); i < l && same; i++ {
				same = top.deltas[i] == d.delta(p+i)
			}
			if same {
				top.reps++
				d.p += l
				return
			}
		}
	}
	for k := int64(2); k <= int64(d.window) && k <= p && p+k <= known; k++ {
		if !d.equalDeltas(p-k, p, k) {
			continue
		}
		i, covered := len(d.st), int64(0)
		for i > 0 && covered < k {
			i--
			covered += d.st[i].cover()
		}
		if covered != k {
			continue
		}
		deltas := make([]int64, k)
		for j := range deltas {
			deltas[j] = d.delta(p - k + int64(j))
		}
		d.st = append(d.st[:i], dspan{start: p - k, init: d.value(p - k), reps: 2, deltas: deltas})
		d.p += k
		return
	}
	d.st = append(d.st, dspan{start: p, init: d.value(p), reps: 1, deltas: []int64{d.delta(p)}})
	d.p++
}

// spans returns every level-0 span so far (all of them after Close).
func (d *Detector) spans() []dspan {
	out := make([]dspan, 0, len(d.done)+len(d.st))
	return append(append(out, d.done...), d.st...)
}

// Units returns the pattern units of the values added, as Detect finds
// them; it closes the detector.
func (d *Detector) Units() []Unit {
	d.Close()
	if d.n == 0 {
		return nil
	}
	spans := d.spans()
	for level := 0; level < 4; level++ {
		var changed bool
		if spans, changed = regroupSpans(spans, d.window); !changed {
			break
		}
	}
	// A last, partial repetition of a repeated pattern becomes its tail
	// (as in Detect): the deltas after span j are those of the spans
	// after it.
	var tail int64
	best := -1
	for j := len(spans) - 1; j >= 0 && len(spans)-j <= d.window+1; j-- {
		sp := &spans[j]
		var rest int64
		for k := j + 1; k < len(spans); k++ {
			rest += spans[k].cover()
		}
		if sp.reps >= 2 && rest > 0 && rest < int64(len(sp.deltas)) && prefixOf(sp.deltas, spans[j+1:], rest) {
			best, tail = j, rest
		}
	}
	if best >= 0 {
		spans = spans[:best+1]
	}
	units := make([]Unit, 0, len(spans)+1)
	for _, sp := range spans {
		units = append(units, Unit{Init: sp.init, Deltas: append([]int64(nil), sp.deltas...), Reps: sp.reps})
	}
	if len(units) == 0 {
		units = append(units, Unit{Init: d.firstValue()})
	}
	units[len(units)-1].Tail = tail + 1
	return units
}

// firstValue is the first value added.
func (d *Detector) firstValue() int64 { return d.first }

// prefixOf tells whether the first n deltas of p equal the expansion of
// spans (which covers exactly n deltas).
func prefixOf(p []int64, spans []dspan, n int64) bool {
	var i int64
	for _, sp := range spans {
		for r := int64(0); r < sp.reps; r++ {
			for _, x := range sp.deltas {
				if p[i] != x {
					return false
				}
				i++
			}
		}
	}
	return i == n
}

// regroupSpans is regroup over spans that carry their deltas: repeated
// groups of spans of the same shapes become one span whose deltas are
// the group's.
func regroupSpans(spans []dspan, window int) ([]dspan, bool) {
	keys := make([]spanKey, len(spans))
	for i := range spans {
		sp := &spans[i]
		k := spanKey{period: len(sp.deltas), reps: int(sp.reps), first: sp.deltas[0]}
		for _, x := range sp.deltas {
			k.sum += x
			k.hash = k.hash*1000003 + x
		}
		keys[i] = k
	}
	groups := detectSpans(keys, window)
	if len(groups) == len(spans) {
		return spans, false
	}
	out := make([]dspan, 0, len(groups))
	changed := false
	for _, g := range groups {
		members := spans[g.start : g.start+g.period]
		first, last := members[0], members[len(members)-1]
		period := last.start + last.cover() - first.start
		// Shapes are compared by a hash: check every repetition's
		// members exactly.
		same := g.reps >= 2 && period <= MaxGroup
		for r := 1; same && r < g.reps; r++ {
			for j := range members {
				o := &spans[g.start+r*g.period+j]
				if o.reps != members[j].reps || len(o.deltas) != len(members[j].deltas) || !equalRun(o.deltas, members[j].deltas) {
					same = false
					break
				}
			}
		}
		if !same {
			out = append(out, spans[g.start:g.start+g.period*g.reps]...)
			continue
		}
		deltas := make([]int64, 0, period)
		for _, m := range members {
			for r := int64(0); r < m.reps; r++ {
				deltas = append(deltas, m.deltas...)
			}
		}
		out = append(out, dspan{start: first.start, init: first.init, reps: int64(g.reps), deltas: deltas})
		changed = true
	}
	return out, changed
}

// Segment returns Detect of the n values from index from on (as Detect
// of q[from:from+n]), read back from the closed detector's spans: the
// lengths and physical offsets of a pattern index entry are detected
// over the positions of its logical unit.
func (d *Detector) Segment(from, n int64) []Unit {
	d.Close()
	seg := NewDetector(d.window)
	d.each(from, n, seg.Add)
	return seg.Units()
}

// each calls fn with the n values from index from on.
func (d *Detector) each(from, n int64, fn func(int64)) {
	if n <= 0 || from < 0 || from+n > d.n {
		return
	}
	spans := d.spans()
	// The span holding delta from (the last one for the last value).
	i := sort.Search(len(spans), func(i int) bool { return spans[i].start > from }) - 1
	if i < 0 {
		fn(d.first) // a single value, no span
		return
	}
	sp := spans[i]
	v, at := sp.init, sp.start
	for ; i < len(spans) && n > 0; i++ {
		sp = spans[i]
		for r := int64(0); r < sp.reps && n > 0; r++ {
			for _, x := range sp.deltas {
				if at >= from {
					fn(v)
					if n--; n == 0 {
						return
					}
				}
				v += x
				at++
			}
		}
	}
	if n > 0 {
		fn(v) // the last value, after the last delta
	}
}

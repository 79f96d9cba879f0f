package pattern

// DefaultWindow is the search-window size used when a caller passes 0: the
// longest repeating group of deltas the detector can find.
const DefaultWindow = 16

// span is a run of a sequence: Reps repetitions of the Period symbols that
// start at Start.
type span struct {
	start, period, reps int
}

func equalRun[T comparable](a, b []T) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// detectSpans is Algorithm 1 over any sequence of symbols: it walks a
// lookahead window along s; when the next k symbols repeat the k before them
// (k <= window, the search window) and the repetition can join the pattern
// stack, either by adding a repetition to the top pattern or by folding the
// patterns that cover exactly those k symbols into one pattern repeated
// twice, it merges them; otherwise it pushes the next symbol as a pattern of
// its own. The spans partition s in order.
func detectSpans[T comparable](s []T, window int) []span {
	if window <= 0 {
		window = DefaultWindow
	}
	var st []span
	p := 0
	for p < len(s) {
		if n := len(st); n > 0 {
			top := &st[n-1]
			l := top.period
			if p+l <= len(s) && equalRun(s[top.start:top.start+l], s[p:p+l]) {
				top.reps++
				p += l
				continue
			}
		}
		merged := false
		for k := 2; k <= window && k <= p && p+k <= len(s); k++ {
			if !equalRun(s[p-k:p], s[p:p+k]) {
				continue
			}
			i, covered := len(st), 0
			for i > 0 && covered < k {
				i--
				covered += st[i].period * st[i].reps
			}
			if covered != k {
				continue
			}
			st = append(st[:i], span{start: p - k, period: k, reps: 2})
			p += k
			merged = true
			break
		}
		if !merged {
			st = append(st, span{start: p, period: 1, reps: 1})
			p++
		}
	}
	return st
}

// Deltas returns the distances between consecutive values of q.
func Deltas(q []int64) []int64 {
	if len(q) < 2 {
		return nil
	}
	d := make([]int64, len(q)-1)
	for i := range d {
		d[i] = q[i+1] - q[i]
	}
	return d
}

// MaxGroup bounds the deltas of a group of patterns that Detect folds into
// one unit (a row of a 2-D walk longer than the window).
const MaxGroup = 4096

// spanKey is a span's shape: its deltas and repetitions.
type spanKey struct {
	first, sum, hash int64
	period, reps     int
}

func keyOf(d []int64, sp span) spanKey {
	k := spanKey{period: sp.period, reps: sp.reps, first: d[sp.start]}
	for _, x := range d[sp.start : sp.start+sp.period] {
		k.sum += x
		k.hash = k.hash*1000003 + x
	}
	return k
}

// regroup applies the detector to the sequence of spans (compared by shape,
// then verified on the deltas) and flattens each repeated group of spans
// into one span whose period is the group's deltas: the rows of a 2-D walk
// become one pattern even when a row is longer than the window.
func regroup(d []int64, spans []span, window int) ([]span, bool) {
	keys := make([]spanKey, len(spans))
	for i, sp := range spans {
		keys[i] = keyOf(d, sp)
	}
	groups := detectSpans(keys, window)
	if len(groups) == len(spans) {
		return spans, false
	}
	out := make([]span, 0, len(groups))
	changed := false
	for _, g := range groups {
		members := spans[g.start : g.start+g.period]
		first, last := members[0], members[len(members)-1]
		period := last.start + last.period*last.reps - first.start
		// Shapes are compared by a hash: check every repetition exactly.
		same := g.reps >= 2 && period <= MaxGroup
		for r := 1; same && r < g.reps; r++ {
			same = equalRun(d[first.start:first.start+period], d[first.start+r*period:first.start+(r+1)*period])
		}
		if !same {
			out = append(out, spans[g.start:g.start+g.period*g.reps]...)
			continue
		}
		out = append(out, span{start: first.start, period: period, reps: g.reps})
		changed = true
	}
	return out, changed
}

// Detect finds the pattern units of q with Algorithm 1 and the given window
// (DefaultWindow when window <= 0). Expand(Detect(q, w)) equals q for every q.
func Detect(q []int64, window int) []Unit {
	if len(q) == 0 {
		return nil
	}
	if window <= 0 {
		window = DefaultWindow
	}
	d := Deltas(q)
	spans := detectSpans(d, window)
	for level := 0; level < 4; level++ {
		var changed bool
		if spans, changed = regroup(d, spans, window); !changed {
			break
		}
	}
	// A last, partial repetition of a repeated pattern becomes its tail.
	// The earliest such pattern (within a window of spans) absorbs the most.
	var tail int64
	best := -1
	for j := len(spans) - 1; j >= 0 && len(spans)-j <= window+1; j-- {
		sp := spans[j]
		end := sp.start + sp.period*sp.reps
		if rest := len(d) - end; sp.reps >= 2 && rest > 0 && rest < sp.period &&
			equalRun(d[sp.start:sp.start+rest], d[end:]) {
			best, tail = j, int64(rest)
		}
	}
	if best >= 0 {
		spans = spans[:best+1]
	}
	units := make([]Unit, 0, len(spans)+1)
	for _, sp := range spans {
		units = append(units, Unit{
			Init:   q[sp.start],
			Deltas: append([]int64(nil), d[sp.start:sp.start+sp.period]...),
			Reps:   int64(sp.reps),
		})
	}
	if len(units) == 0 {
		units = append(units, Unit{Init: q[0]})
	}
	units[len(units)-1].Tail = tail + 1
	return units
}

package predictor

import "iopred/predictor/sequitur"

// valueTable learns the sequence of values (sizes, offset transformations)
// seen by one context symbol or one transition, in the three stages of the
// Omnisc'IO access tables: a single value; then, once a second value shows
// up, a local grammar over the indexes of the distinct values; then, once
// more distinct values than the bound appear, counts only (the local grammar
// is dropped, so a noisy context cannot grow the model without limit).
type valueTable[T comparable] struct {
	Values []T                 `msgpack:"v"` // distinct values in order of first appearance, at most the bound
	Counts []uint64            `msgpack:"c"` // occurrences of each value
	N      uint64              `msgpack:"n"` // all observations, including those past the bound
	Over   bool                `msgpack:"o"` // more distinct values than the bound were seen
	Local  *sequitur.Predictor `msgpack:"g,omitempty"`
	// best is mostFrequent's answer plus one, kept as Counts grow; 0
	// when not known yet (a new or decoded table). mostFrequent's scan
	// of every count at every prediction was a tenth of the model's
	// work on streams of random offsets, whose tables pass their bound.
	best int
}

// replayCap bounds how many copies of its first value a table replays
// into a new local grammar.
const replayCap = 64

// index returns the position of v among the distinct values, or -1.
func (t *valueTable[T]) index(v T) int {
	for i, x := range t.Values {
		if x == v {
			return i
		}
	}
	return -1
}

// observe records v. bound is the largest number of distinct values the
// local grammar handles.
func (t *valueTable[T]) observe(v T, bound int) { t.observeAt(v, unknownIndex, bound) }

// unknownIndex tells observeAt to find v's position itself.
const unknownIndex = -2

// observeAt is observe given i, v's position among the distinct values
// (index(v), -1 when v is not one of them), which the caller knew
// already, or unknownIndex.
func (t *valueTable[T]) observeAt(v T, i, bound int) {
	if i == unknownIndex {
		i = t.index(v)
	}
	t.N++
	if t.Over {
		if i >= 0 {
			t.count(i)
		}
		return
	}
	if i < 0 {
		if len(t.Values) >= bound {
			t.Over = true
			t.Local = nil
			return
		}
		t.Values = append(t.Values, v)
		t.Counts = append(t.Counts, 0)
		i = len(t.Values) - 1
		if i == 1 {
			// Every earlier observation was the first value: replay them so
			// that the local grammar sees the sequence, up to a cap (a long
			// run of one value tells the grammar no more than a few dozen
			// copies do, and the cost of the replay stays bounded).
			t.Local = sequitur.NewPredictor()
			for j := uint64(0); j+1 < min(t.N, replayCap); j++ {
				t.Local.Append(0)
			}
		}
	}
	t.count(i)
	if t.Local != nil {
		t.Local.Append(i)
	}
}

// count adds an occurrence of value i, keeping best: only i's count
// grew, so the most frequent value is the one it was or i (the earliest
// on ties).
func (t *valueTable[T]) count(i int) {
	t.Counts[i]++
	if t.best > 0 {
		if b := t.best - 1; t.Counts[i] > t.Counts[b] || (t.Counts[i] == t.Counts[b] && i < b) {
			t.best = i + 1
		}
	}
}

// mostFrequent returns the index of the value seen most often (the earliest
// on ties), or -1 when the table is empty.
func (t *valueTable[T]) mostFrequent() int {
	if t.best > 0 {
		return t.best - 1
	}
	best := -1
	for i, c := range t.Counts {
		if best < 0 || c > t.Counts[best] {
			best = i
		}
	}
	t.best = best + 1
	return best
}

// next predicts the value of the occurrence `ahead` steps after the next one
// (0: the next occurrence). certain tells whether the table has no doubt:
// a single value ever seen, or a local grammar whose first candidate is
// the only one or the one the longest-confirmed mark names.
//
// Why the longest-confirmed mark: the earlier predictor (reference_test.go
// in sequitur) kept 4 marks and dropped those that missed twice, so "a
// single candidate" meant "no doubt"; the
// noise-robust one lets marks on several earlier copies of the sequence
// vote, and one that follows a copy differing here, or a realigned guess
// after a miss, adds a minority candidate on clean streams. The majority
// of the votes is no test either: in a long cycle (0 x255, then 1) the
// marks on the run's other positions all predict the same wrong value at
// the cycle's end, while the mark aligned with the cycle has outlived them
// all.
func (t *valueTable[T]) next(ahead int) (v T, certain, ok bool) {
	if len(t.Values) == 0 {
		return v, false, false
	}
	if len(t.Values) == 1 && !t.Over {
		return t.Values[0], true, true
	}
	if t.Local != nil {
		if ahead == 0 {
			// First, not Candidates: the offset table's classify asks
			// at every observation, and a copy of the list would be an
			// allocation per event.
			c, longest, ok := t.Local.First()
			if ok && c.Symbol >= 0 && c.Symbol < len(t.Values) {
				return t.Values[c.Symbol], longest, true
			}
		} else {
			steps := t.Local.Lookahead(ahead + 1)
			if len(steps) > ahead && steps[ahead].Symbol >= 0 && steps[ahead].Symbol < len(t.Values) {
				return t.Values[steps[ahead].Symbol], false, true
			}
		}
	}
	return t.Values[t.mostFrequent()], false, true
}

// nextIndex is next(0) as the value's position among the distinct values
// (next keeps its own copy of these lines: the size tables ask next at
// every event, and a call more there cost more than this saves).
func (t *valueTable[T]) nextIndex() (i int, certain, ok bool) {
	if len(t.Values) == 0 {
		return -1, false, false
	}
	if len(t.Values) == 1 && !t.Over {
		return 0, true, true
	}
	if t.Local != nil {
		c, longest, ok := t.Local.First()
		if ok && c.Symbol >= 0 && c.Symbol < len(t.Values) {
			return c.Symbol, longest, true
		}
	}
	return t.mostFrequent(), false, true
}

// valid checks the invariants a decoded table must hold.
func (t *valueTable[T]) valid(bound int) bool {
	if len(t.Values) != len(t.Counts) || len(t.Values) > bound {
		return false
	}
	if t.Over && t.Local != nil {
		return false
	}
	// A table with several values and no grammar must have passed its
	// bound; one with a grammar must have several values.
	if !t.Over && (len(t.Values) > 1) != (t.Local != nil) {
		return false
	}
	var sum uint64
	for _, c := range t.Counts {
		sum += c
	}
	return sum <= t.N
}

// memoryBytes estimates the heap the table holds.
func (t *valueTable[T]) memoryBytes(valueBytes int) int {
	n := 64 + len(t.Values)*(valueBytes+8)
	if t.Local != nil {
		n += t.Local.MemoryBytes()
	}
	return n
}

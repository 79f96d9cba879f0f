package predictor

// Offset transformation kinds (section II-B2b of the Omnisc'IO paper): the
// next operation on a file starts where the previous one on that file ended
// (sequential), at a fixed distance from there (relative), or at a fixed
// position (absolute).
const (
	transformSequential uint8 = iota
	transformRelative
	transformAbsolute
)

// transform is one offset transformation; Value is the distance for a
// relative one and the position for an absolute one.
type transform struct {
	Kind  uint8 `msgpack:"k"`
	Value int64 `msgpack:"v"`
}

// apply gives the offset the transformation leads to from the end of the
// previous operation on the file. fresh means no data operation touched the
// file since it was opened, so its position is 0.
func (t transform) apply(prevEnd int64, fresh bool) int64 {
	if fresh {
		prevEnd = 0
	}
	switch t.Kind {
	case transformRelative:
		return prevEnd + t.Value
	case transformAbsolute:
		return t.Value
	}
	return prevEnd
}

// offsetTable learns the offset transformations of one transition between
// context symbols.
type offsetTable struct {
	Seq valueTable[transform] `msgpack:"s"`
	// Last is the offset of the transition's previous occurrence: an offset
	// that repeats is recorded as absolute, which the paper's rule (absolute
	// only after open or close) misses, for instance a header rewritten at a
	// fixed position of a growing file.
	Last    int64 `msgpack:"l"`
	HasLast bool  `msgpack:"hl"`
	// seen is a Bloom filter of Seq.Values, the first seenN of them
	// added: a transform whose bit is clear is not among them, and
	// index's scan of up to OffsetBound values is skipped. On streams of
	// offsets that repeat nothing (random reads), classifyWith scanned
	// the whole table twice per operation. Run-time only, built from
	// the values, which only ever grow.
	seen  [4]uint64
	seenN int
}

// seenBit is t's bit in offsetTable.seen.
func seenBit(t transform) (word int, bit uint64) {
	h := (uint64(t.Value)*0x9E3779B97F4A7C15 ^ uint64(t.Kind)) * 0xBF58476D1CE4E5B9
	return int(h >> 62), 1 << (h >> 56 & 63)
}

// index is Seq.index(t), with the scan skipped when the filter shows t
// is not in the table.
func (o *offsetTable) index(t transform) int {
	vs := o.Seq.Values
	if o.seenN > len(vs) { // a table whose values were replaced
		o.seen, o.seenN = [4]uint64{}, 0
	}
	for ; o.seenN < len(vs); o.seenN++ {
		w, b := seenBit(vs[o.seenN])
		o.seen[w] |= b
	}
	if w, b := seenBit(t); o.seen[w]&b == 0 {
		return -1
	}
	return o.Seq.index(t)
}

// classify chooses how to describe the move from prevEnd to offset: the
// description the transition already knows if one fits (so that the local
// grammar sees a repeating symbol), else an absolute one when the offset
// repeats, is 0 or the file is fresh, else a relative one.
func (o *offsetTable) classify(offset, prevEnd int64, fresh bool) transform {
	wantAt, _, ok := o.Seq.nextIndex()
	t, _, _ := o.classifyWith(offset, prevEnd, fresh, wantAt, ok)
	return t
}

// classifyWith is classify given the table's prediction, the value at
// wantAt in the table (ok false when it has none). When known, i is the
// transform's position in the table (Seq.index, -1 when not there),
// found on the way.
func (o *offsetTable) classifyWith(offset, prevEnd int64, fresh bool, wantAt int, ok bool) (t transform, i int, known bool) {
	base := prevEnd
	if fresh {
		base = 0
	}
	candidates := [3]transform{
		{Kind: transformSequential},
		{Kind: transformRelative, Value: offset - base},
		{Kind: transformAbsolute, Value: offset},
	}
	// An offset that several descriptions fit is recorded as the one the
	// table predicts: recording another one would show the local grammar
	// a symbol it did not expect on a stream that did what it predicted
	// (a read at 0 right after 0..n is both "absolute 0" and "relative
	// -n"), and the noise-robust predictor keeps realigned marks for such
	// a miss, which leave the table unsure at its next prediction.
	if ok && o.Seq.Values[wantAt].apply(prevEnd, fresh) == offset {
		return o.Seq.Values[wantAt], wantAt, true // the values are distinct
	}
	if offset == base {
		return candidates[0], 0, false
	}
	for _, c := range candidates[1:] {
		if i := o.index(c); i >= 0 {
			return c, i, true
		}
	}
	// Neither is in the table.
	if fresh || offset == 0 || (o.HasLast && o.Last == offset) {
		return candidates[2], -1, true
	}
	return candidates[1], -1, true
}

// observe records the offset an occurrence of the transition used.
// It returns whether the table was certain of its prediction of this
// offset (see predict) and whether that prediction was right, for the
// contiguous baseline's arbiter: the lookup is classify's own.
func (o *offsetTable) observe(offset, prevEnd int64, fresh bool, bound int) (certain, hit bool) {
	wantAt, sure, ok := o.Seq.nextIndex()
	certain = ok && sure && !o.Seq.Over
	hit = ok && o.Seq.Values[wantAt].apply(prevEnd, fresh) == offset
	t, i, known := o.classifyWith(offset, prevEnd, fresh, wantAt, ok)
	if !known {
		i = o.index(t)
	}
	o.Seq.observeAt(t, i, bound)
	o.Last, o.HasLast = offset, true
	return certain, hit
}

// predict gives the offset of the transition's occurrence `ahead` steps
// after the next one. Past the bound it falls back to sequential, as the
// paper does, and says it is not certain. seen is how many times the
// table saw the transformation it names, when it is certain.
func (o *offsetTable) predict(prevEnd int64, fresh bool, ahead int) (offset int64, certain bool, seen uint64) {
	if o.Seq.Over {
		return transform{}.apply(prevEnd, fresh), false, 0
	}
	if ahead == 0 {
		// nextIndex is next(0) with the value's position, which gives
		// its count at no extra lookup.
		i, certain, ok := o.Seq.nextIndex()
		if !ok {
			return transform{}.apply(prevEnd, fresh), false, 0
		}
		return o.Seq.Values[i].apply(prevEnd, fresh), certain, o.Seq.Counts[i]
	}
	t, certain, ok := o.Seq.next(ahead)
	if !ok {
		return transform{}.apply(prevEnd, fresh), false, 0
	}
	if certain {
		// Further ahead only a table of one value is certain.
		seen = o.Seq.Counts[0]
	}
	return t.apply(prevEnd, fresh), certain, seen
}

// File relations of a transition: the next operation touches the file of
// the operation just before it, the file its own context touched last
// time, or another file (named by path).
const (
	fileSamePrev = iota
	fileSameContext
	fileOther
)

// fileTable learns which file a transition's next operation touches.
type fileTable struct {
	Counts   [3]uint64 `msgpack:"c"`
	LastKind uint8     `msgpack:"k"`
	LastPath string    `msgpack:"p"`
}

func (f *fileTable) observe(path, prevPath, contextPath string) {
	kind := fileOther
	switch {
	case path == prevPath:
		kind = fileSamePrev
	case path == contextPath:
		kind = fileSameContext
	}
	f.Counts[kind]++
	f.LastKind = uint8(kind)
	f.LastPath = path
}

// predict names the file: the relation seen most often, the latest on ties.
func (f *fileTable) predict(prevPath, contextPath string) string {
	return f.path(f.kind(), prevPath, contextPath)
}

// kind is the relation predict names: the one seen most often, the latest
// on ties.
func (f *fileTable) kind() int {
	kind := int(f.LastKind)
	for k, c := range f.Counts {
		if c > f.Counts[kind] {
			kind = k
		}
	}
	return kind
}

// path is the file that relation kind names.
func (f *fileTable) path(kind int, prevPath, contextPath string) string {
	switch kind {
	case fileSamePrev:
		return prevPath
	case fileSameContext:
		return contextPath
	}
	return f.LastPath
}

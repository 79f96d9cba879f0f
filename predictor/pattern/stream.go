package pattern

// step is one access of a stream seen as the detector's symbol: the distance
// from the previous offset and the length of the previous access.
type step struct {
	delta, length int64
}

// streamUnit is a pattern the stream found: reps repetitions of steps,
// starting at offset init and physical offset phys (the bytes of the stream
// before it).
type streamUnit struct {
	init, phys int64
	steps      []step
	reps       int64
	phase      int // steps of the next repetition already matched
}

func (u *streamUnit) len() int64 { return int64(len(u.steps)) * u.reps }

// end returns the offset and physical offset after the last full repetition.
func (u *streamUnit) end() (int64, int64) {
	var d, p int64
	for _, st := range u.steps {
		d += st.delta
		p += st.length
	}
	return u.init + d*u.reps, u.phys + p*u.reps
}

// MaxStreamUnits bounds the patterns a Stream keeps; older ones are dropped
// and counted.
const MaxStreamUnits = 64

// Stream is the incremental form of the detector for a live stream of
// accesses (offset, length). Memory stays bounded however long the stream:
// at most MaxStreamUnits patterns and a few windows of recent steps; the
// oldest patterns are dropped and the accesses they described counted.
//
// An access's symbol is the pair (distance from the previous offset, length
// of the previous access), so a pattern describes offsets and lengths
// together. The stream finds a repetition when the last k steps equal the k
// before them (k <= window) and the patterns covering those 2k steps can be
// folded into one; the newest pattern then grows by whole repetitions while
// the steps keep matching. When the last m patterns (2 <= m <= 4) repeat the
// m before them, as the rows of a 2-D walk do however long a row, they fold
// into one pattern too, so that the jump to the next row is predicted.
type Stream struct {
	window  int
	units   []streamUnit
	recent  []step // the last steps
	n       int64  // accesses seen
	first   int64  // offset of the first access
	last    int64  // offset of the last access
	lastLen int64
	phys    int64 // bytes before the last access
	dropped int64 // accesses described by patterns dropped to bound memory
	steps   int   // steps held by all patterns
	matched bool  // the last access continued or completed the newest pattern
}

// NewStream returns an empty stream detector with the given window
// (DefaultWindow when window <= 0).
func NewStream(window int) *Stream {
	if window <= 0 {
		window = DefaultWindow
	}
	return &Stream{window: window}
}

// Len is the number of accesses seen.
func (s *Stream) Len() int64 { return s.n }

// Dropped is the number of accesses whose patterns were dropped to bound
// memory.
func (s *Stream) Dropped() int64 { return s.dropped }

// Add records the next access.
func (s *Stream) Add(offset, length int64) {
	if s.n == 0 {
		s.n, s.first, s.last, s.lastLen = 1, offset, offset, length
		return
	}
	st := step{delta: offset - s.last, length: s.lastLen}
	s.phys += s.lastLen
	s.n++
	s.last, s.lastLen = offset, length
	s.recent = append(s.recent, st)
	if len(s.recent) > 6*s.window {
		keep := 3 * s.window
		copy(s.recent, s.recent[len(s.recent)-keep:])
		s.recent = s.recent[:keep]
	}
	if n := len(s.units); n > 0 {
		top := &s.units[n-1]
		if top.steps[top.phase] == st {
			top.phase++
			if top.phase == len(top.steps) {
				top.phase = 0
				top.reps++
			}
			s.matched = top.reps >= 2
			return
		}
		if top.phase > 0 {
			// The partial repetition did not complete: its steps (and the
			// new one, last in s.recent) become patterns of their own.
			pending := append([]step(nil), top.steps[:top.phase]...)
			top.phase = 0
			for i, p := range pending {
				s.push(p, len(pending)-i)
			}
		}
	}
	s.matched = false
	s.push(st, 0)
}

// push adds one step as a pattern of its own, then folds the newest
// patterns when the steps up to it (all of s.recent but the last lag)
// repeat.
func (s *Stream) push(st step, lag int) {
	init, phys := s.first, int64(0)
	if n := len(s.units); n > 0 {
		init, phys = s.units[n-1].end()
	}
	s.units = append(s.units, streamUnit{init: init, phys: phys, steps: []step{st}, reps: 1})
	s.steps++
	// A broken repetition can give back more steps than the recent window
	// still holds: those steps have nothing left to fold with.
	end := len(s.recent) - lag
	if end < 0 {
		end = 0
	}
	if !s.fold(s.recent[:end]) {
		s.foldUnits()
	}
	drop := 0
	for len(s.units)-drop > MaxStreamUnits || (s.steps > MaxStreamSteps && len(s.units)-drop > 1) {
		s.dropped += s.units[drop].len()
		s.steps -= len(s.units[drop].steps)
		drop++
	}
	if drop > 0 {
		if len(s.units)-drop > MaxStreamUnits/2 {
			// Drop in batches, so that the copy is amortised.
			for len(s.units)-drop > MaxStreamUnits/2 {
				s.dropped += s.units[drop].len()
				s.steps -= len(s.units[drop].steps)
				drop++
			}
		}
		s.units = append(s.units[:0], s.units[drop:]...)
	}
}

// MaxStreamSteps bounds the steps the patterns of a Stream hold in all;
// MaxGroupSteps those of one pattern folded from a group of patterns (a row
// of a 2-D walk).
const (
	MaxStreamSteps = 2048
	MaxGroupSteps  = 1024
)

// foldUnits folds the newest 2m patterns into one repeated twice when the
// last m repeat the m before them (2 <= m <= 4): the rows of a 2-D walk,
// each a run of strides and a jump, become one pattern however long the
// row, so that the jump to the next row is predicted too.
func (s *Stream) foldUnits() {
	n := len(s.units)
	for m := 2; m <= 4 && 2*m <= n; m++ {
		same, total := true, 0
		for i := 0; i < m && same; i++ {
			a, b := &s.units[n-2*m+i], &s.units[n-m+i]
			same = a.reps == b.reps && len(a.steps) == len(b.steps) && equalRun(a.steps, b.steps)
			total += len(a.steps) * int(a.reps)
		}
		if !same || total > MaxGroupSteps {
			continue
		}
		steps := make([]step, 0, total)
		for i := n - m; i < n; i++ {
			for r := int64(0); r < s.units[i].reps; r++ {
				steps = append(steps, s.units[i].steps...)
			}
		}
		for i := n - 2*m; i < n; i++ {
			s.steps -= len(s.units[i].steps)
		}
		first := s.units[n-2*m]
		s.units = append(s.units[:n-2*m], streamUnit{init: first.init, phys: first.phys, steps: steps, reps: 2})
		s.steps += len(steps)
		s.matched = true
		return
	}
}

func (s *Stream) fold(r []step) bool {
	if n := len(s.units); n >= 2 {
		// A single step repeating the pattern below it whole adds a repetition.
		below, top := &s.units[n-2], &s.units[n-1]
		if len(below.steps) == 1 && below.steps[0] == top.steps[0] {
			below.reps++
			s.units = s.units[:n-1]
			s.steps--
			s.matched = below.reps >= 2
			return true
		}
	}
	for k := 2; k <= s.window && 2*k <= len(r); k++ {
		// The last steps of the two halves first: on a stream that
		// does not repeat they differ at nearly every k, and this
		// one comparison costs less than setting up the whole one.
		if r[len(r)-1] != r[len(r)-1-k] || !equalRun(r[len(r)-2*k:len(r)-k], r[len(r)-k:]) {
			continue
		}
		i, covered := len(s.units), int64(0)
		for i > 0 && covered < int64(2*k) {
			i--
			covered += s.units[i].len()
		}
		if covered != int64(2*k) {
			continue
		}
		u := streamUnit{init: s.units[i].init, phys: s.units[i].phys,
			steps: append([]step(nil), r[len(r)-k:]...), reps: 2}
		for _, old := range s.units[i:] {
			s.steps -= len(old.steps)
		}
		s.units = append(s.units[:i], u)
		s.steps += k
		s.matched = true
		return true
	}
	return false
}

// current returns the newest pattern if it repeated at least twice.
func (s *Stream) current() *streamUnit {
	if n := len(s.units); n > 0 && s.units[n-1].reps >= 2 {
		return &s.units[n-1]
	}
	return nil
}

// Certain reports whether the newest pattern repeated at least twice and the
// last access still matched it.
func (s *Stream) Certain() bool { return s.matched && s.current() != nil }

// Predict returns the next n offsets if the newest pattern goes on (section
// 4.2), or nil when there is no pattern (none repeated at least twice).
func (s *Stream) Predict(n int) []int64 {
	off, _ := s.PredictAccesses(n)
	return off
}

// PredictAccesses is Predict with the predicted lengths of the accesses.
func (s *Stream) PredictAccesses(n int) (offsets, lengths []int64) {
	u := s.current()
	if u == nil || n <= 0 {
		return nil, nil
	}
	offsets, lengths = make([]int64, n), make([]int64, n)
	v, l := s.last, int64(len(u.steps))
	for i := range offsets {
		v += u.steps[(int64(u.phase)+int64(i))%l].delta
		offsets[i] = v
		lengths[i] = u.steps[(int64(u.phase)+int64(i)+1)%l].length
	}
	return offsets, lengths
}

// Patterns returns the patterns found so far as index entries (id 0): one
// per pattern kept (at most MaxStreamUnits), then one closed entry for the
// accesses after the last full repetition. The entries stand for the last
// Len()-Dropped() accesses; their physical offsets count the bytes of the
// stream.
func (s *Stream) Patterns() []Entry {
	if s.n == 0 {
		return nil
	}
	out := make([]Entry, 0, len(s.units)+1)
	for i := range s.units {
		u := &s.units[i]
		l := len(u.steps)
		e := Entry{
			Logical:  Unit{Init: u.init, Deltas: make([]int64, l), Reps: u.reps},
			Length:   []Unit{{Init: u.steps[0].length, Deltas: make([]int64, l), Reps: u.reps}},
			Physical: []Unit{{Init: u.phys, Deltas: make([]int64, l), Reps: u.reps}},
		}
		for j, st := range u.steps {
			e.Logical.Deltas[j] = st.delta
			e.Length[0].Deltas[j] = u.steps[(j+1)%l].length - st.length
			e.Physical[0].Deltas[j] = st.length
		}
		out = append(out, e)
	}
	// The tail: from the end of the last pattern to the last access.
	init, phys := s.first, int64(0)
	var pending []step
	if n := len(s.units); n > 0 {
		init, phys = s.units[n-1].end()
		pending = s.units[n-1].steps[:s.units[n-1].phase]
	}
	offs, lens, physs := []int64{init}, []int64{}, []int64{phys}
	for _, st := range pending {
		lens = append(lens, st.length)
		init += st.delta
		phys += st.length
		offs = append(offs, init)
		physs = append(physs, phys)
	}
	lens = append(lens, s.lastLen)
	out = append(out, Entry{
		Logical:  Unit{Init: offs[0], Deltas: Deltas(offs), Reps: 1, Tail: 1},
		Length:   Detect(lens, s.window),
		Physical: Detect(physs, s.window),
	})
	if len(offs) == 1 {
		out[len(out)-1].Logical = Unit{Init: offs[0], Tail: 1}
	}
	return out
}

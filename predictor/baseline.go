package predictor

import (
	"strings"

	"iopred/tracefmt"
)

// Field names the parts of a Prediction. A Prediction's Fallback says which
// of its fields came from a simple baseline rather than from the model's
// own tables.
//
// The model's tables are right where the program repeats itself, but on
// calls it has seen once or twice (start-up, a file read line by line
// whose lengths vary) a rule a prefetcher already knows can be better: the
// next call on a file starts where the last one ended, it has the size of
// the last one, the gap before it is the last gap, the call that most
// often followed the previous one comes next. For each field the model
// keeps a small running score of its own tables against that baseline,
// where the decision is made (after a context symbol, or on a transition
// between two), and takes the baseline's answer while the baseline has
// been right more often there.
type Field uint8

// The fields of a prediction a baseline can provide.
const (
	// FieldContext: the call is the one that most often followed the
	// previous call (or the previous call again, when nothing followed it
	// yet).
	FieldContext Field = 1 << iota
	// FieldFile: the file of the previous call.
	FieldFile
	// FieldOffset: where the previous data call on the file ended.
	FieldOffset
	// FieldSize: the size of the previous data call on the file.
	FieldSize
	// FieldDelay: the gap between the two previous calls.
	FieldDelay
)

var fieldNames = [...]string{"context", "file", "offset", "size", "delay"}

// String lists the fields joined by "+", or "" for none.
func (f Field) String() string {
	var parts []string
	for i, n := range fieldNames {
		if f&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "+")
}

// arbiter scores the model's tables against a baseline where one decision
// is made. The counts are halved when they grow, so that the choice
// follows a program whose behaviour changes, yet one lucky call does not
// flip an established choice.
type arbiter struct {
	Model uint16 `msgpack:"m,omitempty"`
	Base  uint16 `msgpack:"b,omitempty"`
}

// arbiterWindow is about how many recent outcomes an arbiter weighs.
const arbiterWindow = 64

// record adds one outcome: whether the model's tables and the baseline
// predicted it right (for a measured field such as a delay, whether each
// was strictly closer).
func (a *arbiter) record(modelHit, baseHit bool) {
	if modelHit == baseHit {
		// Both right or both wrong tells nothing about which to trust.
		return
	}
	if modelHit {
		a.Model++
	} else {
		a.Base++
	}
	if a.Model+a.Base >= arbiterWindow {
		a.Model, a.Base = a.Model/2, a.Base/2
	}
}

// useBase tells whether the baseline has been right more often.
func (a arbiter) useBase() bool { return a.Base > a.Model }

// preferBase is useBase, and on a tie the baseline when the model's own
// table is not certain of its answer.
func (a arbiter) preferBase(sure bool) bool {
	return a.Base > a.Model || (a.Base == a.Model && !sure)
}

// gapChooser picks a transition's delay from three estimates by the size
// of their recent errors, not by who was closer (a delay is judged by its
// mean error): the weighted average of equation (1), which follows a
// change at once, the long-run mean, which is steadier when the gaps are
// noise around a level, and the baseline, the last gap. The error sums
// decay by 1/64 per outcome.
type gapChooser struct {
	Weighted, Mean, Last float64
}

func (g *gapChooser) record(weightedErr, meanErr, lastErr float64) {
	const keep = 1 - 1.0/arbiterWindow
	g.Weighted = g.Weighted*keep + weightedErr
	g.Mean = g.Mean*keep + meanErr
	g.Last = g.Last*keep + lastErr
}

// delayErrors are the recent absolute errors (ns, decaying by 1/512 per
// outcome) of the delay the model answered for its first candidate and
// of the last gap. A transition's gapChooser judges the transition's own
// estimates; this judges what the model answered, which after a
// mispredicted context is another transition's estimate. It is kept for
// the whole process rather than per symbol, and forgets slowly: gaps are
// heavy-tailed (a long compute phase among microsecond gaps), a symbol's
// few outcomes or a short window let one tail decide, while the mean
// error the field is judged by is the whole run's.
type delayErrors struct {
	Model, Last float64
}

// delayWindow is about how many recent outcomes delayErrors weighs: 64
// flipped the choice on single long gaps (HDF5 checkpoints), no decay
// at all was slow to leave the model's answers on the demo's loop.
const delayWindow = 512

func (d *delayErrors) record(modelErr, lastErr float64) {
	const keep = 1 - 1.0/delayWindow
	d.Model = d.Model*keep + modelErr
	d.Last = d.Last*keep + lastErr
}

// lastGapBetter tells whether the first candidate's delay should be the
// last gap.
func (m *Model) lastGapBetter() bool {
	if m.opt.NoFallback || !m.haveGap || m.prev < 0 {
		return false
	}
	d := m.delayArb
	return d.Last < d.Model
}

// noteSuccessor records that symbol to followed symbol from, keeping
// from's most frequent successor (the latest on ties) for the context
// baseline. t is the transition from→to after its count was incremented.
func (m *Model) noteSuccessor(from *symbol, to int, t *transition) {
	if t.Count >= from.NextN {
		from.Next, from.NextN = int32(to)+1, t.Count
	}
}

// noteProcSuccessor records that symbol to came right after this one in
// the process for the n-th time, within the thread or across threads
// (cross), keeping the most frequent (the latest on ties, as
// noteSuccessor does).
func (s *symbol) noteProcSuccessor(to int, n uint64, cross bool) {
	if n >= s.ProcNextN {
		s.ProcNext, s.ProcNextN, s.ProcNextCross = int32(to)+1, n, cross
	}
}

// crossCount is how often a call of another thread came right after a
// symbol's.
type crossCount struct {
	To int32
	N  uint64
}

// maxCross bounds the cross-thread successors a symbol counts: a call is
// followed by the next calls of a few other threads.
const maxCross = 8

// noteCross records that symbol to, another thread's call, came right
// after this one. Its counts live beside the symbol, scanned in place,
// rather than in a map hashed at every change of thread. Past maxCross
// successors the least counted gives its place to the new one, which
// inherits its count (the space-saving rule: a successor as frequent as
// the most frequent one is never the one dropped).
func (s *symbol) noteCross(to int) {
	least := -1
	for i := range s.Cross {
		c := &s.Cross[i]
		if c.To == int32(to) {
			c.N++
			s.noteProcSuccessor(to, c.N, true)
			return
		}
		if least < 0 || c.N < s.Cross[least].N {
			least = i
		}
	}
	if len(s.Cross) < maxCross {
		s.Cross = append(s.Cross, crossCount{int32(to), 1})
		s.noteProcSuccessor(to, 1, true)
		return
	}
	c := &s.Cross[least]
	c.To = int32(to)
	c.N++
	s.noteProcSuccessor(to, c.N, true)
}

// successor is the context baseline after symbol s: the symbol that most
// often followed it, else s itself (a loop of one call is the commonest
// I/O pattern).
func (m *Model) successor(s int) int {
	if n := int(m.syms[s].Next) - 1; n >= 0 && n < len(m.syms) {
		return n
	}
	return s
}

// scoreBaselines updates the arbiters with the event that just came, before
// the tables learn it: sym is its symbol, t the transition into it from
// the previous symbol (nil for the first call of a lane), fs its file's
// state (nil when it has none), gap the time since the previous call
// ended.
//
// It runs for every event, so it skips what cannot change an arbiter: an
// arbiter records only outcomes where the model and the baseline differ,
// and where both name the same file (the transition's file table says
// "the previous call's file", the commonest case) no comparison with the
// event's file is needed.
func (m *Model) scoreBaselines(s int, t *transition, fs *fileState, path string, gap int64, hasOffset bool, size int64) {
	if m.prev < 0 || m.opt.NoFallback {
		return
	}
	from := m.syms[m.prev]
	first, _, grammar := m.main.First()
	succ := m.successor(m.prev)
	// seen: the transition has named files before, so its file table
	// (rather than the new-transition rule) gives the model's file.
	seen := t != nil && t.Files.Counts != [3]uint64{}
	// fileArb: t's file table is still to be scored against the previous
	// call's file (done below unless the top candidate's block did it).
	fileArb := path != "" && t != nil && t.Count > 0
	if path != "" {
		// The file of the call the model would have named first.
		top := succ
		if grammar && !from.CtxArb.useBase() && first.Symbol >= 0 && first.Symbol < len(m.syms) {
			top = first.Symbol
		}
		if top == s && fileArb && seen {
			// The top candidate's transition is t: fileAfter's answer and
			// the file table's own come from one lookup, and when that
			// is the previous call's file, model and baseline agree for
			// both arbiters.
			fileArb = false
			if kind := t.Files.kind(); kind != fileSamePrev {
				prevPath := m.prevPath
				modelPath := t.Files.path(kind, prevPath, m.syms[s].LastPath)
				after := modelPath
				if t.FileArb.useBase() && prevPath != "" {
					after = prevPath
				}
				baseHit := prevPath == path
				m.topFile.record(after == path, baseHit)
				t.FileArb.record(modelPath == path, baseHit)
			}
		} else {
			tt := t
			if top != s {
				tt = m.trans[transKey(m.prev, top)]
			}
			m.topFile.record(m.fileAfter(top, tt) == path, m.prevPath == path)
		}
	}
	if m.haveGap {
		// The delay the model answered for its first candidate (walker.next
		// with lastGapBetter false): its transition's, or the last gap
		// for a transition never seen.
		top := succ
		if grammar && !from.CtxArb.useBase() && first.Symbol >= 0 && first.Symbol < len(m.syms) {
			top = first.Symbol
		}
		tt := t
		if top != s {
			tt = m.trans[transKey(m.prev, top)]
		}
		var none Field
		var said float64
		if tt != nil {
			said = m.delayOf(tt, &none)
		}
		fg, last := float64(gap), float64(m.lastGap)
		m.delayArb.record(abs(said-fg), abs(last-fg))
	}
	if grammar {
		from.CtxArb.record(first.Symbol == s, succ == s)
	}
	if path != "" && !seen {
		// A transition not seen before: the model names the file its
		// context touched last, the baseline the previous call's.
		m.newTransFile.record(m.syms[s].LastPath == path, m.prevPath == path)
	}
	if t == nil {
		return
	}
	if fileArb {
		// Scored only where the file table names another file than the
		// previous call's: elsewhere model and baseline agree.
		if kind := t.Files.kind(); kind != fileSamePrev {
			modelPath := t.Files.path(kind, m.prevPath, m.syms[s].LastPath)
			t.FileArb.record(modelPath == path, m.prevPath == path)
		}
	}
	if t.Count > 0 && m.haveGap {
		fg := float64(gap)
		t.GapArb.record(abs(t.Gap.Weighted-fg), abs(t.Gap.Mean-fg), abs(float64(m.lastGap-gap)))
	}
	if hasOffset {
		// The size tournament: the table against the symbol's latest size,
		// then the one chosen (before this outcome) against the file's
		// latest size.
		sym := m.syms[s]
		if want, ok := sym.tableSize(0); ok {
			hit := want == size
			repeatHit := sym.LastSize == size
			repeat := sym.RepeatArb.useBase()
			sym.RepeatArb.record(hit, repeatHit)
			if repeat {
				hit = repeatHit
			}
			if fs != nil && fs.hasSize {
				sym.SizeArb.record(hit, fs.lastSize == size)
			}
		}
		// The offset table's arbiter is scored where the table learns the
		// offset (Observe), with the lookup it makes anyway.
	}
}

// fileAfter is the file the tables name for symbol s following the
// previous call, t being that transition (nil when never seen), before the
// first-candidate arbiter (see walker.next).
func (m *Model) fileAfter(s int, t *transition) string {
	sym := m.syms[s]
	if t == nil || t.Files.Counts == [3]uint64{} {
		if m.newTransFile.useBase() && m.prevPath != "" {
			return m.prevPath
		}
		return sym.LastPath
	}
	if t.FileArb.useBase() && m.prevPath != "" {
		return m.prevPath
	}
	return t.Files.predict(m.prevPath, sym.LastPath)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// delayOf is the expected gap of transition t: the estimate whose recent
// errors on t are smallest (see gapChooser); the last gap is the baseline.
func (m *Model) delayOf(t *transition, fallback *Field) float64 {
	if m.opt.NoFallback {
		return t.Gap.Weighted
	}
	g := t.GapArb
	switch {
	case m.haveGap && g.Last < g.Weighted && g.Last < g.Mean:
		*fallback |= FieldDelay
		return float64(m.lastGap)
	case g.Mean < g.Weighted:
		return t.Gap.Mean
	}
	return t.Gap.Weighted
}

// NextSize predicts the size of the next data call on the file at path,
// whichever call it is: the size of the most likely candidate on that
// file when the grammar has one; else the size of the most likely data
// candidate whose context touched that file last (the grammar named the
// right call but another file); else the size of the latest data call on
// the file; else, for a file without data calls yet, the size of the
// latest first data call on a newly opened file (a library reads every
// small file it opens with one buffer size); 0 when none is known. It is
// NextOffset's companion for prefetchers that know which file they serve.
func (m *Model) NextSize(path string) int64 {
	fs := m.files[path]
	if m.prev >= 0 {
		cands := m.Candidates()
		best, found := 0.0, false
		var size int64
		for _, c := range cands {
			if c.Path == path && c.Offset != tracefmt.NoOffset && tracefmt.IsData(c.Op) && (!found || c.Probability > best) {
				best, size, found = c.Probability, c.Size, true
			}
		}
		if found {
			return size
		}
		for _, c := range cands {
			if !tracefmt.IsData(c.Op) {
				continue
			}
			if s, ok := m.dict[symKey{c.Ctx, c.Op}]; ok && m.syms[s].LastPath == path {
				return m.sizeOn(m.syms[s], fs)
			}
		}
	}
	if fs != nil && fs.hasSize {
		return fs.lastSize
	}
	if !m.opt.NoFallback && m.hasFreshSize {
		return m.freshSize
	}
	return 0
}

// sizeOn is the size walker.next predicts for the next occurrence of
// symbol s on the file of state fs (nil when the file is not open).
func (m *Model) sizeOn(s *symbol, fs *fileState) int64 {
	size, _ := m.ownSize(s, 0)
	if !m.opt.NoFallback && fs != nil && fs.hasSize && s.SizeArb.useBase() {
		return fs.lastSize
	}
	return size
}

// UseBaselines turns the baselines on (the default) or off, as
// Options.NoFallback does; for a model from Load, whose options are those
// it was saved with.
func (m *Model) UseBaselines(on bool) { m.opt.NoFallback = !on }

// rememberSize keeps the last size of a file being closed; past
// Options.MaxOpenFiles remembered files, an arbitrary one is forgotten.
func (m *Model) rememberSize(path string, size int64) {
	if _, ok := m.closedSizes[path]; !ok && len(m.closedSizes) >= m.opt.MaxOpenFiles {
		for p := range m.closedSizes {
			delete(m.closedSizes, p)
			break
		}
	}
	m.closedSizes[path] = size
}

package sequitur

import (
	"cmp"
	"math"
	"slices"
	"unsafe"
)

// Tuning of the predictor. MaxPaths bounds the predictor marks kept between
// symbols (and so the work per symbol); ageCap bounds how much one long
// matching history outweighs a fresh one, so that a few marks on clean
// copies of the input outvote one long-lived mark whose copy holds a wrong
// symbol at the next position (the earlier predictor's 255 let one such
// mark win; 16 still lets a confirmed mark outweigh the eight fresh ones
// of a re-discovery).
const (
	MaxPaths = 8
	ageCap   = 16
)

// Resynchronisation hypotheses: how a mark that missed is realigned with
// the input. hypNone marks a path that has predicted right since it was
// made (or was made by re-discovery).
const (
	hypNone = iota
	// hypSubst: the input symbol took the place of the expected one (in
	// the input or in the copy the mark follows); the mark moves past it.
	hypSubst
	// hypInsert: the input symbol is extra; the mark stays.
	hypInsert
	// hypDelete: the expected symbol is missing and the input is the one
	// after it; the mark moves past both.
	hypDelete
	numHyps
)

// path is one predictor: a chain of marked nodes from an outer rule down to
// the terminal it expects next. Element 0 need not be in the start rule:
// when the walk leaves the rule holding element 0, it continues after every
// occurrence of that rule, which is the paper's "parent rules are marked
// wherever they appear", computed when needed instead of stored.
type path struct {
	nodes []int32
	age   int32 // consecutive correct steps (halved by a resynchronisation)
	// run counts the consecutive correct steps, uncapped, and 0 for a mark
	// a resynchronisation or re-discovery made: how long the copy of the
	// input this mark follows has agreed with the input (Candidate.Run).
	run int32
	// hyp is the hypothesis that made this mark after a miss, until the
	// mark's first prediction settles it.
	hyp uint8
	// missed: the mark was made by a resynchronisation and has not
	// predicted right since; one more miss drops it.
	missed bool
	// silent: the mark missed while another mark predicted right, so it
	// follows a copy of the input that differs from the input here (noise
	// in the copy, or a real change); it does not vote until it predicts
	// right again, and the candidates stay those of the marks that did.
	// Predicting right the input's previous symbol again does not count
	// (and leaves missed set): in a run of one symbol every position
	// predicts the same, so such a hit does not show that the realignment
	// found where the copy is. Without this, on a cycle of a run and one
	// other symbol (pwrite over 256 blocks: 255 sequential offsets, then
	// back to 0), the marks at the run's other phases, realigned at each
	// cycle's end, would vote for the run at every cycle's end and live
	// for ever, and every step would move all of them.
	silent bool
	// vote caches weight between normalize and the next Append.
	vote float64
}

// hypStats counts how the marks each hypothesis made fared at their next
// symbol; the counts are halved now and then so that they follow a stream
// whose noise changes.
type hypStats struct{ hits, trials int32 }

const hypWindow = 1 << 10

// Candidate is one possible next terminal.
type Candidate struct {
	Symbol int
	// Weight is this package's estimate: each predictor mark votes for its
	// terminal with 1 + the number of consecutive inputs it predicted
	// correctly (capped, halved by a resynchronisation), so long-confirmed
	// positions in the grammar outweigh fresh guesses after a miss; a mark
	// a resynchronisation made votes with that times the share of its
	// hypothesis's marks that proved right so far. Marks that missed while
	// another predicted right do not vote. Weights sum to 1.
	Weight float64
	// Uniform is the paper's weighting: 1/k for k candidates.
	Uniform float64
	// Run is the longest run of consecutive right predictions among the
	// marks voting for this symbol: Weight caps a mark's history so that
	// several copies can outvote one, Run tells which candidate the
	// longest-confirmed copy of the input names (see the model's offset
	// and size tables, which trust a local grammar over other predictors
	// only when its first candidate is that one).
	Run int
}

// Step is one symbol of a lookahead and its probability given the steps
// before it.
type Step struct {
	Symbol int
	Prob   float64
}

// Predictor is a Sequitur grammar with Omnisc'IO's predictor marks, made
// robust to noisy inputs: marks on several earlier copies of the input vote
// for the next symbol, and a mark that misses is realigned with the input
// under three hypotheses instead of being dropped. It is not safe for
// concurrent use.
type Predictor struct {
	g     *Grammar
	paths []path
	cands []Candidate
	// hyps learns which resynchronisation the stream's noise calls for.
	hyps [numHyps]hypStats
	// spare and free recycle the previous step's path list and node
	// stacks: a step then allocates nothing in the steady state.
	spare []path
	free  [][]int32
	// scratch holds the deletion hypothesis's intermediate marks.
	scratch []path
	// prev is the previous input symbol, -1 at the start of a run (see
	// path.silent).
	prev int32
	// noFastPath turns allHit and oneCandidate off: tests check that
	// they change nothing.
	noFastPath bool
}

// NewPredictor returns an empty predictor.
func NewPredictor() *Predictor {
	p := &Predictor{g: New(), prev: -1}
	p.g.obs = p
	return p
}

// Grammar returns the grammar the predictor learns; callers must not
// Append to it directly.
func (p *Predictor) Grammar() *Grammar { return p.g }

func (p *Predictor) terminal(q *path) int32 { return p.g.nodes[q.nodes[len(q.nodes)-1]].sym }

// Append learns sym and moves the predictor marks: marks that expected sym
// are incremented (across rule ends, into every occurrence of a finished
// rule when the mark's outer rule is not known); marks that did not are
// realigned with the input under each resynchronisation hypothesis, unless
// they missed already at the previous symbol; and when no mark expected
// sym (or none is left), marks are re-discovered after every occurrence of
// the last symbol of the start rule.
//
// Why resynchronise: one wrong symbol in the input makes every mark miss,
// and the grammar offers no new mark that knows where the program is (the
// wrong symbol's earlier occurrences are unrelated positions); without
// realignment the predictor restarts from them. One wrong symbol in the
// copy of the input a mark follows makes that mark alone miss; realigned
// and silent for a step, it keeps the vote of that copy for later.
func (p *Predictor) Append(sym int) {
	g := p.g
	cont := int32(sym) == p.prev
	p.prev = int32(sym)
	if !p.noFastPath && p.allHit(int32(sym), cont) {
		g.Append(sym) // rewrites update p.paths through the observer methods
		p.normalize(true)
		p.candidates()
		return
	}
	old := p.paths
	next := p.spare[:0]
	hit := false
	for i := range old {
		q := &old[i]
		ok := p.terminal(q) == int32(sym)
		if q.hyp != hypNone && !q.silent {
			// Silent marks are left out: they realign with a copy's
			// noise, whose kind is the inverse of the input's (a symbol
			// inserted in the copy is one deleted from the input).
			p.settle(q.hyp, ok)
		}
		if ok {
			hit = true
			k := len(next)
			next = p.advance(q.nodes, q.age+1, hypNone, false, next, 4*MaxPaths)
			for j := k; j < len(next); j++ {
				next[j].run = q.run + 1
				if q.silent && cont {
					next[j].hyp, next[j].missed, next[j].silent = q.hyp, q.missed, true
				}
			}
		}
	}
	for i := range old {
		if q := &old[i]; p.terminal(q) != int32(sym) && !q.missed {
			k := len(next)
			next = p.resync(q, int32(sym), next)
			for j := k; j < len(next); j++ {
				next[j].silent = hit
			}
		}
	}
	// The marks change wholesale: rather than unpin the old ones and pin
	// the new ones (every level of every mark, at every symbol on a
	// noisy stream), the grammar tells every rewrite until allHit pins
	// the marks again (obsAll). The observer methods then find the marks
	// that hold the rewritten nodes themselves, which is what the pins'
	// gate left them to do: the marks come out the same.
	if !g.obsAll {
		for i := range old {
			p.unpin(&old[i])
		}
		g.obsAll = true
	}
	for i := range old {
		p.recycle(old[i].nodes)
		old[i].nodes = nil
	}
	p.spare = old[:0]
	p.paths = next
	g.Append(sym) // rewrites update p.paths through the observer methods
	if !hit || len(p.paths) == 0 {
		p.discover()
	}
	p.normalize(true)
	p.candidates()
}

// allHit is Append's common case on a regular stream: when every mark
// expected sym and each one's next terminal lies within its outer rule (no
// fan-out over the rule's occurrences, no end of the input), it moves the
// marks in place, which is what the general case does to them (the same
// marks in the same order, with the same fields), without copying their
// stacks or re-pinning their unchanged outer levels: on a run of equal
// symbols, a mark deep in the run's nested rules changes one or two levels
// per step. It reports false, having changed nothing, otherwise.
func (p *Predictor) allHit(sym int32, cont bool) bool {
	g := p.g
	ps := p.paths
	if len(ps) == 0 || len(ps) > MaxPaths {
		return false
	}
	// Nothing below allocates nodes, so the arena stays where it is.
	nodes := g.nodes
	var levels [MaxPaths]int
	for k := range ps {
		qn := ps[k].nodes
		i := len(qn) - 1
		if nodes[qn[i]].sym != sym {
			return false
		}
		for nodes[nodes[qn[i]].next].guard {
			if i == 0 {
				return false
			}
			i--
		}
		levels[k] = i
	}
	if g.obsAll {
		// After Append's general case the marks are not pinned: pin
		// them, and the grammar goes back to telling only the
		// rewrites of pinned nodes.
		g.obsAll = false
		for k := range ps {
			p.pin(&ps[k])
		}
	}
	for k := range ps {
		q := &ps[k]
		if q.hyp != hypNone && !q.silent {
			p.settle(q.hyp, true)
		}
		i := levels[k]
		for _, n := range q.nodes[i:] {
			nodes[n].pins--
		}
		nx := nodes[q.nodes[i]].next
		q.nodes = append(q.nodes[:i], nx)
		for nd := &nodes[nx]; !nd.guard && nd.sym < 0; nd = &nodes[nx] {
			nx = nodes[g.rules[^nd.sym].guard].next
			q.nodes = append(q.nodes, nx)
		}
		for _, n := range q.nodes[i:] {
			nodes[n].pins++
		}
		q.age = min(q.age+1, ageCap)
		q.run++
		if !q.silent || !cont {
			q.hyp, q.missed, q.silent = hypNone, false, false
		}
	}
	return true
}

// settle counts the outcome of a mark made by hypothesis h at its first
// prediction.
func (p *Predictor) settle(h uint8, hit bool) {
	st := &p.hyps[h]
	st.trials++
	if hit {
		st.hits++
	}
	if st.trials >= hypWindow {
		st.trials /= 2
		st.hits /= 2
	}
}

// resync realigns q, which expected another symbol than sym, under each
// hypothesis of what went wrong, appending the realigned marks to out.
func (p *Predictor) resync(q *path, sym int32, out []path) []path {
	const budget = 4 * MaxPaths // marks in out, those that hit included
	age := q.age / 2
	out = p.advance(q.nodes, age, hypSubst, true, out, budget)
	if len(out) < budget {
		nodes := append(p.stack(len(q.nodes)+4), q.nodes...)
		out = append(out, path{nodes: nodes, age: age, hyp: hypInsert, missed: true})
	}
	// Deletion: the symbol after the expected one is sym.
	p.scratch = p.advance(q.nodes, age, hypDelete, true, p.scratch[:0], MaxPaths)
	for i := range p.scratch {
		if p.terminal(&p.scratch[i]) == sym {
			out = p.advance(p.scratch[i].nodes, age, hypDelete, true, out, budget)
		}
		p.recycle(p.scratch[i].nodes)
		p.scratch[i].nodes = nil
	}
	return out
}

// advance moves a predictor past the terminal at its end to the next
// terminal, appending the result(s) to out; at most budget paths in out.
func (p *Predictor) advance(from []int32, age int32, hyp uint8, missed bool, out []path, budget int) []path {
	if len(out) >= budget {
		return out
	}
	nodes := p.stack(len(from) + 4)[:len(from)]
	copy(nodes, from)
	return p.advanceOwned(nodes, age, hyp, missed, out, budget)
}

// advanceFrom is advance from the one-level mark {o}. Its stack comes
// from p.stack as advance's would (the same size, so the same stacks are
// reused and recycled): a []int32{o} passed to advance from inside
// advance went to the heap, escape analysis being conservative about
// recursive calls, an allocation at every occurrence of a finished
// rule the marks fan out to.
func (p *Predictor) advanceFrom(o, age int32, hyp uint8, missed bool, out []path, budget int) []path {
	if len(out) >= budget {
		return out
	}
	nodes := p.stack(1 + 4)[:1]
	nodes[0] = o
	return p.advanceOwned(nodes, age, hyp, missed, out, budget)
}

// advanceOwned is advance on nodes, a stack of the predictor's own that
// it may change, keep in the result, or recycle.
func (p *Predictor) advanceOwned(nodes []int32, age int32, hyp uint8, missed bool, out []path, budget int) []path {
	g := p.g
	if age > ageCap {
		age = ageCap
	}
	i := len(nodes) - 1
	for {
		nx := g.nodes[nodes[i]].next
		if !g.nodes[nx].guard {
			nodes = append(nodes[:i], nx)
			for g.isRef(nx) {
				nx = g.first(refRule(g.nodes[nx].sym))
				nodes = append(nodes, nx)
			}
			return append(out, path{nodes: nodes, age: age, hyp: hyp, missed: missed})
		}
		if i > 0 {
			i--
			continue
		}
		p.recycle(nodes)
		r := refRule(g.nodes[nx].sym)
		if r == 0 {
			return out // end of the input so far: nothing follows yet
		}
		for o := g.rules[r].firstUse; o != nilNode && len(out) < budget; o = g.nodes[o].nextUse {
			out = p.advanceFrom(o, age, hyp, missed, out, budget)
		}
		return out
	}
}

// discover adds predictors after every occurrence of the last symbol of the
// start rule (other than that last symbol itself). When that symbol is a
// rule, only its occurrences are candidates, which keeps the context of the
// whole rule instead of its last terminal.
func (p *Predictor) discover() {
	g := p.g
	x := g.last(0)
	if g.nodes[x].guard {
		return
	}
	start := len(p.paths)
	for o := g.head(g.nodes[x].sym); o != nilNode && len(p.paths)-start < 2*MaxPaths; o = g.nodes[o].nextUse {
		if o != x {
			p.paths = p.advanceFrom(o, 0, hypNone, false, p.paths, len(p.paths)+2*MaxPaths-(len(p.paths)-start))
		}
	}
	for i := start; i < len(p.paths); i++ {
		p.pin(&p.paths[i])
	}
}

// stack returns an empty node stack of at least the capacity asked for,
// recycled when one is free.
func (p *Predictor) stack(capacity int) []int32 {
	if k := len(p.free); k > 0 {
		s := p.free[k-1]
		p.free = p.free[:k-1]
		if cap(s) >= capacity {
			return s[:0]
		}
	}
	return make([]int32, 0, capacity)
}

// recycle keeps a node stack no path holds any more.
func (p *Predictor) recycle(s []int32) {
	if s != nil && len(p.free) < 8*MaxPaths {
		p.free = append(p.free, s[:0])
	}
}

// pin counts q's nodes as held, unless the grammar tells every rewrite
// (obsAll), when pins are not kept.
func (p *Predictor) pin(q *path) {
	if p.g.obsAll {
		return
	}
	for _, n := range q.nodes {
		p.g.nodes[n].pins++
	}
}

// unpin undoes pin.
func (p *Predictor) unpin(q *path) {
	if p.g.obsAll {
		return
	}
	for _, n := range q.nodes {
		p.g.nodes[n].pins--
	}
}

// normalize merges identical predictors (keeping the heaviest) and keeps
// the MaxPaths heaviest, in a defined order (by nodes, then by weight).
// pinned says whether the predictors' nodes are pinned (and so must be
// unpinned when a predictor is dropped).
func (p *Predictor) normalize(pinned bool) {
	ps := p.paths
	for i := range ps {
		ps[i].vote = p.weight(&ps[i])
	}
	if len(ps) <= MaxPaths && strictlySorted(ps) {
		// What the sort, the merge and the trim below would leave as
		// it is: the usual case, marks keep their order as they move.
		return
	}
	p.sortStable(ps, true)
	w := 0
	for i := range ps {
		if w > 0 && slices.Equal(ps[w-1].nodes, ps[i].nodes) {
			ps[w-1].run = max(ps[w-1].run, ps[i].run)
			if pinned {
				p.unpin(&ps[i])
			}
			p.recycle(ps[i].nodes)
			continue
		}
		if w != i {
			ps[w] = ps[i]
		}
		w++
	}
	clear(ps[w:])
	ps = ps[:w]
	if len(ps) > MaxPaths {
		p.sortStable(ps, false)
		for i := MaxPaths; i < len(ps); i++ {
			if pinned {
				p.unpin(&ps[i])
			}
			p.recycle(ps[i].nodes)
		}
		clear(ps[MaxPaths:])
		ps = ps[:MaxPaths]
	}
	p.paths = ps
}

// byNodesThenVote orders marks by their nodes, then heaviest first.
func byNodesThenVote(a, b *path) int {
	if c := slices.Compare(a.nodes, b.nodes); c != 0 {
		return c
	}
	return cmp.Compare(b.vote, a.vote)
}

// byVote orders marks heaviest first.
func byVote(a, b *path) int { return cmp.Compare(b.vote, a.vote) }

// maxSortIndex bounds the marks sortStable sorts by index.
const maxSortIndex = 64

// sortStable sorts ps stably by byNodesThenVote (byNodes) or byVote. A
// stable sort's result is unique, so this is slices.SortStableFunc's
// result, got otherwise: a binary insertion sort of the marks' indexes,
// then each mark moved once to its place. SortStableFunc moves the marks
// themselves (a path is about 60 bytes) at every step of its insertion
// sort, which made normalize the model's largest cost on noisy streams (a
// third of the model stage on a recorded SQLite trace).
//
// The comparisons were two thirds of the sort's cost on noisy streams (an
// indirect call, then slices.Compare's generic loop, per comparison):
// they compare a key computed once per mark, and call compareMarks, the
// same order written out, only where two keys are equal.
func (p *Predictor) sortStable(ps []path, byNodes bool) {
	n := len(ps)
	if p.noFastPath || n > maxSortIndex {
		order := byVote
		if byNodes {
			order = byNodesThenVote
		}
		slices.SortStableFunc(ps, func(a, b path) int { return order(&a, &b) })
		return
	}
	var idx [maxSortIndex]uint8
	if !byNodes && sortByFewVotes(ps, &idx) {
		applyOrder(ps, &idx)
		return
	}
	// key[i] orders mark i by its first two levels (node indexes are
	// below 2^31; a one-level mark, shorter, comes first): marks whose
	// keys differ are in the keys' order, and only equal keys need the
	// whole comparison. Without byNodes the keys are the votes' bits,
	// which order finite positive floats as the floats.
	var key [maxSortIndex]uint64
	for i := range ps {
		if !byNodes {
			key[i] = math.Float64bits(ps[i].vote)
			continue
		}
		nd := ps[i].nodes
		key[i] = uint64(nd[0]) << 32
		if len(nd) > 1 {
			key[i] |= uint64(nd[1]) + 1
		}
	}
	for i := 0; i < n; i++ {
		// After the equal marks placed already: stable.
		x, kx := &ps[i], key[i]
		lo, hi := 0, i
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			// c is order(x, y), as byNodesThenVote or byVote.
			c := 0
			if ky := key[idx[mid]]; kx != ky {
				c = 1
				if kx < ky == byNodes { // heavier (larger) votes first
					c = -1
				}
			} else if byNodes {
				c = compareMarks(x, &ps[idx[mid]])
			}
			if c >= 0 {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		// Shift by hand: a few bytes, where copy's call to memmove
		// cost more than the moves.
		for j := i; j > lo; j-- {
			idx[j] = idx[j-1]
		}
		idx[lo] = uint8(i)
	}
	applyOrder(ps, &idx)
}

// applyOrder moves the marks so that position j holds the mark idx[j]
// held, each mark moved once: it follows each cycle of the permutation,
// marking positions done as they are filled.
func applyOrder(ps []path, idx *[maxSortIndex]uint8) {
	for i := 0; i < len(ps); i++ {
		if int(idx[i]) == i {
			continue
		}
		tmp := ps[i]
		j := i
		for {
			k := int(idx[j])
			idx[j] = uint8(j)
			if k == i {
				ps[j] = tmp
				break
			}
			ps[j] = ps[k]
			j = k
		}
	}
}

// maxVoteGroups bounds the distinct votes sortByFewVotes groups by.
const maxVoteGroups = 8

// sortByFewVotes fills idx with the stable byVote order of ps when the
// marks' votes take at most maxVoteGroups distinct values, which is the
// usual case (a vote is 1 + an age of at most ageCap, times one of three
// hypotheses' shares): the distinct votes, heaviest first, each followed
// by its marks in their order, which is what a stable sort gives. It
// reports false, having filled nothing, on more distinct votes. A binary
// insertion sort spent about 2,400 instructions per call on the 20 to 30
// marks of a noisy stream; this is a few compares per mark.
func sortByFewVotes(ps []path, idx *[maxSortIndex]uint8) bool {
	var votes [maxVoteGroups]float64
	groups := 0
	for i := range ps {
		v := ps[i].vote
		j := 0
		for j < groups && votes[j] != v {
			j++
		}
		if j == groups {
			if groups == maxVoteGroups {
				return false
			}
			votes[groups] = v
			groups++
		}
	}
	// Heaviest first; the votes are distinct, finite and positive.
	for i := 1; i < groups; i++ {
		v := votes[i]
		j := i
		for ; j > 0 && votes[j-1] < v; j-- {
			votes[j] = votes[j-1]
		}
		votes[j] = v
	}
	k := 0
	for _, v := range votes[:groups] {
		for i := range ps {
			if ps[i].vote == v {
				idx[k] = uint8(i)
				k++
			}
		}
	}
	return true
}

// compareMarks is byNodesThenVote, written out for sortStable: node
// indexes compared element by element, a shorter prefix first, then the
// heavier vote first (votes are finite and positive, never NaN, so
// cmp.Compare's NaN rule does not arise).
func compareMarks(x, y *path) int {
	xn, yn := x.nodes, y.nodes
	k := min(len(xn), len(yn))
	xn, yn = xn[:k], yn[:k]
	for j := range xn {
		if xn[j] != yn[j] {
			if xn[j] < yn[j] {
				return -1
			}
			return 1
		}
	}
	if len(x.nodes) != len(y.nodes) {
		if len(x.nodes) < len(y.nodes) {
			return -1
		}
		return 1
	}
	if x.vote != y.vote {
		if x.vote > y.vote {
			return -1
		}
		return 1
	}
	return 0
}

// strictlySorted reports whether the marks are in increasing order of
// nodes with no two equal.
func strictlySorted(ps []path) bool {
	for i := 1; i < len(ps); i++ {
		if slices.Compare(ps[i-1].nodes, ps[i].nodes) >= 0 {
			return false
		}
	}
	return true
}

// weight is a mark's vote: 1 + the number of inputs it predicted right in
// a row, times, for a mark a resynchronisation made and no input has
// confirmed yet, the share of its hypothesis's marks that proved right
// (with one success and one failure assumed, so an unknown stream's first
// misses try all three).
func (p *Predictor) weight(q *path) float64 {
	w := float64(1 + q.age)
	if q.hyp != hypNone {
		st := &p.hyps[q.hyp]
		w *= float64(st.hits+1) / float64(st.trials+2)
	}
	return w
}

// candidates recomputes the candidate list from the predictors.
func (p *Predictor) candidates() {
	if !p.noFastPath && p.oneCandidate() {
		return
	}
	p.cands = p.cands[:0]
	total := 0.0
	all := p.allSilent()
	for i := range p.paths {
		q := &p.paths[i]
		if q.silent && !all {
			continue
		}
		t := int(p.terminal(q))
		w := q.vote
		total += w
		found := false
		for j := range p.cands {
			if p.cands[j].Symbol == t {
				p.cands[j].Weight += w
				p.cands[j].Run = max(p.cands[j].Run, int(q.run))
				found = true
				break
			}
		}
		if !found {
			p.cands = append(p.cands, Candidate{Symbol: t, Weight: w, Run: int(q.run)})
		}
	}
	for j := range p.cands {
		p.cands[j].Weight /= total
		p.cands[j].Uniform = 1 / float64(len(p.cands))
	}
	// Symbols are distinct, so this order is total and any sort gives the
	// same list; slices.SortFunc, unlike sort.Slice, allocates nothing.
	// One candidate, the usual case on a loop, is sorted already.
	if len(p.cands) < 2 {
		return
	}
	slices.SortFunc(p.cands, func(a, b Candidate) int {
		if a.Weight != b.Weight {
			if a.Weight > b.Weight {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Symbol, b.Symbol)
	})
}

// oneCandidate is candidates' usual case on a loop: when every mark votes
// and all name the same terminal, the list is that terminal alone, with
// weight 1 (its votes summed in the same order as their total, so the
// division gives 1 exactly) and the longest run among the marks. It
// reports false, having changed nothing, otherwise.
func (p *Predictor) oneCandidate() bool {
	ps := p.paths
	if len(ps) == 0 {
		return false
	}
	nodes := p.g.nodes
	t := nodes[ps[0].nodes[len(ps[0].nodes)-1]].sym
	run := int32(0)
	for i := range ps {
		q := &ps[i]
		if q.silent || nodes[q.nodes[len(q.nodes)-1]].sym != t {
			return false
		}
		run = max(run, q.run)
	}
	p.cands = append(p.cands[:0], Candidate{Symbol: int(t), Weight: 1, Uniform: 1, Run: int(run)})
	return true
}

// allSilent reports whether no mark votes, in which case all do.
func (p *Predictor) allSilent() bool {
	for i := range p.paths {
		if !p.paths[i].silent {
			return false
		}
	}
	return true
}

// Candidates returns the possible next terminals, by decreasing Weight then
// increasing Symbol; empty when the grammar has no prediction. The slice is
// the caller's.
func (p *Predictor) Candidates() []Candidate {
	return append([]Candidate(nil), p.cands...)
}

// First returns the first candidate (the one Candidates would list first)
// without copying the list, and whether its Run is longer than that of
// every other candidate (always true for a single candidate); ok is false
// when there is no candidate.
func (p *Predictor) First() (first Candidate, longest, ok bool) {
	if len(p.cands) == 0 {
		return Candidate{}, false, false
	}
	first = p.cands[0]
	for _, x := range p.cands[1:] {
		if x.Run >= first.Run {
			return first, false, true
		}
	}
	return first, true, true
}

// Weight returns the weight the current candidates give to sym (0 when
// none predicts it) and how many candidates there are, without copying
// them: scoring a prediction as each symbol arrives costs a short scan.
func (p *Predictor) Weight(sym int) (weight float64, candidates int) {
	for i := range p.cands {
		if p.cands[i].Symbol == sym {
			return p.cands[i].Weight, len(p.cands)
		}
	}
	return 0, len(p.cands)
}

// Lookahead returns the most likely continuation of up to k terminals: at
// each step the best-weighted candidate, with its probability given the
// steps before (the weight share of the predictors that agree with it), and
// the predictors that agree move on. A predictor that reaches the end of
// the input so far starts again from where it stood when Lookahead was
// called: the input is assumed to repeat what that position has just
// repeated. It stops early when no predictor is left.
func (p *Predictor) Lookahead(k int) []Step {
	var out []Step
	type walker struct {
		path
		origin int
	}
	cur := make([]walker, 0, len(p.paths))
	all := p.allSilent()
	for i := range p.paths {
		if !p.paths[i].silent || all {
			cur = append(cur, walker{p.paths[i], i})
		}
	}
	type vote struct {
		sym int32
		w   float64
	}
	var votes []vote
	var buf []path
	for len(out) < k && len(cur) > 0 {
		votes = votes[:0]
		total := 0.0
		for i := range cur {
			t, w := p.terminal(&cur[i].path), p.weight(&cur[i].path)
			total += w
			found := false
			for j := range votes {
				if votes[j].sym == t {
					votes[j].w += w
					found = true
				}
			}
			if !found {
				votes = append(votes, vote{t, w})
			}
		}
		best := votes[0]
		for _, v := range votes[1:] {
			if v.w > best.w || (v.w == best.w && v.sym < best.sym) {
				best = v
			}
		}
		out = append(out, Step{Symbol: int(best.sym), Prob: best.w / total})
		var next []walker
		for i := range cur {
			if p.terminal(&cur[i].path) != best.sym || len(next) >= 2*MaxPaths {
				continue
			}
			buf = p.advance(cur[i].nodes, cur[i].age, cur[i].hyp, cur[i].missed, buf[:0], 2*MaxPaths-len(next))
			if len(buf) == 0 {
				next = append(next, walker{p.paths[cur[i].origin], cur[i].origin})
			}
			for _, q := range buf {
				next = append(next, walker{q, cur[i].origin})
			}
		}
		cur = next
	}
	return out
}

// substituted is called by the grammar before the digram a b is replaced
// by ref, a reference to a rule with body ra rb: marks on a or b move to
// ref and into the rule.
func (p *Predictor) substituted(a, b, ref, ra, rb int32) {
	g := p.g
	for pi := range p.paths {
		q := &p.paths[pi]
		for i, n := range q.nodes {
			if n != a && n != b {
				continue
			}
			inner := ra
			if n == b {
				inner = rb
			}
			if !g.obsAll {
				g.nodes[n].pins--
				g.nodes[ref].pins++
				g.nodes[inner].pins++
			}
			// Shift the levels below i down by one, by hand: they are a
			// few, and copy's call to memmove cost more than the moves.
			q.nodes = append(q.nodes, 0)
			ns := q.nodes
			for j := len(ns) - 1; j > i+1; j-- {
				ns[j] = ns[j-1]
			}
			ns[i] = ref
			ns[i+1] = inner
			break
		}
	}
}

// expanded is called by the grammar before ref is replaced by its rule's
// body: the body nodes stay, so marks just lose the ref level.
func (p *Predictor) expanded(ref int32) {
	for pi := range p.paths {
		q := &p.paths[pi]
		for i, n := range q.nodes {
			if n == ref {
				if !p.g.obsAll {
					p.g.nodes[ref].pins--
				}
				q.nodes = append(q.nodes[:i], q.nodes[i+1:]...)
				break
			}
		}
	}
}

// MemoryBytes estimates the heap the predictor holds: the arenas at their
// capacity, the digram index, occurrence heads and the predictor marks.
func (p *Predictor) MemoryBytes() int {
	g := p.g
	n := int(unsafe.Sizeof(*p)) + int(unsafe.Sizeof(*g))
	n += cap(g.nodes) * int(unsafe.Sizeof(node{}))
	n += cap(g.freeNodes) * 4
	n += cap(g.rules) * int(unsafe.Sizeof(rule{}))
	n += cap(g.freeRules) * 4
	n += cap(g.termUse) * 4
	// A Go map (swiss table) costs about 1.15x its slots of key+value+ctrl;
	// slots grow in powers of two.
	n += g.digrams.memoryBytes() + mapBytes(len(g.termUseBig), 4+4)
	for i := range p.paths {
		n += int(unsafe.Sizeof(path{})) + cap(p.paths[i].nodes)*4
	}
	n += (cap(p.paths) + cap(p.spare) + cap(p.scratch)) * int(unsafe.Sizeof(path{}))
	n += cap(p.cands) * int(unsafe.Sizeof(Candidate{}))
	return n
}

func mapBytes(entries, slot int) int {
	if entries == 0 {
		return 48
	}
	slots := 8
	for slots*7/8 < entries {
		slots *= 2
	}
	return 48 + slots*(slot+1)
}

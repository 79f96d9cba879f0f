package sequitur

import (
	"cmp"
	"slices"
	"unsafe"
)

// Tuning of the predictor. MaxPaths bounds the predictor marks kept between
// symbols (and so the work per symbol); ageCap bounds how much one long
// matching history outweighs a fresh one.
const (
	MaxPaths = 4
	ageCap   = 255
)

// path is one predictor: a chain of marked nodes from an outer rule down to
// the terminal it expects next. Element 0 need not be in the start rule:
// when the walk leaves the rule holding element 0, it continues after every
// occurrence of that rule, which is the paper's "parent rules are marked
// wherever they appear", computed when needed instead of stored.
type path struct {
	nodes   []int32
	age     int32 // consecutive correct steps (halved by a skipped miss)
	skipped bool  // the last input did not match; one more miss drops it
}

// Candidate is one possible next terminal.
type Candidate struct {
	Symbol int
	// Weight is this package's estimate: each predictor mark votes for its
	// terminal with 1 + the number of consecutive inputs it predicted
	// correctly (capped), so long-confirmed positions in the grammar outweigh
	// fresh guesses after a miss. Weights sum to 1.
	Weight float64
	// Uniform is the paper's weighting: 1/k for k candidates.
	Uniform float64
}

// Step is one symbol of a lookahead and its probability given the steps
// before it.
type Step struct {
	Symbol int
	Prob   float64
}

// Predictor is a Sequitur grammar with Omnisc'IO's predictor marks. It is
// not safe for concurrent use.
type Predictor struct {
	g     *Grammar
	paths []path
	cands []Candidate
	// skip keeps, after a miss, the marks that were wrong, moved past the
	// unexpected input as if it had replaced the expected one (a noisy
	// symbol), alongside the re-discovered marks. Always on for now.
	skip bool
	// spare and free recycle the previous step's path list and node
	// stacks: a step then allocates nothing in the steady state.
	spare []path
	free  [][]int32
}

// NewPredictor returns an empty predictor.
func NewPredictor() *Predictor {
	p := &Predictor{g: New(), skip: true}
	p.g.obs = p
	return p
}

// Grammar returns the grammar the predictor learns; callers must not
// Append to it directly.
func (p *Predictor) Grammar() *Grammar { return p.g }

func (p *Predictor) terminal(q *path) int32 { return p.g.nodes[q.nodes[len(q.nodes)-1]].sym }

// Append learns sym and moves the predictor marks: marks that expected sym
// are incremented (across rule ends, into every occurrence of a finished
// rule when the mark's outer rule is not known), and when none expected it
// (or none can continue), marks are re-discovered after every occurrence of
// the last symbol of the start rule.
func (p *Predictor) Append(sym int) {
	g := p.g
	old := p.paths
	next := p.spare[:0]
	hit := false
	for i := range old {
		if p.terminal(&old[i]) == int32(sym) {
			hit = true
			next = p.advance(old[i].nodes, old[i].age+1, false, next, 2*MaxPaths)
		}
	}
	if !hit && p.skip {
		for i := range old {
			if !old[i].skipped {
				next = p.advance(old[i].nodes, old[i].age/2, true, next, 2*MaxPaths)
			}
		}
	}
	for i := range old {
		p.unpin(&old[i])
		p.recycle(old[i].nodes)
		old[i].nodes = nil
	}
	p.spare = old[:0]
	for i := range next {
		p.pin(&next[i])
	}
	p.paths = next
	g.Append(sym) // rewrites update p.paths through the observer methods
	if !hit || len(p.paths) == 0 {
		p.discover()
	}
	p.normalize()
	p.candidates()
}

// advance moves a predictor past the terminal at its end to the next
// terminal, appending the result(s) to out; at most budget paths in out.
func (p *Predictor) advance(from []int32, age int32, skipped bool, out []path, budget int) []path {
	if len(out) >= budget {
		return out
	}
	g := p.g
	nodes := p.stack(len(from) + 4)[:len(from)]
	copy(nodes, from)
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
			return append(out, path{nodes: nodes, age: age, skipped: skipped})
		}
		if i > 0 {
			i--
			continue
		}
		r := refRule(g.nodes[nx].sym)
		if r == 0 {
			return out // end of the input so far: nothing follows yet
		}
		for o := g.rules[r].firstUse; o != nilNode && len(out) < budget; o = g.nodes[o].nextUse {
			out = p.advance([]int32{o}, age, skipped, out, budget)
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
			p.paths = p.advance([]int32{o}, 0, false, p.paths, len(p.paths)+2*MaxPaths-(len(p.paths)-start))
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

func (p *Predictor) pin(q *path) {
	for _, n := range q.nodes {
		p.g.nodes[n].pins++
	}
}

func (p *Predictor) unpin(q *path) {
	for _, n := range q.nodes {
		p.g.nodes[n].pins--
	}
}

// normalize merges identical predictors (keeping the longest history) and
// keeps the MaxPaths with the longest histories, in a defined order.
func (p *Predictor) normalize() {
	ps := p.paths
	slices.SortStableFunc(ps, func(a, b path) int {
		if c := compareNodes(a.nodes, b.nodes); c != 0 {
			return c
		}
		return cmp.Compare(b.age, a.age)
	})
	w := 0
	for i := range ps {
		if w > 0 && compareNodes(ps[w-1].nodes, ps[i].nodes) == 0 {
			p.unpin(&ps[i])
			p.recycle(ps[i].nodes)
			continue
		}
		ps[w] = ps[i]
		w++
	}
	clear(ps[w:])
	ps = ps[:w]
	if len(ps) > MaxPaths {
		slices.SortStableFunc(ps, func(a, b path) int { return cmp.Compare(b.age, a.age) })
		for i := MaxPaths; i < len(ps); i++ {
			p.unpin(&ps[i])
			p.recycle(ps[i].nodes)
		}
		clear(ps[MaxPaths:])
		ps = ps[:MaxPaths]
	}
	p.paths = ps
}

func compareNodes(a, b []int32) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}

func pathWeight(q *path) float64 { return float64(1 + q.age) }

// candidates recomputes the candidate list from the predictors.
func (p *Predictor) candidates() {
	p.cands = p.cands[:0]
	total := 0.0
	for i := range p.paths {
		t := int(p.terminal(&p.paths[i]))
		w := pathWeight(&p.paths[i])
		total += w
		found := false
		for j := range p.cands {
			if p.cands[j].Symbol == t {
				p.cands[j].Weight += w
				found = true
				break
			}
		}
		if !found {
			p.cands = append(p.cands, Candidate{Symbol: t, Weight: w})
		}
	}
	for j := range p.cands {
		p.cands[j].Weight /= total
		p.cands[j].Uniform = 1 / float64(len(p.cands))
	}
	// Symbols are distinct, so this order is total and any sort gives the
	// same list; slices.SortFunc, unlike sort.Slice, allocates nothing.
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

// Candidates returns the possible next terminals, by decreasing Weight then
// increasing Symbol; empty when the grammar has no prediction. The slice is
// the caller's.
func (p *Predictor) Candidates() []Candidate {
	return append([]Candidate(nil), p.cands...)
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
	cur := make([]walker, len(p.paths))
	for i := range p.paths {
		cur[i] = walker{p.paths[i], i}
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
			t, w := p.terminal(&cur[i].path), pathWeight(&cur[i].path)
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
			buf = p.advance(cur[i].nodes, cur[i].age, false, buf[:0], 2*MaxPaths-len(next))
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
			g.nodes[n].pins--
			g.nodes[ref].pins++
			g.nodes[inner].pins++
			q.nodes = append(q.nodes, 0)
			copy(q.nodes[i+2:], q.nodes[i+1:])
			q.nodes[i] = ref
			q.nodes[i+1] = inner
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
				p.g.nodes[ref].pins--
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
	n += cap(p.paths)*int(unsafe.Sizeof(path{})) + cap(p.cands)*int(unsafe.Sizeof(Candidate{}))
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

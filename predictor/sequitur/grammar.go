// Package sequitur learns a context-free grammar from a stream of integer
// symbols with the Sequitur algorithm of Nevill-Manning and Witten, and
// predicts the next symbols from that grammar with the predictor marks of
// Omnisc'IO (Dorier et al., SC14, section II-B).
//
// The grammar keeps its symbols in index-linked arenas (no pointers, so the
// garbage collector has little to scan and a saved model is compact), and a
// hash index of digrams makes every Append amortised constant time.
// Everything is deterministic: the same input gives the same grammar, the
// same rule numbering and the same predictions on every run.
package sequitur

import (
	"fmt"
	"strings"
)

const nilNode = -1

// node is one symbol of a rule body, or the guard that closes a rule's
// circular list.
type node struct {
	prev, next int32
	// sym is a terminal (>= 0) or a reference to rule r, stored as ^r.
	// A guard stores ^r of the rule it closes.
	sym int32
	// prevUse and nextUse link the nodes holding the same symbol, so that
	// the predictor finds every occurrence of a symbol without a scan.
	prevUse, nextUse int32
	// pins counts the predictor paths that hold this node; the grammar
	// tells the predictor when it rewrites a pinned node. While the
	// grammar's obsAll is set, pins are not kept (all zero).
	pins  int32
	guard bool
}

// rule is one grammar rule; its body is the circular list through guard.
type rule struct {
	guard    int32
	uses     int32 // references from other rule bodies
	firstUse int32 // head of the list of nodes referencing this rule
}

// rewriteObserver is told when the grammar replaces pinned nodes.
type rewriteObserver interface {
	// substituted: nodes a and b (a digram) were replaced by ref, a
	// reference to a rule whose body is ra rb.
	substituted(a, b, ref, ra, rb int32)
	// expanded: ref, the only reference to its rule, was replaced by the
	// rule's body (the same nodes, now in ref's former rule).
	expanded(ref int32)
}

// Grammar is a Sequitur grammar over non-negative int terminals. The zero
// value is not usable; call New.
type Grammar struct {
	nodes     []node
	freeNodes []int32
	rules     []rule
	freeRules []int32
	digrams   digramIndex
	// termUse heads the occurrence lists of small terminals; termUseBig
	// holds the rest.
	termUse    []int32
	termUseBig map[int32]int32
	length     int
	size       int
	obs        rewriteObserver
	// obsAll: the observer's marks are not pinned, so every rewrite is
	// told to it (which finds the marks that hold the rewritten nodes,
	// if any, itself). The predictor sets it while its marks change
	// wholesale at every symbol (see Predictor.Append), where pinning
	// and unpinning every level of every mark cost more than telling.
	obsAll bool
	// plainRewrite makes Append and substitute take their step-by-step
	// versions (insertAfter, substitutePlain): tests check that it
	// changes nothing.
	plainRewrite bool
}

// New returns an empty grammar: rule 0, the start rule, has no symbols.
func New() *Grammar {
	g := &Grammar{}
	g.newRule()
	return g
}

// maxTerminal is the largest terminal Append accepts.
const maxTerminal = 1<<31 - 1

const smallTerminals = 1 << 16

func (g *Grammar) isRef(n int32) bool { return !g.nodes[n].guard && g.nodes[n].sym < 0 }

func refRule(sym int32) int32 { return ^sym }

func (g *Grammar) head(sym int32) int32 {
	switch {
	case sym < 0:
		return g.rules[^sym].firstUse
	case sym < smallTerminals:
		if int(sym) < len(g.termUse) {
			return g.termUse[sym]
		}
		return nilNode
	}
	if h, ok := g.termUseBig[sym]; ok {
		return h
	}
	return nilNode
}

func (g *Grammar) setHead(sym, n int32) {
	switch {
	case sym < 0:
		g.rules[^sym].firstUse = n
	case sym < smallTerminals:
		for int(sym) >= len(g.termUse) {
			g.termUse = append(g.termUse, nilNode)
		}
		g.termUse[sym] = n
	case n == nilNode:
		delete(g.termUseBig, sym)
	default:
		if g.termUseBig == nil {
			g.termUseBig = make(map[int32]int32)
		}
		g.termUseBig[sym] = n
	}
}

// newNode allocates a body node for sym and links it into sym's
// occurrence list; a rule reference counts as a use of the rule.
func (g *Grammar) newNode(sym int32) int32 {
	var n int32
	if k := len(g.freeNodes); k > 0 {
		n = g.freeNodes[k-1]
		g.freeNodes = g.freeNodes[:k-1]
	} else {
		g.nodes = append(g.nodes, node{})
		n = int32(len(g.nodes) - 1)
	}
	nodes := g.nodes
	var h int32
	switch {
	case sym < 0:
		r := &g.rules[^sym]
		h = r.firstUse
		r.firstUse = n
		r.uses++
	case int(sym) < len(g.termUse):
		// head and setHead's common case, a terminal seen before.
		h = g.termUse[sym]
		g.termUse[sym] = n
	default:
		h = g.head(sym)
		g.setHead(sym, n)
	}
	nodes[n] = node{prev: nilNode, next: nilNode, sym: sym, prevUse: nilNode, nextUse: h}
	if h != nilNode {
		nodes[h].prevUse = n
	}
	g.size++
	return n
}

// freeNode unlinks a body node from its occurrence list and releases it.
func (g *Grammar) freeNode(n int32) {
	nodes := g.nodes
	nd := &nodes[n]
	if !nd.guard {
		if nd.prevUse != nilNode {
			nodes[nd.prevUse].nextUse = nd.nextUse
		} else if nd.sym < 0 {
			g.rules[^nd.sym].firstUse = nd.nextUse
		} else {
			g.setHead(nd.sym, nd.nextUse)
		}
		if nd.nextUse != nilNode {
			nodes[nd.nextUse].prevUse = nd.prevUse
		}
		if nd.sym < 0 {
			g.rules[^nd.sym].uses--
		}
		g.size--
	}
	*nd = node{prev: nilNode, next: nilNode}
	g.freeNodes = append(g.freeNodes, n)
}

func (g *Grammar) newRule() int32 {
	var r int32
	if k := len(g.freeRules); k > 0 {
		r = g.freeRules[k-1]
		g.freeRules = g.freeRules[:k-1]
	} else {
		g.rules = append(g.rules, rule{})
		r = int32(len(g.rules) - 1)
	}
	var gd int32
	if k := len(g.freeNodes); k > 0 {
		gd = g.freeNodes[k-1]
		g.freeNodes = g.freeNodes[:k-1]
	} else {
		g.nodes = append(g.nodes, node{})
		gd = int32(len(g.nodes) - 1)
	}
	g.nodes[gd] = node{prev: gd, next: gd, sym: ^r, prevUse: nilNode, nextUse: nilNode, guard: true}
	g.rules[r] = rule{guard: gd, firstUse: nilNode}
	return r
}

func (g *Grammar) first(r int32) int32 { return g.nodes[g.rules[r].guard].next }
func (g *Grammar) last(r int32) int32  { return g.nodes[g.rules[r].guard].prev }

func digramKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func (g *Grammar) keyAt(n int32) uint64 {
	return digramKey(g.nodes[n].sym, g.nodes[g.nodes[n].next].sym)
}

// deleteDigram forgets the digram starting at n if the index points at n.
func (g *Grammar) deleteDigram(n int32) {
	nodes := g.nodes
	nd := &nodes[n]
	if nd.guard || nd.next == nilNode {
		return
	}
	if nx := &nodes[nd.next]; !nx.guard {
		g.digrams.delIf(digramKey(nd.sym, nx.sym), n)
	}
}

// join links left to right, forgetting left's old digram. Runs of three
// equal symbols index only one of their two overlapping digrams; when that
// one goes, the other is indexed so it is not forgotten.
//
// It is the grammar's most frequent step (a dozen times per appended
// symbol in a run of one symbol), so it reads the arena through one slice
// header and node pointers; the digram index never moves the arena.
func (g *Grammar) join(left, right int32) {
	nodes := g.nodes
	l := &nodes[left]
	if l.next != nilNode {
		if !l.guard {
			if nx := &nodes[l.next]; !nx.guard {
				g.digrams.delIf(digramKey(l.sym, nx.sym), left)
			}
		}
		if r := &nodes[right]; !r.guard && r.prev != nilNode && r.next != nilNode {
			p, nx := &nodes[r.prev], &nodes[r.next]
			if r.sym == p.sym && r.sym == nx.sym && !p.guard && !nx.guard {
				g.digrams.set(digramKey(r.sym, nx.sym), right)
			}
		}
		if !l.guard && l.prev != nilNode && l.next != nilNode {
			p, nx := &nodes[l.prev], &nodes[l.next]
			if l.sym == p.sym && l.sym == nx.sym && !p.guard && !nx.guard {
				g.digrams.set(digramKey(p.sym, nodes[p.next].sym), l.prev)
			}
		}
	}
	l.next = right
	nodes[right].prev = left
}

func (g *Grammar) insertAfter(at, n int32) {
	g.join(n, g.nodes[at].next)
	g.join(at, n)
}

// unlink removes n from its rule, forgetting its digrams, and frees it.
func (g *Grammar) unlink(n int32) {
	g.join(g.nodes[n].prev, g.nodes[n].next)
	g.deleteDigram(n)
	g.freeNode(n)
}

// check enforces digram uniqueness for the digram starting at n; it reports
// whether the digram was already indexed.
func (g *Grammar) check(n int32) bool {
	nd := &g.nodes[n]
	if nd.guard || g.nodes[nd.next].guard {
		return false
	}
	m, ok := g.digrams.getOrSet(g.keyAt(n), n)
	if !ok {
		return false
	}
	if m == n {
		return false
	}
	if g.nodes[m].next != n { // overlapping digrams (aaa) are left alone
		g.match(n, m)
	}
	return true
}

// match handles the second occurrence ss of the digram indexed at m.
func (g *Grammar) match(ss, m int32) {
	var r int32
	mp := g.nodes[m].prev
	if g.nodes[mp].guard && g.nodes[g.nodes[g.nodes[m].next].next].guard {
		r = refRule(g.nodes[mp].sym)
		g.substitute(ss, r)
	} else {
		r = g.newRule()
		a := g.newNode(g.nodes[ss].sym)
		b := g.newNode(g.nodes[g.nodes[ss].next].sym)
		gd := g.rules[r].guard
		g.insertAfter(gd, a)
		g.insertAfter(a, b)
		g.substitute(m, r)
		g.substitute(ss, r)
		g.digrams.set(digramKey(g.nodes[a].sym, g.nodes[b].sym), a)
	}
	// Rule utility: the digram's symbols lost a use each.
	if f := g.first(r); g.isRef(f) && g.rules[refRule(g.nodes[f].sym)].uses == 1 {
		g.expand(f)
	}
	if l := g.last(r); g.isRef(l) && g.rules[refRule(g.nodes[l].sym)].uses == 1 {
		g.expand(l)
	}
}

// substitute replaces the digram starting at s with a reference to r.
//
// It is substitutePlain (unlink s, unlink its successor, insert the
// reference) written out in one piece: the same index updates and link
// writes in the same order, so the grammar, its arena layout and its
// digram table come out the same, without the calls and the re-reads of
// nodes each step of the plain version makes. substitution is most of the
// grammar's upkeep (about 2,000 instructions each, nested ones included).
func (g *Grammar) substitute(s, r int32) {
	if g.plainRewrite {
		g.substitutePlain(s, r)
		return
	}
	q := g.nodes[s].prev
	s2 := g.nodes[s].next
	ref := g.newNode(^r)
	// Nothing below allocates nodes, so the arena stays where it is.
	nodes := g.nodes
	S, S2, Q, R := &nodes[s], &nodes[s2], &nodes[q], &nodes[ref]
	if g.obs != nil && (g.obsAll || S.pins > 0 || S2.pins > 0) {
		g.obs.substituted(s, s2, ref, g.first(r), g.last(r))
	}
	d := &g.digrams
	n2 := S2.next
	N2 := &nodes[n2]

	// unlink(s): join(q, s2), then s's own digram goes.
	if Q.next != nilNode {
		if !Q.guard {
			if !S.guard {
				d.delIf(digramKey(Q.sym, S.sym), q)
			}
		}
		if !S2.guard && S2.prev != nilNode && n2 != nilNode {
			if P := &nodes[S2.prev]; S2.sym == P.sym && S2.sym == N2.sym && !P.guard && !N2.guard {
				d.set(digramKey(S2.sym, N2.sym), s2)
			}
		}
		if !Q.guard && Q.prev != nilNode {
			if P := &nodes[Q.prev]; Q.sym == P.sym && Q.sym == S.sym && !P.guard && !S.guard {
				d.set(digramKey(P.sym, nodes[P.next].sym), Q.prev)
			}
		}
	}
	Q.next = s2
	S2.prev = q
	if !S.guard && S.next != nilNode {
		if nx := &nodes[S.next]; !nx.guard {
			d.delIf(digramKey(S.sym, nx.sym), s)
		}
	}
	g.freeNode(s)

	// unlink(s2): join(q, n2), then s2's own digram goes. join would
	// first forget q's digram, q s2, if the index pointed at q: it does
	// not, as the only entry that can point at q is q's own digram, and
	// unlink(s) forgot it (q s2 was never indexed; the sets above and
	// below index other nodes).
	if Q.next != nilNode {
		if !N2.guard && N2.prev != nilNode && N2.next != nilNode {
			if P, nx := &nodes[N2.prev], &nodes[N2.next]; N2.sym == P.sym && N2.sym == nx.sym && !P.guard && !nx.guard {
				d.set(digramKey(N2.sym, nx.sym), n2)
			}
		}
		if !Q.guard && Q.prev != nilNode {
			if P := &nodes[Q.prev]; Q.sym == P.sym && Q.sym == S2.sym && !P.guard && !S2.guard {
				d.set(digramKey(P.sym, nodes[P.next].sym), Q.prev)
			}
		}
	}
	Q.next = n2
	N2.prev = q
	if !S2.guard && S2.next != nilNode {
		if nx := &nodes[S2.next]; !nx.guard {
			d.delIf(digramKey(S2.sym, nx.sym), s2)
		}
	}
	g.freeNode(s2)

	// insertAfter(q, ref): join(ref, n2) (ref is new: nothing to
	// forget), then join(q, ref).
	R.next = Q.next
	nodes[R.next].prev = ref
	if nx := Q.next; nx != nilNode {
		NX := &nodes[nx]
		// q n2 is not indexed at q either (see unlink(s2) above).
		// ref's old neighbours: none (R.prev is nilNode).
		if !Q.guard && Q.prev != nilNode {
			if P := &nodes[Q.prev]; Q.sym == P.sym && Q.sym == NX.sym && !P.guard && !NX.guard {
				d.set(digramKey(P.sym, nodes[P.next].sym), Q.prev)
			}
		}
	}
	Q.next = ref
	R.prev = q
	if !g.check(q) {
		g.check(ref)
	}
}

// substitutePlain is substitute step by step, for tests that check the
// two give the same grammar (see plainRewrite).
func (g *Grammar) substitutePlain(s, r int32) {
	q := g.nodes[s].prev
	s2 := g.nodes[s].next
	ref := g.newNode(^r)
	if g.obs != nil && (g.obsAll || g.nodes[s].pins > 0 || g.nodes[s2].pins > 0) {
		g.obs.substituted(s, s2, ref, g.first(r), g.last(r))
	}
	g.unlink(s)
	g.unlink(s2)
	g.insertAfter(q, ref)
	if !g.check(q) {
		g.check(ref)
	}
}

// expand replaces ref, the last reference to its rule, by the rule's body
// and deletes the rule.
func (g *Grammar) expand(ref int32) {
	if g.obs != nil && (g.obsAll || g.nodes[ref].pins > 0) {
		g.obs.expanded(ref)
	}
	r := refRule(g.nodes[ref].sym)
	left, right := g.nodes[ref].prev, g.nodes[ref].next
	f, l := g.first(r), g.last(r)
	g.deleteDigram(ref)
	gd := g.rules[r].guard
	g.freeNode(ref)
	g.freeNode(gd)
	g.rules[r] = rule{guard: nilNode, firstUse: nilNode}
	g.freeRules = append(g.freeRules, r)
	g.join(left, f)
	g.join(l, right)
	g.digrams.set(g.keyAt(l), l)
}

// Append adds terminal sym (0 <= sym < 2^31) at the end of the start rule
// and restores digram uniqueness and rule utility. It panics on a symbol
// out of range, which is a programming error of the caller.
func (g *Grammar) Append(sym int) {
	if sym < 0 || sym > maxTerminal {
		panic(fmt.Sprintf("sequitur: terminal %d out of range [0, 2^31)", sym))
	}
	g.length++
	if !g.plainRewrite && sym < len(g.termUse) && g.appendCompleting(int32(sym)) {
		return
	}
	n := g.newNode(int32(sym))
	if g.plainRewrite {
		g.insertAfter(g.last(0), n)
	} else {
		g.linkAtEnd(n)
	}
	if p := g.nodes[n].prev; !g.nodes[p].guard {
		g.check(p)
	}
}

// appendCompleting is Append's common case on a regular stream, in one
// piece: the new terminal makes, with the start rule's last symbol, the
// whole body of a rule, which then replaces the two. It reports false,
// having changed nothing, when the digram is new, overlaps its indexed
// occurrence, or occurs elsewhere than as a whole rule; Append then goes
// on the general way.
//
// The general way allocates the terminal's node, links it into its
// occurrence list and the start rule, finds the digram (check), and
// substitutes (match, substitute), which unlinks and frees that node
// again. Here the node only takes its place in the arena and the free
// list, where it ends up free as before: the same arena, free lists,
// occurrence lists and digram table (the same index operations in the
// same order), and the same call to the observer; TestRewriteInOnePiece
// compares both after every symbol. In a run of one symbol, or a cycle
// of a run and another symbol, nearly every symbol takes this way.
func (g *Grammar) appendCompleting(sym int32) bool {
	nodes := g.nodes
	gd := g.rules[0].guard
	s := nodes[gd].prev // the start rule's last symbol
	S := &nodes[s]
	if S.guard {
		return false
	}
	d := &g.digrams
	// check(s), as the general way makes it once the node is linked: the
	// index is apart from the arena, so the order does not matter.
	m, found := d.getOrSet(digramKey(S.sym, sym), s)
	if !found {
		g.appendLinked(sym, false, 0, 0)
		return true
	}
	M := &nodes[m]
	if m == s || M.next == s {
		// An overlapping run (aaa): left alone.
		g.appendLinked(sym, false, 0, 0)
		return true
	}
	mp := M.prev
	if !nodes[mp].guard || !nodes[nodes[M.next].next].guard {
		// A digram inside a longer rule: match makes a new rule.
		g.appendLinked(sym, true, s, m)
		return true
	}
	r := refRule(nodes[mp].sym)

	// newNode(sym), then newNode(^r) for the reference, from the free
	// list or the arena's end.
	var n, ref int32
	if k := len(g.freeNodes); k > 0 {
		n = g.freeNodes[k-1]
		g.freeNodes = g.freeNodes[:k-1]
		nodes[n] = node{prev: nilNode, next: nilNode} // as freeNode leaves it
	} else {
		g.nodes = append(g.nodes, node{prev: nilNode, next: nilNode})
		n = int32(len(g.nodes) - 1)
	}
	if k := len(g.freeNodes); k > 0 {
		ref = g.freeNodes[k-1]
		g.freeNodes = g.freeNodes[:k-1]
	} else {
		g.nodes = append(g.nodes, node{})
		ref = int32(len(g.nodes) - 1)
	}
	nodes = g.nodes
	rr := &g.rules[r]
	h := rr.firstUse
	rr.firstUse = ref
	rr.uses++
	nodes[ref] = node{prev: nilNode, next: nilNode, sym: ^r, prevUse: nilNode, nextUse: h}
	if h != nilNode {
		nodes[h].prevUse = ref
	}
	g.size++
	S = &nodes[s]
	q := S.prev
	Q, R := &nodes[q], &nodes[ref]
	if g.obs != nil && (g.obsAll || S.pins > 0) {
		g.obs.substituted(s, n, ref, g.first(r), g.last(r))
	}

	// unlink(s): join(q, n), then s's digram goes (indexed at m, not
	// at s: delIf leaves it, as in the general way).
	if !Q.guard {
		d.delIf(digramKey(Q.sym, S.sym), q)
		if Q.prev != nilNode {
			if P := &nodes[Q.prev]; Q.sym == P.sym && Q.sym == S.sym && !P.guard {
				d.set(digramKey(P.sym, nodes[P.next].sym), Q.prev)
			}
		}
	}
	// The general way's delIf(s sym, s) here changes nothing: that
	// digram is indexed at m (not s, which check found the digram
	// again at), or, when q, s and sym are one symbol, at q's
	// predecessor by the set just above.
	g.freeNode(s)
	// unlink(n): join(q, guard); n has no digram (the guard follows it).
	if !Q.guard && Q.prev != nilNode {
		if P := &nodes[Q.prev]; Q.sym == P.sym && Q.sym == sym && !P.guard {
			d.set(digramKey(P.sym, nodes[P.next].sym), Q.prev)
		}
	}
	// freeNode(n): its occurrence-list link was undone, and it was free
	// (or fresh) before.
	g.freeNodes = append(g.freeNodes, n)
	// insertAfter(q, ref): ref ends the start rule.
	R.next = gd
	nodes[gd].prev = ref
	Q.next = ref
	R.prev = q
	g.check(q) // check(ref) finds the guard after it

	// match's rule utility.
	if f := g.first(r); g.isRef(f) && g.rules[refRule(g.nodes[f].sym)].uses == 1 {
		g.expand(f)
	}
	if l := g.last(r); g.isRef(l) && g.rules[refRule(g.nodes[l].sym)].uses == 1 {
		g.expand(l)
	}
	return true
}

// appendLinked is the rest of the general way once check's index lookup
// is done: the node for sym at the start rule's end, then, when the
// lookup found a digram to match, match(s, m).
func (g *Grammar) appendLinked(sym int32, matched bool, s, m int32) {
	n := g.newNode(sym)
	g.linkAtEnd(n)
	if matched {
		g.match(s, m)
	}
}

// linkAtEnd puts the new node n at the start rule's end: what
// insertAfter(last, n) would do as join(n, guard) then join(last, n), but
// n is new and last is followed by the guard, so there is no digram to
// forget and no run of three to index.
func (g *Grammar) linkAtEnd(n int32) {
	nodes := g.nodes
	gd := g.rules[0].guard
	G, N := &nodes[gd], &nodes[n]
	last := G.prev
	N.next = gd
	G.prev = n
	nodes[last].next = n
	N.prev = last
}

// Len returns the number of terminals appended.
func (g *Grammar) Len() int { return g.length }

// Size returns the total number of symbols in all rule bodies.
func (g *Grammar) Size() int { return g.size }

// Symbol is one element of a rule body: a terminal, or a reference to a rule
// when IsRule is set.
type Symbol struct {
	Terminal int
	Rule     int
	IsRule   bool
}

// Rule is one rule of the grammar as Rules reports it.
type Rule struct {
	ID   int
	Body []Symbol
}

// numbering assigns rule IDs: 0 to the start rule, then 1, 2, ... in the
// order of first reference in a breadth-first walk from the start rule, so
// that equal grammars get equal numbers whatever their arena layout.
func (g *Grammar) numbering() (ids map[int32]int, order []int32) {
	ids = map[int32]int{0: 0}
	order = []int32{0}
	for i := 0; i < len(order); i++ {
		r := order[i]
		for n := g.first(r); !g.nodes[n].guard; n = g.nodes[n].next {
			if g.isRef(n) {
				c := refRule(g.nodes[n].sym)
				if _, seen := ids[c]; !seen {
					ids[c] = len(order)
					order = append(order, c)
				}
			}
		}
	}
	return ids, order
}

// Rules returns the grammar's rules: rule 0 is the start rule, the others
// are numbered 1.. in breadth-first order of first reference from rule 0.
func (g *Grammar) Rules() []Rule {
	ids, order := g.numbering()
	out := make([]Rule, len(order))
	for i, r := range order {
		var body []Symbol
		for n := g.first(r); !g.nodes[n].guard; n = g.nodes[n].next {
			if g.isRef(n) {
				body = append(body, Symbol{Rule: ids[refRule(g.nodes[n].sym)], IsRule: true})
			} else {
				body = append(body, Symbol{Terminal: int(g.nodes[n].sym)})
			}
		}
		out[i] = Rule{ID: i, Body: body}
	}
	return out
}

// Expand returns the terminals that rule 0 derives, which equal the input.
func (g *Grammar) Expand() []int {
	out := make([]int, 0, g.length)
	var walk func(r int32)
	walk = func(r int32) {
		for n := g.first(r); !g.nodes[n].guard; n = g.nodes[n].next {
			if g.isRef(n) {
				walk(refRule(g.nodes[n].sym))
			} else {
				out = append(out, int(g.nodes[n].sym))
			}
		}
	}
	walk(0)
	return out
}

// String prints the grammar one rule a line, "S -> A b A", naming rules
// A..Z then R27, R28, ... and printing terminals 'a'..'z' as letters when
// every terminal is a lower-case ASCII letter, as numbers otherwise.
func (g *Grammar) String() string {
	rules := g.Rules()
	letters := true
	for _, r := range rules {
		for _, s := range r.Body {
			if !s.IsRule && (s.Terminal < 'a' || s.Terminal > 'z') {
				letters = false
			}
		}
	}
	name := func(id int) string {
		switch {
		case id == 0:
			return "S"
		case id <= 26 && id != 19: // skip 'S'
			return string(rune('A' + id - 1))
		default:
			return fmt.Sprintf("R%d", id)
		}
	}
	var b strings.Builder
	for _, r := range rules {
		b.WriteString(name(r.ID))
		b.WriteString(" ->")
		for _, s := range r.Body {
			b.WriteByte(' ')
			switch {
			case s.IsRule:
				b.WriteString(name(s.Rule))
			case letters:
				b.WriteByte(byte(s.Terminal))
			default:
				fmt.Fprintf(&b, "%d", s.Terminal)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Check verifies Sequitur's invariants: no digram occurs twice (overlapping
// runs like "aaa" excepted), every rule other than the start rule has at
// least two symbols and is referenced at least twice, reference counts,
// occurrence lists and the digram index agree with the rule bodies, and the
// expansion of rule 0 has Len terminals. Tests compare Expand with their
// input.
func (g *Grammar) Check() error {
	ids, order := g.numbering()
	uses := make(map[int32]int)
	seen := make(map[uint64]int32)
	size := 0
	expLen := make(map[int32]int)
	for _, r := range order {
		n0 := g.first(r)
		count := 0
		for n := n0; !g.nodes[n].guard; n = g.nodes[n].next {
			size++
			count++
			if g.nodes[g.nodes[n].next].prev != n {
				return fmt.Errorf("rule %d: broken links at node %d", ids[r], n)
			}
			if g.isRef(n) {
				uses[refRule(g.nodes[n].sym)]++
			}
			nx := g.nodes[n].next
			if g.nodes[nx].guard {
				continue
			}
			k := g.keyAt(n)
			if prev, dup := seen[k]; dup {
				// Overlap: x x x yields digrams at prev and n with n == prev.next.
				if g.nodes[prev].next != n {
					return fmt.Errorf("digram %s occurs twice", g.digramString(k))
				}
			} else {
				seen[k] = n
			}
			if m, ok := g.digrams.get(k); !ok {
				return fmt.Errorf("digram %s is not indexed", g.digramString(k))
			} else if g.keyAt(m) != k || g.nodes[m].guard {
				return fmt.Errorf("index of digram %s points at another digram", g.digramString(k))
			}
		}
		if r != 0 && count < 2 {
			return fmt.Errorf("rule %d has %d symbols", ids[r], count)
		}
	}
	for _, r := range order[1:] {
		if uses[r] < 2 {
			return fmt.Errorf("rule %d is used %d times", ids[r], uses[r])
		}
		if int(g.rules[r].uses) != uses[r] {
			return fmt.Errorf("rule %d counts %d uses, has %d", ids[r], g.rules[r].uses, uses[r])
		}
	}
	if g.digrams.len() != len(seen) {
		return fmt.Errorf("digram index has %d entries for %d distinct digrams", g.digrams.len(), len(seen))
	}
	if size != g.size {
		return fmt.Errorf("size is %d, counted %d", g.size, size)
	}
	if live := len(g.rules) - len(g.freeRules); live != len(order) {
		return fmt.Errorf("%d live rules, %d reachable", live, len(order))
	}
	var lengthOf func(r int32) int
	lengthOf = func(r int32) int {
		if l, ok := expLen[r]; ok {
			return l
		}
		l := 0
		for n := g.first(r); !g.nodes[n].guard; n = g.nodes[n].next {
			if g.isRef(n) {
				l += lengthOf(refRule(g.nodes[n].sym))
			} else {
				l++
			}
		}
		expLen[r] = l
		return l
	}
	lengthOf(0)
	if expLen[0] != g.length {
		return fmt.Errorf("rule 0 expands to %d terminals, %d were appended", expLen[0], g.length)
	}
	return nil
}

func (g *Grammar) digramString(k uint64) string {
	f := func(s int32) string {
		if s < 0 {
			return fmt.Sprintf("<rule#%d>", ^s)
		}
		return fmt.Sprint(s)
	}
	return f(int32(uint32(k>>32))) + " " + f(int32(uint32(k)))
}

package pattern

import (
	"fmt"
	"strconv"
	"strings"
)

// Node is a node of a multi-level pattern tree (Figure 18). A leaf is a
// pattern unit without its init: Reps repetitions of Deltas. An inner node
// repeats the group of its Children Reps times; Starts is the full pattern
// unit of the first value of each repetition, as the parent patterns of
// Figure 18 carry.
type Node struct {
	Deltas   []int64 `msgpack:"d,omitempty"`
	Children []Node  `msgpack:"ch,omitempty"`
	Reps     int64   `msgpack:"r"`
	Starts   *Unit   `msgpack:"s,omitempty"`
}

// Tree is a multi-level pattern tree: the first value of a sequence and the
// nodes that describe its deltas in order.
type Tree struct {
	Init  int64  `msgpack:"i"`
	Count int64  `msgpack:"n"` // values the tree stands for
	Nodes []Node `msgpack:"nodes"`
}

// Steps is the number of deltas the node stands for.
func (n *Node) Steps() int64 {
	if len(n.Children) == 0 {
		return int64(len(n.Deltas)) * n.Reps
	}
	var s int64
	for i := range n.Children {
		s += n.Children[i].Steps()
	}
	return s * n.Reps
}

// Sum is the distance the node moves a value.
func (n *Node) Sum() int64 {
	var s int64
	if len(n.Children) == 0 {
		for _, d := range n.Deltas {
			s += d
		}
	} else {
		for i := range n.Children {
			s += n.Children[i].Sum()
		}
	}
	return s * n.Reps
}

// Depth is the number of levels below and including the node.
func (n *Node) Depth() int {
	d := 0
	for i := range n.Children {
		d = max(d, n.Children[i].Depth())
	}
	return d + 1
}

func (n *Node) appendDeltas(dst []int64) []int64 {
	for r := int64(0); r < n.Reps; r++ {
		if len(n.Children) == 0 {
			dst = append(dst, n.Deltas...)
			continue
		}
		for i := range n.Children {
			dst = n.Children[i].appendDeltas(dst)
		}
	}
	return dst
}

// String prints a leaf as (3,4,7)^3 and an inner node as {...}^r.
func (n *Node) String() string {
	var b strings.Builder
	if len(n.Children) == 0 {
		b.WriteString("(")
		for i, d := range n.Deltas {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.FormatInt(d, 10))
		}
		b.WriteString(")")
	} else {
		b.WriteString("{")
		for i := range n.Children {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(n.Children[i].String())
		}
		b.WriteString("}")
	}
	fmt.Fprintf(&b, "^%d", n.Reps)
	return b.String()
}

// String prints the tree as "0: {(1)^3 (10)^1}^4 ...".
func (t *Tree) String() string {
	parts := make([]string, len(t.Nodes))
	for i := range t.Nodes {
		parts[i] = t.Nodes[i].String()
	}
	return strconv.FormatInt(t.Init, 10) + ": " + strings.Join(parts, " ")
}

// Depth is the number of levels of the tree.
func (t *Tree) Depth() int {
	d := 0
	for i := range t.Nodes {
		d = max(d, t.Nodes[i].Depth())
	}
	return d
}

// Expand returns the values the tree stands for.
func (t *Tree) Expand() []int64 {
	if t.Count == 0 {
		return nil
	}
	var d []int64
	for i := range t.Nodes {
		d = t.Nodes[i].appendDeltas(d)
	}
	out := make([]int64, 1, len(d)+1)
	out[0] = t.Init
	for _, x := range d {
		out = append(out, out[len(out)-1]+x)
	}
	return out
}

// nodeKey identifies a node's shape, so that the detector can compare nodes
// as symbols.
func nodeKey(n *Node) string { return n.String() }

// BuildTree applies the detector (Algorithm 1) to q, then again and again to
// the sequence of patterns found at the previous level, comparing patterns
// by shape (deltas and repetitions), until a level finds no repetition or
// maxLevels levels are built (section 4.2, Figure 18). Nested loops give
// deeper trees: the 2-D walk 0,1,2,10,11,12,20,... becomes {(1)^2 (8)^1}^k.
func BuildTree(q []int64, window, maxLevels int) Tree {
	t := Tree{Count: int64(len(q))}
	if len(q) == 0 {
		return t
	}
	t.Init = q[0]
	d := Deltas(q)
	for _, sp := range detectSpans(d, window) {
		t.Nodes = append(t.Nodes, Node{Deltas: append([]int64(nil), d[sp.start:sp.start+sp.period]...), Reps: int64(sp.reps)})
	}
	return buildLevels(t, window, maxLevels)
}

// Tree is BuildTree over the values added, from the detector's level-0
// spans; it closes the detector.
func (d *Detector) Tree(maxLevels int) Tree {
	d.Close()
	t := Tree{Count: d.n}
	if d.n == 0 {
		return t
	}
	t.Init = d.firstValue()
	for _, sp := range d.spans() {
		t.Nodes = append(t.Nodes, Node{Deltas: append([]int64(nil), sp.deltas...), Reps: sp.reps})
	}
	return buildLevels(t, d.window, maxLevels)
}

// buildLevels builds the levels of t above its level-0 nodes.
func buildLevels(t Tree, window, maxLevels int) Tree {
	for level := 1; level < maxLevels && len(t.Nodes) > 1; level++ {
		keys := make([]string, len(t.Nodes))
		for i := range t.Nodes {
			keys[i] = nodeKey(&t.Nodes[i])
		}
		spans := detectSpans(keys, window)
		if len(spans) == len(t.Nodes) {
			break
		}
		start := t.Init
		var next []Node
		for _, sp := range spans {
			group := t.Nodes[sp.start : sp.start+sp.period]
			if sp.reps == 1 && sp.period == 1 {
				next = append(next, group[0])
				start += group[0].Sum()
				continue
			}
			n := Node{Children: append([]Node(nil), group...), Reps: int64(sp.reps)}
			var groupSum int64
			for i := range group {
				groupSum += group[i].Sum()
			}
			n.Starts = &Unit{Init: start, Deltas: []int64{groupSum}, Reps: int64(sp.reps) - 1, Tail: 1}
			next = append(next, n)
			start += groupSum * int64(sp.reps)
		}
		t.Nodes = next
	}
	return t
}

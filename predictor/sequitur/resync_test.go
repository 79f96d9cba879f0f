package sequitur

import (
	"fmt"
	"reflect"
	"testing"
)

// period8 is a loop body of eight distinct symbols.
var period8 = []int{10, 11, 12, 13, 14, 15, 16, 17}

// withErrors repeats period8 n times and makes one error of the kind
// given in every 20th period, at a position that moves from error to
// error. It returns the stream and, for each error, the index of the
// symbol no predictor can know: the substituted or inserted symbol, or the
// one after a deleted symbol.
func withErrors(n int, kind noiseKind) (stream []int, bad []int) {
	for c := 0; c < n; c++ {
		for j, s := range period8 {
			if c%20 != 19 || j != c/20%len(period8) {
				stream = append(stream, s)
				continue
			}
			bad = append(bad, len(stream))
			switch kind {
			case substitution:
				stream = append(stream, 99)
			case insertion:
				stream = append(stream, 99, s)
			case deletion:
			}
		}
	}
	return stream, bad
}

// TestLoadedPredictsAsMain proves that a saved grammar, loaded, predicts
// the next run as main's predictor does from the same grammar: the same
// candidates, in the same order, at every symbol of a clean second run of
// the nested loop and of the program with errors of withErrors.
func TestLoadedPredictsAsMain(t *testing.T) {
	errs, _ := withErrors(100, substitution)
	clean, _ := withErrors(10, substitution) // no error in 10 periods
	for _, tc := range []struct {
		name        string
		run, second []int
	}{
		{"nested loop", nestedLoop(26 * 30), nestedLoop(26 * 10)},
		{"with errors", errs, clean},
	} {
		name, run := tc.name, tc.run
		t.Run(name, func(t *testing.T) {
			p := NewPredictor()
			for _, s := range run {
				p.Append(s)
			}
			data, err := p.MarshalMsgpack()
			if err != nil {
				t.Fatal(err)
			}
			var q Predictor
			if err := q.UnmarshalMsgpack(data); err != nil {
				t.Fatal(err)
			}
			s, err := decodeSaved(data)
			if err != nil {
				t.Fatal(err)
			}
			g, err := rebuild(s)
			if err != nil {
				t.Fatal(err)
			}
			ref := &refPredictor{g: g, skip: true}
			g.obs = ref
			ref.restart()
			for i, s := range tc.second {
				if got, want := q.Candidates(), ref.Candidates(); !reflect.DeepEqual(got, want) {
					t.Fatalf("symbol %d: candidates %v, main's %v", i, got, want)
				}
				q.Append(s)
				ref.Append(s)
			}
		})
	}
}

// checkMarks verifies the predictor's marks against the grammar: each is a
// chain of live nodes from an outer rule down to a terminal, each node one
// level into the rule its parent references; the pins equal the marks
// holding each node; at most MaxPaths marks; candidate weights sum to 1.
func checkMarks(p *Predictor) error {
	g := p.g
	if len(p.paths) > MaxPaths {
		return fmt.Errorf("%d marks", len(p.paths))
	}
	pins := make(map[int32]int32)
	for i, q := range p.paths {
		if len(q.nodes) == 0 {
			return fmt.Errorf("mark %d is empty", i)
		}
		for j, n := range q.nodes {
			pins[n]++
			if n < 0 || int(n) >= len(g.nodes) || g.nodes[n].guard || g.nodes[n].next == nilNode {
				return fmt.Errorf("mark %d holds dead node %d", i, n)
			}
			last := j == len(q.nodes)-1
			if last != !g.isRef(n) {
				return fmt.Errorf("mark %d: node %d at level %d of %d", i, n, j, len(q.nodes))
			}
			if !last {
				r := refRule(g.nodes[n].sym)
				found := false
				for m := g.first(r); !g.nodes[m].guard; m = g.nodes[m].next {
					found = found || m == q.nodes[j+1]
				}
				if !found {
					return fmt.Errorf("mark %d: node %d is not in the rule node %d references", i, q.nodes[j+1], n)
				}
			}
		}
	}
	for n := range g.nodes {
		if got, want := g.nodes[n].pins, pins[int32(n)]; got != want {
			return fmt.Errorf("node %d has %d pins, %d marks hold it", n, got, want)
		}
	}
	if len(p.cands) > 0 {
		sum := 0.0
		for _, c := range p.cands {
			sum += c.Weight
		}
		if sum < 0.999999 || sum > 1.000001 {
			return fmt.Errorf("candidate weights sum to %v", sum)
		}
	}
	return nil
}

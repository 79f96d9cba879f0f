package sequitur

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// sameGrammar reports the first difference between two grammars' whole
// state: the arena node by node (links, symbols, occurrence lists, pins),
// the free lists in order, the rules, the occurrence heads and the digram
// table slot by slot (its layout, not only its contents, so that its
// growth and memory figures match too).
func sameGrammar(a, b *Grammar) error {
	if len(a.nodes) != len(b.nodes) {
		return fmt.Errorf("%d nodes against %d", len(a.nodes), len(b.nodes))
	}
	for i := range a.nodes {
		if a.nodes[i] != b.nodes[i] {
			return fmt.Errorf("node %d: %+v against %+v", i, a.nodes[i], b.nodes[i])
		}
	}
	switch {
	case !slices.Equal(a.freeNodes, b.freeNodes):
		return fmt.Errorf("free nodes %v against %v", a.freeNodes, b.freeNodes)
	case !slices.Equal(a.rules, b.rules):
		return fmt.Errorf("rules %v against %v", a.rules, b.rules)
	case !slices.Equal(a.freeRules, b.freeRules):
		return fmt.Errorf("free rules %v against %v", a.freeRules, b.freeRules)
	case !slices.Equal(a.termUse, b.termUse):
		return fmt.Errorf("occurrence heads differ")
	case len(a.termUseBig) != len(b.termUseBig):
		return fmt.Errorf("%d large terminals against %d", len(a.termUseBig), len(b.termUseBig))
	case a.length != b.length || a.size != b.size:
		return fmt.Errorf("length and size %d %d against %d %d", a.length, a.size, b.length, b.size)
	case a.digrams.n != b.digrams.n || !slices.Equal(a.digrams.slots, b.digrams.slots):
		return fmt.Errorf("digram tables differ (%d and %d entries)", a.digrams.n, b.digrams.n)
	}
	for k, v := range a.termUseBig {
		if b.termUseBig[k] != v {
			return fmt.Errorf("large terminal %d: head %d against %d", k, v, b.termUseBig[k])
		}
	}
	return nil
}

// TestRewriteInOnePiece checks that substitute and Append, written out in
// one piece, leave the grammar exactly as the step-by-step versions
// (substitutePlain, insertAfter) do
// (same arena, free lists and digram table after every symbol), with the
// predictor's marks moved alike: on runs of one symbol (the commonest I/O
// pattern), cycles of a run and another symbol, nested loops clean and
// noisy, random input over small and large alphabets, and terminals past
// the small-terminal table.
func TestRewriteInOnePiece(t *testing.T) {
	cycle := func(n, period int) []int {
		out := make([]int, n)
		for i := range out {
			if i%period == 0 {
				out[i] = 1
			}
		}
		return out
	}
	random := func(n, alphabet int, seed int64) []int {
		r := rand.New(rand.NewSource(seed))
		out := make([]int, n)
		for i := range out {
			out[i] = r.Intn(alphabet)
		}
		return out
	}
	runs := func(n int, seed int64) []int {
		// Runs of random length over three symbols: aaa..bb..aaaa..c..
		r := rand.New(rand.NewSource(seed))
		var out []int
		for len(out) < n {
			s, k := r.Intn(3), 1+r.Intn(40)
			for range k {
				out = append(out, s)
			}
		}
		return out[:n]
	}
	big := random(5_000, 5, 7)
	for i := range big {
		big[i] += smallTerminals - 2
	}
	streams := map[string][]int{
		"run":       make([]int, 20_000),
		"cycle256":  cycle(20_000, 256),
		"cycle3":    cycle(20_000, 3),
		"loop":      nestedLoop(20_000),
		"random2":   random(20_000, 2, 1),
		"random3":   random(20_000, 3, 2),
		"random40":  random(20_000, 40, 3),
		"runs":      runs(20_000, 4),
		"bigterms":  big,
		"abab-runs": append(append(cycle(3_000, 2), make([]int, 3_000)...), cycle(3_000, 5)...),
	}
	for _, kind := range []noiseKind{substitution, insertion, deletion} {
		streams["loop/"+kind.String()] = corrupt(nestedLoop(20_000), kind, 0.05, 8, 1)
		streams["cycle256/"+kind.String()] = corrupt(cycle(20_000, 256), kind, 0.01, 3, 2)
	}
	for name, in := range streams {
		t.Run(name, func(t *testing.T) {
			fast, plain := NewPredictor(), NewPredictor()
			plain.g.plainRewrite = true
			bare, barePlain := New(), New()
			barePlain.plainRewrite = true
			for i, s := range in {
				fast.Append(s)
				plain.Append(s)
				bare.Append(s)
				barePlain.Append(s)
				if err := sameState(fast, plain); err != nil {
					t.Fatalf("marks after symbol %d: %v", i, err)
				}
				// A difference stays in the arena or the table once made:
				// past the start, comparing now and then finds it.
				if i >= 2_000 && i%61 != 0 && i != len(in)-1 {
					continue
				}
				if err := sameGrammar(fast.g, plain.g); err != nil {
					t.Fatalf("predictor's grammar after symbol %d: %v", i, err)
				}
				if err := sameGrammar(bare, barePlain); err != nil {
					t.Fatalf("grammar after symbol %d: %v", i, err)
				}
			}
			if err := fast.g.Check(); err != nil {
				t.Fatal(err)
			}
			if got := fast.g.Expand(); !slices.Equal(got, in) {
				t.Fatal("the grammar does not expand to its input")
			}
		})
	}
}

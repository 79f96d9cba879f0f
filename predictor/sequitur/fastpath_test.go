package sequitur

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// sameState reports the first difference between two predictors fed the
// same input: their marks (nodes, ages, runs, hypotheses, flags, in
// order), their candidates bit for bit, and their hypothesis statistics.
func sameState(a, b *Predictor) error {
	if len(a.paths) != len(b.paths) {
		return fmt.Errorf("%d marks against %d", len(a.paths), len(b.paths))
	}
	for i := range a.paths {
		x, y := &a.paths[i], &b.paths[i]
		if !slices.Equal(x.nodes, y.nodes) || x.age != y.age || x.run != y.run || x.hyp != y.hyp ||
			x.missed != y.missed || x.silent != y.silent || x.vote != y.vote {
			return fmt.Errorf("mark %d: %+v against %+v", i, *x, *y)
		}
	}
	if !slices.Equal(a.cands, b.cands) {
		return fmt.Errorf("candidates %v against %v", a.cands, b.cands)
	}
	if a.hyps != b.hyps {
		return fmt.Errorf("hypotheses %v against %v", a.hyps, b.hyps)
	}
	return nil
}

// TestFastPathChangesNothing feeds streams to a predictor with Append's
// fast paths (allHit, oneCandidate) and to one without, and checks that their marks and
// candidates are the same after every symbol: clean and noisy loops, runs
// of one symbol, cycles of a run and another symbol, random input.
func TestFastPathChangesNothing(t *testing.T) {
	cycle := func(n, period int) []int {
		out := make([]int, n)
		for i := range out {
			if i%period == 0 {
				out[i] = 1
			}
		}
		return out
	}
	random := make([]int, 20_000)
	r := rand.New(rand.NewSource(1))
	for i := range random {
		random[i] = r.Intn(3)
	}
	streams := map[string][]int{
		"loop":     nestedLoop(20_000),
		"run":      make([]int, 5_000),
		"cycle256": cycle(20_000, 256),
		"cycle7":   cycle(20_000, 7),
		"random":   random,
	}
	for _, kind := range []noiseKind{substitution, insertion, deletion} {
		streams["loop/"+kind.String()] = corrupt(nestedLoop(20_000), kind, 0.05, 8, 1)
		streams["cycle256/"+kind.String()] = corrupt(cycle(20_000, 256), kind, 0.01, 3, 2)
	}
	for name, in := range streams {
		t.Run(name, func(t *testing.T) {
			fast, slow := NewPredictor(), NewPredictor()
			slow.noFastPath = true
			for i, s := range in {
				fast.Append(s)
				slow.Append(s)
				if err := sameState(fast, slow); err != nil {
					t.Fatalf("after symbol %d: %v", i, err)
				}
			}
			if err := checkMarks(fast); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCycleOfARun: on a cycle of 255 equal symbols and another one (the
// offsets of pwrite over 256 blocks), the marks realigned at a cycle's end
// at the run's other phases stay silent through the run and are dropped at
// the next cycle's end, which they mispredict: the cycle's end is predicted
// alone and the run is followed by the one aligned mark.
func TestCycleOfARun(t *testing.T) {
	p := NewPredictor()
	for i := 0; i < 256*40; i++ {
		s := 0
		if i%256 == 0 {
			s = 1
		}
		if i >= 256*20 {
			c := p.Candidates()
			if len(c) != 1 || c[0].Symbol != s {
				t.Fatalf("symbol %d (%d): candidates %v", i, s, c)
			}
			if i%256 > 1 && len(p.paths) > 1 {
				t.Fatalf("symbol %d: %d marks in the run, want 1", i, len(p.paths))
			}
		}
		p.Append(s)
	}
	if err := checkMarks(p); err != nil {
		t.Fatal(err)
	}
}

// TestSortStableMatchesReference checks sortStable's orders against
// slices.SortStableFunc on marks built to tie: few distinct nodes (equal
// first two levels, equal whole marks, prefixes of one another), votes
// drawn from a handful of values or from more than sortByFewVotes
// groups, and node indexes above 2^30
// (the keys' high bits). A mark's run holds its index, so the
// comparison sees the order of equal marks too, which is what stability
// fixes.
func TestSortStableMatchesReference(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	p := NewPredictor()
	for trial := 0; trial < 20_000; trial++ {
		n := 1 + r.Intn(maxSortIndex)
		big := trial%5 == 0
		ps := make([]path, n)
		for i := range ps {
			nodes := make([]int32, 1+r.Intn(4))
			for j := range nodes {
				nodes[j] = int32(r.Intn(3))
				if big && r.Intn(4) == 0 {
					nodes[j] += 1 << 30
				}
			}
			vote := float64(1+r.Intn(3)) / float64(1+r.Intn(2))
			if trial%3 == 0 {
				// More distinct votes than sortByFewVotes groups.
				vote = float64(1 + r.Intn(maxVoteGroups+4))
			}
			ps[i] = path{nodes: nodes, vote: vote, run: int32(i)}
		}
		for _, byNodes := range []bool{true, false} {
			got, want := slices.Clone(ps), slices.Clone(ps)
			p.sortStable(got, byNodes)
			order := byVote
			if byNodes {
				order = byNodesThenVote
			}
			slices.SortStableFunc(want, func(a, b path) int { return order(&a, &b) })
			for i := range want {
				if got[i].run != want[i].run {
					t.Fatalf("trial %d, by nodes %v: position %d holds mark %d, want %d", trial, byNodes, i, got[i].run, want[i].run)
				}
			}
		}
	}
}

// TestPinsAcrossModes checks the pins after every symbol on streams that
// go back and forth between Append's general case (after which the marks
// are not pinned and the grammar tells every rewrite, obsAll) and allHit
// (which pins them again): noisy loops and cycles. checkMarks counts
// the marks holding each node; the test also fails if a stream never
// went through both modes, which would leave one unchecked.
func TestPinsAcrossModes(t *testing.T) {
	for _, kind := range []noiseKind{substitution, insertion, deletion} {
		t.Run(kind.String(), func(t *testing.T) {
			p := NewPredictor()
			var all, pinned int
			for i, s := range corrupt(nestedLoop(3_000), kind, 0.05, 8, 1) {
				p.Append(s)
				if p.g.obsAll {
					all++
				} else {
					pinned++
				}
				if err := checkMarks(p); err != nil {
					t.Fatalf("after symbol %d (obsAll %v): %v", i, p.g.obsAll, err)
				}
			}
			if all == 0 || pinned == 0 {
				t.Fatalf("%d symbols with the marks unpinned, %d pinned: want both", all, pinned)
			}
		})
	}
}

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

// TestResyncAfterOneError proves the three resynchronisation hypotheses
// on a loop with one error every 20 periods: once a few errors of a kind
// have taught the predictor which hypothesis that stream's errors call
// for, the symbol right after each error and every symbol until the next
// one are predicted (first candidate). Main's predictor, which realigned
// only under the substitution hypothesis, misses after insertions and
// deletions, which the table states so that the test shows it tells the
// two apart.
func TestResyncAfterOneError(t *testing.T) {
	for _, tc := range []struct {
		kind           noiseKind
		mainRecovers   bool
		learnedErrors  int // errors before the predictor must recover
		wantHypothesis uint8
	}{
		{substitution, true, 2, hypSubst},
		{insertion, false, 2, hypInsert},
		{deletion, false, 2, hypDelete},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			in, bad := withErrors(400, tc.kind)
			isBad := make(map[int]bool)
			for _, i := range bad {
				isBad[i] = true
			}
			// check feeds the stream to p and returns how many of the
			// symbols right after the errors it predicted, from the
			// learned-th error on; any other miss fails the test when
			// strict.
			check := func(name string, p symbolPredictor, strict bool) (recovered int) {
				for i, s := range in {
					if i > bad[tc.learnedErrors] && !isBad[i] {
						c := p.Candidates()
						ok := len(c) > 0 && c[0].Symbol == s
						if isBad[i-1] && ok {
							recovered++
						}
						if strict && !ok {
							t.Fatalf("%s: symbol %d (%d): candidates %v", name, i, s, c)
						}
					}
					p.Append(s)
				}
				return recovered
			}
			errs := len(bad) - tc.learnedErrors
			p := NewPredictor()
			if got := check("new", p, true); got != errs {
				t.Errorf("recovered after %d of %d errors", got, errs)
			}
			got := check("main", newRefPredictor(), false)
			if tc.mainRecovers != (got == errs) {
				t.Errorf("main's predictor recovered right after %d of %d errors", got, errs)
			}
			best := uint8(hypNone)
			for h := uint8(hypSubst); h < numHyps; h++ {
				if best == hypNone || p.hyps[h].share() > p.hyps[best].share() {
					best = h
				}
			}
			if best != tc.wantHypothesis {
				t.Errorf("learned hypothesis %d (%v), want %d", best, p.hyps, tc.wantHypothesis)
			}
		})
	}
}

func (s hypStats) share() float64 { return float64(s.hits+1) / float64(s.trials+2) }

func (s hypStats) String() string { return fmt.Sprintf("%d/%d", s.hits, s.trials) }

// TestVotesAcrossCopies proves the vote of marks on several earlier copies
// of the input: the program's first periods hold errors (one every
// few periods, at moving positions), then the input is clean. A predictor
// that follows one earlier copy mispredicts wherever that copy holds an
// error; marks on several copies outvote it, and a mark whose copy was
// wrong realigns and keeps voting. So every symbol of the clean part is
// predicted (first candidate). The count of main's misses on the same
// clean part is stated beside it, to show the streams are ones where
// following one copy fails.
func TestVotesAcrossCopies(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kind       noiseKind
		every      int // one error every that many periods
		mainMisses bool
	}{
		{"substitutions every 3 periods", substitution, 3, true},
		{"substitutions every 7 periods", substitution, 7, true},
		{"insertions every 5 periods", insertion, 5, true},
		{"deletions every 5 periods", deletion, 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []int
			const noisyPeriods, cleanPeriods = 300, 300
			for c := 0; c < noisyPeriods+cleanPeriods; c++ {
				for j, s := range period8 {
					if c >= noisyPeriods || c%tc.every != tc.every-1 || j != c/tc.every%len(period8) {
						in = append(in, s)
						continue
					}
					switch tc.kind {
					case substitution:
						in = append(in, 90+j)
					case insertion:
						in = append(in, 90+j, s)
					case deletion:
					}
				}
			}
			clean := len(in) - cleanPeriods*len(period8)
			misses := func(p symbolPredictor) (n int) {
				for i, s := range in {
					if i >= clean+len(period8) {
						if c := p.Candidates(); len(c) == 0 || c[0].Symbol != s {
							n++
						}
					}
					p.Append(s)
				}
				return n
			}
			if n := misses(NewPredictor()); n != 0 {
				t.Errorf("%d misses in the clean part", n)
			}
			if n := misses(newRefPredictor()); (n > 0) != tc.mainMisses {
				t.Errorf("main's predictor: %d misses in the clean part", n)
			}
		})
	}
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
				got, want := q.Candidates(), ref.Candidates()
				for j := range got {
					got[j].Run = 0 // main's predictor has no Run
				}
				if !reflect.DeepEqual(got, want) {
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
// holding each node (or are all zero while the grammar tells every
// rewrite, obsAll); at most MaxPaths marks; candidate weights sum to 1.
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
		want := pins[int32(n)]
		if g.obsAll {
			want = 0
		}
		if got := g.nodes[n].pins; got != want {
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

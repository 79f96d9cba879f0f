package sequitur

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// parseSpec reads "S -> A b, A -> a b" (upper-case names are rules, S the
// start rule, lower-case letters terminals) into the numbering Rules uses:
// start rule 0, others by breadth-first first reference.
func parseSpec(t *testing.T, spec string) []Rule {
	t.Helper()
	bodies := map[string][]string{}
	for _, part := range strings.Split(spec, ",") {
		lhs, rhs, ok := strings.Cut(part, "->")
		if !ok {
			t.Fatalf("bad spec %q", part)
		}
		bodies[strings.TrimSpace(lhs)] = strings.Fields(rhs)
	}
	ids := map[string]int{"S": 0}
	order := []string{"S"}
	for i := 0; i < len(order); i++ {
		for _, s := range bodies[order[i]] {
			if s[0] >= 'A' && s[0] <= 'Z' {
				if _, ok := ids[s]; !ok {
					ids[s] = len(order)
					order = append(order, s)
				}
			}
		}
	}
	out := make([]Rule, len(order))
	for i, name := range order {
		var body []Symbol
		for _, s := range bodies[name] {
			if s[0] >= 'A' && s[0] <= 'Z' {
				body = append(body, Symbol{Rule: ids[s], IsRule: true})
			} else {
				body = append(body, Symbol{Terminal: int(s[0])})
			}
		}
		out[i] = Rule{ID: i, Body: body}
	}
	return out
}

// TestPaperGrammars proves that the grammars of issue 3's three inputs are
// the expected ones up to renaming of rules, and that the invariants hold
// after every symbol on the way.
func TestPaperGrammars(t *testing.T) {
	tests := []struct{ input, want string }{
		{"abbbabcbb", "S -> A B A c B, A -> a b, B -> b b"},
		{"aaaaaa", "S -> A A A, A -> a a"},
		{"aacaacbcbdaacbcbdebcbd", "S -> A B B e C, A -> a a c, B -> A C, C -> b c b d"},
	}
	for _, tc := range tests {
		t.Run(tc.input, func(t *testing.T) {
			g := New()
			for _, c := range []byte(tc.input) {
				g.Append(int(c))
				if err := g.Check(); err != nil {
					t.Fatalf("after %q: %v", c, err)
				}
			}
			if got, want := g.Rules(), parseSpec(t, tc.want); !reflect.DeepEqual(got, want) {
				t.Errorf("grammar\n%swant %s", g, tc.want)
			}
			if got := string(bytesOf(g.Expand())); got != tc.input {
				t.Errorf("expansion %q", got)
			}
		})
	}
}

func bytesOf(s []int) []byte {
	b := make([]byte, len(s))
	for i, v := range s {
		b[i] = byte(v)
	}
	return b
}

// TestStringForm proves the readable form names rules and prints letter
// terminals as letters, numbers otherwise.
func TestStringForm(t *testing.T) {
	g := New()
	for _, c := range "abab" {
		g.Append(int(c))
	}
	if got, want := g.String(), "S -> A A\nA -> a b\n"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	g = New()
	for _, v := range []int{10, 200, 10, 200} {
		g.Append(v)
	}
	if got, want := g.String(), "S -> A A\nA -> 10 200\n"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

type streamCase struct {
	name string
	gen  func(n int, seed int64) []int
}

var streams = []streamCase{
	{"random4", func(n int, seed int64) []int {
		r := rand.New(rand.NewSource(seed))
		s := make([]int, n)
		for i := range s {
			s[i] = r.Intn(4)
		}
		return s
	}},
	{"random-binary", func(n int, seed int64) []int {
		r := rand.New(rand.NewSource(seed))
		s := make([]int, n)
		for i := range s {
			s[i] = r.Intn(2)
		}
		return s
	}},
	{"periodic", func(n int, seed int64) []int {
		p := 1 + int(seed%13)
		s := make([]int, n)
		for i := range s {
			s[i] = i % p
		}
		return s
	}},
	{"runs", func(n int, seed int64) []int { // long runs of one symbol: the aaa case
		s := make([]int, n)
		for i := range s {
			s[i] = (i / (3 + int(seed%7))) % 2
		}
		return s
	}},
	{"nested", func(n int, seed int64) []int { return nestedLoop(n) }},
	{"noisy", func(n int, seed int64) []int { return noisy(nestedLoop(n), 0.05, 8, seed) }},
	{"big-terminals", func(n int, seed int64) []int {
		r := rand.New(rand.NewSource(seed))
		s := make([]int, n)
		for i := range s {
			s[i] = 1<<30 + r.Intn(3)*70000 + i%5
		}
		return s
	}},
}

func checkExpansion(t *testing.T, g *Grammar, in []int) {
	t.Helper()
	if got := g.Expand(); !reflect.DeepEqual(got, in) {
		t.Fatalf("expansion differs from the input (%d vs %d symbols)", len(got), len(in))
	}
}

// TestInvariantsEveryAppend proves digram uniqueness, rule utility and the
// expansion after every single append, on small streams of every kind.
func TestInvariantsEveryAppend(t *testing.T) {
	for _, sc := range streams {
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/%d", sc.name, seed), func(t *testing.T) {
				in := sc.gen(1500, seed)
				p := NewPredictor()
				for i, s := range in {
					p.Append(s)
					if err := p.Grammar().Check(); err != nil {
						t.Fatalf("after symbol %d: %v", i, err)
					}
					if i%97 == 0 {
						checkExpansion(t, p.Grammar(), in[:i+1])
					}
				}
				checkExpansion(t, p.Grammar(), in)
			})
		}
	}
}

// TestInvariantsMillion proves the invariants on 1,000,000-symbol streams,
// checked a few times on the way and at the end.
func TestInvariantsMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("long streams")
	}
	for _, sc := range streams {
		t.Run(sc.name, func(t *testing.T) {
			in := sc.gen(1_000_000, 7)
			p := NewPredictor()
			for i, s := range in {
				p.Append(s)
				if (i+1)%400_000 == 0 {
					if err := p.Grammar().Check(); err != nil {
						t.Fatalf("after symbol %d: %v", i, err)
					}
				}
			}
			if err := p.Grammar().Check(); err != nil {
				t.Fatal(err)
			}
			checkExpansion(t, p.Grammar(), in)
			if p.Grammar().Len() != len(in) {
				t.Errorf("Len %d", p.Grammar().Len())
			}
		})
	}
}

// TestRulesReproduceInput proves Rules describes the grammar: expanding
// its output gives the input back.
func TestRulesReproduceInput(t *testing.T) {
	in := noisy(nestedLoop(5000), 0.05, 8, 3)
	g := New()
	for _, s := range in {
		g.Append(s)
	}
	rules := g.Rules()
	var out []int
	var walk func(id int)
	walk = func(id int) {
		for _, s := range rules[id].Body {
			if s.IsRule {
				walk(s.Rule)
			} else {
				out = append(out, s.Terminal)
			}
		}
	}
	walk(0)
	if !reflect.DeepEqual(out, in) {
		t.Fatal("rules do not expand to the input")
	}
	size := 0
	for _, r := range rules {
		size += len(r.Body)
	}
	if size != g.Size() {
		t.Errorf("Size %d, rules hold %d symbols", g.Size(), size)
	}
}

// TestAppendRejectsNegative proves an out-of-range terminal panics with a
// message instead of corrupting the grammar.
func TestAppendRejectsNegative(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("no panic on a negative terminal")
		}
	}()
	New().Append(-1)
}

// FuzzAppend proves the invariants hold and the expansion equals the input
// for arbitrary byte streams, and that Append's fast path moves the marks
// as its general path does.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"abbbabcbb", "aaaaaa", "aacaacbcbdaacbcbdebcbd", "abcabcabcabd", "\x00\x00\x00\x01\x00\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The grammar is checked after every symbol, which costs the square
		// of the input's length: 64 symbols hold every rule shape (nested
		// rules, overlapping digrams, rule utility) and keep the fuzzer
		// above 1,000 inputs a second.
		data = data[:min(len(data), 64)]
		p := NewPredictor()
		// slow takes Append's general path at every symbol: the fast
		// path must leave the marks and candidates as it does.
		slow := NewPredictor()
		slow.noFastPath = true
		in := make([]int, len(data))
		for i, b := range data {
			in[i] = int(b % 16) // a small alphabet makes repeats likely
			p.Append(in[i])
			if err := p.Grammar().Check(); err != nil {
				t.Fatalf("after symbol %d: %v", i, err)
			}
			slow.Append(in[i])
			if err := sameState(p, slow); err != nil {
				t.Fatalf("after symbol %d, fast path against general: %v", i, err)
			}
		}
		// The marks are checked once per input: a check after every
		// symbol would cost the fuzzer most of its speed.
		if err := checkMarks(p); err != nil {
			t.Fatal(err)
		}
		checkExpansion(t, p.Grammar(), in)
	})
}

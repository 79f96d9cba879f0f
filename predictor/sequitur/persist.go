package sequitur

import (
	"errors"
	"fmt"

	"bytes"

	"github.com/vmihailenco/msgpack/v5"
)

// savedVersion is the layout of the msgpack form; Unmarshal refuses others.
const savedVersion = 1

// saved is the msgpack form of a Predictor: the rules as Rules numbers
// them, terminals as themselves and a reference to rule n as -(n+1).
type saved struct {
	Version int       `msgpack:"v"`
	Len     int       `msgpack:"n"`
	Rules   [][]int64 `msgpack:"r"`
}

// Limits on what UnmarshalMsgpack accepts, so garbage cannot make it
// allocate without bound.
const (
	maxSavedSymbols = 1 << 26
	maxSavedLen     = 1 << 62
)

// MarshalMsgpack encodes the grammar (not the predictor marks: a loaded
// model starts at the beginning of the program, see UnmarshalMsgpack).
func (p *Predictor) MarshalMsgpack() ([]byte, error) {
	rules := p.g.Rules()
	s := saved{Version: savedVersion, Len: p.g.length, Rules: make([][]int64, len(rules))}
	for i, r := range rules {
		body := make([]int64, len(r.Body))
		for j, sym := range r.Body {
			if sym.IsRule {
				body[j] = -int64(sym.Rule) - 1
			} else {
				body[j] = int64(sym.Terminal)
			}
		}
		s.Rules[i] = body
	}
	return msgpack.Marshal(&s)
}

// UnmarshalMsgpack replaces p with a decoded model. The grammar is checked
// (rule references in range and acyclic, Sequitur's invariants, expansion
// length) and any defect is an error, never a panic. The predictor marks
// are placed at the start of rule 0, so that a model saved at the end of
// one run predicts the next run from its first symbol; Append continues
// learning where the saved grammar ended.
func (p *Predictor) UnmarshalMsgpack(data []byte) error {
	s, err := decodeSaved(data)
	if err != nil {
		return fmt.Errorf("sequitur model: %w", err)
	}
	g, err := rebuild(s)
	if err != nil {
		return fmt.Errorf("sequitur model: %w", err)
	}
	*p = Predictor{g: g}
	g.obs = p
	p.Restart()
	return nil
}

// Restart drops the predictor marks and places one at the first terminal
// of the input, for a program that starts again (a new run, or a new
// process of the same program); the grammar is unchanged.
func (p *Predictor) Restart() {
	for i := range p.paths {
		p.unpin(&p.paths[i])
	}
	p.paths = p.paths[:0]
	p.prev = -1
	g := p.g
	if f := g.first(0); !g.nodes[f].guard {
		nodes := []int32{f}
		for g.isRef(f) {
			f = g.first(refRule(g.nodes[f].sym))
			nodes = append(nodes, f)
		}
		p.paths = append(p.paths, path{nodes: nodes})
		p.pin(&p.paths[0])
	}
	p.normalize(true)
	p.candidates()
}

func rebuild(s *saved) (*Grammar, error) {
	if s.Version != savedVersion {
		return nil, fmt.Errorf("version %d, want %d", s.Version, savedVersion)
	}
	if len(s.Rules) == 0 {
		return nil, errors.New("no start rule")
	}
	if s.Len < 0 || s.Len > maxSavedLen {
		return nil, fmt.Errorf("length %d out of range", s.Len)
	}
	total := 0
	for i, body := range s.Rules {
		total += len(body)
		if total > maxSavedSymbols {
			return nil, fmt.Errorf("more than %d symbols", maxSavedSymbols)
		}
		if i > 0 && len(body) < 2 {
			return nil, fmt.Errorf("rule %d has %d symbols", i, len(body))
		}
		for _, v := range body {
			switch {
			case v >= 0 && v > maxTerminal:
				return nil, fmt.Errorf("rule %d: terminal %d out of range", i, v)
			case v < 0 && (-v-1 == 0 || -v-1 >= int64(len(s.Rules))):
				return nil, fmt.Errorf("rule %d: reference to rule %d out of range", i, -v-1)
			}
		}
	}
	// Acyclic, with expansion lengths that fit: iterative depth-first walk.
	const (
		unseen = iota
		active
		done
	)
	state := make([]uint8, len(s.Rules))
	length := make([]int64, len(s.Rules))
	type frame struct{ rule, pos int }
	for root := range s.Rules {
		if state[root] != unseen {
			continue
		}
		stack := []frame{{root, 0}}
		state[root] = active
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			body := s.Rules[f.rule]
			if f.pos == len(body) {
				state[f.rule] = done
				stack = stack[:len(stack)-1]
				continue
			}
			v := body[f.pos]
			f.pos++
			if v >= 0 {
				length[f.rule]++
				continue
			}
			c := int(-v - 1)
			switch state[c] {
			case active:
				return nil, fmt.Errorf("rule %d refers to itself through rule %d", c, f.rule)
			case unseen:
				f.pos-- // count c's length once it is done
				state[c] = active
				stack = append(stack, frame{c, 0})
				continue
			}
			length[f.rule] += length[c]
			if length[f.rule] > maxSavedLen {
				return nil, errors.New("expansion too long")
			}
		}
	}
	if length[0] != int64(s.Len) {
		return nil, fmt.Errorf("rule 0 expands to %d terminals, length says %d", length[0], s.Len)
	}

	g := New()
	for range s.Rules[1:] {
		g.newRule()
	}
	for i, body := range s.Rules {
		gd := g.rules[i].guard
		for _, v := range body {
			sym := int32(v)
			if v < 0 {
				sym = ^int32(-v - 1)
			}
			n := g.newNode(sym)
			g.nodes[n].prev = g.nodes[gd].prev
			g.nodes[n].next = gd
			g.nodes[g.nodes[gd].prev].next = n
			g.nodes[gd].prev = n
		}
	}
	g.length = s.Len
	// Index the digrams in the order the rules list them; an overlapping
	// run (x x x) indexes its first digram.
	for i := range s.Rules {
		for n := g.first(int32(i)); !g.nodes[n].guard; n = g.nodes[n].next {
			if g.nodes[g.nodes[n].next].guard {
				continue
			}
			k := g.keyAt(n)
			if m, ok := g.digrams.get(k); ok {
				if g.nodes[m].next == n {
					continue
				}
				return nil, fmt.Errorf("digram %s occurs twice", g.digramString(k))
			}
			g.digrams.set(k, n)
		}
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	return g, nil
}

// decodeSaved decodes the saved form by hand, so that an array length in
// garbage input cannot make it allocate more than the input could hold
// (every element takes at least one byte).
func decodeSaved(data []byte) (*saved, error) {
	d := msgpack.NewDecoder(bytes.NewReader(data))
	arrayLen := func(field string) (int, error) {
		n, err := d.DecodeArrayLen()
		if err != nil {
			return 0, fmt.Errorf("field %s: %w", field, err)
		}
		if n > len(data) {
			return 0, fmt.Errorf("field %s: %d elements in %d bytes", field, n, len(data))
		}
		return n, nil
	}
	fields, err := d.DecodeMapLen()
	if err != nil {
		return nil, err
	}
	var s saved
	for i := 0; i < fields; i++ {
		key, err := d.DecodeString()
		if err != nil {
			return nil, fmt.Errorf("field name: %w", err)
		}
		switch key {
		case "v":
			s.Version, err = d.DecodeInt()
		case "n":
			s.Len, err = d.DecodeInt()
		case "r":
			var n int
			if n, err = arrayLen("r"); err != nil {
				return nil, err
			}
			s.Rules = make([][]int64, 0, max(n, 0))
			for j := 0; j < n; j++ {
				m, err := arrayLen(fmt.Sprintf("r[%d]", j))
				if err != nil {
					return nil, err
				}
				body := make([]int64, max(m, 0))
				for k := range body {
					if body[k], err = d.DecodeInt64(); err != nil {
						return nil, fmt.Errorf("field r[%d][%d]: %w", j, k, err)
					}
				}
				s.Rules = append(s.Rules, body)
			}
		default:
			err = d.Skip()
		}
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", key, err)
		}
	}
	return &s, nil
}

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"iopred/predictor/sequitur"
)

func init() {
	register(&command{
		name:    "sequitur",
		usage:   "[--predict] [--json] [--bytes] FILE|-",
		summary: "learn the Sequitur grammar of a symbol stream and show its predictions",
		run:     runSequitur,
	})
}

func runSequitur(args []string, stdout, stderr io.Writer) error {
	c := commands["sequitur"]
	fs := newFlagSet(c, stderr)
	predict := fs.Bool("predict", false, "also show the candidates before every symbol and the accuracy")
	asJSON := fs.Bool("json", false, "print JSON")
	asBytes := fs.Bool("bytes", false, "read raw bytes instead of whitespace-separated integers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errUsage
	}
	name := fs.Arg(0)
	var r io.Reader = os.Stdin
	if name == "-" {
		name = "stdin"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	var syms []int
	var err error
	if *asBytes {
		var b []byte
		b, err = io.ReadAll(r)
		for _, x := range b {
			syms = append(syms, int(x))
		}
	} else {
		syms, err = readSymbols(r, name)
	}
	if err != nil {
		return err
	}
	return writeSequitur(syms, *predict, *asJSON, stdout)
}

// readSymbols reads whitespace-separated integers in [0, 2^31).
func readSymbols(r io.Reader, name string) ([]int, error) {
	var out []int
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		for _, tok := range strings.Fields(sc.Text()) {
			v, err := strconv.ParseInt(tok, 10, 64)
			if err != nil || v < 0 || v > 1<<31-1 {
				return nil, fmt.Errorf("%s:%d: bad symbol %q (want an integer in [0, 2147483647])", name, line, tok)
			}
			out = append(out, int(v))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return out, nil
}

type seqCandidate struct {
	Symbol  int     `json:"s"`
	Weight  float64 `json:"w"`
	Uniform float64 `json:"u"`
}

type seqStep struct {
	Input      int            `json:"in"`
	Candidates []seqCandidate `json:"c"`
}

type seqRule struct {
	ID   int   `json:"id"`
	Body []any `json:"body"`
}

type seqOutput struct {
	Rules                    []seqRule `json:"rules"`
	Accuracy                 *float64  `json:"accuracy,omitempty"`
	AccuracyLastHalf         *float64  `json:"accuracy_last_half,omitempty"`
	AccuracyWeighted         *float64  `json:"accuracy_weighted,omitempty"`
	AccuracyWeightedLastHalf *float64  `json:"accuracy_weighted_last_half,omitempty"`
	GrammarSize              *int      `json:"grammar_size,omitempty"`
	Steps                    []seqStep `json:"steps,omitempty"`
}

func writeSequitur(syms []int, predict, asJSON bool, stdout io.Writer) error {
	p := sequitur.NewPredictor()
	var steps []seqStep
	var acc, accLast, accW, accWLast float64
	half := len(syms) / 2
	for i, s := range syms {
		if predict {
			var cs []seqCandidate
			var w, u float64
			for _, c := range p.Candidates() {
				cs = append(cs, seqCandidate{c.Symbol, round4(c.Weight), round4(c.Uniform)})
				if c.Symbol == s {
					w, u = c.Weight, c.Uniform
				}
			}
			acc += u
			accW += w
			if i >= half {
				accLast += u
				accWLast += w
			}
			steps = append(steps, seqStep{Input: s, Candidates: cs})
		}
		p.Append(s)
	}
	g := p.Grammar()
	if !asJSON {
		bw := bufio.NewWriter(stdout)
		fmt.Fprint(bw, g.String())
		if predict {
			for i, st := range steps {
				fmt.Fprintf(bw, "%d: %d <-", i, st.Input)
				if len(st.Candidates) == 0 {
					fmt.Fprint(bw, " (none)")
				}
				for _, c := range st.Candidates {
					fmt.Fprintf(bw, " %d:%.3g", c.Symbol, c.Weight)
				}
				fmt.Fprintln(bw)
			}
			a, al, aw, awl := ratios(acc, accLast, accW, accWLast, len(syms), half)
			fmt.Fprintf(bw, "accuracy %.4f (last half %.4f), weighted %.4f (last half %.4f), grammar size %d\n", a, al, aw, awl, g.Size())
		}
		return bw.Flush()
	}
	out := seqOutput{}
	for _, r := range g.Rules() {
		body := make([]any, len(r.Body))
		for i, s := range r.Body {
			if s.IsRule {
				body[i] = "R" + strconv.Itoa(s.Rule)
			} else {
				body[i] = s.Terminal
			}
		}
		out.Rules = append(out.Rules, seqRule{ID: r.ID, Body: body})
	}
	if predict {
		a, al, aw, awl := ratios(acc, accLast, accW, accWLast, len(syms), half)
		size := g.Size()
		out.Accuracy, out.AccuracyLastHalf = &a, &al
		out.AccuracyWeighted, out.AccuracyWeightedLastHalf = &aw, &awl
		out.GrammarSize = &size
		out.Steps = steps
		if out.Steps == nil {
			out.Steps = []seqStep{}
		}
	}
	enc := json.NewEncoder(stdout)
	if err := enc.Encode(out); err != nil {
		return errors.Join(errors.New("writing JSON"), err)
	}
	return nil
}

func ratios(acc, accLast, accW, accWLast float64, n, half int) (a, al, aw, awl float64) {
	if n > 0 {
		a, aw = acc/float64(n), accW/float64(n)
	}
	if n-half > 0 {
		al, awl = accLast/float64(n-half), accWLast/float64(n-half)
	}
	return
}

func round4(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
	return v
}

package sequitur

import "math/rand"

// nestedLoop returns n symbols of a program with an outer loop around an
// inner loop: open, inner writes, a checkpoint block, close.
func nestedLoop(n int) []int {
	var period []int
	period = append(period, 0)
	for i := 0; i < 5; i++ {
		period = append(period, 1, 2)
	}
	period = append(period, 3)
	for i := 0; i < 3; i++ {
		period = append(period, 4, 5, 6)
	}
	period = append(period, 7)
	out := make([]int, n)
	for i := range out {
		out[i] = period[i%len(period)]
	}
	return out
}

// noisy replaces a fraction of the symbols by random symbols of the
// alphabet [0, alphabet).
func noisy(in []int, frac float64, alphabet int, seed int64) []int {
	r := rand.New(rand.NewSource(seed))
	out := append([]int(nil), in...)
	for i := range out {
		if r.Float64() < frac {
			out[i] = r.Intn(alphabet)
		}
	}
	return out
}

// accuracy runs a predictor over the stream and returns the mean weight
// given to the symbol that came, under the package weighting and the
// paper's uniform weighting (section III-B), over the whole stream and
// over its second half.
func accuracy(stream []int) (weighted, uniform, weightedLast, uniformLast float64) {
	p := NewPredictor()
	half := len(stream) / 2
	for i, s := range stream {
		var w, u float64
		for _, c := range p.Candidates() {
			if c.Symbol == s {
				w, u = c.Weight, c.Uniform
			}
		}
		weighted += w
		uniform += u
		if i >= half {
			weightedLast += w
			uniformLast += u
		}
		p.Append(s)
	}
	n, l := float64(len(stream)), float64(len(stream)-half)
	return weighted / n, uniform / n, weightedLast / l, uniformLast / l
}

// noiseKind is how a noisy stream departs from the program's: a symbol
// replaced by a random one, a random symbol inserted, or a symbol dropped.
type noiseKind int

const (
	substitution noiseKind = iota
	insertion
	deletion
)

func (k noiseKind) String() string {
	return [...]string{"substitutions", "insertions", "deletions"}[k]
}

// corrupt applies noise of one kind to a fraction frac of the positions of
// in; random symbols are drawn from [0, alphabet) (a substitution may draw
// the symbol it replaces, as noisy does).
func corrupt(in []int, kind noiseKind, frac float64, alphabet int, seed int64) []int {
	r := rand.New(rand.NewSource(seed))
	out := make([]int, 0, len(in)+len(in)/8)
	for _, s := range in {
		if r.Float64() >= frac {
			out = append(out, s)
			continue
		}
		switch kind {
		case substitution:
			out = append(out, r.Intn(alphabet))
		case insertion:
			out = append(out, r.Intn(alphabet), s)
		case deletion:
		}
	}
	return out
}

// symbolPredictor is what the accuracy figures need of a predictor.
type symbolPredictor interface {
	Append(sym int)
	Candidates() []Candidate
}

// topOne returns the share of symbols after the first that the predictor's
// first candidate named: the score issue 19 states its goals in.
func topOne(p symbolPredictor, stream []int) float64 {
	hits := 0
	for i, s := range stream {
		if i > 0 {
			if c := p.Candidates(); len(c) > 0 && c[0].Symbol == s {
				hits++
			}
		}
		p.Append(s)
	}
	return float64(hits) / float64(len(stream)-1)
}

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

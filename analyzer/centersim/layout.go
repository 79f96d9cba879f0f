package centersim

import "math/rand/v2"

// placement is where one burst's files sit: the OSTs it touches and the
// share of its bytes each receives.
type placement struct {
	osts []int32
	w    []float64 // sums to 1
}

// stripes is how many stripe objects a layout creates per burst.
func (l Layout) stripes() int { return max(1, l.Files) * max(1, l.Stripe) }

// footprint is how many distinct OSTs a burst of the layout touches on a
// file system of n OSTs.
func (l Layout) footprint(n int) int { return min(l.stripes(), n) }

// maxShare is the largest share of a burst's bytes one OST receives: the
// round-robin allocator gives some OSTs one stripe more than others when
// the stripes do not divide evenly.
func (l Layout) maxShare(n int) float64 {
	s := l.stripes()
	return float64((s+n-1)/n) / float64(s)
}

// place draws a placement as Lustre's round-robin allocator makes one:
// stripe q of the burst's files on OST (start+q) mod n, from a random
// start.
func (l Layout) place(n int, rng *rand.Rand) placement {
	start := rng.IntN(n)
	k := l.footprint(n)
	p := placement{osts: make([]int32, k), w: l.shares(n)}
	for i := range k {
		p.osts[i] = int32((start + i) % n)
	}
	return p
}

// shares is the share of a burst's bytes on each of its footprint's OSTs,
// in the order the stripes go round them: the first s mod n OSTs get one
// stripe more when the s stripes do not divide evenly over n.
func (l Layout) shares(n int) []float64 {
	s := l.stripes()
	w := make([]float64, l.footprint(n))
	for i := range w {
		cnt := s / n
		if i < s%n {
			cnt++
		}
		w[i] = float64(cnt) / float64(s)
	}
	return w
}

// aloneRate is the rate a flow of the given demand gets on an otherwise
// idle file system: its demand, unless one OST cannot carry its share.
func aloneRate(demand, maxShare, ostBW float64) float64 {
	if demand*maxShare > ostBW {
		return ostBW / maxShare
	}
	return demand
}

// placeOn places a burst's files on the given OSTs (ascending, distinct),
// as `lfs setstripe -o` or an OST pool does: the burst keeps its
// footprint and stripe counts, stripe q going to the q-th OST of the
// set, round robin. When the set is smaller than the footprint, the
// remaining OSTs follow the set's last one round robin from a random
// start among those outside it, so that the burst's footprint, and its
// time alone, are the same as the allocator's; extra OSTs of the set
// beyond the footprint are left unused.
func (l Layout) placeOn(n int, set []int32, rng *rand.Rand) placement {
	k := l.footprint(n)
	osts := make([]int32, 0, k)
	osts = append(osts, set[:min(k, len(set))]...)
	if len(osts) < k {
		in := make([]bool, n)
		for _, o := range set {
			in[o] = true
		}
		start := rng.IntN(n)
		for i := 0; len(osts) < k; i++ {
			if o := int32((start + i) % n); !in[o] {
				osts = append(osts, o)
			}
		}
	}
	return placement{osts: osts, w: l.shares(n)}
}

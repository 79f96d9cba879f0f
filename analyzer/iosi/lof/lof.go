// Package lof is the Local Outlier Factor of Breunig et al. (SIGMOD 2000),
// with the conventions of scikit-learn's LocalOutlierFactor: each point's
// k nearest neighbours exclude itself, the reachability distance of a from
// b is max(k-distance(b), d(a, b)), the local reachability density is the
// inverse of the mean reachability distance (plus 1e-10), and the factor
// is the mean ratio of the neighbours' densities to the point's own.
// Scores near 1 are inliers; larger scores are outliers. IOSI uses it on
// (run time, I/O volume) to leave out runs skewed by heavy noise; FTIO's
// LOF detector (Novelty) on the points of a spectrum.
package lof

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Scores returns the local outlier factor of every point (the negation of
// scikit-learn's negative_outlier_factor_), with k neighbours, k clipped
// to len(points)-1 as scikit-learn does. Points are vectors of one
// dimension; distances are Euclidean. Among neighbours at equal distance
// the lower index is taken first.
func Scores(points [][]float64, k int) ([]float64, error) {
	if err := validate(points, k); err != nil {
		return nil, err
	}
	k = min(k, len(points)-1)
	nb, dist, kdist := neighbours(points, k, false)
	lrd := densities(nb, dist, kdist)
	out := make([]float64, len(points))
	for i := range out {
		out[i] = meanRatio(lrd, nb[i], lrd[i])
	}
	return out, nil
}

// Novelty returns, for a model fitted on points, both the training factors
// (as Scores) and the factors of the same points scored again as new
// samples, which is what scikit-learn's LocalOutlierFactor(novelty=True)
// gives for decision_function(X) on its own training set: a point then
// counts itself among its k neighbours, at distance 0.
func Novelty(points [][]float64, k int) (train, again []float64, err error) {
	if err := validate(points, k); err != nil {
		return nil, nil, err
	}
	k = min(k, len(points)-1)
	nb, dist, kdist := neighbours(points, k, false)
	lrd := densities(nb, dist, kdist)
	train = make([]float64, len(points))
	for i := range train {
		train[i] = meanRatio(lrd, nb[i], lrd[i])
	}
	qnb, qdist, _ := neighbours(points, k, true)
	qlrd := densities(qnb, qdist, kdist)
	again = make([]float64, len(points))
	for i := range again {
		again[i] = meanRatio(lrd, qnb[i], qlrd[i])
	}
	return train, again, nil
}

func validate(points [][]float64, k int) error {
	n := len(points)
	if n < 2 {
		return fmt.Errorf("lof: %d points, need at least 2", n)
	}
	if k < 1 {
		return fmt.Errorf("lof: %d neighbours, need at least 1", k)
	}
	dim := len(points[0])
	for i, p := range points {
		if len(p) != dim {
			return fmt.Errorf("lof: point %d has %d coordinates, point 0 has %d", i, len(p), dim)
		}
		for _, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("lof: point %d has a coordinate %v", i, v)
			}
		}
	}
	if dim == 0 {
		return errors.New("lof: points without coordinates")
	}
	return nil
}

// densities are the local reachability densities of points whose
// neighbours are nb at distances dist, the neighbours' k-distances kdist.
func densities(nb [][]int, dist [][]float64, kdist []float64) []float64 {
	lrd := make([]float64, len(nb))
	for i := range nb {
		s := 0.0
		for m, j := range nb[i] {
			s += math.Max(kdist[j], dist[i][m])
		}
		lrd[i] = 1 / (s/float64(len(nb[i])) + 1e-10)
	}
	return lrd
}

func meanRatio(lrd []float64, nb []int, own float64) float64 {
	s := 0.0
	for _, j := range nb {
		s += lrd[j] / own
	}
	return s / float64(len(nb))
}

// neighbours finds every point's k nearest (itself first among them when
// self), nearest first, the lower index first among equal distances, with their
// distances and each point's distance to its k-th neighbour other than
// itself. It sweeps the points in the order of their first coordinate and
// stops a direction once that coordinate alone is farther than the k-th
// best so far: exact, and near linear for a spectrum's points (ordered by
// frequency), where a distance matrix would not fit in memory.
func neighbours(points [][]float64, k int, self bool) ([][]int, [][]float64, []float64) {
	n := len(points)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return points[order[a]][0] < points[order[b]][0] })
	nb := make([][]int, n)
	dist := make([][]float64, n)
	kdist := make([]float64, n)
	type cand struct {
		d float64
		j int
	}
	best := make([]cand, 0, k+1)
	for pos, i := range order {
		// The point itself comes first, before points equal to it.
		less := func(a, b cand) bool {
			return a.d < b.d || (a.d == b.d && (a.j == i || (b.j != i && a.j < b.j)))
		}
		best = best[:0]
		want := k
		if self {
			best = append(best, cand{0, i})
		}
		offer := func(j int) bool {
			dx := math.Abs(points[j][0] - points[i][0])
			if len(best) == want && dx > best[want-1].d {
				return false
			}
			s := 0.0
			for c := range points[i] {
				x := points[i][c] - points[j][c]
				s += x * x
			}
			c := cand{math.Sqrt(s), j}
			if len(best) == want && !less(c, best[want-1]) {
				return true
			}
			at := sort.Search(len(best), func(m int) bool { return less(c, best[m]) })
			best = append(best, cand{})
			copy(best[at+1:], best[at:])
			best[at] = c
			if len(best) > want {
				best = best[:want]
			}
			return true
		}
		for q := pos - 1; q >= 0 && offer(order[q]); q-- {
		}
		for q := pos + 1; q < n && offer(order[q]); q++ {
		}
		nb[i] = make([]int, len(best))
		dist[i] = make([]float64, len(best))
		for m, c := range best {
			nb[i][m], dist[i][m] = c.j, c.d
		}
		kdist[i] = best[len(best)-1].d
	}
	return nb, dist, kdist
}

// Outliers tells which points are outliers: those whose factor exceeds
// threshold, or, when threshold is zero or less, exceeds the mean factor
// of the set (the IOSI paper's rule, "the threshold μ as the mean of the
// sample set").
func Outliers(scores []float64, threshold float64) []bool {
	if threshold <= 0 {
		for _, s := range scores {
			threshold += s
		}
		threshold /= float64(len(scores))
	}
	out := make([]bool, len(scores))
	for i, s := range scores {
		out[i] = s > threshold
	}
	return out
}

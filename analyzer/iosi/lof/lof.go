// Package lof is the Local Outlier Factor of Breunig et al. (SIGMOD 2000),
// with the conventions of scikit-learn's LocalOutlierFactor: each point's
// k nearest neighbours exclude itself, the reachability distance of a from
// b is max(k-distance(b), d(a, b)), the local reachability density is the
// inverse of the mean reachability distance (plus 1e-10), and the factor
// is the mean ratio of the neighbours' densities to the point's own.
// Scores near 1 are inliers; larger scores are outliers. IOSI uses it on
// (run time, I/O volume) to leave out runs skewed by heavy noise.
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
	n := len(points)
	if n < 2 {
		return nil, fmt.Errorf("lof: %d points, need at least 2", n)
	}
	if k < 1 {
		return nil, fmt.Errorf("lof: %d neighbours, need at least 1", k)
	}
	dim := len(points[0])
	for i, p := range points {
		if len(p) != dim {
			return nil, fmt.Errorf("lof: point %d has %d coordinates, point 0 has %d", i, len(p), dim)
		}
		for _, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("lof: point %d has a coordinate %v", i, v)
			}
		}
	}
	if dim == 0 {
		return nil, errors.New("lof: points without coordinates")
	}
	k = min(k, n-1)
	// Brute force: IOSI has tens of runs per application, and scikit-learn
	// would do the same for so few points.
	d := make([][]float64, n)
	for i := range d {
		d[i] = make([]float64, n)
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			s := 0.0
			for c := range dim {
				x := points[i][c] - points[j][c]
				s += x * x
			}
			d[i][j] = math.Sqrt(s)
			d[j][i] = d[i][j]
		}
	}
	nb := make([][]int, n)
	kdist := make([]float64, n)
	for i := range n {
		idx := make([]int, 0, n-1)
		for j := range n {
			if j != i {
				idx = append(idx, j)
			}
		}
		sort.SliceStable(idx, func(a, b int) bool { return d[i][idx[a]] < d[i][idx[b]] })
		nb[i] = idx[:k]
		kdist[i] = d[i][idx[k-1]]
	}
	lrd := make([]float64, n)
	for i := range n {
		s := 0.0
		for _, j := range nb[i] {
			s += math.Max(kdist[j], d[i][j])
		}
		lrd[i] = 1 / (s/float64(k) + 1e-10)
	}
	out := make([]float64, n)
	for i := range n {
		s := 0.0
		for _, j := range nb[i] {
			s += lrd[j] / lrd[i]
		}
		out[i] = s / float64(k)
	}
	return out, nil
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

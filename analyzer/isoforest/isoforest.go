// Package isoforest is the isolation forest of Liu, Ting and Zhou (ICDM
// 2008) with scikit-learn's IsolationForest conventions: each tree grows
// on a subsample drawn without replacement (up to 256 points) to a depth
// of ceil(log2(subsample)), splitting a random feature at a uniformly
// random value between its extremes in the node; a point's path length is
// its leaf's depth plus the expected depth c(m) of the m training points
// left in that leaf, and its score 2^(-mean path / c(subsample)). The
// forest is randomised: a seed makes it repeat, but its scores are not
// scikit-learn's, whose random stream differs.
package isoforest

import (
	"math"
	"math/rand/v2"
)

// Options size the forest; zero values mean scikit-learn's defaults.
type Options struct {
	Trees      int   // 0 means 100
	MaxSamples int   // points per tree; 0 means min(256, n), more than n means n
	Seed       int64 // the random stream; the same seed, the same forest
}

// Forest is a fitted isolation forest.
type Forest struct {
	trees []node
	norm  float64 // c(subsample size)
}

type node struct {
	feature     int
	split       float64
	left, right *node
	size        int // training points in a leaf
	leaf        bool
}

// Fit grows a forest on points (vectors of one dimension, at least one
// point).
func Fit(points [][]float64, o Options) *Forest {
	if o.Trees <= 0 {
		o.Trees = 100
	}
	n := len(points)
	m := o.MaxSamples
	if m <= 0 {
		m = min(256, n)
	}
	m = min(m, n) // scikit-learn too takes every point when asked for more
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x9e3779b97f4a7c15))
	depth := int(math.Ceil(math.Log2(math.Max(float64(m), 2))))
	f := &Forest{norm: averagePath(m)}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for range o.Trees {
		// A partial Fisher-Yates shuffle draws m points without replacement.
		for i := range m {
			j := i + rng.IntN(n-i)
			idx[i], idx[j] = idx[j], idx[i]
		}
		sub := append([]int(nil), idx[:m]...)
		f.trees = append(f.trees, *grow(points, sub, 0, depth, rng))
	}
	return f
}

func grow(points [][]float64, sub []int, depth, maxDepth int, rng *rand.Rand) *node {
	if len(sub) < 2 || depth >= maxDepth {
		return &node{leaf: true, size: len(sub)}
	}
	dim := len(points[sub[0]])
	// Try the features in a random order until one varies in the node.
	for _, feat := range rng.Perm(dim) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, i := range sub {
			lo, hi = math.Min(lo, points[i][feat]), math.Max(hi, points[i][feat])
		}
		if !(hi > lo) {
			continue
		}
		split := lo + rng.Float64()*(hi-lo)
		if split >= hi { // rounding; keep both sides non-empty
			split = lo
		}
		var l, r []int
		for _, i := range sub {
			if points[i][feat] <= split {
				l = append(l, i)
			} else {
				r = append(r, i)
			}
		}
		return &node{feature: feat, split: split,
			left: grow(points, l, depth+1, maxDepth, rng), right: grow(points, r, depth+1, maxDepth, rng)}
	}
	return &node{leaf: true, size: len(sub)}
}

// averagePath is c(m), the mean depth of an unsuccessful search in a
// binary search tree of m points: 0, 1, then 2H(m-1) - 2(m-1)/m.
func averagePath(m int) float64 {
	switch {
	case m <= 1:
		return 0
	case m == 2:
		return 1
	}
	x := float64(m)
	return 2*(math.Log(x-1)+0.5772156649015329) - 2*(x-1)/x
}

// ScoreSamples returns scikit-learn's score_samples: minus the anomaly
// score, so that lower is more abnormal (about -1 for clear outliers,
// -0.5 and above for inliers).
func (f *Forest) ScoreSamples(points [][]float64) []float64 {
	out := make([]float64, len(points))
	for i, p := range points {
		total := 0.0
		for t := range f.trees {
			nd, d := &f.trees[t], 0
			for !nd.leaf {
				if p[nd.feature] <= nd.split {
					nd = nd.left
				} else {
					nd = nd.right
				}
				d++
			}
			total += float64(d) + averagePath(nd.size)
		}
		out[i] = -math.Pow(2, -total/float64(len(f.trees))/f.norm)
	}
	return out
}

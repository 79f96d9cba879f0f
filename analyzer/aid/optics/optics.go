// Package optics orders points by density with OPTICS (Ankerst et al.,
// SIGMOD 1999) and extracts clusters from the reachability plot with the
// ξ method, the way scikit-learn's OPTICS does (euclidean metric, no
// bound on ε): the same ordering, core distances, reachability,
// predecessors and ξ labels on the same input, which the golden test
// checks against scikit-learn itself.
//
// AID clusters the I/O bursts of an application, mapped to (peak height,
// area), to find groups of similar bursts without knowing how many there
// are; OPTICS needs no cluster count and leaves isolated bursts as noise.
package optics

import (
	"errors"
	"math"
	"sort"
)

// Graph is the result of OPTICS: the order in which the points were
// visited and, per point (indexed like the input), its core distance,
// reachability distance and predecessor (-1 for none). Unreachable
// points have reachability +Inf.
type Graph struct {
	Order       []int
	Core        []float64
	Reach       []float64
	Predecessor []int
}

// round15 rounds like numpy.around(x, 15), which scikit-learn applies to
// the distances so that ties do not depend on the last bits.
func round15(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.RoundToEven(x*1e15) / 1e15
}

func dist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// Compute runs OPTICS over points (each a coordinate vector of the same
// length) with minPts the neighbourhood size that makes a core point,
// the point itself included (scikit-learn's min_samples). It costs
// O(n²) time and O(n) memory beyond the input.
func Compute(points [][]float64, minPts int) (*Graph, error) {
	return ComputeResolution(points, minPts, 0)
}

// ComputeResolution is Compute with distances below res counted as res:
// points closer than the resolution of their measurement are equally
// close. Without it, a group of nearly identical points (the bursts of
// one application) has reachabilities that differ by rounding noise, in
// ratios that ξ reads as steep, and falls apart into many small clusters.
func ComputeResolution(points [][]float64, minPts int, res float64) (*Graph, error) {
	n := len(points)
	if res < 0 || math.IsNaN(res) || math.IsInf(res, 0) {
		return nil, errors.New("optics: resolution must be finite and not negative")
	}
	if minPts < 2 {
		return nil, errors.New("optics: minPts must be at least 2")
	}
	for _, p := range points {
		if len(p) != len(points[0]) {
			return nil, errors.New("optics: points of different dimensions")
		}
		for _, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errors.New("optics: a coordinate is not finite")
			}
		}
	}
	g := &Graph{Order: make([]int, 0, n), Core: make([]float64, n), Reach: make([]float64, n), Predecessor: make([]int, n)}
	d := make([]float64, n)
	for i := range points {
		g.Reach[i] = math.Inf(1)
		g.Predecessor[i] = -1
		if n < minPts {
			g.Core[i] = math.Inf(1)
			continue
		}
		for j := range points {
			d[j] = dist(points[i], points[j])
			if j != i {
				d[j] = max(d[j], res)
			}
		}
		// The minPts-th smallest distance, the point's own 0 included.
		g.Core[i] = round15(kth(d, minPts-1))
	}
	processed := make([]bool, n)
	for len(g.Order) < n {
		// The unprocessed point of least reachability, the lowest index
		// on ties (numpy's argmin).
		p, best := -1, math.Inf(1)
		for i := range n {
			if !processed[i] && (p < 0 || g.Reach[i] < best) {
				p, best = i, g.Reach[i]
			}
		}
		processed[p] = true
		g.Order = append(g.Order, p)
		if math.IsInf(g.Core[p], 1) {
			continue
		}
		for j := range n {
			if processed[j] {
				continue
			}
			r := round15(max(dist(points[p], points[j]), g.Core[p], res))
			if r < g.Reach[j] {
				g.Reach[j] = r
				g.Predecessor[j] = p
			}
		}
	}
	return g, nil
}

// kth returns the k-th smallest value of d (0-based); d is reordered.
func kth(d []float64, k int) float64 {
	s := append([]float64(nil), d...)
	sort.Float64s(s)
	return s[k]
}

// Cluster is a range of the ordering, [Start, End] inclusive.
type Cluster struct{ Start, End int }

// Xi extracts clusters from the reachability plot with the ξ method:
// steep down areas (reachability falling by a factor 1-xi or more) matched
// with steep up areas, as scikit-learn's cluster_optics_xi with
// predecessor correction. minPts is OPTICS's; minClusterSize the fewest
// points a cluster may have (0: minPts). It returns a label per point
// (-1 for noise; a point takes the first cluster found that holds it and
// no labelled point) and the clusters found, innermost first.
func Xi(g *Graph, minPts int, xi float64, minClusterSize int) ([]int, []Cluster, error) {
	n := len(g.Order)
	if xi <= 0 || xi >= 1 {
		return nil, nil, errors.New("optics: xi must be in (0, 1)")
	}
	if minClusterSize <= 0 {
		minClusterSize = minPts
	}
	rp := make([]float64, n+1)
	pp := make([]int, n)
	for i, o := range g.Order {
		rp[i] = g.Reach[o]
		pp[i] = g.Predecessor[o]
	}
	rp[n] = math.Inf(1)
	clusters := xiClusters(rp, pp, g.Order, xi, minPts, minClusterSize)
	labels := make([]int, n)
	byOrder := make([]int, n)
	for i := range byOrder {
		byOrder[i] = -1
	}
	label := 0
	for _, c := range clusters {
		free := true
		for i := c.Start; i <= c.End; i++ {
			if byOrder[i] != -1 {
				free = false
				break
			}
		}
		if free {
			for i := c.Start; i <= c.End; i++ {
				byOrder[i] = label
			}
			label++
		}
	}
	for i, o := range g.Order {
		labels[o] = byOrder[i]
	}
	return labels, clusters, nil
}

type sda struct {
	start, end int
	mib        float64
}

func xiClusters(rp []float64, pp []int, order []int, xi float64, minPts, minSize int) []Cluster {
	n := len(rp) - 1
	comp := 1 - xi
	steepUp, steepDown, down, up := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
	for i := range n {
		r := rp[i] / rp[i+1] // NaN for Inf/Inf and 0/0: no comparison holds
		steepUp[i] = r <= comp
		steepDown[i] = r >= 1/comp
		down[i] = r > 1
		up[i] = r < 1
	}
	var sdas []sda
	var clusters []Cluster
	index, mib := 0, 0.0
	for si := range n {
		if !(steepUp[si] || steepDown[si]) || si < index {
			continue
		}
		for _, v := range rp[index : si+1] {
			mib = max(mib, v)
		}
		sdas = filterSDAs(sdas, mib, comp, rp)
		if steepDown[si] {
			end := extendRegion(steepDown, up, si, minPts)
			sdas = append(sdas, sda{start: si, end: end})
			index = end + 1
			mib = rp[index]
			continue
		}
		uStart := si
		uEnd := extendRegion(steepUp, down, uStart, minPts)
		index = uEnd + 1
		mib = rp[index]
		var found []Cluster
		for _, d := range sdas {
			cs, ce := d.start, uEnd
			if rp[ce+1]*comp < d.mib {
				continue
			}
			dmax := rp[d.start]
			if dmax*comp >= rp[ce+1] {
				for rp[cs+1] > rp[ce+1] && cs < d.end {
					cs++
				}
			} else if rp[ce+1]*comp >= dmax {
				for rp[ce-1] > dmax && ce > uStart {
					ce--
				}
			}
			var ok bool
			if cs, ce, ok = correctPredecessor(rp, pp, order, cs, ce); !ok {
				continue
			}
			if ce-cs+1 < minSize || cs > d.end || ce < uStart {
				continue
			}
			found = append(found, Cluster{cs, ce})
		}
		for i := len(found) - 1; i >= 0; i-- {
			clusters = append(clusters, found[i])
		}
	}
	return clusters
}

func extendRegion(steep, xward []bool, start, minPts int) int {
	nonX, end := 0, start
	for i := start; i < len(steep); i++ {
		switch {
		case steep[i]:
			nonX, end = 0, i
		case !xward[i]:
			nonX++
			if nonX > minPts {
				return end
			}
		default:
			return end
		}
	}
	return end
}

func filterSDAs(sdas []sda, mib, comp float64, rp []float64) []sda {
	if math.IsInf(mib, 0) {
		return nil
	}
	out := sdas[:0]
	for _, d := range sdas {
		if mib <= rp[d.start]*comp {
			d.mib = max(d.mib, mib)
			out = append(out, d)
		}
	}
	return out
}

// correctPredecessor shrinks a cluster from its end while its last point's
// predecessor lies outside it. It indexes the ordering with the
// predecessor (a point index) as scikit-learn does, so that the labels
// agree with it exactly; -1 wraps to the last position as in Python.
func correctPredecessor(rp []float64, pp []int, order []int, s, e int) (int, int, bool) {
	for s < e {
		if rp[s] > rp[e] {
			return s, e, true
		}
		q := pp[e]
		if q < 0 {
			q += len(order)
		}
		pe := order[q]
		for i := s; i < e; i++ {
			if order[i] == pe {
				return s, e, true
			}
		}
		e--
	}
	return 0, 0, false
}

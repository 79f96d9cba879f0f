// Package clique is the grid clustering IOSI adapts from CLIQUE (Agrawal
// et al., SIGMOD 1998) to find the bursts most runs of an application
// share. Each burst of each run (sample) is a 2-D point: x the time of its
// crest, y its likeness to a reference burst in [0, 1]. The plane is cut
// into units of a given width and height; with IOSI's two changes:
//
//   - a unit's density is the number of distinct samples with a point in
//     it, and a unit is dense when that reaches ⌈γ·s⌉ of s samples;
//   - a cluster grows only into the unit's immediate neighbourhood (the
//     3×3 units around it), which is dense when its points come from at
//     least ⌈κ·s⌉ samples; within it each sample votes one point, the one
//     with the least total normalised distance to the other points there.
//
// Sweep tries a grid of unit sizes and keeps the one that puts the most
// points into clusters, as the paper does.
package clique

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Point is one burst of one sample.
type Point struct {
	Sample int     // which sample (run) the burst is from, 0..Samples-1
	X, Y   float64 // crest time and likeness to the reference burst
}

// Params are one grid setting.
type Params struct {
	Samples int     // number of samples s
	Width   float64 // unit width (x)
	Height  float64 // unit height (y)
	Gamma   float64 // dense unit: points from ⌈γ·s⌉ samples (IOSI: 0.5)
	Kappa   float64 // dense neighbourhood: ⌈κ·s⌉ samples (IOSI: 0.9)
}

// Cluster is one common burst: at most one point per sample, as indices
// into the points given, sorted by sample.
type Cluster struct {
	Points []int
	// X is the mean crest time of the points, where the burst is aligned.
	X float64
}

type unit struct{ i, j int }

func (p Params) validate() error {
	if p.Samples < 1 || !(p.Width > 0) || !(p.Height > 0) || p.Gamma < 0 || p.Gamma > 1 || p.Kappa < 0 || p.Kappa > 1 {
		return fmt.Errorf("clique: bad parameters %+v", p)
	}
	return nil
}

func need(f float64, s int) int { return max(1, int(math.Ceil(f*float64(s)-1e-9))) }

// Find returns the clusters of points on one grid, by crest time. Dense
// units are taken in order of decreasing density (then by position); the
// points of a cluster are not used again, so that the neighbourhoods of
// two adjacent dense units cannot report one burst twice.
func Find(points []Point, p Params) ([]Cluster, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	for i, q := range points {
		if q.Sample < 0 || q.Sample >= p.Samples || math.IsNaN(q.X) || math.IsNaN(q.Y) {
			return nil, fmt.Errorf("clique: point %d (%+v) outside %d samples or not a number", i, q, p.Samples)
		}
	}
	cell := make(map[unit][]int)
	for k, q := range points {
		u := unit{int(math.Floor(q.X / p.Width)), int(math.Floor(q.Y / p.Height))}
		cell[u] = append(cell[u], k)
	}
	used := make([]bool, len(points))
	density := func(idx []int) int {
		seen := map[int]bool{}
		for _, k := range idx {
			if !used[k] {
				seen[points[k].Sample] = true
			}
		}
		return len(seen)
	}
	type dense struct {
		u unit
		d int
	}
	var ds []dense
	for u, idx := range cell {
		if d := density(idx); d >= need(p.Gamma, p.Samples) {
			ds = append(ds, dense{u, d})
		}
	}
	slices.SortFunc(ds, func(a, b dense) int {
		return cmp.Or(b.d-a.d, a.u.i-b.u.i, a.u.j-b.u.j)
	})
	var out []Cluster
	for _, du := range ds {
		// Earlier clusters may have taken points of this unit.
		if density(cell[du.u]) < need(p.Gamma, p.Samples) {
			continue
		}
		var hood []int
		for di := -1; di <= 1; di++ {
			for dj := -1; dj <= 1; dj++ {
				for _, k := range cell[unit{du.u.i + di, du.u.j + dj}] {
					if !used[k] {
						hood = append(hood, k)
					}
				}
			}
		}
		if density(hood) < need(p.Kappa, p.Samples) {
			continue
		}
		c := vote(points, hood, p)
		for _, k := range c.Points {
			used[k] = true
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Cluster) int { return cmp.Compare(a.X, b.X) })
	return out, nil
}

// vote keeps one point per sample: the one with the least total distance,
// in units of the grid, to the other points of the neighbourhood.
func vote(points []Point, hood []int, p Params) Cluster {
	best := map[int]int{}
	score := map[int]float64{}
	for _, a := range hood {
		s := 0.0
		for _, b := range hood {
			dx, dy := (points[a].X-points[b].X)/p.Width, (points[a].Y-points[b].Y)/p.Height
			s += math.Hypot(dx, dy)
		}
		sa := points[a].Sample
		if k, ok := best[sa]; !ok || s < score[sa] || s == score[sa] && a < k {
			best[sa], score[sa] = a, s
		}
	}
	var c Cluster
	for _, k := range best {
		c.Points = append(c.Points, k)
	}
	slices.SortFunc(c.Points, func(a, b int) int { return cmp.Compare(points[a].Sample, points[b].Sample) })
	for _, k := range c.Points {
		c.X += points[k].X
	}
	c.X /= float64(len(c.Points))
	return c
}

// SweepResult is the best grid of a sweep.
type SweepResult struct {
	Clusters      []Cluster
	Width, Height float64
	Clustered     int // points in clusters
}

// Sweep runs Find on every width of widths and height of heights and
// returns the clustering that puts the most points into clusters; among
// equals, the first in sweep order (widths outer, heights inner).
func Sweep(points []Point, samples int, widths, heights []float64, gamma, kappa float64) (SweepResult, error) {
	best := SweepResult{Clustered: -1}
	for _, w := range widths {
		for _, h := range heights {
			cs, err := Find(points, Params{Samples: samples, Width: w, Height: h, Gamma: gamma, Kappa: kappa})
			if err != nil {
				return SweepResult{}, err
			}
			n := 0
			for _, c := range cs {
				n += len(c.Points)
			}
			if n > best.Clustered {
				best = SweepResult{Clusters: cs, Width: w, Height: h, Clustered: n}
			}
		}
	}
	if best.Clustered < 0 {
		return SweepResult{}, fmt.Errorf("clique: empty sweep")
	}
	return best, nil
}

// Range returns n values evenly spaced from lo to hi (lo alone when n is
// 1 or lo >= hi): the settings of one sweep dimension.
func Range(lo, hi float64, n int) []float64 {
	if n <= 1 || !(hi > lo) {
		return []float64{lo}
	}
	out := make([]float64, n)
	for i := range n {
		out[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	return out
}

package iosi

import (
	"fmt"
	"math"
	"slices"

	"iopred/analyzer/iosi/lof"
)

// prepared are the samples after preprocessing, all of one length, on the
// refined grid.
type prepared struct {
	stepS   float64
	ids     []string
	w, r, t [][]float64 // write, read, total per sample
	found   int
	dropped map[string]string
}

// maxGapShare is the largest share of a sample the log may miss: beyond
// it the run is left out rather than interpolated.
const maxGapShare = 0.5

// preprocess runs the paper's data preprocessing (section 5.1): outlier
// elimination by LOF, granularity refinement, duration correction and
// background removal, with the options' improvements.
func preprocess(samples []Sample, o Options) (*prepared, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	p := &prepared{found: len(samples), dropped: map[string]string{}}
	type run struct {
		id   string
		w, r []float64
	}
	var runs []run
	var step float64
	for i, s := range samples {
		id := s.JobID
		if id == "" {
			id = fmt.Sprint("#", i)
		}
		if !(s.StepS > 0) || len(s.Write) != len(s.Read) {
			return nil, fmt.Errorf("sample %s: step %g s, %d write and %d read rates", id, s.StepS, len(s.Write), len(s.Read))
		}
		if step == 0 {
			step = s.StepS
		} else if s.StepS != step {
			return nil, fmt.Errorf("sample %s: step %g s, the others %g s", id, s.StepS, step)
		}
		if len(s.Write) < 2 {
			p.dropped[id] = "shorter than two log intervals"
			continue
		}
		w, gw := fillGaps(s.Write)
		r, gr := fillGaps(s.Read)
		if float64(max(gw, gr)) > maxGapShare*float64(len(w)) {
			p.dropped[id] = "the log misses most of it"
			continue
		}
		runs = append(runs, run{id, w, r})
	}
	if len(runs) < MinRuns {
		return nil, fmt.Errorf("%d usable runs of %d, need at least %d", len(runs), len(samples), MinRuns)
	}
	if o.QuietFraction > 0 {
		ex := make([]float64, len(runs))
		for i, rn := range runs {
			ex[i] = excessVolume(rn.w, rn.r)
		}
		lim := o.QuietFraction * median(ex)
		kept := runs[:0]
		for i, rn := range runs {
			if ex[i] < lim {
				p.dropped[rn.id] = "no I/O above its quiet level"
				continue
			}
			kept = append(kept, rn)
		}
		runs = kept
	}
	if o.LOF && len(runs) > 2 {
		pts := make([][]float64, len(runs))
		for i, rn := range runs {
			v := 0.0
			for k := range rn.w {
				v += rn.w[k] + rn.r[k]
			}
			pts[i] = []float64{float64(len(rn.w)), v}
		}
		scaleByMedian(pts)
		k := o.LOFNeighbors
		if k == 0 {
			k = 20
		}
		sc, err := lof.Scores(pts, k)
		if err != nil {
			return nil, err
		}
		out := lof.Outliers(sc, o.LOFThreshold)
		kept := runs[:0]
		for i, rn := range runs {
			if out[i] {
				p.dropped[rn.id] = fmt.Sprintf("outlier (LOF %.2f)", sc[i])
				continue
			}
			kept = append(kept, rn)
		}
		runs = kept
	}
	if len(runs) < MinRuns {
		return nil, fmt.Errorf("%d runs left of %d after leaving out outliers and runs without I/O, need at least %d", len(runs), len(samples), MinRuns)
	}
	p.stepS = step / float64(o.Refine)
	for _, rn := range runs {
		p.ids = append(p.ids, rn.id)
		p.w = append(p.w, refine(rn.w, o.Refine))
		p.r = append(p.r, refine(rn.r, o.Refine))
	}
	if o.Trim {
		lens := make([]float64, len(p.w))
		for i, x := range p.w {
			lens[i] = float64(len(x))
		}
		slices.Sort(lens)
		n := int(lens[0])
		if o.TrimQuantile > 0 {
			n = int(lens[int(o.TrimQuantile*float64(len(lens)-1))])
		}
		for i := range p.w {
			if o.TrimQuantile > 0 {
				p.w[i], p.r[i] = resample(p.w[i], n), resample(p.r[i], n)
			} else {
				p.w[i], p.r[i] = trim(p.w[i], n), trim(p.r[i], n)
			}
		}
	}
	if o.Background {
		removeBackground(p.w)
		removeBackground(p.r)
	}
	p.t = make([][]float64, len(p.w))
	for i := range p.w {
		t := make([]float64, len(p.w[i]))
		for k := range t {
			t[k] = p.w[i][k] + p.r[i][k]
		}
		p.t[i] = t
	}
	return p, nil
}

// fillGaps returns x with NaN runs replaced by linear interpolation
// between their neighbours (the nearest value at the ends) and how many
// values were missing. Infinite and negative rates count as missing.
func fillGaps(x []float64) ([]float64, int) {
	out := make([]float64, len(x))
	missing := 0
	last := -1
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			missing++
			continue
		}
		out[i] = v
		switch {
		case last < 0:
			for k := 0; k < i; k++ {
				out[k] = v
			}
		case last < i-1:
			for k := last + 1; k < i; k++ {
				f := float64(k-last) / float64(i-last)
				out[k] = out[last] + f*(v-out[last])
			}
		}
		last = i
	}
	if last >= 0 {
		for k := last + 1; k < len(x); k++ {
			out[k] = out[last]
		}
	}
	if last < 0 {
		missing = len(x)
	}
	return out, missing
}

// excessVolume is the sum of what a run's rates exceed its own 25th
// percentile by: its bursts' volume without its steady background.
func excessVolume(w, r []float64) float64 {
	t := make([]float64, len(w))
	for i := range w {
		t[i] = w[i] + r[i]
	}
	s := slices.Clone(t)
	slices.Sort(s)
	q := s[len(s)/4]
	e := 0.0
	for _, v := range t {
		e += max(0, v-q)
	}
	return e
}

func scaleByMedian(pts [][]float64) {
	for c := range pts[0] {
		col := make([]float64, len(pts))
		for i := range pts {
			col[i] = pts[i][c]
		}
		m := median(col)
		if !(m > 0) {
			continue
		}
		for i := range pts {
			pts[i][c] /= m
		}
	}
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// refine puts f points in each log interval by linear interpolation:
// point k*f is the log value k, the f-1 points after it lie on the line
// to value k+1 (the paper, with f = 2, inserts the mean of two neighbours).
// The result has (n-1)*f+1 points.
func refine(x []float64, f int) []float64 {
	if f == 1 {
		return slices.Clone(x)
	}
	out := make([]float64, 0, (len(x)-1)*f+1)
	for k := 0; k+1 < len(x); k++ {
		for j := range f {
			out = append(out, x[k]+(x[k+1]-x[k])*float64(j)/float64(f))
		}
	}
	return append(out, x[len(x)-1])
}

// trim shortens x to n points by dropping len(x)-n points at regular
// intervals, the first one first (the paper: "if a sample is 4% longer
// than the shortest one, remove its 1st, 26th, 51st, ... points").
func trim(x []float64, n int) []float64 {
	extra := len(x) - n
	if extra <= 0 {
		return x
	}
	every := float64(len(x)) / float64(extra)
	out := make([]float64, 0, n)
	next, k := 0.0, 0
	for i, v := range x {
		if k < extra && i == int(next) {
			k++
			next = float64(k) * every
			continue
		}
		out = append(out, v)
	}
	return out[:n]
}

// resample stretches or shrinks x to n points by linear interpolation,
// keeping its first and last points.
func resample(x []float64, n int) []float64 {
	if len(x) == n || len(x) < 2 || n < 2 {
		return x
	}
	out := make([]float64, n)
	f := float64(len(x)-1) / float64(n-1)
	for k := range out {
		p := float64(k) * f
		i := int(p)
		if i >= len(x)-1 {
			out[k] = x[len(x)-1]
			continue
		}
		out[k] = x[i] + (p-float64(i))*(x[i+1]-x[i])
	}
	return out
}

// removeBackground subtracts the average background level from every
// sample: the mean of all points below the mean of all points (the
// paper's four steps), clipping at zero.
func removeBackground(xs [][]float64) {
	sum, n := 0.0, 0
	for _, x := range xs {
		for _, v := range x {
			sum += v
			n++
		}
	}
	if n == 0 {
		return
	}
	mean := sum / float64(n)
	bs, bn := 0.0, 0
	for _, x := range xs {
		for _, v := range x {
			if v < mean {
				bs += v
				bn++
			}
		}
	}
	if bn == 0 {
		return
	}
	bg := bs / float64(bn)
	for _, x := range xs {
		for i := range x {
			x[i] = max(0, x[i]-bg)
		}
	}
}

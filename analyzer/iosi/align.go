package iosi

import (
	"math"
	"slices"
)

// baselineS is the half-width, in seconds, of the window a run's local
// floor is the lowest level of: wider than the longest burst (a
// checkpoint of a few minutes).
const baselineS = 900

// segment is one burst found in one run: points [lo, hi) of its
// background-free total rate, carrying vol bytes.
type segment struct {
	lo, hi int
	vol    float64
}

// extractAligned is IOSI with burst-by-burst alignment (Options.
// BurstAlign): the runs keep their own lengths; the least-disturbed run
// (the shortest left after preprocessing: contention only prolongs runs)
// is the time reference; every other run is scaled to its length and its
// bursts matched to the reference's one by one, in order (a run that
// drifted keeps each burst matched to its own); a reference burst is kept
// only when most runs show it, and its volume is the median of the
// matched bursts' volumes, so that a foreign burst in the reference does
// not leak in. Bursts late in the run are kept as the early ones are: no
// run is cut to the shortest.
func extractAligned(samples []Sample, o Options) (*Signature, error) {
	o.Trim = false
	p, err := preprocess(samples, o)
	if err != nil {
		return nil, err
	}
	ds := make([]detrended, len(p.t))
	for i, t := range p.t {
		ds[i] = detrend(t, p.stepS)
	}
	thr := segmentThreshold(ds)
	segs := make([][]segment, len(p.t))
	for i := range p.t {
		segs[i] = findSegments(ds[i], thr, p.stepS)
	}
	// The reference is the shortest run among those whose bursts the
	// runs show nearly as well as the best (support, refShare): the shortest of all may be a restart that
	// did no I/O but kept a foreign burst, or one whose bursts merged
	// with other jobs'.
	order := make([]int, len(p.t))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(p.t[a]) - len(p.t[b]) })
	cand := make([][][]float64, len(p.t))
	score := make([]float64, len(p.t))
	best := math.Inf(-1)
	for _, r := range order {
		cand[r] = supported(p, segs, r)
		score[r] = support(cand[r], len(p.t))
		best = max(best, score[r])
	}
	ref := order[0]
	for _, r := range order {
		if score[r] >= refShare*best {
			ref = r
			break
		}
	}
	kept := cand[ref]
	n := len(p.t[ref])
	sig := &Signature{Method: "iosi-aligned", RunsFound: p.found, RunsUsed: len(p.t), StepS: p.stepS,
		Write: make([]float64, n), Read: make([]float64, n), Dropped: p.dropped}
	if o.KeepSamples {
		for i := range p.t {
			sig.Samples = append(sig.Samples, resample(p.t[i], n))
		}
	}
	for k, s := range segs[ref] {
		if kept[k] == nil {
			continue
		}
		scale := median(kept[k]) / s.vol
		b := Burst{StartS: float64(s.lo) * p.stepS, EndS: float64(s.hi) * p.stepS}
		// The burst's rates above the run's local floor, split between
		// writes and reads as the run's own were.
		for j := s.lo; j < s.hi; j++ {
			tot := p.w[ref][j] + p.r[ref][j]
			if !(tot > 0) {
				continue
			}
			x := scale * ds[ref].x[j]
			w, r := x*p.w[ref][j]/tot, x*p.r[ref][j]/tot
			sig.Write[j], sig.Read[j] = w, r
			b.WriteBytes += w * p.stepS
			b.ReadBytes += r * p.stepS
			b.PeakBytesPerS = max(b.PeakBytesPerS, w+r)
		}
		sig.Bursts = append(sig.Bursts, b)
	}
	return sig, nil
}

// supported matches every run's bursts to those of run ref, scaled to
// its length, and returns for each of ref's bursts the volumes of its
// matches (its own first) when most runs show it, nil when they do not.
func supported(p *prepared, segs [][]segment, ref int) [][]float64 {
	rs := segs[ref]
	n := len(p.t[ref])
	vols := make([][]float64, len(rs))
	for k, s := range rs {
		vols[k] = []float64{s.vol}
	}
	const tol = 4
	for i := range p.t {
		if i == ref {
			continue
		}
		f := float64(n) / float64(len(p.t[i]))
		for k, j := range matchSegments(rs, segs[i], f, tol) {
			if j >= 0 {
				vols[k] = append(vols[k], segs[i][j].vol)
			}
		}
	}
	for k := range vols {
		if 2*len(vols[k]) <= len(p.t) {
			vols[k] = nil // most runs do not show it: a foreign burst
		}
	}
	return vols
}

// support scores a reference: the sum over its kept bursts of the share
// of runs beyond half that show each. A run whose bursts are the
// application's scores about a half per burst; one whose extra bursts
// found matches by chance gains little from them.
func support(v [][]float64, runs int) float64 {
	s := 0.0
	for _, x := range v {
		if x != nil {
			s += float64(len(x))/float64(runs) - 0.5
		}
	}
	return s
}

// detrended is one run's total rate above its local floor (the lowest
// 3-point average within baselineS seconds), smoothed by a 3-point
// average, with its noise: the robust standard deviation of its
// point-to-point changes.
type detrended struct {
	x, sm []float64
	noise float64
}

func detrend(t []float64, stepS float64) detrended {
	n := len(t)
	half := max(60, int(baselineS/stepS))
	sm := make([]float64, n)
	for i := range t {
		a, b := max(0, i-1), min(n, i+2)
		s := 0.0
		for _, v := range t[a:b] {
			s += v
		}
		sm[i] = s / float64(b-a)
	}
	floor := make([]float64, n)
	for i := range sm {
		floor[i] = slices.Min(sm[max(0, i-half):min(n, i+half+1)])
	}
	d := detrended{x: make([]float64, n), sm: make([]float64, n)}
	var diffs []float64
	for i := range t {
		d.x[i] = max(0, t[i]-floor[i])
		d.sm[i] = max(0, sm[i]-floor[i])
		if i > 0 {
			diffs = append(diffs, math.Abs(t[i]-t[i-1]))
		}
	}
	d.noise = 1.4826 * median(diffs) / math.Sqrt2
	return d
}

// segmentThreshold is the level the bursts of an application's runs are
// cut at: above six times each run's noise, and above a tenth of the
// level the application's bursts recur at, the median over runs of each
// run's third-highest crest (a run's two highest may be other jobs';
// the application's own recur in every run). No run's largest burst sets
// it, which may be another job's forty times the size.
func segmentThreshold(ds []detrended) float64 {
	var thirds []float64
	for _, d := range ds {
		var peaks []float64
		for _, s := range findSegments(d, 6*d.noise, 1) {
			peaks = append(peaks, slices.Max(d.sm[s.lo:s.hi]))
		}
		if len(peaks) == 0 {
			continue
		}
		slices.Sort(peaks)
		thirds = append(thirds, peaks[max(0, len(peaks)-3)])
	}
	if len(thirds) == 0 {
		return 0
	}
	return 0.1 * median(thirds)
}

// findSegments cuts a detrended run where its smoothed rate stands above
// thr, joined across a dip of one point, and widens each stretch by up
// to two points where the rate itself is still above a tenth of thr
// (the partly covered log intervals at the edges).
func findSegments(d detrended, thr, stepS float64) []segment {
	t, sm := d.x, d.sm
	n := len(t)
	thr = max(thr, 6*d.noise)
	if !(thr > 0) {
		return nil
	}
	var out []segment
	for i := 0; i < n; {
		if sm[i] <= thr {
			i++
			continue
		}
		lo := i
		hi := i
		for hi < n && (sm[hi] > thr || hi+1 < n && sm[hi+1] > thr) {
			hi++
		}
		i = hi
		for k := 0; k < 2 && lo > 0 && t[lo-1] > 0.1*thr; k++ {
			lo--
		}
		for k := 0; k < 2 && hi < n && t[hi] > 0.1*thr; k++ {
			hi++
		}
		for lo < hi && t[lo] <= 0.1*thr {
			lo++
		}
		for hi > lo && t[hi-1] <= 0.1*thr {
			hi--
		}
		if hi <= lo {
			continue
		}
		v := 0.0
		for _, x := range t[lo:hi] {
			v += x * stepS
		}
		if len(out) > 0 && out[len(out)-1].hi >= lo {
			last := &out[len(out)-1]
			for _, x := range t[last.hi:max(last.hi, hi)] {
				last.vol += x * stepS
			}
			last.hi = max(last.hi, hi)
			continue
		}
		out = append(out, segment{lo: lo, hi: hi, vol: v})
	}
	return out
}

// driftShare is how far, as a share of its time from the run's start, a
// burst may have drifted from where the run's overall stretch puts it.
const driftShare = 0.05

// refShare is how close to the best-supported run's support a run must
// come to be the reference, the shortest of those that do.
const refShare = 0.8

// maxVolumeRatio is how far apart two bursts' volumes may be for one to
// be the other in another run: contention changes a burst's duration and
// rate, not its bytes, but a foreign burst may add to it.
const maxVolumeRatio = 1.6

// matchSegments matches the bursts of a run (its times scaled by f onto
// the reference's) to the reference's bursts in order, by dynamic
// programming: a pair may match when their starts are within driftShare
// of the time plus half the burst's width (at least minTol points) and
// their volumes within a factor of maxVolumeRatio (four times that when
// the reference's is the larger), and the matching maximises
// the sum of the pairs' closeness. It returns, for each reference burst,
// the index of its match or -1.
func matchSegments(ref, run []segment, f, minTol float64) []int {
	nr, nu := len(ref), len(run)
	score := func(i, j int) float64 {
		// Drift grows along the run: a burst may be off by a few
		// percent of its time, and by half its width.
		tol := max(minTol, driftShare*float64(ref[i].lo)+0.5*float64(ref[i].hi-ref[i].lo))
		d := math.Abs(float64(ref[i].lo) - f*float64(run[j].lo))
		if d >= tol || !(run[j].vol > 0) {
			return math.Inf(-1)
		}
		// The reference's burst may carry a foreign one besides.
		lr := math.Log(ref[i].vol / run[j].vol)
		if lr < -math.Log(maxVolumeRatio) || lr > math.Log(4*maxVolumeRatio) {
			return math.Inf(-1)
		}
		return 1 - 0.5*d/tol - 0.3*min(1, math.Abs(lr)/math.Log(maxVolumeRatio))
	}
	// best[i][j]: the best total over ref[:i] and run[:j].
	best := make([][]float64, nr+1)
	for i := range best {
		best[i] = make([]float64, nu+1)
	}
	for i := 1; i <= nr; i++ {
		for j := 1; j <= nu; j++ {
			b := max(best[i-1][j], best[i][j-1])
			if s := score(i-1, j-1); s > 0 {
				b = max(b, best[i-1][j-1]+s)
			}
			best[i][j] = b
		}
	}
	out := make([]int, nr)
	for i := range out {
		out[i] = -1
	}
	for i, j := nr, nu; i > 0 && j > 0; {
		switch s := score(i-1, j-1); {
		case s > 0 && best[i][j] == best[i-1][j-1]+s:
			out[i-1] = j - 1
			i, j = i-1, j-1
		case best[i][j] == best[i-1][j]:
			i--
		default:
			j--
		}
	}
	return out
}

// lengthSpread is the interquartile range of the lengths of the runs
// left after preprocessing, over their median: how unevenly contention
// stretched them.
func lengthSpread(samples []Sample, o Options) float64 {
	o.Trim, o.Background = false, false
	p, err := preprocess(samples, o)
	if err != nil || len(p.t) < 2 {
		return 0
	}
	l := make([]float64, len(p.t))
	for i, t := range p.t {
		l[i] = float64(len(t))
	}
	return (quantile(l, 0.75) - quantile(l, 0.25)) / median(l)
}

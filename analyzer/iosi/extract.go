package iosi

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"iopred/analyzer/iosi/clique"
	"iopred/analyzer/iosi/wavelet"
)

// wave is one candidate burst of one sample: the points from lo to hi
// (exclusive) between two low troughs of the smoothed sample, with the
// crest of the smoothed wave at crest.
type wave struct {
	sample, lo, hi, crest int
	like                  float64
}

// shapeLen is the number of points every burst is resampled to for
// comparing shapes.
const shapeLen = 32

// Extract computes the signature of the samples of one application with
// IOSI. It needs at least MinRuns samples left after preprocessing.
func Extract(samples []Sample, o Options) (*Signature, error) {
	spread := 0.0
	if !o.BurstAlign && (o.AlignSpread > 0 || o.ChooseSpread > 0) {
		spread = lengthSpread(samples, o)
	}
	if o.BurstAlign || o.AlignSpread > 0 && spread > o.AlignSpread {
		return extractAligned(samples, o)
	}
	sig, err := extractWavelet(samples, o)
	if err != nil || !(o.ChooseSpread > 0) {
		return sig, err
	}
	// Both ways. A signature with bytes in bursts most runs do not show
	// (another job's burst the wavelet kept) loses against one without,
	// whatever the spread; then the aligned one when the two time lines
	// differ by more than TimelineShare (the wavelet's quantile length
	// took in a stretched run, and its late bursts land off); then the
	// one with more bursts most runs show (a signature should miss none:
	// the wavelet's loses bursts late in the runs, or merges two);
	// otherwise, where the runs spread, the one that explains the runs
	// better.
	al, err := extractAligned(samples, o)
	if err != nil {
		return sig, nil
	}
	sw, nw := supportedShare(sig, samples, o)
	sa, na := supportedShare(al, samples, o)
	switch chooseSignature(backing{sw, nw}, backing{sa, na}, timelineGap(sig, al), spread, o) {
	case pickAligned:
		return al, nil
	case pickWavelet:
		return sig, nil
	}
	if consistency(al, samples, o) > consistency(sig, samples, o) {
		return al, nil
	}
	return sig, nil
}

// backing is how well the runs bear a signature out (supportedShare):
// the share of its bytes in bursts most runs show, and the number of
// those bursts.
type backing struct {
	share  float64
	bursts int
}

// The choices between the wavelet's signature and the aligned one.
const (
	pickWavelet = iota
	pickAligned
	pickConsistent // the one more consistent with the runs
)

// chooseSignature picks between the wavelet's signature and the aligned
// one from their backing, the gap between their time lines (timelineGap)
// and the spread of the runs' lengths, in this order: the larger share
// of bytes in supported bursts, by more than supportMargin; the aligned
// one when the time lines differ by more than TimelineShare and it
// keeps at least two supported bursts (one burst sets no stretch: the
// aligned signature is then the anchor's single burst, and where the
// wavelet shows more the aligned one lost a checkpoint, tuning seed
// 1008's flo/lattice_f); the one with more supported bursts; the
// wavelet's where the runs spread by no more than ChooseSpread; else
// the one more consistent with the runs.
func chooseSignature(wavelet, aligned backing, gap, spread float64, o Options) int {
	switch {
	case aligned.share > wavelet.share+supportMargin:
		return pickAligned
	case wavelet.share > aligned.share+supportMargin:
		return pickWavelet
	case o.TimelineShare > 0 && aligned.bursts >= minTimelineBursts && gap > o.TimelineShare:
		return pickAligned
	case aligned.bursts > wavelet.bursts:
		return pickAligned
	case wavelet.bursts > aligned.bursts:
		return pickWavelet
	case spread <= o.ChooseSpread:
		return pickWavelet
	}
	return pickConsistent
}

// minTimelineBursts is the fewest supported bursts for the aligned
// signature's time line to be preferred on the gap alone.
const minTimelineBursts = 2

// timelineGap is how far apart the two signatures' time lines are: the
// wavelet's length (the TrimQuantile quantile of the run lengths) over
// the aligned one's (the least-disturbed run that shows the bursts),
// as a share off one.
func timelineGap(wavelet, aligned *Signature) float64 {
	if !(aligned.DurationS() > 0) {
		return 0
	}
	return math.Abs(wavelet.DurationS()/aligned.DurationS() - 1)
}

// supportMargin is how much larger one signature's share of bytes in
// bursts most runs show must be for it to be chosen on that ground.
const supportMargin = 0.05

// consistency is how well a signature explains the runs it came from:
// the median over the runs left after preprocessing (each at its own
// length) of the largest normalised cross-correlation of the run's total
// rate with the signature's, stretched to the run's length, at lags
// within 5% of it.
func consistency(sig *Signature, samples []Sample, o Options) float64 {
	o.Trim = false
	p, err := preprocess(samples, o)
	if err != nil || len(sig.Write) < 2 {
		return 0
	}
	tot := make([]float64, len(sig.Write))
	for i := range tot {
		tot[i] = sig.Write[i] + sig.Read[i]
	}
	var cs []float64
	for _, t := range p.t {
		s := resample(tot, len(t))
		e1, e2 := 0.0, 0.0
		for i := range t {
			e1 += s[i] * s[i]
			e2 += t[i] * t[i]
		}
		best := 0.0
		if e1 > 0 && e2 > 0 {
			maxLag := len(t) / 20
			for l := -maxLag; l <= maxLag; l++ {
				c := 0.0
				for i := max(0, -l); i < len(t) && i+l < len(t); i++ {
					c += s[i] * t[i+l]
				}
				best = max(best, c/math.Sqrt(e1*e2))
			}
		}
		cs = append(cs, best)
	}
	return median(cs)
}

// extractWavelet is the paper's IOSI with the options' improvements:
// duration correction, the wavelet's bursts and CLIQUE.
func extractWavelet(samples []Sample, o Options) (*Signature, error) {
	p, err := preprocess(samples, o)
	if err != nil {
		return nil, err
	}
	n := len(p.t[0])
	for _, t := range p.t {
		n = min(n, len(t))
	}
	var waves []wave
	for i, t := range p.t {
		ws, err := findWaves(t, o)
		if err != nil {
			return nil, fmt.Errorf("sample %s: %w", p.ids[i], err)
		}
		for _, w := range ws {
			w.sample = i
			if o.Centroid {
				w.crest = centroid(t, w.lo, w.hi, w.crest)
			}
			waves = append(waves, w)
		}
	}
	sig := &Signature{Method: "iosi", RunsFound: p.found, RunsUsed: len(p.t), StepS: p.stepS,
		Write: make([]float64, n), Read: make([]float64, n), Dropped: p.dropped}
	if o.KeepSamples {
		sig.Samples = p.t
	}
	if len(waves) == 0 {
		return sig, nil
	}
	likeness(p.t, waves)
	// The sweep's unit widths run from the mean burst width to the mean
	// distance between neighbouring crests of one sample.
	width, dist, nd := 0.0, 0.0, 0
	for k, w := range waves {
		width += float64(w.hi - w.lo)
		if k > 0 && waves[k-1].sample == w.sample {
			dist += float64(w.crest - waves[k-1].crest)
			nd++
		}
	}
	width /= float64(len(waves))
	if nd > 0 {
		dist /= float64(nd)
	} else {
		dist = 2 * width
	}
	lo, hi := min(width, dist), max(width, dist)
	pts := make([]clique.Point, len(waves))
	for k, w := range waves {
		pts[k] = clique.Point{Sample: w.sample, X: float64(w.crest), Y: w.like}
	}
	left := make([]int, len(pts)) // index in waves of each point still free
	for k := range left {
		left[k] = k
	}
	var spans [][2]int
	for pass := 0; pass < max(1, o.Passes) && len(left) > 0; pass++ {
		free := make([]clique.Point, len(left))
		for k, i := range left {
			free[k] = pts[i]
		}
		res, err := clique.Sweep(free, len(p.t), clique.Range(lo, hi, o.Widths), clique.Range(o.HeightMin, o.HeightMax, o.Heights), o.Gamma, o.Kappa)
		if err != nil {
			return nil, err
		}
		taken := make([]bool, len(left))
		added := 0
		for _, c := range res.Clusters {
			if float64(len(c.Points)) < o.MinSupport*float64(len(p.t)) {
				continue
			}
			inside := false
			for _, sp := range spans {
				inside = inside || c.X >= float64(sp[0]) && c.X < float64(sp[1])
			}
			if inside {
				continue
			}
			members := make([]wave, len(c.Points))
			for k, idx := range c.Points {
				members[k] = waves[left[idx]]
				taken[idx] = true
			}
			if sp, ok := addBurst(sig, p, members, o); ok {
				spans = append(spans, sp)
				added++
			}
		}
		if added == 0 {
			break
		}
		rest := left[:0]
		for k, i := range left {
			if !taken[k] {
				rest = append(rest, i)
			}
		}
		left = rest
	}
	slices.SortFunc(sig.Bursts, func(a, b Burst) int { return cmp.Compare(a.StartS, b.StartS) })
	return sig, nil
}

// findWaves smooths a sample with the discrete Meyer approximation at the
// options' level and cuts it at the troughs lower than the mean crest
// height (section 5.2).
func findWaves(t []float64, o Options) ([]wave, error) {
	a, err := wavelet.Approx(t, wavelet.Dmey(), o.Level)
	if err != nil {
		return nil, err
	}
	n := len(a)
	var crests []int
	sum := 0.0
	for i := 1; i+1 < n; i++ {
		if a[i] > a[i-1] && a[i] >= a[i+1] {
			crests = append(crests, i)
			sum += a[i]
		}
	}
	if len(crests) == 0 {
		return nil, nil
	}
	thr := sum / float64(len(crests))
	floor := math.Inf(-1)
	if o.NoiseMADs > 0 {
		med := median(a)
		dev := make([]float64, n)
		for i, v := range a {
			dev[i] = math.Abs(v - med)
		}
		floor = med + o.NoiseMADs*1.4826*median(dev)
	}
	cuts := []int{0}
	for i := 1; i+1 < n; i++ {
		if a[i] < a[i-1] && a[i] <= a[i+1] && a[i] < thr {
			cuts = append(cuts, i)
		}
	}
	cuts = append(cuts, n)
	var out []wave
	for k := 0; k+1 < len(cuts); k++ {
		lo, hi := cuts[k], cuts[k+1]
		c := lo
		for i := lo; i < hi; i++ {
			if a[i] > a[c] {
				c = i
			}
		}
		// A wave without a crest inside (a slope into the edge) is not a
		// burst the transform identified.
		if c == lo && lo > 0 || c == hi-1 && hi < n {
			continue
		}
		if !(a[c] > 0) || o.MinCrest && a[c] < thr || a[c] < floor {
			continue
		}
		out = append(out, wave{lo: lo, hi: hi, crest: c})
	}
	return out, nil
}

// centroid is the point nearest the centre of mass of x[lo:hi], or crest
// when the wave carries nothing.
func centroid(x []float64, lo, hi, crest int) int {
	m, s := 0.0, 0.0
	for i := lo; i < hi; i++ {
		if x[i] > 0 {
			m += float64(i) * x[i]
			s += x[i]
		}
	}
	if !(s > 0) {
		return crest
	}
	return min(hi-1, max(lo, int(math.Round(m/s))))
}

// shape resamples x[lo:hi] to shapeLen points by linear interpolation.
func shape(x []float64, lo, hi int) []float64 {
	out := make([]float64, shapeLen)
	m := hi - lo
	for k := range out {
		f := float64(k) * float64(m-1) / float64(shapeLen-1)
		i := int(f)
		if i >= m-1 {
			out[k] = x[lo+m-1]
			continue
		}
		out[k] = x[lo+i] + (f-float64(i))*(x[lo+i+1]-x[lo+i])
	}
	return out
}

// likeness sets each wave's likeness: the correlation coefficient of its
// pre-transform shape with the average shape of all waves, clipped to
// [0, 1] (section 5.3).
func likeness(ts [][]float64, waves []wave) {
	ref := make([]float64, shapeLen)
	shapes := make([][]float64, len(waves))
	for k, w := range waves {
		shapes[k] = shape(ts[w.sample], w.lo, w.hi)
		for i, v := range shapes[k] {
			ref[i] += v / float64(len(waves))
		}
	}
	for k := range waves {
		c := pearson(shapes[k], ref)
		if math.IsNaN(c) {
			c = 0
		}
		waves[k].like = min(1, max(0, c))
	}
}

// pearson is the correlation coefficient of x and y (NaN if either is
// constant).
func pearson(x, y []float64) float64 {
	n := min(len(x), len(y))
	if n == 0 {
		return math.NaN()
	}
	var mx, my float64
	for i := range n {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for i := range n {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// addBurst aligns the clustered waves on their mean crest, averages them
// into the signature and records the burst (section 5.4).
func addBurst(sig *Signature, p *prepared, ms []wave, o Options) ([2]int, bool) {
	n := len(sig.Write)
	x, lo, hi := 0.0, 0.0, 0.0
	for _, m := range ms {
		x += float64(m.crest)
		lo += float64(m.lo - m.crest)
		hi += float64(m.hi - m.crest)
	}
	k := float64(len(ms))
	x, lo, hi = x/k, lo/k, hi/k
	at := int(math.Round(x))
	from, to := at+int(math.Round(lo)), at+int(math.Round(hi))
	from, to = max(from, 0), min(to, n)
	if to-from < 1 {
		return [2]int{}, false
	}
	// offset[i] maps signature point j to point j-at+offset[i] of member i.
	offset := make([]int, len(ms))
	for i, m := range ms {
		offset[i] = m.crest
	}
	avg := func(ch [][]float64, j int, buf []float64) float64 {
		buf = buf[:0]
		for i, m := range ms {
			q := j - at + offset[i]
			if q >= 0 && q < len(ch[m.sample]) {
				buf = append(buf, ch[m.sample][q])
			}
		}
		if len(buf) == 0 {
			return 0
		}
		if o.Median {
			return median(buf)
		}
		s := 0.0
		for _, v := range buf {
			s += v
		}
		return s / float64(len(buf))
	}
	buf := make([]float64, 0, len(ms))
	if o.XCorrAlign && len(ms) > 1 {
		tmpl := make([]float64, to-from)
		for j := from; j < to; j++ {
			tmpl[j-from] = avg(p.t, j, buf)
		}
		reach := max(1, (to-from)/2)
		for i, m := range ms {
			best, bestC := 0, math.Inf(-1)
			for d := -reach; d <= reach; d++ {
				c := 0.0
				for j := from; j < to; j++ {
					q := j - at + m.crest + d
					if q >= 0 && q < len(p.t[m.sample]) {
						c += tmpl[j-from] * p.t[m.sample][q]
					}
				}
				if c > bestC || c == bestC && abs(d) < abs(best) {
					best, bestC = d, c
				}
			}
			offset[i] = m.crest + best
		}
	}
	if o.MaxSpread > 0 && len(ms) >= 4 {
		pl := make([]float64, len(ms))
		for i := range ms {
			pl[i] = float64(offset[i])
		}
		if quantile(pl, 0.75)-quantile(pl, 0.25) > o.MaxSpread*float64(to-from) {
			return [2]int{}, false
		}
	}
	w, r := make([]float64, to-from), make([]float64, to-from)
	for j := from; j < to; j++ {
		w[j-from], r[j-from] = avg(p.w, j, buf), avg(p.r, j, buf)
	}
	if o.EdgeFraction > 0 {
		peak := 0.0
		for j := range w {
			peak = max(peak, w[j]+r[j])
		}
		a, b := 0, len(w)
		for a < b && w[a]+r[a] < o.EdgeFraction*peak {
			a++
		}
		for b > a && w[b-1]+r[b-1] < o.EdgeFraction*peak {
			b--
		}
		w, r = w[a:b], r[a:b]
		from, to = from+a, from+b
	}
	if o.AlignQuantile > 0 {
		// Move the burst to the quantile of its members' places.
		pl := make([]float64, len(ms))
		for i := range ms {
			pl[i] = float64(offset[i])
		}
		shift := int(math.Round(quantile(pl, o.AlignQuantile))) - at
		from, to = max(0, from+shift), min(n, to+shift)
		if shift < 0 {
			w, r = w[len(w)-(to-from):], r[len(r)-(to-from):]
		} else {
			w, r = w[:to-from], r[:to-from]
		}
	}
	if to <= from {
		return [2]int{}, false
	}
	b := Burst{StartS: float64(from) * sig.StepS, EndS: float64(to) * sig.StepS}
	for j := from; j < to; j++ {
		vw, vr := w[j-from], r[j-from]
		// Where two bursts overlap the larger one is kept, so that no
		// byte is counted twice.
		if vw+vr > sig.Write[j]+sig.Read[j] {
			sig.Write[j], sig.Read[j] = vw, vr
		}
		b.WriteBytes += vw * sig.StepS
		b.ReadBytes += vr * sig.StepS
		b.PeakBytesPerS = max(b.PeakBytesPerS, vw+vr)
	}
	if b.WriteBytes+b.ReadBytes > 0 {
		sig.Bursts = append(sig.Bursts, b)
		return [2]int{from, to}, true
	}
	return [2]int{}, false
}

// quantile is the q-quantile of x by linear interpolation between order
// statistics.
func quantile(x []float64, q float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	f := q * float64(len(s)-1)
	i := int(f)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (f-float64(i))*(s[i+1]-s[i])
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

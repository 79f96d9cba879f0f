package aid

import (
	"math"
	"slices"
)

// series is the aggregate log around the days being detected: rates of
// the whole file system on the grid, NaN where nothing was logged.
type series struct {
	startNS, stepNS int64
	read, write     []float64
}

func (s *series) time(i int) int64 { return s.startNS + int64(i)*s.stepNS }

// baselineBlock is the width, in seconds, of the blocks over which the
// baseline is a low quantile: long next to a burst, short next to the
// daily cycle.
const baselineBlock = 1800

// baseline returns per sample a rolling low level of x: the 20th
// percentile of each block, linearly interpolated between block centres.
func baseline(x []float64, stepS float64) []float64 {
	blk := max(8, int(baselineBlock/stepS))
	nb := (len(x) + blk - 1) / blk
	lv := make([]float64, nb)
	buf := make([]float64, 0, blk)
	for b := range nb {
		buf = buf[:0]
		for _, v := range x[b*blk : min(len(x), (b+1)*blk)] {
			if !math.IsNaN(v) {
				buf = append(buf, v)
			}
		}
		lv[b] = math.NaN()
		if len(buf) > 0 {
			slices.Sort(buf)
			lv[b] = buf[len(buf)/5]
		}
	}
	// Blocks without data take their neighbours' level.
	last := math.NaN()
	for i := range lv {
		if math.IsNaN(lv[i]) {
			lv[i] = last
		} else {
			last = lv[i]
		}
	}
	for i := len(lv) - 1; i >= 0; i-- {
		if math.IsNaN(lv[i]) {
			lv[i] = last
		} else {
			last = lv[i]
		}
	}
	out := make([]float64, len(x))
	for i := range x {
		c := (float64(i)+0.5)/float64(blk) - 0.5
		b := int(math.Floor(c))
		switch {
		case b < 0:
			out[i] = lv[0]
		case b >= nb-1:
			out[i] = lv[nb-1]
		default:
			f := c - float64(b)
			out[i] = lv[b]*(1-f) + lv[b+1]*f
		}
		if math.IsNaN(out[i]) {
			out[i] = 0
		}
	}
	return out
}

// gaussian smooths x (NaN as 0) with a Gaussian of sigma samples.
func gaussian(x []float64, sigma float64) []float64 {
	out := make([]float64, len(x))
	if sigma <= 0 {
		for i, v := range x {
			if !math.IsNaN(v) {
				out[i] = v
			}
		}
		return out
	}
	h := int(math.Ceil(3 * sigma))
	k := make([]float64, 2*h+1)
	sum := 0.0
	for i := range k {
		d := float64(i - h)
		k[i] = math.Exp(-d * d / (2 * sigma * sigma))
		sum += k[i]
	}
	for i := range k {
		k[i] /= sum
	}
	for i := range x {
		acc := 0.0
		for j := -h; j <= h; j++ {
			if t := i + j; t >= 0 && t < len(x) && !math.IsNaN(x[t]) {
				acc += k[j+h] * x[t]
			}
		}
		out[i] = acc
	}
	return out
}

// detect finds the bursts of s whose start lies in [fromNS, toNS).
// The excess over the baseline is low-passed (the detector) and a burst
// is a run of samples where it passes the threshold, widened while the
// raw excess stays above a tenth of the burst's peak (or three noise
// widths); its volume is the raw excess over its samples.
func detect(s *series, fromNS, toNS int64, o Options, smooth func([]float64) []float64) []Burst {
	n := len(s.write)
	stepS := float64(s.stepNS) / 1e9
	tot := make([]float64, n)
	for i := range tot {
		tot[i] = s.read[i] + s.write[i]
	}
	base, baseR := baseline(tot, stepS), baseline(s.read, stepS)
	ex := make([]float64, n)
	var dev []float64
	for i := range tot {
		ex[i] = tot[i] - base[i]
		if !math.IsNaN(ex[i]) {
			dev = append(dev, math.Abs(ex[i]))
		}
	}
	if len(dev) == 0 {
		return nil
	}
	slices.Sort(dev)
	noise := 1.4826 * dev[len(dev)/2]
	thr := max(o.MinPeak, o.NoiseK*noise)
	low := 3 * noise
	sm := smooth(ex)
	var out []Burst
	for i := 0; i < n; {
		if math.IsNaN(ex[i]) || sm[i] < thr {
			i++
			continue
		}
		a, b := i, i
		for b < n && !math.IsNaN(ex[b]) && sm[b] >= thr {
			b++
		}
		peak := 0.0
		for t := a; t < b; t++ {
			peak = max(peak, ex[t])
		}
		edge := max(low, 0.1*peak)
		for a > 0 && !math.IsNaN(ex[a-1]) && ex[a-1] > edge {
			a--
		}
		for b < n && !math.IsNaN(ex[b]) && ex[b] > edge {
			b++
		}
		// Widening may reach the next core: take it in.
		for b < n && !math.IsNaN(ex[b]) && sm[b] >= thr {
			for b < n && !math.IsNaN(ex[b]) && (sm[b] >= thr || ex[b] > edge) {
				b++
			}
		}
		if st := s.time(a); st >= fromNS && st < toNS {
			out = append(out, measure(s, ex, base, baseR, a, b, stepS))
		}
		i = b
	}
	return out
}

// measure sums up samples [a, b) as a burst.
func measure(s *series, ex, base, baseR []float64, a, b int, stepS float64) Burst {
	bu := Burst{StartNS: s.time(a), EndNS: s.time(b)}
	rd := 0.0
	for t := a; t < b; t++ {
		bu.Peak = max(bu.Peak, ex[t])
		bu.Bytes += max(0, ex[t]) * stepS
		rd += max(0, s.read[t]-baseR[t]) * stepS
	}
	bu.Read = min(rd, bu.Bytes)
	// The samples at both ends are partly outside the burst. Its rate is
	// its volume over its duration, and its duration counts each sample
	// by its share of the plateau (the median of the samples above half
	// the peak): the edges count for the part of the step they cover.
	var top []float64
	for t := a; t < b; t++ {
		if ex[t] >= bu.Peak/2 {
			top = append(top, ex[t])
		}
	}
	plateau := median(top)
	dur := 0.0
	for t := a; t < b; t++ {
		dur += min(1, max(0, ex[t])/plateau) * stepS
	}
	bu.Rate = bu.Peak
	if dur > 0 {
		bu.Rate = bu.Bytes / dur
	}
	return bu
}

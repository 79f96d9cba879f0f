package iosi

import (
	"iopred/analyzer/iosi/dtw"
)

// ExtractDTW computes the signature by the paper's baseline: the samples
// preprocessed as for Extract, then averaged by progressive pairwise
// dynamic time warping of their total rates (the first two aligned and
// averaged, the result aligned with the third, and so on), the write and
// read rates carried along the same warping paths. Its bursts are the
// waves of the average's wavelet approximation whose crest reaches the
// mean crest height. The cost is quadratic in the sample length.
func ExtractDTW(samples []Sample, o Options) (*Signature, error) {
	p, err := preprocess(samples, o)
	if err != nil {
		return nil, err
	}
	t, w, r := p.t[0], p.w[0], p.r[0]
	for k := 1; k < len(p.t); k++ {
		_, path, err := dtw.Align(t, p.t[k])
		if err != nil {
			return nil, err
		}
		t, w, r = warpAverage(path, float64(k), t, w, r, p.t[k], p.w[k], p.r[k])
	}
	n := len(t)
	sig := &Signature{Method: "dtw", RunsFound: p.found, RunsUsed: len(p.t), StepS: p.stepS,
		Write: w, Read: r, Dropped: p.dropped}
	oo := o
	oo.MinCrest = true
	waves, err := findWaves(t, oo)
	if err != nil {
		return nil, err
	}
	for _, wv := range waves {
		b := Burst{StartS: float64(wv.lo) * sig.StepS, EndS: float64(min(wv.hi, n)) * sig.StepS}
		for j := wv.lo; j < wv.hi && j < n; j++ {
			b.WriteBytes += w[j] * sig.StepS
			b.ReadBytes += r[j] * sig.StepS
			b.PeakBytesPerS = max(b.PeakBytesPerS, w[j]+r[j])
		}
		sig.Bursts = append(sig.Bursts, b)
	}
	return sig, nil
}

// warpAverage averages sample y (total, write, read) into the running
// average a of k samples along the warping path: each point of a gets
// the mean of the y points matched with it, weighted 1 against k.
func warpAverage(path []dtw.Step, k float64, at, aw, ar, yt, yw, yr []float64) (t, w, r []float64) {
	n := len(at)
	st, sw, sr, cnt := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for _, s := range path {
		st[s.I] += yt[s.J]
		sw[s.I] += yw[s.J]
		sr[s.I] += yr[s.J]
		cnt[s.I]++
	}
	t, w, r = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		t[i] = (k*at[i] + st[i]/cnt[i]) / (k + 1)
		w[i] = (k*aw[i] + sw[i]/cnt[i]) / (k + 1)
		r[i] = (k*ar[i] + sr[i]/cnt[i]) / (k + 1)
	}
	return t, w, r
}

// Package ftio finds the period of an application's I/O the way FTIO does
// (Tarraf et al., "FTIO: Detecting I/O periodicity using frequency
// techniques"): the requests become a bandwidth signal, sampled at a fixed
// rate; the discrete Fourier transform of the samples gives a spectrum
// whose outlying bins (by z-score) are the candidate frequencies; one
// candidate is a confident period, two a moderately confident one, none or
// more than two mean the I/O is not periodic.
//
// Besides FTIO's own figures (confidence, rpde, spectral flatness,
// correlation with the dominant cosine) the package computes the paper's
// section 3.3 characterisation (R_IO, B_IO, sigma_vol, sigma_time, volume
// per period, periodicity score) and offers an online evaluator that
// narrows its window once a period has been found three times (section
// 3.4).
package ftio

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"runtime"
	"slices"
	"sort"

	"iopred/internal/ordered"
)

// DefaultFs is FTIO's default sampling frequency in hertz.
const DefaultFs = 10

// DefaultTol is FTIO's default tolerance: a candidate's z-score must exceed
// this fraction of the largest z-score.
const DefaultTol = 0.8

// DefaultMaxSamples bounds the sample buffer (8 bytes each) at a sampling
// frequency the user gave.
const DefaultMaxSamples = 1 << 24

// MaxAutoSamples bounds the samples when the sampling frequency is chosen
// from the trace (Options.Fs < 0): 2^22 samples cost about 0.3 s and
// 0.3 GB, where 2^24 cost 12 s and 0.8 GB (measured on one core of the
// development machine), and a period must repeat twice in the window
// anyway, so the finest periods lost are 2^-21 of the trace's span.
const MaxAutoSamples = 1 << 22

// Options tune the analysis. The zero value means FTIO's defaults.
type Options struct {
	// Fs is the sampling frequency in hertz; 0 means DefaultFs and a
	// negative value chooses it from the trace: 2 / (smallest positive gap
	// between event times), lowered so that at most MaxSamples samples
	// result.
	Fs float64
	// Tol is the fraction of the largest z-score a candidate's must exceed;
	// 0 means DefaultTol.
	Tol float64
	// Amplitude uses |X_k| instead of the power |X_k|^2/N for the spectrum.
	Amplitude bool
	// MaxSamples bounds the number of samples; 0 means DefaultMaxSamples.
	// A trace that would need more at the requested Fs is an error.
	MaxSamples int
	// Average makes each sample the mean bandwidth over its interval
	// [t_i, t_i + 1/fs) instead of FTIO's bandwidth at the instant t_i.
	// Bursts of short requests then keep their volume at any sampling
	// frequency, which point samples miss when the requests are much
	// shorter than 1/fs (a traced program's system calls).
	Average bool
	// MinCycles is how many times a period must fit in the window for its
	// bin to be a candidate: 2 keeps a single burst, or the gap between a
	// job's start-up and its end, from being reported as a period. 0 (as
	// FTIO) accepts every bin.
	MinCycles int
	// Outlier picks the spectrum's outlying bins; "" means OutlierZScore.
	// The other detectors give FTIO's candidates and verdict without
	// iopred's grouping of adjacent bins and harmonic series.
	Outlier Outlier
	// Seed seeds the randomised detector (OutlierIsoForest).
	Seed int64
	// Jobs is how many sources AnalyzeSources reads at once; 0 means
	// GOMAXPROCS. The result is the same, byte for byte, for every value.
	Jobs int
}

func (o Options) withDefaults() Options {
	if o.Fs == 0 {
		o.Fs = DefaultFs
	}
	if o.Tol == 0 {
		o.Tol = DefaultTol
	}
	if o.MaxSamples <= 0 {
		o.MaxSamples = DefaultMaxSamples
	}
	if o.Jobs <= 0 {
		o.Jobs = runtime.GOMAXPROCS(0)
	}
	return o
}

// Candidate is a frequency bin that stands out of the spectrum.
type Candidate struct {
	FreqHz     float64 `json:"freq_hz"`
	PeriodS    float64 `json:"period_s"`
	Confidence float64 `json:"confidence"`
	Z          float64 `json:"z"`
	Bin        int     `json:"bin"`
	Amplitude  float64 `json:"amplitude"` // normalised spectrum value p_k
}

// Result is the outcome of one analysis. FreqHz and PeriodS are nil when
// no period was found.
type Result struct {
	FreqHz     *float64 `json:"freq_hz"`
	PeriodS    *float64 `json:"period_s"`
	Confidence float64  `json:"confidence"`
	Verdict    string   `json:"verdict"` // "high", "moderate" or "not periodic"
	// Significance is the test of the period against the job's bursts at
	// random times (TestPeriod), when it was run; Verdict is then its
	// verdict and FTIOVerdict FTIO's. FTIOPeriodS is FTIO's period when
	// the test withdrew it (ApplySignificance).
	Significance *Significance `json:"significance,omitempty"`
	FTIOVerdict  string        `json:"ftio_verdict,omitempty"`
	FTIOPeriodS  *float64      `json:"ftio_period_s,omitempty"`
	// Phases are the stretches of the run with different periods, when
	// the period changes part-way (FindPhases).
	Phases     []Phase     `json:"phases,omitempty"`
	NSamples   int         `json:"n_samples"`
	TStart     float64     `json:"t_start"`
	TEnd       float64     `json:"t_end"`
	Fs         float64     `json:"fs"`
	Candidates []Candidate `json:"candidates"`
	// Outliers counts the bins with z > 3 (harmonics excluded), or the
	// bins Detector found outlying.
	Outliers int `json:"outliers"`
	// Detector is the outlier detector when not FTIO's default z-score.
	Detector Outlier `json:"outlier_detector,omitempty"`
	// Threshold is the z-score a bin had to exceed to be a candidate:
	// max(3, tol * max z).
	Threshold float64 `json:"z_threshold"`
	// Fundamental is set when the period reported is the fundamental of a
	// harmonic series whose strongest member was a higher harmonic.
	Fundamental bool `json:"fundamental,omitempty"`
	// SampledVolume is the bytes the samples stand for (each holds its
	// bandwidth for 1/fs) over the bytes the requests moved. The signal is
	// the bandwidth at instants 1/fs apart: I/O phases much shorter than
	// that mostly fall between samples, and the few they hit count for a
	// whole 1/fs. Far from 1 (FTIO's example traces give 0.94 to 1.06),
	// the sampling frequency is too low for the trace.
	SampledVolume float64 `json:"sampled_volume"`
	// Notes say how the analysis departed from what was asked (the
	// automatic sampling frequency lowered, say).
	Notes []string `json:"notes,omitempty"`
	Metrics
	// Signal, Spectrum, Z: kept for plots, not printed.
	Signal   []float64 `json:"-"`
	Spectrum []float64 `json:"-"` // p_k for k = 1..N/2 at index k-1
	Z        []float64 `json:"-"`
	Phase    float64   `json:"-"` // phase of the dominant bin, referred to t = 0
}

// Metrics are the periodicity figures beside the candidates.
type Metrics struct {
	RPDE              float64   `json:"rpde"`
	SpectralFlatness  float64   `json:"spectral_flatness"`
	Correlation       *float64  `json:"correlation"`        // of the signal with the dominant cosine
	PeriodCorrelation []float64 `json:"period_correlation"` // the same per whole period window
	RIO               *float64  `json:"r_io"`               // share of time units with substantial I/O
	BIO               *float64  `json:"b_io"`               // bytes/s of substantial I/O
	SigmaVol          *float64  `json:"sigma_vol"`
	SigmaTime         *float64  `json:"sigma_time"`
	// VolumePerPeriod is the median of the bytes moved in each period,
	// the periods cut half a period away from the dominant cosine's peaks
	// so that each holds one I/O phase whole. (Total bytes over span /
	// period, or the paper's B_IO·R_IO/f, count n phases in about n-1
	// periods and come out high by n/(n-1).)
	VolumePerPeriod *float64 `json:"volume_per_period"` // bytes
	// FTIOVolumePerPeriod is the paper's estimate, B_IO·R_IO/f.
	FTIOVolumePerPeriod *float64 `json:"ftio_volume_per_period"` // bytes
	PeriodicityScore    *float64 `json:"periodicity_score"`
}

// Request is one I/O request: bandwidth in bytes per second held over
// [Start, End) in seconds.
type Request struct {
	Start, End, Bandwidth float64
}

// Source streams requests to fn in any order. Analyze calls it twice (one
// pass finds the time span, the second fills the samples), so a Source must
// be able to replay; nothing is held between calls.
type Source func(fn func(Request) error) error

// Slice is a Source over requests in memory.
func Slice(reqs []Request) Source {
	return func(fn func(Request) error) error {
		for _, r := range reqs {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// ErrNoRequests is returned when the source holds no request.
var ErrNoRequests = errors.New("ftio: no I/O requests in the selected mode")

// Analyze samples the bandwidth signal of src and finds its period.
func Analyze(src Source, opt Options) (Result, error) {
	return AnalyzeSources([]Source{src}, opt)
}

// AnalyzeSources analyses the signal all sources make together (for
// instance one source per process trace). Up to GOMAXPROCS sources are
// read at the same time, each worker with its own sample buffer.
func AnalyzeSources(srcs []Source, opt Options) (Result, error) {
	opt = opt.withDefaults()
	var err error
	if opt.Outlier, err = ParseOutlier(string(opt.Outlier)); err != nil {
		return Result{}, err
	}
	type span struct {
		t0, t1 float64
		count  int
		times  []float64 // only for the automatic sampling frequency
		err    error
	}
	spans := ordered.Map(len(srcs), opt.Jobs, func(i int) span {
		sp := span{t0: math.Inf(1), t1: math.Inf(-1)}
		sp.err = srcs[i](func(r Request) error {
			sp.count++
			sp.t0 = math.Min(sp.t0, r.Start)
			sp.t1 = math.Max(sp.t1, r.End)
			if opt.Fs < 0 && len(sp.times) < 2*opt.MaxSamples {
				sp.times = append(sp.times, r.Start, r.End)
			}
			return nil
		})
		return sp
	})
	for _, sp := range spans {
		if sp.err != nil {
			return Result{}, sp.err
		}
	}
	t0, t1 := math.Inf(1), math.Inf(-1)
	count := 0
	var times []float64
	for _, sp := range spans {
		t0, t1, count = math.Min(t0, sp.t0), math.Max(t1, sp.t1), count+sp.count
		times = append(times, sp.times...)
	}
	if count == 0 {
		return Result{}, ErrNoRequests
	}
	fs := opt.Fs
	var notes []string
	var n int
	if fs < 0 {
		var note string
		fs, n, note = autoSampling(times, t1-t0, min(opt.MaxSamples, MaxAutoSamples))
		if note != "" {
			notes = append(notes, note)
		}
	} else {
		n = int(math.Floor((t1 - t0) * fs))
	}
	times = nil
	if n > opt.MaxSamples {
		return Result{}, fmt.Errorf("ftio: %d samples at %g Hz over %g s exceed the bound of %d; lower --fs", n, fs, t1-t0, opt.MaxSamples)
	}
	if n < 4 {
		return Result{}, fmt.Errorf("ftio: the trace spans %g s, only %d samples at %g Hz; raise --fs", t1-t0, n, fs)
	}
	x, total, err := sampleSources(srcs, t0, fs, n, opt)
	if err != nil {
		return Result{}, err
	}
	res := analyzeSamples(x, t0, fs, opt)
	res.TEnd = t1
	res.Notes = notes
	res.SampledVolume = 1
	if total.bytes > 0 {
		res.SampledVolume = total.sampled / total.bytes
	}
	return res, nil
}

// AnalyzeSignal finds the period of a signal sampled already: x[i] is the
// mean bandwidth in bytes per second over [t0+i/fs, t0+(i+1)/fs), as
// Options.Average samples requests (a job's merged histogram, say). Of
// opt, Fs, MaxSamples and Average do not apply.
func AnalyzeSignal(x []float64, t0, fs float64, opt Options) (Result, error) {
	opt = opt.withDefaults()
	var err error
	if opt.Outlier, err = ParseOutlier(string(opt.Outlier)); err != nil {
		return Result{}, err
	}
	if len(x) < 4 {
		return Result{}, fmt.Errorf("ftio: a signal of %d samples is too short", len(x))
	}
	if !(fs > 0) || math.IsInf(fs, 0) {
		return Result{}, fmt.Errorf("ftio: sampling frequency %g Hz", fs)
	}
	res := analyzeSamples(append([]float64(nil), x...), t0, fs, opt)
	res.SampledVolume = 1
	return res, nil
}

// autoSampling chooses the sampling frequency and the number of samples
// from the trace: 2 / (smallest positive gap between event times), lowered
// to keep the samples within maxSamples and then so that their number has
// no prime factor above 7, whose FFT is fast (a length with a large prime
// factor goes through Bluestein's algorithm, which cost 54 s and 4.5 GB for
// 2^24-1 samples against 12 s and 0.8 GB for 2^24). The note says what was
// lowered, for the user.
func autoSampling(times []float64, span float64, maxSamples int) (float64, int, string) {
	fs := autoFs(times, span, math.MaxInt)
	want := int(math.Min(math.Floor(span*fs), math.MaxInt32))
	n := want
	note := ""
	if n > maxSamples {
		n = maxSamples
		note = fmt.Sprintf("--fs 0: 2 / the smallest gap between request times is %.4g Hz, %d samples over %.4g s; capped at %d samples", fs, want, span, maxSamples)
	}
	if s := smoothBelow(n); s != n && n >= 4 {
		n = s
	}
	if n >= 4 && n != want {
		fs = float64(n) / span
		if note == "" {
			note = fmt.Sprintf("--fs 0: %d samples (a length with small prime factors, for the FFT) instead of %d", n, want)
		}
		note += fmt.Sprintf(" at %.6g Hz", fs)
	}
	return fs, n, note
}

// smoothBelow returns the largest n' <= n whose prime factors are 2, 3, 5
// and 7.
func smoothBelow(n int) int {
	for m := n; m > 1; m-- {
		r := m
		for _, p := range []int{2, 3, 5, 7} {
			for r%p == 0 {
				r /= p
			}
		}
		if r == 1 {
			return m
		}
	}
	return n
}

// autoFs returns 2 / (smallest positive gap between event times), lowered
// to keep the samples within maxSamples.
func autoFs(times []float64, span float64, maxSamples int) float64 {
	sort.Float64s(times)
	gap := math.Inf(1)
	for i := 1; i < len(times); i++ {
		if d := times[i] - times[i-1]; d > 0 && d < gap {
			gap = d
		}
	}
	fs := DefaultFs * 1.0
	if !math.IsInf(gap, 1) {
		fs = 2 / gap
	}
	if span > 0 && fs*span > float64(maxSamples) {
		fs = float64(maxSamples) / span
	}
	return fs
}

// sample evaluates the bandwidth signal at t0 + i/fs for i < n (zero-order
// hold): a request covers the samples whose instant lies in [start, end).
func sample(src Source, t0, fs float64, n int) ([]float64, error) {
	st := newSteps(n)
	if err := addRequests(src, st, t0, fs, n, &volume{}); err != nil {
		return nil, err
	}
	return integrate([][]float64{st.diff}, n), nil
}

// sampleSources samples every source into one signal of n samples and
// returns it with the sources' volume. Sources are read on opt.Jobs
// goroutines, each into a difference array of its own; each source's
// steps are then added to the signal's in source order, so the
// floating-point sums, and the result, do not depend on how many
// goroutines read or which read what (they used to add up in per-worker
// arrays in the order the workers happened to take the sources). The
// first error in source order is returned.
func sampleSources(srcs []Source, t0, fs float64, n int, opt Options) ([]float64, volume, error) {
	free := make(chan *steps, opt.Jobs)
	for range opt.Jobs {
		free <- nil
	}
	diff := make([]float64, n+1)
	var total volume
	var firstErr error
	ordered.Each(len(srcs), opt.Jobs, func(i int) sourceSteps {
		st := <-free
		if st == nil {
			st = newSteps(n)
		}
		var part sourceSteps
		if opt.Average {
			part.err = addAveraged(srcs[i], st, t0, fs, n, &part.vol)
		} else {
			part.err = addRequests(srcs[i], st, t0, fs, n, &part.vol)
		}
		part.index, part.delta = st.take()
		free <- st
		return part
	}, func(_ int, part sourceSteps) {
		if firstErr != nil {
			return
		}
		if part.err != nil {
			firstErr = part.err
			return
		}
		for k, i := range part.index {
			diff[i] += part.delta[k]
		}
		total.bytes += part.vol.bytes
		total.sampled += part.vol.sampled
	})
	if firstErr != nil {
		return nil, volume{}, firstErr
	}
	return integrate([][]float64{diff}, n), total, nil
}

// sourceSteps is one source's part of the signal: the sum of its steps at
// each sample it touched (index ascending) and its volume.
type sourceSteps struct {
	index []int32
	delta []float64
	vol   volume
	err   error
}

// steps is a difference array over n samples that remembers the entries
// a source touched, so that the source's part is taken without scanning
// every sample.
type steps struct {
	diff    []float64
	seen    []bool
	touched []int32
}

func newSteps(n int) *steps {
	return &steps{diff: make([]float64, n+1), seen: make([]bool, n+1)}
}

// add adds v to the difference at sample i.
func (st *steps) add(i int, v float64) {
	if !st.seen[i] {
		st.seen[i] = true
		st.touched = append(st.touched, int32(i))
	}
	st.diff[i] += v
}

// take returns the touched samples in ascending order with their sums and
// clears them for the next source.
func (st *steps) take() ([]int32, []float64) {
	if len(st.touched) == 0 {
		return nil, nil
	}
	slices.Sort(st.touched)
	index := slices.Clone(st.touched)
	delta := make([]float64, len(index))
	for k, i := range index {
		delta[k] = st.diff[i]
		st.diff[i], st.seen[i] = 0, false
	}
	st.touched = st.touched[:0]
	return index, delta
}

// addRequests adds each request to a difference array over the samples,
// so that their order does not matter and memory is that of the samples.
func addRequests(src Source, st *steps, t0, fs float64, n int, vol *volume) error {
	return src(func(r Request) error {
		lo := firstSampleAtOrAfter(r.Start, t0, fs, n)
		hi := firstSampleAtOrAfter(r.End, t0, fs, n)
		vol.bytes += r.Bandwidth * (r.End - r.Start)
		if lo < hi {
			st.add(lo, r.Bandwidth)
			st.add(hi, -r.Bandwidth)
			vol.sampled += r.Bandwidth * float64(hi-lo) / fs
		}
		return nil
	})
}

// addAveraged adds each request to a difference array over the samples as
// its share of each sample interval: interval i gets the request's
// bandwidth times the fraction of [t0+i/fs, t0+(i+1)/fs) it covers.
func addAveraged(src Source, st *steps, t0, fs float64, n int, vol *volume) error {
	add := func(i int, v float64) {
		if i >= 0 && i < n {
			st.add(i, v)
			st.add(i+1, -v)
			vol.sampled += v / fs
		}
	}
	return src(func(r Request) error {
		vol.bytes += r.Bandwidth * (r.End - r.Start)
		us, ue := (r.Start-t0)*fs, (r.End-t0)*fs
		if r.Bandwidth == 0 || ue <= us {
			return nil
		}
		ia, ib := int(math.Floor(us)), int(math.Floor(ue))
		if ia == ib {
			add(ia, r.Bandwidth*(ue-us))
			return nil
		}
		add(ia, r.Bandwidth*(float64(ia+1)-us))
		if lo, hi := max(ia+1, 0), min(ib, n); lo < hi {
			st.add(lo, r.Bandwidth)
			st.add(hi, -r.Bandwidth)
			vol.sampled += r.Bandwidth * float64(hi-lo) / fs
		}
		add(ib, r.Bandwidth*(ue-float64(ib)))
		return nil
	})
}

// volume is the bytes of the requests and the bytes the samples stand for
// (each sample holds the bandwidth for 1/fs).
type volume struct{ bytes, sampled float64 }

// integrate sums the difference arrays into the n samples, reusing the
// first array.
func integrate(diffs [][]float64, n int) []float64 {
	var x []float64
	for _, d := range diffs {
		if d == nil {
			continue
		}
		if x == nil {
			x = d
			continue
		}
		for i := range x {
			x[i] += d[i]
		}
	}
	x = x[:n]
	var acc float64
	for i := range x {
		acc += x[i]
		x[i] = acc
	}
	return x
}

// firstSampleAtOrAfter returns the smallest i with t0 + i/fs >= t, clamped
// to [0, n]. The sample instants are computed the same way as when they
// are compared, so that a request starting exactly on a sample covers it.
func firstSampleAtOrAfter(t, t0, fs float64, n int) int {
	i := int(math.Ceil((t - t0) * fs))
	if i < 0 {
		return 0
	}
	for i > 0 && t0+float64(i-1)/fs >= t {
		i--
	}
	for i < n && t0+float64(i)/fs < t {
		i++
	}
	if i > n {
		return n
	}
	return i
}

// analyzeSamples runs the spectral part on samples taken at fs from t0.
func analyzeSamples(x []float64, t0, fs float64, opt Options) Result {
	n := len(x)
	res := Result{NSamples: n, TStart: t0, TEnd: t0 + float64(n)/fs, Fs: fs, Signal: x, Verdict: "not periodic"}
	coef := realDFT(x)
	half := n / 2
	v := make([]float64, half)
	var sum, power float64
	for k := 1; k <= half; k++ {
		a := cmplx.Abs(coef[k])
		power += a * a
		if opt.Amplitude {
			v[k-1] = 2 * a
		} else {
			v[k-1] = 2 * a * a / float64(n)
		}
		sum += v[k-1]
	}
	// A signal without variation (constant, or empty) has only rounding
	// noise outside the DC bin; its z-scores would be meaningless.
	if dc := cmplx.Abs(coef[0]); power <= 1e-20*dc*dc {
		for i := range v {
			v[i] = 0
		}
		sum = 0
	}
	p := v
	if sum > 0 {
		for i := range p {
			p[i] /= sum
		}
	}
	res.Spectrum = p
	res.RPDE, res.SpectralFlatness = rpde(p), flatness(p)

	mean, std := meanStd(p)
	z := make([]float64, half)
	maxZ := 0.0
	for i := range p {
		if std > 0 {
			z[i] = math.Abs(p[i]-mean) / std
		}
		maxZ = math.Max(maxZ, z[i])
	}
	res.Z = z
	res.Threshold = math.Max(3, opt.Tol*maxZ)
	if opt.Outlier != "" && opt.Outlier != OutlierZScore {
		return detectedPeriod(res, coef, p, z, opt)
	}

	// Walk the bins upward. A tol-candidate whose index is a multiple of an
	// already kept candidate's is a harmonic: it is dropped and left out of
	// both sums. Outliers below tol stay in the second sum whatever their
	// index, as in FTIO (this is what reproduces its confidences).
	var kept []int
	var sumTol, sumOut float64
	isHarmonic := func(k int) bool {
		for _, c := range kept {
			if k%c == 0 {
				return true
			}
		}
		return false
	}
	for i := range z {
		k := i + 1
		if z[i] <= 3 || k < opt.MinCycles {
			continue
		}
		if z[i]/maxZ > opt.Tol {
			if isHarmonic(k) {
				continue
			}
			kept = append(kept, k)
			sumTol += z[i]
		}
		sumOut += z[i]
		res.Outliers++
	}
	groupEnd := -1 // the last bin of the group the last candidate stands for
	for _, k := range kept {
		f := float64(k) * fs / float64(n)
		c := Candidate{
			FreqHz: f, PeriodS: 1 / f, Z: z[k-1], Bin: k, Amplitude: p[k-1],
			Confidence: 0.5*z[k-1]/sumTol + 0.5*z[k-1]/sumOut,
		}
		// Candidates in adjacent bins are one peak, spread over its
		// neighbours when the period drifts a little during a long run
		// (FTIO would count them as rival periods): the strongest stands
		// for the peak, with the group's confidence.
		if last := len(res.Candidates) - 1; last >= 0 && groupEnd == k-1 {
			c.Confidence += res.Candidates[last].Confidence
			if res.Candidates[last].Z >= c.Z {
				res.Candidates[last].Confidence = c.Confidence
			} else {
				res.Candidates[last] = c
			}
		} else {
			res.Candidates = append(res.Candidates, c)
		}
		groupEnd = k
	}
	var dom *Candidate
	switch len(res.Candidates) {
	case 1:
		dom, res.Verdict = &res.Candidates[0], "high"
	case 2:
		dom, res.Verdict = &res.Candidates[0], "moderate"
		if res.Candidates[1].Amplitude > dom.Amplitude {
			dom = &res.Candidates[1]
		}
	}
	bin, confidence := 0, 0.0
	if dom != nil {
		bin, confidence = dom.Bin, dom.Confidence
	}
	// Short bursts make a spike train, whose harmonics are as strong as its
	// fundamental: FTIO then reports whichever harmonic noise made highest
	// (half or a third of the period), or, with more than two of them
	// standing out, no period at all. When every candidate belongs to the
	// harmonic series of one fundamental, that fundamental is the period,
	// with the candidates' confidences summed.
	if c, conf, ok := harmonicSeries(res.Candidates, z); ok && c >= opt.MinCycles && (dom == nil || c != dom.Bin) {
		res.Fundamental, res.Verdict = true, "high"
		bin, confidence = c, conf
	}
	return res.withPeriod(coef, bin, confidence)
}

// detectedPeriod finishes the analysis with opt.Outlier's candidates.
func detectedPeriod(res Result, coef []complex128, p, z []float64, opt Options) Result {
	res.Threshold = 0 // a z-score threshold does not apply
	res.Detector = opt.Outlier
	out, conf, err := detect(opt.Outlier, p, res.Fs, res.NSamples, opt.Tol, opt.Seed)
	if err != nil {
		res.Notes = append(res.Notes, err.Error())
		return res
	}
	res.Candidates, res.Outliers = detectedCandidates(out, conf, p, z, res.Fs, res.NSamples, opt.MinCycles)
	var dom *Candidate
	switch len(res.Candidates) {
	case 1:
		dom, res.Verdict = &res.Candidates[0], "high"
	case 2:
		dom, res.Verdict = &res.Candidates[0], "moderate"
		if res.Candidates[1].Amplitude > dom.Amplitude {
			dom = &res.Candidates[1]
		}
	default:
		return res
	}
	return res.withPeriod(coef, dom.Bin, dom.Confidence)
}

// withPeriod sets bin as the period, with its confidence, and the figures
// that follow from it.
func (res Result) withPeriod(coef []complex128, bin int, confidence float64) Result {
	if bin == 0 {
		return res
	}
	x, t0, fs, n := res.Signal, res.TStart, res.Fs, res.NSamples
	f := float64(bin) * fs / float64(n)
	period := 1 / f
	res.FreqHz, res.PeriodS, res.Confidence = &f, &period, confidence
	// Refer the phase to t = 0 rather than to the first sample.
	res.Phase = cmplx.Phase(coef[bin] * cmplx.Exp(complex(0, -2*math.Pi*f*t0)))
	cosineMetrics(&res, x, t0, fs, f)
	ioMetrics(&res, x, fs, f)
	vpp := volumePerPeriod(x, t0, fs, f, res.Phase)
	res.VolumePerPeriod = &vpp
	return res
}

// fundamentalBin returns the bin of the lowest frequency whose whole
// harmonic series up to the dominant bin stands out (each member within
// its quantisation, at least half as strong as the dominant bin), or the
// dominant bin itself. Short I/O
// bursts make a spike train, whose harmonics are as strong as its
// fundamental: FTIO would then report whichever harmonic noise made
// highest, half or a third of the period. The series test keeps a stray
// low-frequency outlier from passing for a fundamental.
func fundamentalBin(z []float64, dom int) int {
	// A spike train's harmonics are about as strong as one another: each
	// member must reach half the dominant bin's z-score, in a window that
	// stays below the dominant bin.
	strong := math.Max(3, 0.5*z[dom-1])
	outlier := func(k, slack int) bool {
		for j := max(1, k-slack); j <= min(dom-1, k+slack); j++ {
			if z[j-1] > strong {
				return true
			}
		}
		return false
	}
	for m := dom; m >= 2; m-- {
		// The fundamental's frequency is within half a bin of c, so it peaks
		// in bin c itself, and its j-th harmonic peaks within j/2 bins of
		// j*c.
		// Below bin 3 the window would hold fewer than three periods of
		// the fundamental, which then cannot be told from leakage.
		c := int(math.Round(float64(dom) / float64(m)))
		if c < 3 || 2*absInt(dom-m*c) > m+1 {
			continue
		}
		series := true
		for j := 1; j < m && series; j++ {
			series = outlier(j*c, j/2)
		}
		if series {
			return c
		}
	}
	return dom
}

// harmonicSeries reports the fundamental bin when every candidate is a
// harmonic of the fundamental that fundamentalBin finds below the
// strongest one, with the sum of their confidences.
func harmonicSeries(cands []Candidate, z []float64) (int, float64, bool) {
	if len(cands) == 0 {
		return 0, 0, false
	}
	strongest := cands[0]
	for _, c := range cands[1:] {
		if c.Amplitude > strongest.Amplitude {
			strongest = c
		}
	}
	f := fundamentalBin(z, strongest.Bin)
	conf := 0.0
	for _, c := range cands {
		m := int(math.Round(float64(c.Bin) / float64(f)))
		if m < 1 || 2*absInt(c.Bin-m*f) > m+1 {
			return 0, 0, false
		}
		conf += c.Confidence
	}
	return f, math.Min(conf, 1), true
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func meanStd(p []float64) (float64, float64) {
	if len(p) == 0 {
		return 0, 0
	}
	var m float64
	for _, v := range p {
		m += v
	}
	m /= float64(len(p))
	var s float64
	for _, v := range p {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(p)))
}

// rpde is 1 minus the spectral entropy of p normalised by its maximum,
// log(len(p)): 1 for a single spectral line, 0 for white noise.
func rpde(p []float64) float64 {
	if len(p) < 2 {
		return 0
	}
	var h float64
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return 1 - h/math.Log(float64(len(p)))
}

// flatness is the geometric over the arithmetic mean of the spectrum: 1 for
// white noise, near 0 for a line spectrum.
func flatness(p []float64) float64 {
	if len(p) == 0 {
		return 0
	}
	var logSum, sum float64
	for _, v := range p {
		if v <= 0 {
			return 0
		}
		logSum += math.Log(v)
		sum += v
	}
	return math.Exp(logSum/float64(len(p))) / (sum / float64(len(p)))
}

// cosineMetrics correlates the signal with the dominant cosine, over the
// whole signal and per whole period window.
func cosineMetrics(res *Result, x []float64, t0, fs, f float64) {
	c := make([]float64, len(x))
	for i := range c {
		c[i] = math.Cos(2*math.Pi*f*(t0+float64(i)/fs) + res.Phase)
	}
	if r, ok := pearson(x, c); ok {
		res.Correlation = &r
	}
	per := fs / f
	for w := 0; ; w++ {
		lo, hi := int(math.Round(float64(w)*per)), int(math.Round(float64(w+1)*per))
		if hi > len(x) || hi-lo < 2 {
			break
		}
		r, _ := pearson(x[lo:hi], c[lo:hi])
		res.PeriodCorrelation = append(res.PeriodCorrelation, r)
	}
}

// volumePerPeriod is the median of the bytes in each period of the
// signal x (bytes/s per sample), the periods cut where the cosine of
// frequency f and phase phase (referred to t = 0) is lowest: a periodic
// job's I/O phases sit at its peaks, so every cut falls between two
// phases and each period holds one phase whole, the partial periods at
// the ends included.
func volumePerPeriod(x []float64, t0, fs, f, phase float64) float64 {
	return volumeBetweenTroughs(x, t0, fs, f, phase, 1)
}

// Lengthen makes the period m times the one the spectrum found, as when
// the time domain shows the signal repeating at m of FTIO's periods and
// not at one (FTIO picked a harmonic of a burst train): the period, the
// frequency and the volume per period follow. The volume's windows are m
// of the dominant cosine's periods long and still start at one of its
// troughs, so each holds one burst whole.
func (r *Result) Lengthen(m int) {
	if m <= 1 || r.PeriodS == nil || r.FreqHz == nil {
		return
	}
	f := *r.FreqHz
	period, freq := *r.PeriodS*float64(m), f/float64(m)
	r.PeriodS, r.FreqHz = &period, &freq
	if r.VolumePerPeriod != nil && len(r.Signal) > 0 && r.Fs > 0 {
		v := volumeBetweenTroughs(r.Signal, r.TStart, r.Fs, f, r.Phase, m)
		r.VolumePerPeriod = &v
	}
}

// volumeBetweenTroughs is the median of the bytes in windows of the
// given number of periods of the cosine of frequency f and phase, cut at
// its troughs.
func volumeBetweenTroughs(x []float64, t0, fs, f, phase float64, periods int) float64 {
	per := fs / f * float64(periods)
	// The cosine's trough is at 2πf·t + phase = π (mod 2π).
	trough := (math.Pi - phase) / (2 * math.Pi * f)
	first := math.Mod((trough-t0)*fs, per)
	if first < 0 {
		first += per
	}
	var vols []float64
	for lo := first - per; lo < float64(len(x)); lo += per {
		a, b := max(0, int(math.Round(lo))), min(len(x), int(math.Round(lo+per)))
		if b <= a {
			continue
		}
		var v float64
		for _, y := range x[a:b] {
			v += y / fs
		}
		vols = append(vols, v)
	}
	if len(vols) == 0 {
		return 0
	}
	sort.Float64s(vols)
	m := len(vols) / 2
	if len(vols)%2 == 0 {
		return (vols[m-1] + vols[m]) / 2
	}
	return vols[m]
}

func pearson(a, b []float64) (float64, bool) {
	ma, sa := meanStd(a)
	mb, sb := meanStd(b)
	if sa == 0 || sb == 0 {
		return 0, false
	}
	var s float64
	for i := range a {
		s += (a[i] - ma) * (b[i] - mb)
	}
	return s / float64(len(a)) / (sa * sb), true
}

// ioMetrics computes the paper's section 3.3 characterisation with the
// sample interval as the time unit. A time unit has substantial I/O when
// its volume exceeds the trace's mean volume per unit. R_IO is the share of
// such units, B_IO their mean bandwidth. The trace is cut into whole
// periods; sigma_vol is the population standard deviation of each
// period's volume divided by the largest one, sigma_time that of the share
// of each period's units with substantial I/O. The volume per period is
// B_IO * R_IO / f, and the periodicity score 1 - (sigma_vol + sigma_time) / 2.
func ioMetrics(res *Result, x []float64, fs, f float64) {
	var total float64
	for _, v := range x {
		total += v
	}
	threshold := total / float64(len(x))
	var subst int
	var substBW float64
	for _, v := range x {
		if v > threshold {
			subst++
			substBW += v
		}
	}
	rio := float64(subst) / float64(len(x))
	bio := 0.0
	if subst > 0 {
		bio = substBW / float64(subst)
	}
	vpp := bio * rio / f
	res.RIO, res.BIO, res.FTIOVolumePerPeriod = &rio, &bio, &vpp

	per := fs / f
	var vols, shares []float64
	for w := 0; ; w++ {
		lo, hi := int(math.Round(float64(w)*per)), int(math.Round(float64(w+1)*per))
		if hi > len(x) || hi <= lo {
			break
		}
		var vol float64
		var busy int
		for _, v := range x[lo:hi] {
			vol += v / fs
			if v > threshold {
				busy++
			}
		}
		vols = append(vols, vol)
		shares = append(shares, float64(busy)/float64(hi-lo))
	}
	if len(vols) == 0 {
		return
	}
	maxVol := 0.0
	for _, v := range vols {
		maxVol = math.Max(maxVol, v)
	}
	if maxVol > 0 {
		for i := range vols {
			vols[i] /= maxVol
		}
	}
	_, sv := meanStd(vols)
	_, st := meanStd(shares)
	score := 1 - (sv+st)/2
	res.SigmaVol, res.SigmaTime, res.PeriodicityScore = &sv, &st, &score
}

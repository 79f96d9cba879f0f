package ftio

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
)

// A period FTIO reports is tested against surrogate signals made of the
// job's own I/O bursts placed at random times (TestPeriod). FTIO's
// z-score only says that a bin stands out of the rest of the spectrum,
// and a few bursts at random times always make some bin stand out: a
// Python pool's workers writing without rhythm got "confidence 0.57
// (high)". The question a user asks is whether this job's bursts, of
// these sizes and durations, came at a rhythm, so the null model keeps
// the bursts and takes the rhythm away: bursts are shuffled and the idle
// time between them cut at random (uniform spacings, the gaps of bursts
// at independent random times). Phase randomisation, the other classical
// surrogate, keeps the power spectrum and so the very peak under test.

// Significance levels and settings of TestPeriod.
const (
	// Alpha is the p-value at or below which a period is significant.
	Alpha = 0.05
	// Surrogates is how many surrogate signals a test draws: 199 resolve
	// p-values to 0.005.
	Surrogates = 199
	// samplesPerPeriod is the resolution the test averages a signal down
	// to, in samples per FTIO's period: a line is then tested against
	// the fewest rival frequencies (the surrogates' strongest bin over
	// all of them is the null), 8 bins below the Nyquist frequency.
	samplesPerPeriod = 16
	// minTestSamples and maxTestSamples bound the test's signal; without
	// a period from FTIO it is defaultTestSamples long.
	minTestSamples     = 128
	maxTestSamples     = 1 << 13
	defaultTestSamples = 512
	// Agreement is how close (relatively) FTIO's period and the test's
	// must be for a "high" verdict.
	Agreement = 0.05
	// MinAutocorrelation is the autocorrelation at the period (the signal
	// smoothed over a quarter of it, the best lag within 5%) that the
	// time domain must show for a "high" verdict.
	MinAutocorrelation = 0.2
	// seed makes the surrogates, hence the p-values, reproducible.
	seed = 0x10f7e57
)

// Significance is the outcome of TestPeriod.
type Significance struct {
	// PeriodS is the period of the strongest spectral line of the signal
	// at the test's resolution, refined between bins.
	PeriodS float64 `json:"period_s"`
	// Share is that line's share of the signal's power (the strongest of
	// its bin and its neighbours), the test statistic.
	Share float64 `json:"power_share"`
	// PValue is the share of surrogates (the observed signal counted
	// among them) whose strongest line holds at least as much.
	PValue     float64 `json:"p_value"`
	Surrogates int     `json:"surrogates"`
	// Samples is the length of the signal tested (averaged down).
	Samples int `json:"samples"`
	// Bursts is how many I/O bursts (runs of samples above the mean) the
	// surrogates shuffle.
	Bursts int `json:"bursts"`
	// Autocorrelation is that of the signal, smoothed over a quarter of
	// the period, at the period (FTIO's when it agrees, else PeriodS; the
	// best lag within 5%; null when the signal holds fewer than two
	// periods).
	Autocorrelation *float64 `json:"autocorrelation"`
	// Agrees says whether FTIO's period is within Agreement of PeriodS
	// or of one of its first 8 multiples (Harmonic: which one; the line
	// is then FTIO's period's harmonic).
	Agrees   bool `json:"agrees"`
	Harmonic int  `json:"harmonic,omitempty"`
	// Verdict is "high" (significant, FTIO's spectrum finds the same
	// period and the time domain repeats at it), "moderate" (significant
	// otherwise: PeriodS is the period reported), "low" (the bursts'
	// rhythm is significant but they keep it too loosely to act on:
	// coherence below MinCoherence) or "not significant".
	Verdict string `json:"verdict"`
	// Reason explains a verdict other than high.
	Reason string `json:"reason,omitempty"`
	// Method is the test the verdict rests on: "bursts" (TestBursts, for
	// signals of separate bursts) or "spectrum" (the strongest spectral
	// line against surrogates, for the others).
	Method string `json:"method"`
	// BurstTest is the burst test's outcome, whether it applied or not.
	BurstTest *BurstTest `json:"burst_test,omitempty"`
}

// MinCoherence is the phase coherence of the burst starts at the period
// that a "moderate" or "high" verdict needs: bursts that keep the period
// within about a fifth of it (uniform jitter of 0.3 periods either way,
// or a normal one of 0.19, gives 0.5). A rhythm looser than that can be
// significant over many bursts and still tell a user nothing about when
// the next one comes.
const MinCoherence = 0.5

// TestPeriod tests whether x (bandwidth samples at fs Hz) has a spectral
// line its own bursts placed at random would not make, and compares it
// with FTIO's period ftioS (0: none). The signal is averaged down to
// about samplesPerPeriod samples per FTIO's period; the statistic is the
// share of the power in the strongest bin (with its neighbours, as a
// jittered period smears), over every frequency from 3 cycles in the
// window to a quarter of the sampling frequency; its null distribution
// comes from Surrogates signals of x's own bursts in random order at
// random times, drawn from a fixed seed, so that a signal always gets
// the same p-value.
//
// When x is a train of separate bursts (TestBursts applies), the verdict
// rests on the burst test instead: PeriodS is the period the starts line
// up on, PValue the burst test's, and the spectral line's figures are
// replaced.
func TestPeriod(x []float64, fs, ftioS float64) Significance {
	s := testSpectrum(x, fs, ftioS)
	b := TestBursts(x, fs)
	s.BurstTest = &b
	if b.Applies {
		s.judgeBursts(x, fs, ftioS)
	}
	return s
}

// judgeBursts sets the verdict from s.BurstTest, which applied.
func (s *Significance) judgeBursts(x []float64, fs, ftioS float64) {
	b := s.BurstTest
	s.Method, s.PeriodS, s.PValue, s.Surrogates = "bursts", b.PeriodS, b.PValue, b.Surrogates
	s.Share, s.Harmonic, s.Reason = 0, 0, ""
	s.Agrees = ftioS > 0 && math.Abs(ftioS-b.PeriodS) <= Agreement*b.PeriodS
	s.Autocorrelation = nil
	if r := autocorrelationAt(x, b.PeriodS*fs); !math.IsNaN(r) {
		s.Autocorrelation = &r
	}
	switch {
	case b.PValue > Alpha:
		s.Verdict, s.Reason = "not significant", fmt.Sprintf("p = %.3g > %g: the signal's %d bursts placed at random times line up as well on some period (p = %.3g) or come at intervals as alike (p = %.3g), before doubling for the two tests", b.PValue, Alpha, b.Bursts, b.CoherencePValue, b.SpreadPValue)
	case !b.Found() && b.TempoPValue != nil && *b.TempoPValue > Alpha && b.Coherence < MinCoherence:
		s.Verdict, s.Reason = "low", fmt.Sprintf("significant (p = %.3g), but the intervals are alike only to their neighbours (spread %.2f, %.2f over the run's median > %g), and the same intervals in random order are as alike (p = %.3g): no change of tempo is shown", b.PValue, b.Spread, b.SteadySpread, MaxSpread, *b.TempoPValue)
	case !b.Found() && 2*b.CoherencePValue <= Alpha && b.Coherence >= MinCoherence && b.CyclesPerInterval > MaxCyclesPerInterval:
		s.Verdict, s.Reason = "low", fmt.Sprintf("significant (p = %.3g), but the starts keep a phase only on a period (%.4g s) that the median interval between them spans %.1f times (> %g): the bursts skip most of its cycles, and their intervals keep no rhythm either (spread %.2f, p = %.3g)", b.PValue, b.PeriodS, b.CyclesPerInterval, MaxCyclesPerInterval, b.Spread, b.SpreadPValue)
	case !b.Found():
		s.Verdict, s.Reason = "low", fmt.Sprintf("significant (p = %.3g), but the bursts keep the rhythm loosely (phase coherence %.2f < %g, interval spread %.2f > %g)", b.PValue, b.Coherence, MinCoherence, b.Spread, MaxSpread)
	case b.Drifts:
		s.Verdict, s.Reason = "moderate", fmt.Sprintf("significant (p = %.3g), but the interval drifts from %.4g s to %.4g s over the run (more than %gx): the period is the mean interval", b.PValue, b.TempoS[0], b.TempoS[1], MaxTempoDrift)
	case !s.Agrees:
		s.Verdict, s.Reason = "moderate", fmt.Sprintf("significant (p = %.3g), but FTIO's spectrum finds another period", b.PValue)
	case s.Autocorrelation == nil || *s.Autocorrelation < MinAutocorrelation:
		s.Verdict, s.Reason = "moderate", fmt.Sprintf("significant (p = %.3g), but the signal repeats poorly at the period (autocorrelation below %g)", b.PValue, MinAutocorrelation)
	default:
		s.Verdict = "high"
	}
}

// testSpectrum is TestPeriod's spectral test.
func testSpectrum(x []float64, fs, ftioS float64) Significance {
	target := defaultTestSamples
	if span := float64(len(x)) / fs; ftioS > 0 {
		target = int(math.Round(samplesPerPeriod * span / ftioS))
	}
	target = max(minTestSamples, min(maxTestSamples, target))
	if factor := len(x) / target; factor > 1 {
		y := make([]float64, len(x)/factor)
		for i := range y {
			for _, v := range x[i*factor : (i+1)*factor] {
				y[i] += v / float64(factor)
			}
		}
		x, fs = y, fs/float64(factor)
	}
	n := len(x)
	s := Significance{Surrogates: Surrogates, Verdict: "not significant", PValue: 1, Samples: n, Method: "spectrum"}
	bursts, gaps := segment(x)
	s.Bursts = len(bursts)
	if n < 16 {
		s.Reason = fmt.Sprintf("%d samples: too few to test", n)
		return s
	}
	if len(bursts) < 3 {
		s.Reason = fmt.Sprintf("%d I/O bursts: too few to show a rhythm", len(bursts))
		return s
	}
	var bin int
	s.Share, bin = strongestLine(spectrumShares(x))
	if bin == 0 {
		s.Reason = "a constant signal"
		return s
	}
	s.PeriodS = float64(n) / fs / refineBin(x, bin)
	// A train of short bursts puts as much power in its harmonics as in
	// its fundamental: the line may be a harmonic of FTIO's period (whose
	// ladder and time-domain check chose the fundamental).
	for m := 1; m <= 8 && ftioS > 0; m++ {
		if math.Abs(ftioS-float64(m)*s.PeriodS) <= Agreement*ftioS {
			s.Agrees, s.Harmonic = true, m
			break
		}
	}
	at := s.PeriodS
	if s.Agrees {
		at = ftioS
	}
	r := autocorrelationAt(x, at*fs)
	if s.Harmonic > 1 {
		// FTIO's period or the line's? The signal repeats at both when
		// the line's is the period; it is then the one, if it repeats
		// within 60% as well (as job's check of multiples decides).
		if rl := autocorrelationAt(x, s.PeriodS*fs); rl >= MinAutocorrelation && rl >= 0.6*r {
			s.Agrees, s.Harmonic, r = false, 0, rl
		}
	}
	if !math.IsNaN(r) {
		s.Autocorrelation = &r
	}
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	surrogate := make([]float64, n)
	exceed := 0
	for i := 0; i < Surrogates; i++ {
		shuffle(surrogate, x, bursts, gaps, rng)
		if share, _ := strongestLine(spectrumShares(surrogate)); share >= s.Share {
			exceed++
		}
	}
	s.PValue = float64(exceed+1) / float64(Surrogates+1)
	switch {
	case s.PValue > Alpha:
		s.Reason = fmt.Sprintf("p = %.3g > %g: the signal's bursts at random times make as strong a line (%.3g of the power) in %d of %d surrogates", s.PValue, Alpha, s.Share, exceed, Surrogates)
	case !s.Agrees:
		s.Verdict, s.Reason = "moderate", fmt.Sprintf("significant (p = %.3g), but FTIO's spectrum finds another period", s.PValue)
	case s.Autocorrelation == nil || *s.Autocorrelation < MinAutocorrelation:
		s.Verdict, s.Reason = "moderate", fmt.Sprintf("significant (p = %.3g), but the signal repeats poorly at the period (autocorrelation below %g)", s.PValue, MinAutocorrelation)
	default:
		s.Verdict = "high"
	}
	return s
}

// spectrumShares returns each bin's share of the power of x outside the
// mean, bins 1..len(x)/2 at index k-1.
func spectrumShares(x []float64) []float64 {
	coef := realDFT(x)
	p := make([]float64, len(x)/2)
	var total float64
	for k := range p {
		a := coef[k+1]
		p[k] = real(a)*real(a) + imag(a)*imag(a)
		total += p[k]
	}
	if total > 0 {
		for k := range p {
			p[k] /= total
		}
	}
	return p
}

// strongestLine returns the largest share of power in a bin plus its
// stronger neighbour, over bins 3 (three cycles in the window: a job's
// start and end make bin 2) to len(p)/2 (a quarter of the sampling
// frequency), and the bin.
func strongestLine(p []float64) (float64, int) {
	best, bin := 0.0, 0
	for k := 3; k <= len(p)/2; k++ {
		v := p[k-1] + math.Max(p[k-2], p[k])
		if v > best {
			best, bin = v, k
		}
	}
	return best, bin
}

// refineBin returns the frequency, in bins (fractional), of the largest
// periodogram value of x within one bin of bin, on a grid of 1/32 bin.
func refineBin(x []float64, bin int) float64 {
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	n := float64(len(x))
	best, at := -1.0, float64(bin)
	for j := -32; j <= 32; j++ {
		k := float64(bin) + float64(j)/32
		var re, im float64
		for i, v := range x {
			a := 2 * math.Pi * k * float64(i) / n
			re += (v - mean) * math.Cos(a)
			im -= (v - mean) * math.Sin(a)
		}
		if p := re*re + im*im; p > best {
			best, at = p, k
		}
	}
	return at
}

// autocorrelationAt is the autocorrelation of x, smoothed over a quarter
// of lag samples, at the best lag within 5% of lag (NaN when the signal
// holds fewer than two lags or is constant).
func autocorrelationAt(x []float64, lag float64) float64 {
	return autocorrelationSmoothed(x, lag, max(1, int(math.Round(lag/4))))
}

// autocorrelationSmoothed is autocorrelationAt with x smoothed over w
// samples: the largest autocorrelation within 5% of the lag.
func autocorrelationSmoothed(x []float64, lag float64, w int) float64 {
	lo, hi := max(1, int(math.Floor(lag*0.95))), int(math.Ceil(lag*1.05))
	return Smooth(x, w).MaxAutocorrelation(lo, hi)
}

// Smoothed is a signal smoothed by a moving average and centred on its
// mean, for autocorrelations that a burst's jitter within the window does
// not spoil.
type Smoothed struct {
	s      []float64
	energy float64
}

// Smooth smooths x over w samples (w >= 1).
func Smooth(x []float64, w int) Smoothed {
	n := len(x)
	s := make([]float64, n)
	var acc, mean float64
	for i := range x {
		acc += x[i]
		if i >= w {
			acc -= x[i-w]
		}
		s[i] = acc / float64(w)
		mean += s[i]
	}
	mean /= float64(n)
	var energy float64
	for i := range s {
		s[i] -= mean
		energy += s[i] * s[i]
	}
	return Smoothed{s, energy}
}

// MaxAutocorrelation is the largest unbiased autocorrelation (the
// overlap shrinks with the lag) at a lag from lo to hi samples; NaN when
// the signal is flat, lo < 1 or hi is past half the signal.
func (sm Smoothed) MaxAutocorrelation(lo, hi int) float64 {
	s, n := sm.s, len(sm.s)
	if sm.energy == 0 || lo < 1 || hi > n/2 || lo > hi {
		return math.NaN()
	}
	best := math.Inf(-1)
	for tau := lo; tau <= hi; tau++ {
		var c float64
		for i := 0; i+tau < n; i++ {
			c += s[i] * s[i+tau]
		}
		best = math.Max(best, c/sm.energy*float64(n)/float64(n-tau))
	}
	return best
}

// run is a stretch of samples [start, end).
type run struct{ start, end int }

// segment cuts x into bursts (maximal runs of samples above the mean)
// and the gaps between them.
func segment(x []float64) (bursts []run, gaps []run) {
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	start, above := 0, len(x) > 0 && x[0] > mean
	for i := 1; i <= len(x); i++ {
		if i < len(x) && (x[i] > mean) == above {
			continue
		}
		if above {
			bursts = append(bursts, run{start, i})
		} else {
			gaps = append(gaps, run{start, i})
		}
		if i < len(x) {
			start, above = i, x[i] > mean
		}
	}
	return bursts, gaps
}

// shuffle fills out with x's bursts in random order, separated by gaps of
// random lengths (a uniform composition of the idle samples, as the gaps
// of bursts at independent random times), the gaps' own samples laid
// down in their original order.
func shuffle(out, x []float64, bursts, gaps []run, rng *rand.Rand) {
	idle := 0
	for _, g := range gaps {
		idle += g.end - g.start
	}
	nb := len(bursts)
	// Stars and bars: nb cut positions among idle+nb slots.
	slots := idle + nb
	cuts := make([]bool, slots)
	for placed := 0; placed < nb; {
		if i := rng.IntN(slots); !cuts[i] {
			cuts[i], placed = true, placed+1
		}
	}
	order := rng.Perm(nb)
	// The idle samples in their order, read through gi/gj.
	gi, gj := 0, 0
	nextIdle := func() float64 {
		for gj >= gaps[gi].end-gaps[gi].start {
			gi, gj = gi+1, 0
		}
		v := x[gaps[gi].start+gj]
		gj++
		return v
	}
	o, b := 0, 0
	for _, cut := range cuts {
		if !cut {
			out[o] = nextIdle()
			o++
			continue
		}
		r := bursts[order[b]]
		b++
		o += copy(out[o:], x[r.start:r.end])
	}
}

// ApplySignificance records the test of res's period in res: FTIO's
// verdict moves to FTIOVerdict and Verdict becomes the test's. A period
// that is not significant stays, for the user to see, under the verdict
// "not significant". Unless keepPeriod, a significant line that FTIO's
// period does not explain replaces it (FTIO's kept in FTIOPeriodS), with
// the figures that depend on the period.
func (res *Result) ApplySignificance(s Significance, keepPeriod bool) {
	res.Significance = &s
	res.FTIOVerdict = res.Verdict
	res.Verdict = s.Verdict
	if b := s.BurstTest; s.Method == "bursts" && b != nil && len(b.Phases) > 0 && len(res.Phases) == 0 &&
		(s.Verdict == "high" || s.Verdict == "moderate") {
		// A drifting tempo's phases, unless the spectra found some.
		res.Phases = make([]Phase, len(b.Phases))
		for i, ph := range b.Phases {
			ph.StartS += res.TStart
			ph.EndS += res.TStart
			res.Phases[i] = ph
		}
	}
	if s.Verdict != "moderate" || s.Agrees || keepPeriod {
		return
	}
	res.FTIOPeriodS = res.PeriodS
	p, f := s.PeriodS, 1/s.PeriodS
	res.PeriodS, res.FreqHz = &p, &f
	res.periodMetrics()
}

// periodMetrics recomputes the figures that depend on the period (the
// dominant cosine's phase and correlation, the section 3.3
// characterisation, the volume per period) for res.FreqHz.
func (res *Result) periodMetrics() {
	x, fs, f := res.Signal, res.Fs, *res.FreqHz
	if len(x) == 0 {
		return
	}
	var c complex128
	for i, v := range x {
		t := res.TStart + float64(i)/fs
		c += complex(v, 0) * cmplx.Exp(complex(0, -2*math.Pi*f*t))
	}
	res.Phase = cmplx.Phase(c)
	res.Correlation, res.PeriodCorrelation = nil, nil
	cosineMetrics(res, x, res.TStart, fs, f)
	ioMetrics(res, x, fs, f)
	vpp := volumePerPeriod(x, res.TStart, fs, f, res.Phase)
	res.VolumePerPeriod = &vpp
}

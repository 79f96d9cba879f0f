package ftio

import (
	"fmt"
	"math"
	"math/bits"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/dsp/fourier"
)

// A job that checkpoints every T seconds writes in short bursts with long
// idle stretches between them. Its spectrum spreads the rhythm over the
// harmonics of 1/T (a train of narrow pulses has them all about equally
// strong), a jitter of a tenth of the period already smears the higher
// ones, and the strongest single bin then holds little of the power: the
// spectral test (TestPeriod) misses most such jobs. The rhythm is plain
// in the times the bursts start, though, in one of two ways:
//
//   - a job that checkpoints on a clock (every T s of wall time) starts
//     its bursts at one phase of the period all run long: their phase
//     coherence (the Rayleigh statistic of circular statistics, used by
//     astronomers to find the period of photon arrival times) is high at
//     T, however much each burst jitters about its deadline;
//   - a job that checkpoints every N steps of its own work keeps the
//     interval between bursts, but a slower stretch of steps shifts every
//     later burst: the phase drifts, the coherence over the whole run is
//     lost, while the intervals stay alike (a small spread). They stay
//     alike to their neighbours, that is: when the machine's load changes,
//     the steps, hence the intervals, slow down or speed up for a while
//     (a LAMMPS run dumping every 50 steps went from 0.25 s to 0.09 s
//     and back to 0.22 s between dumps as other work came and went). The
//     spread is therefore taken of each interval over the median of the
//     intervals around it (the local tempo), which a jitter spreads as
//     before and a change of tempo does not; the period reported is the
//     mean interval, with the range of the local tempo beside it.
//
// TestBursts measures both, each against the null model TestPeriod uses:
// the same bursts, of the same durations, in random order at random times
// (a uniform composition of the idle time), with a Bonferroni correction
// for testing twice. Significance alone is not enough: a rhythm must also
// be tight enough to tell when the next burst comes (MinCoherence,
// MaxSpread).

// Settings of TestBursts.
const (
	// MinBursts is how many bursts the burst test needs: three cycles
	// and a few to spare, as fewer line up by chance too often to tell.
	MinBursts = 6
	// MaxDutyCycle is the largest share of the bursts' extent they may
	// cover for the burst test to apply. The test is for trains of
	// narrow bursts, whose fundamental holds a small share of their
	// power (2·sin²(πd)/(π²·d·(1-d)) for a duty cycle d: 0.10 at 5%);
	// from a quarter on it holds more than half, and the spectral test
	// finds it, while the intervals between starts of bursts that fill
	// much of the time are set by their durations, not by a rhythm.
	MaxDutyCycle = 0.25
	// mergeRatio is how much longer than the next shorter one a pause
	// must be to separate bursts, when pauses within a burst (a write,
	// an fsync, a write) are to be told from pauses between them.
	mergeRatio = 3
	// oversample is how many frequencies the coherence is computed at
	// per resolvable frequency (1 / the bursts' extent).
	oversample = 8
	// fundamentalShare: of the frequencies where the starts cohere, the
	// period is the lowest whose coherence reaches this share of the
	// best: a train of bursts every T also lines up at T/2, T/3, ...,
	// a little less well the more the bursts jitter.
	fundamentalShare = 0.7
	// stopAfter ends the drawing of surrogates once this many reached
	// each observed statistic (the p-values are then well above Alpha;
	// Besag and Clifford's sequential Monte Carlo test).
	stopAfter = 10
	// MaxSpread is the largest interquartile range of the intervals
	// between bursts, each over its local tempo, over their median, that
	// a rhythm of intervals may have: the middle half of the intervals
	// within a band half the median wide (a normal spread of 0.37 of the
	// mean; bursts at random times have 1.6).
	MaxSpread = 0.5
	// tempoWindow is the span, in intervals, of an interval's local tempo
	// (the median of the others in it): five, so that one burst early or
	// late (an interval long, the next short) does not move it, and a
	// change of tempo is followed within three intervals.
	tempoWindow = 5
	// MaxTempoDrift is the ratio of the slowest local tempo to the
	// fastest above which a rhythm of intervals is reported as drifting:
	// its period, the mean interval, then tells little of when the next
	// burst comes, and the verdict is at most "moderate".
	MaxTempoDrift = 1.5
	// MaxCyclesPerInterval is the most cycles of a clock the median
	// interval between bursts may span for the clock to be taken for the
	// job's rhythm: a job that checkpoints every T s writes in most
	// cycles, its median interval one cycle long. The coherence scan
	// reaches periods down to half the mean spacing of the bursts (to
	// weigh harmonics), and bursts at random times line up by chance on
	// a period there as well as anywhere: awkrand4 (gawk writing after
	// random sleeps, median interval 0.73 s) cohered on 0.345 s, past
	// 99% of its own intervals shuffled, with its median interval two
	// cycles long. Half way between one cycle and two.
	MaxCyclesPerInterval = 1.5
)

// BurstTest is the outcome of TestBursts.
type BurstTest struct {
	// Bursts is how many bursts the signal holds, after joining the ones
	// separated by less than MergeGapS.
	Bursts    int     `json:"bursts"`
	MergeGapS float64 `json:"merge_gap_s"`
	// DutyCycle is the share of the bursts' extent they cover.
	DutyCycle float64 `json:"duty_cycle"`
	// PeriodS is the period found (0 when the test did not run): by
	// Rhythm "clock", the one the burst starts line up on best (the
	// lowest of the nearly best), fitted by least squares to the starts,
	// unless the intervals are alike too (then as for "intervals");
	// otherwise the time from the first to the last burst over the
	// cycles between them, each interval counted as the whole number of
	// median intervals nearest to it (a burst split in two, or one
	// missing, does not change it).
	PeriodS float64 `json:"period_s"`
	// Rhythm is "clock" when the starts keep a phase (significant, and
	// Coherence at least MinCoherence), "intervals" when the intervals
	// between them are alike (significant, Spread at most MaxSpread),
	// or "" when neither.
	Rhythm string `json:"rhythm"`
	// Coherence is the Rayleigh statistic of the starts' phases at the
	// period they line up on best, from 0 (spread evenly) to 1 (all at
	// one phase); CoherencePValue its test's p-value.
	Coherence       float64 `json:"coherence"`
	CoherencePValue float64 `json:"coherence_p_value"`
	// Spread is the interquartile range of the intervals between burst
	// starts over their median, the smaller of two: each interval over
	// its local tempo (the median of its tempoWindow-1 nearest
	// neighbours), or over the run's median; SpreadPValue the share of
	// surrogates (the observed counted among them) whose spread is as
	// small.
	Spread       float64 `json:"interval_spread"`
	SpreadPValue float64 `json:"spread_p_value"`
	// TempoS is the fastest and the slowest local tempo, in seconds (the
	// interval a rhythm of intervals keeps locally); Drifts says their
	// ratio exceeds MaxTempoDrift.
	TempoS [2]float64 `json:"tempo_s"`
	Drifts bool       `json:"tempo_drifts,omitempty"`
	// CyclesPerInterval is the median interval between bursts over the
	// clock's period (PeriodS when the test ran): a clock is the rhythm
	// only up to MaxCyclesPerInterval.
	CyclesPerInterval float64 `json:"cycles_per_interval"`
	// SteadySpread is the interquartile range of the intervals over
	// their median (one tempo for the whole run). When it exceeds
	// MaxSpread and Spread does not, the rhythm rests on the local
	// tempo, and TempoPValue tests that tempo: the share of shuffles of
	// the same intervals whose Spread is as small (nil when not tested).
	// A rhythm of intervals then also needs TempoPValue at most Alpha.
	SteadySpread float64  `json:"steady_spread"`
	TempoPValue  *float64 `json:"tempo_p_value,omitempty"`
	// PauseIdle is the longest stretch without I/O in either direction
	// in the median pause between the bursts, over the pause
	// (JudgeStreaming; nil when not measured).
	PauseIdle *float64 `json:"pause_idle,omitempty"`
	// PValue is the p-value of the rhythm found (or the smaller of the
	// two), doubled for the two tests (Bonferroni).
	PValue     float64 `json:"p_value"`
	Surrogates int     `json:"surrogates"`
	// Clusters is how many clusters the clock's null model moves, each
	// whole: runs of bursts separated by pauses shorter than a quarter
	// of the clock's period (clustersOf). Fewer than Bursts when the
	// job writes in clusters.
	Clusters int `json:"clusters"`
	// Phases are the stretches of a drifting rhythm of intervals at one
	// tempo each (tempoPhases; times from the signal's first sample), nil
	// when the tempo does not drift or changes at no point.
	Phases []Phase `json:"phases,omitempty"`
	// Applies says whether the signal is bursty enough for the test
	// (MinBursts bursts, at most MaxDutyCycle); Reason says why not.
	Applies bool   `json:"applies"`
	Reason  string `json:"reason,omitempty"`
}

// Found reports whether the test applied and found a rhythm.
func (b BurstTest) Found() bool { return b.Rhythm != "" }

// TestBursts tests whether the bursts of x (bandwidth samples at fs Hz)
// start at a rhythm their durations placed at random would not show.
// The surrogates are drawn from a fixed seed, so a signal always gets the
// same p-value.
func TestBursts(x []float64, fs float64) BurstTest {
	b := BurstTest{PValue: 1}
	bursts, joined := burstsOf(x)
	bursts = joinParts(bursts, x)
	b.Bursts = len(bursts)
	b.MergeGapS = float64(joined) / fs
	if len(bursts) < MinBursts {
		b.Reason = fmt.Sprintf("%d bursts: the burst test needs %d", len(bursts), MinBursts)
		return b
	}
	first, extent := bursts[0].start, bursts[len(bursts)-1].end-bursts[0].start
	busy := 0
	durations := make([]int, len(bursts))
	starts := make([]int, len(bursts))
	for i, r := range bursts {
		durations[i] = r.end - r.start
		busy += durations[i]
		starts[i] = r.start - first
	}
	b.DutyCycle = float64(busy) / float64(extent)
	if b.DutyCycle > MaxDutyCycle {
		b.Reason = fmt.Sprintf("the bursts cover %.0f%% of their extent: too busy for the burst test", 100*b.DutyCycle)
		return b
	}
	b.Applies = true
	b.Spread = intervalSpread(starts)
	tempo := localTempo(intervals(starts))
	b.TempoS = [2]float64{slices.Min(tempo) / fs, slices.Max(tempo) / fs}
	co := newCoherence(extent, len(bursts))
	best, lowest := co.scan(starts)
	clockPeriod := fitPeriod(starts, lowest)
	b.Coherence = math.Sqrt(best)
	rng := rand.New(rand.NewPCG(seed, uint64(len(bursts))<<32|uint64(extent)))
	surrogate := make([]int, len(bursts))
	// The clock's null keeps the job's clusters (bursts closer than a
	// quarter of the period found): see clustersOf.
	clusters := clustersOf(bursts, clockPeriod/clusterShare)
	b.Clusters = len(clusters)
	clockSurrogate := surrogate
	if len(clusters) < len(bursts) {
		clockSurrogate = make([]int, len(bursts))
	}
	coherent, regular := 0, 0
	for b.Surrogates < Surrogates && (coherent < stopAfter || regular < stopAfter) {
		randomStarts(surrogate, durations, extent, rng)
		if len(clusters) < len(bursts) {
			randomClusterStarts(clockSurrogate, clusters, extent, rng)
		}
		if s, _ := co.scan(clockSurrogate); s >= best {
			coherent++
		}
		if intervalSpread(surrogate) <= b.Spread {
			regular++
		}
		b.Surrogates++
	}
	b.CoherencePValue = float64(coherent+1) / float64(b.Surrogates+1)
	b.SpreadPValue = float64(regular+1) / float64(b.Surrogates+1)
	b.CyclesPerInterval = middle(intervals(starts)) / clockPeriod
	byClock := 2*b.CoherencePValue <= Alpha && b.Coherence >= MinCoherence && b.CyclesPerInterval <= MaxCyclesPerInterval
	byIntervals := 2*b.SpreadPValue <= Alpha && b.Spread <= MaxSpread
	b.SteadySpread = quartileSpread(intervals(starts))
	if byIntervals && b.SteadySpread > MaxSpread {
		// The intervals keep a rhythm only against their local tempo:
		// the tempo must be more than the chance order of intervals
		// drawn alike.
		p := tempoPValue(intervals(starts), b.Spread, rng)
		b.TempoPValue = &p
		byIntervals = p <= Alpha
	}
	volumes := make([]float64, len(bursts))
	for i, r := range bursts {
		for _, v := range x[r.start:r.end] {
			volumes[i] += v
		}
	}
	switch {
	case byClock:
		b.Rhythm, b.PValue, b.PeriodS = "clock", 2*b.CoherencePValue, clockPeriod/fs
		if byIntervals {
			// The intervals are alike too: their mean over the steady
			// part is the period. The fit's frequency, from a grid,
			// leans towards where the starts cohere best when the
			// tempo wanders (shloop1, a shell loop's sleep plus its
			// checkpoint under load: coherence 0.57, the fit 5.7%
			// long).
			b.PeriodS = cyclePeriod(starts, volumes) / fs
		}
	case byIntervals:
		b.Rhythm, b.PValue, b.PeriodS = "intervals", 2*b.SpreadPValue, cyclePeriod(starts, volumes)/fs
		b.Drifts = b.TempoS[1] > MaxTempoDrift*b.TempoS[0]
		if b.Drifts {
			b.Phases = tempoPhases(starts, volumes, first, len(x), fs, rng)
		}
	default:
		b.PValue, b.PeriodS = 2*math.Min(b.CoherencePValue, b.SpreadPValue), clockPeriod/fs
		if b.SpreadPValue < b.CoherencePValue {
			b.PeriodS = cyclePeriod(starts, volumes) / fs
		}
	}
	b.PValue = math.Min(1, b.PValue)
	return b
}

// burstsOf cuts x into bursts: runs of samples with I/O, joined
// when the pause between them is short. The pauses are sorted, and the
// longest jump between neighbours (by a factor of mergeRatio at least,
// with MinBursts-1 pauses above it) tells the pauses within bursts from
// those between them. It returns the bursts and the longest pause joined
// (0: none), in samples.
func burstsOf(x []float64) ([]run, int) {
	if len(x) == 0 {
		return nil, 0
	}
	raw := activeRuns(x)
	if len(raw) < 2 {
		return raw, 0
	}
	pauses := make([]int, len(raw)-1)
	for i := range pauses {
		pauses[i] = raw[i+1].start - raw[i].end
	}
	sorted := append([]int(nil), pauses...)
	sort.Ints(sorted)
	join, bestRatio := 0, float64(mergeRatio)
	for i := 0; i+MinBursts-1 <= len(sorted)-1; i++ {
		// sorted[i] is the longest pause joined, sorted[i+1:] separate.
		if r := float64(sorted[i+1]) / float64(sorted[i]); r >= bestRatio {
			join, bestRatio = sorted[i], r
		}
	}
	if join == 0 {
		return raw, 0
	}
	out := []run{raw[0]}
	for i, p := range pauses {
		if p <= join {
			out[len(out)-1].end = raw[i+1].end
		} else {
			out = append(out, raw[i+1])
		}
	}
	return out, join
}

// joinParts joins neighbouring bursts that are the parts of one: each
// holds at most splitShare of a whole burst's bytes (the upper quartile
// of the bursts' bytes, as parts may outnumber wholes), together they
// hold a whole one's within splitSum, and the first starts less than the
// median interval between bursts before the last. An MPI job's ranks out
// of step write a checkpoint's shares apart (ior60load: 40 of its 64
// bursts were halves or quarters, 8 to 50 ms apart, with 200 to 300 ms
// between checkpoints), which the pauses alone cannot tell from bursts.
func joinParts(bursts []run, x []float64) []run {
	if len(bursts) < MinBursts {
		return bursts
	}
	vol := make([]float64, len(bursts))
	for i, r := range bursts {
		for _, v := range x[r.start:r.end] {
			vol[i] += v
		}
	}
	sorted := append([]float64(nil), vol...)
	sort.Float64s(sorted)
	whole := sorted[3*(len(sorted)-1)/4]
	starts := make([]int, len(bursts))
	for i, r := range bursts {
		starts[i] = r.start
	}
	gap := middle(intervals(starts))
	var out []run
	for i := 0; i < len(bursts); {
		j, sum := i, 0.0
		for ; j < len(bursts) && vol[j] <= splitShare*whole && bursts[j].start-bursts[i].start < int(gap); j++ {
			sum += vol[j]
			if math.Abs(sum-whole) <= partsSum*whole {
				break
			}
		}
		if j > i && j < len(bursts) && math.Abs(sum-whole) <= partsSum*whole {
			out = append(out, run{bursts[i].start, bursts[j].end})
			i = j + 1
			continue
		}
		out = append(out, bursts[i])
		i++
	}
	return out
}

// coherence computes the phase coherence of burst starts at every
// frequency of a grid of oversample points per resolvable frequency:
// directly, or by one FFT of the train of starts zero-padded to
// oversample times the extent when there are many starts.
type coherence struct {
	size   int // the grid's points per cycle per sample
	lo, hi int // the grid's bins scanned
	n      int // starts
	fft    *fourier.FFT
	train  []float64
	coef   []complex128
	power  []float64
	rot    []complex128
	at     []complex128
}

func newCoherence(extent, n int) *coherence {
	size := 1 << bits.Len(uint(oversample*extent))
	c := &coherence{size: size, n: n}
	// From three cycles in the extent to half the mean spacing of the
	// starts (a period is at least about that spacing; the harmonics
	// past twice the burst rate add only chances).
	c.lo = int(math.Ceil(3 * float64(size) / float64(extent)))
	c.hi = min(size/2, int(math.Floor(2*float64(n-1)*float64(size)/float64(extent))))
	c.power = make([]float64, max(0, c.hi-c.lo+1))
	if direct := float64(len(c.power)) * float64(n); direct > 4*float64(size)*float64(bits.Len(uint(size))) {
		c.fft, c.train = fourier.NewFFT(size), make([]float64, size)
	} else {
		c.rot, c.at = make([]complex128, n), make([]complex128, n)
	}
	return c
}

// scan returns the best squared coherence over the grid and the
// frequency (in cycles per sample) of the lowest whose coherence reaches
// fundamentalShare of the best.
func (c *coherence) scan(starts []int) (float64, float64) {
	norm := float64(c.n * c.n)
	if c.fft != nil {
		for i := range c.train {
			c.train[i] = 0
		}
		for _, s := range starts {
			c.train[s]++
		}
		c.coef = c.fft.Coefficients(c.coef, c.train)
		for k := c.lo; k <= c.hi; k++ {
			a := c.coef[k]
			c.power[k-c.lo] = (real(a)*real(a) + imag(a)*imag(a)) / norm
		}
	} else {
		// Each start's phasor turned by its step from one frequency of
		// the grid to the next.
		for j, s := range starts {
			step := 2 * math.Pi * float64(s) / float64(c.size)
			c.rot[j] = cmplx.Rect(1, step)
			c.at[j] = cmplx.Rect(1, step*float64(c.lo))
		}
		for k := range c.power {
			var sum complex128
			for j := range c.at {
				sum += c.at[j]
				c.at[j] *= c.rot[j]
			}
			c.power[k] = (real(sum)*real(sum) + imag(sum)*imag(sum)) / norm
		}
	}
	best := 0.0
	for _, p := range c.power {
		best = math.Max(best, p)
	}
	if best == 0 {
		return 0, 0
	}
	for k, p := range c.power {
		// The first local maximum high enough.
		if p >= fundamentalShare*best && (k == len(c.power)-1 || p >= c.power[k+1]) {
			return best, float64(k+c.lo) / float64(c.size)
		}
	}
	return best, 0
}

// fitPeriod numbers the starts by the cycle of frequency f (cycles per
// sample) they fall in and fits start = a + period·cycle by least
// squares: the period, in samples.
func fitPeriod(starts []int, f float64) float64 {
	var sc, st, scc, sct float64
	n := float64(len(starts))
	for _, s := range starts {
		c := math.Round(float64(s) * f)
		sc += c
		st += float64(s)
		scc += c * c
		sct += c * float64(s)
	}
	den := n*scc - sc*sc
	if den == 0 {
		return 1 / f
	}
	return (n*sct - sc*st) / den
}

// randomStarts fills out with the starts of bursts of the given durations
// in random order, the first at 0 and the last ending at extent, the idle
// time between them a uniform random composition.
func randomStarts(out, durations []int, extent int, rng *rand.Rand) {
	randomOrder(out, durations, extent, rng)
}

// randomOrder is randomStarts, returning the order in which it laid the
// durations down (out[i] is the start of durations[order[i]]).
func randomOrder(out, durations []int, extent int, rng *rand.Rand) []int {
	n := len(durations)
	idle := extent
	for _, d := range durations {
		idle -= d
	}
	// n-1 inner pauses summing to idle: the spacings of n-2 uniform
	// cut points in [0, idle].
	cuts := make([]int, n-1)
	for i := range n - 2 {
		cuts[i] = rng.IntN(idle + 1)
	}
	cuts[n-2] = idle
	sort.Ints(cuts[:n-2])
	order := rng.Perm(n)
	at, prev := 0, 0
	for i, j := range order {
		out[i] = at
		at += durations[j]
		if i < n-1 {
			at += cuts[i] - prev
			prev = cuts[i]
		}
	}
	return order
}

// clusterShare: bursts whose pause is shorter than the period over
// clusterShare are one cluster for the clock's null model.
const clusterShare = 4

// A cluster is a run of bursts that the clock's null model moves as one:
// its extent (from its first start to its last end) and its bursts'
// starts from its first.
type cluster struct {
	extent  int
	offsets []int
}

// clustersOf groups bursts into clusters: each pause shorter than within
// samples joins its neighbours (within <= 0, or not finite: none joined).
//
// The phase coherence counts every burst as a vote for its phase, and
// bursts a small part of the period apart vote for almost the same one:
// a job that writes in clusters at random times (pycluster3: 1 to 6
// writes 0.01 to 0.15 s apart, the clusters 0.2 to 1.5 s apart) casts
// each cluster's votes together, and its 36 starts cohere at 1.54 s as
// well as no 36 single bursts placed at random do (p = 0.005). What the
// job placed, by its rhythm or at random, are its clusters; so the
// clock's null model places the clusters at random, each kept whole.
// At the period under test, bursts closer than a quarter of it are one
// cycle's I/O (the burst test takes a cycle's I/O to cover at most a
// quarter of its period: MaxDutyCycle), so a job that keeps a clock keeps
// its cycles apart and its null model is unchanged, but for the parts of
// one cycle's I/O, which are kept together as they should be.
func clustersOf(bursts []run, within float64) []cluster {
	var out []cluster
	for i, r := range bursts {
		if i > 0 && within > 0 && !math.IsInf(within, 0) && float64(r.start-bursts[i-1].end) < within {
			c := &out[len(out)-1]
			first := bursts[i-len(c.offsets)].start
			c.offsets = append(c.offsets, r.start-first)
			c.extent = r.end - first
			continue
		}
		out = append(out, cluster{extent: r.end - r.start, offsets: []int{0}})
	}
	return out
}

// randomClusterStarts fills out with the starts of the bursts of the
// clusters placed as randomStarts places bursts (in random order, the
// idle time between them a uniform random composition), each cluster's
// bursts at their offsets from its start.
func randomClusterStarts(out []int, clusters []cluster, extent int, rng *rand.Rand) {
	if len(clusters) < 2 {
		// One cluster fills the extent: nothing to move.
		k := 0
		for _, c := range clusters {
			k += copy(out[k:], c.offsets)
		}
		return
	}
	extents := make([]int, len(clusters))
	for i, c := range clusters {
		extents[i] = c.extent
	}
	at := make([]int, len(clusters))
	order := randomOrder(at, extents, extent, rng)
	k := 0
	for i, j := range order {
		for _, o := range clusters[j].offsets {
			out[k] = at[i] + o
			k++
		}
	}
}

// intervals returns the intervals between consecutive starts.
func intervals(starts []int) []float64 {
	iv := make([]float64, len(starts)-1)
	for i := range iv {
		iv[i] = float64(starts[i+1] - starts[i])
	}
	return iv
}

// localTempo returns, for each interval, the median of its tempoWindow-1
// nearest neighbours (half on each side, moved inwards at the ends; all
// the others when there are fewer). The interval itself is left out: in
// its own window it would pull its ratio to the tempo towards 1, and
// bursts at random times, whose spread over a steady median is 1.6, would
// show about 1.0 (those with a dead time after each burst, 0.5 where the
// steady median gives 0.7: a rhythm); left out, a steady rate's spread is
// what the global median gives.
func localTempo(iv []float64) []float64 {
	out := make([]float64, len(iv))
	k := min(tempoWindow-1, len(iv)-1)
	if k < 1 {
		return append(out[:0], iv...) // a single interval is its own tempo
	}
	win := make([]float64, 0, k)
	for i := range iv {
		lo := min(max(0, i-k/2), len(iv)-1-k)
		win = win[:0]
		for j := lo; len(win) < k; j++ {
			if j != i {
				win = append(win, iv[j])
			}
		}
		out[i] = middle(win)
	}
	return out
}

// middle sorts v and returns its median (the mean of the two middle
// values when their number is even).
func middle(v []float64) float64 {
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// intervalSpread is the interquartile range of the intervals between
// consecutive starts over their median, the smaller of two: each interval
// over its local tempo, or over one tempo for the whole run. A job whose
// tempo changes with the load keeps its intervals alike to their
// neighbours; a steady one keeps them alike to the run's median, where
// the neighbours' median, itself jittered, spreads them more (pystep3,
// Python steps of fixed work: 0.55 over the neighbours, 0.43 over the
// run). Surrogates are measured the same way.
func intervalSpread(starts []int) float64 {
	iv := intervals(starts)
	local := tempoSpread(iv)
	return math.Min(local, quartileSpread(iv))
}

// tempoSpread is the interquartile range of the intervals iv, each over
// its local tempo, over their median. iv is left unchanged.
func tempoSpread(iv []float64) float64 {
	tempo := localTempo(iv)
	ratio := make([]float64, len(iv))
	for i := range iv {
		if tempo[i] <= 0 {
			return math.Inf(1)
		}
		ratio[i] = iv[i] / tempo[i]
	}
	return quartileSpread(ratio)
}

// quartileSpread sorts v and returns its interquartile range over its
// median (+Inf when the median is not positive).
func quartileSpread(v []float64) float64 {
	sort.Float64s(v)
	q := func(p float64) float64 {
		at := p * float64(len(v)-1)
		i := int(at)
		if i+1 >= len(v) {
			return v[len(v)-1]
		}
		return v[i] + (at-float64(i))*(v[i+1]-v[i])
	}
	if m := q(0.5); m > 0 {
		return (q(0.75) - q(0.25)) / m
	}
	return math.Inf(1)
}

// tempoPValue tests whether the local tempo is real: whether the
// intervals iv, each over the median of its neighbours, spread less
// (spread) than the same intervals in random order do. The shuffles keep
// every interval as it was, dead time after each burst included (a shell
// loop's process start-up under load, say, which no interval can be
// shorter than), and take away only the order that a tempo changing with
// the machine's load gives. It returns the share of shuffles (the
// observed counted among them) whose spread is as small, drawn from rng
// until stopAfter reach it or Surrogates are drawn.
func tempoPValue(iv []float64, spread float64, rng *rand.Rand) float64 {
	shuffled := append([]float64(nil), iv...)
	as, drawn := 0, 0
	for drawn < Surrogates && as < stopAfter {
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if tempoSpread(shuffled) <= spread {
			as++
		}
		drawn++
	}
	return float64(as+1) / float64(drawn+1)
}

// cyclePeriod is the time from the first start to the last of the
// rhythm's steady part over the cycles between them, in samples. Each
// interval is measured against the median interval and against its local
// tempo, and is taken for a burst split in two or for missed bursts only
// when both say so: one shorter than half of both starts no new cycle; a
// longer one counts as one cycle, and as m > 1 only from m - 1/4 of both
// on (m - 1 bursts missed). Intervals that keep a rhythm stay within
// about a quarter of their tempo, and one that is merely long must not
// count twice; a stretch of fast steps (half the median) is not taken for
// split bursts, nor one long interval among short neighbours for missed
// ones. Two neighbours that each hold at most splitShare of the median
// burst's bytes (volumes, nil when unknown) and together about one
// (splitSum) are the parts of one burst, however far apart within a cycle
// (the ranks of an MPI job out of step: ior200 wrote a checkpoint's two
// halves 0.13 s apart, 0.55 of its median interval). The steady part
// (steadyIntervals) leaves out a set-up and a wind-down whose bursts
// come at no multiple of the period.
func cyclePeriod(starts []int, volumes []float64) float64 {
	count, from, to, global := cycleCounts(starts, volumes)
	if global <= 0 {
		return 0
	}
	cycles := 0.0
	for _, c := range count[from:to] {
		cycles += c
	}
	if cycles == 0 {
		return global
	}
	return float64(starts[to]-starts[from]) / cycles
}

// cycleCounts returns, for cyclePeriod, the cycles each interval between
// starts counts as, the steady part (intervals from to to), and the median
// interval (global; 0 when not positive, and nothing else is returned).
func cycleCounts(starts []int, volumes []float64) (count []float64, from, to int, global float64) {
	iv := intervals(starts)
	tempo := localTempo(iv)
	global = middle(append([]float64(nil), iv...))
	if global <= 0 {
		return nil, 0, 0, 0
	}
	typical := 0.0
	if len(volumes) == len(starts) {
		typical = middle(append([]float64(nil), volumes...))
	}
	halves := func(i int) bool {
		if typical <= 0 {
			return false
		}
		a, b := volumes[i], volumes[i+1]
		return a <= splitShare*typical && b <= splitShare*typical &&
			math.Abs(a+b-typical) <= splitSum*typical
	}
	// count[i] is the cycles from the last start that began one to
	// starts[i+1] (0: no new cycle), eff[i] that time.
	count = make([]float64, len(iv))
	eff := make([]float64, len(iv))
	last := starts[0]
	for i, s := range starts[1:] {
		d := float64(s - last)
		eff[i] = d
		lo, hi := d/global, d/global
		if tempo[i] > 0 {
			lo, hi = math.Min(lo, d/tempo[i]), math.Max(hi, d/tempo[i])
		}
		if hi < 0.5 || (hi < 1 && halves(i)) {
			continue
		}
		count[i] = math.Max(1, math.Floor(lo+0.25))
		last = s
	}
	from, to = steadyIntervals(eff, count, global)
	return count, from, to, global
}

// A burst split in two, as cyclePeriod tells it by the bytes: each part
// holds at most splitShare of the median burst's, and the two together
// are within splitSum of it.
const (
	splitShare = 0.75
	splitSum   = 0.25
	// partsSum is splitSum for joinParts, which joins bursts before any
	// rhythm is known: the parts must add up to a whole burst closely
	// (a checkpoint's shares do exactly), as bursts of random sizes add
	// up to one within a quarter by chance.
	partsSum = 1.0 / 32
)

// steadyRun is how many intervals in line in a row start (and end) the
// steady part of a rhythm of intervals.
const steadyRun = 3

// steadyIntervals returns the steady part of the intervals iv (each from
// the last start that began a cycle), counted as count cycles each
// (cyclePeriod): from the first steadyRun intervals in a row that count
// as one cycle or none (a burst split off) to the last such. Missed
// bursts are rare inside a rhythm, and at its edges they are a job's
// set-up writes before its first checkpoint or its wind-down after the
// last, at no multiple of the period: ior100's set-up intervals counted
// as 3 cycles twice and lengthened its period by 15%. Inside the steady
// part a long interval still counts as missed bursts. It returns the
// whole run when no such run of intervals exists.
func steadyIntervals(iv, count []float64, global float64) (from, to int) {
	inLine := func(i int) bool { return count[i] <= 1 }
	runAt := func(i int) bool {
		for j := i; j < i+steadyRun; j++ {
			if j < 0 || j >= len(iv) || !inLine(j) {
				return false
			}
		}
		return true
	}
	from, to = -1, -1
	for i := range iv {
		if runAt(i) {
			from = i
			break
		}
	}
	for i := len(iv) - steadyRun; i >= 0; i-- {
		if runAt(i) {
			to = i + steadyRun
			break
		}
	}
	if from < 0 || to <= from {
		return 0, len(iv)
	}
	return from, to
}

// activeRuns returns the maximal runs of samples of x with I/O. Any I/O
// counts, not only samples above the mean as for the spectral test's
// surrogates: a checkpoint that opens with a few small writes (an HDF5
// file's superblock) starts with them, not with its first large write,
// whose delay varies with the small ones.
func activeRuns(x []float64) []run {
	var out []run
	for i := 0; i < len(x); i++ {
		if x[i] <= 0 {
			continue
		}
		j := i
		for j < len(x) && x[j] > 0 {
			j++
		}
		out = append(out, run{i, j})
		i = j
	}
	return out
}

// MaxPauseIdle is the largest share of a pause between bursts that its
// longest stretch without I/O in either direction may take, in the median
// pause, for the bursts to be taken for a stream (JudgeStreaming): a
// filter such as gzip reads its input through every pause between its
// block writes (tar czf: 0.13), while a job that reads and then writes
// each cycle computes or sleeps between (HDF5 checkpoints read back:
// 0.92 to 0.98).
const MaxPauseIdle = 0.5

// PauseIdle returns the median, over the pauses between the bursts of x
// (as TestBursts cuts them), of the longest stretch in the pause with no
// I/O in x or in other (the other direction's signal on the same grid),
// over the pause's length; ok is false when x has fewer than MinBursts
// bursts or other is not on x's grid.
func PauseIdle(x, other []float64) (share float64, ok bool) {
	if len(other) != len(x) {
		return 0, false
	}
	bursts, _ := burstsOf(x)
	bursts = joinParts(bursts, x)
	if len(bursts) < MinBursts {
		return 0, false
	}
	shares := make([]float64, 0, len(bursts)-1)
	for i := 1; i < len(bursts); i++ {
		from, to := bursts[i-1].end, bursts[i].start
		longest, idle := 0, 0
		for j := from; j < to; j++ {
			if x[j] > 0 || other[j] > 0 {
				idle = 0
				continue
			}
			idle++
			longest = max(longest, idle)
		}
		shares = append(shares, float64(longest)/float64(to-from))
	}
	return middle(shares), true
}

// JudgeStreaming holds a rhythm of intervals in x to "low" when the other
// direction's I/O fills the pauses between x's bursts (PauseIdle below
// MaxPauseIdle): the bursts then follow the other direction one for one,
// as a filter's writes follow its reads, and their tempo is the stream's
// rate, not a period. A rhythm on a clock keeps its verdict: a job that
// streams its input and checkpoints every T s of wall time has a period.
func (s *Significance) JudgeStreaming(x, other []float64) {
	b := s.BurstTest
	if b == nil || s.Method != "bursts" || b.Rhythm != "intervals" || (s.Verdict != "high" && s.Verdict != "moderate") {
		return
	}
	share, ok := PauseIdle(x, other)
	if !ok {
		return
	}
	b.PauseIdle = &share
	if share < MaxPauseIdle {
		s.Verdict, s.Reason = "low", fmt.Sprintf("significant (p = %.3g), but the other direction's I/O fills the pauses between the bursts (longest idle stretch %.0f%% of the median pause < %.0f%%): the bursts follow it one for one, a stream (a filter's writes after its reads), not a period", b.PValue, 100*share, 100*MaxPauseIdle)
	}
}

// tempoAgree is how far (relatively) two tempos may differ and be one:
// intervals that keep a rhythm stay within about a quarter of their tempo
// (cyclePeriod), and a tempo measured over a few of them is known no
// better.
const tempoAgree = 0.25

// minPhaseIntervals is how many intervals a phase of a drifting tempo
// holds at least: a local tempo's window (tempoWindow), so that a phase
// is a tempo kept for a while, not one slow interval.
const minPhaseIntervals = tempoWindow

// tempoPhases cuts a drifting rhythm of intervals (the bursts' starts,
// in samples from the first, which is at sample first of a signal of n
// samples at fs Hz) into phases of one tempo each: a job that writes
// every N steps while the machine's load comes and goes (lammps50: 0.25 s
// between dumps, then 0.09 s, then 0.22 s) keeps a period in each
// stretch, and the mean interval over the run tells a user little of
// when the next burst comes. Binary segmentation of the logarithms of
// the intervals: the cut that best separates their means (the largest
// between-group sum of squares, each side at least minPhaseIntervals
// long) is kept when the same intervals shuffled are cut as well in at
// most Alpha of the shuffles (drawn from rng, the observed counted among
// them), and the two sides' tempos differ by more than tempoAgree; each
// side is then cut again. Adjacent phases whose periods agree within
// tempoAgree are joined. Only the rhythm's steady part (steadyIntervals)
// is cut: a set-up's writes keep no tempo. Each phase's period is cyclePeriod over its
// bursts (volumes: their bytes); the first starts at the signal's start,
// the last ends at its end, and a change lies at the start of the burst
// that begins the next phase. It returns nil for fewer than two phases.
func tempoPhases(starts []int, volumes []float64, first, n int, fs float64, rng *rand.Rand) []Phase {
	// The steady part, as for the period: a set-up's writes before the
	// first cycle keep no tempo.
	_, from, to, global := cycleCounts(starts, volumes)
	if global <= 0 {
		return nil
	}
	if len(volumes) == len(starts) {
		volumes = volumes[from : to+1]
	}
	starts = starts[from : to+1]
	iv := intervals(starts)
	logs := make([]float64, len(iv))
	for i, v := range iv {
		if v <= 0 {
			return nil
		}
		logs[i] = math.Log(v)
	}
	var cuts []int // interval indices at which a phase begins
	var split func(lo, hi int)
	split = func(lo, hi int) {
		seg := logs[lo:hi]
		k, best := bestCut(seg)
		if k < 0 {
			return
		}
		if d := math.Abs(mean(seg[:k]) - mean(seg[k:])); math.Exp(d)-1 <= tempoAgree {
			return
		}
		shuffled := append([]float64(nil), seg...)
		as, drawn := 0, 0
		for drawn < Surrogates && as < stopAfter {
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if _, s := bestCut(shuffled); s >= best {
				as++
			}
			drawn++
		}
		if float64(as+1)/float64(drawn+1) > Alpha {
			return
		}
		split(lo, lo+k)
		cuts = append(cuts, lo+k)
		split(lo+k, hi)
	}
	split(0, len(logs))
	if len(cuts) == 0 {
		return nil
	}
	bounds := append(append([]int{0}, cuts...), len(iv)) // interval indices
	type part struct{ from, to int }                     // bursts from..to (inclusive)
	var parts []part
	period := func(p part) float64 {
		var vol []float64
		if len(volumes) == len(starts) {
			vol = volumes[p.from : p.to+1]
		}
		return cyclePeriod(starts[p.from:p.to+1], vol)
	}
	for i := 1; i < len(bounds); i++ {
		p := part{bounds[i-1], bounds[i]}
		if l := len(parts) - 1; l >= 0 {
			a, b := period(parts[l]), period(p)
			if math.Max(a, b) <= (1+tempoAgree)*math.Min(a, b) {
				parts[l].to = p.to
				continue
			}
		}
		parts = append(parts, p)
	}
	if len(parts) < 2 {
		return nil
	}
	phases := make([]Phase, len(parts))
	for i, p := range parts {
		phases[i] = Phase{StartS: float64(first+starts[p.from]) / fs, EndS: float64(first+starts[p.to]) / fs,
			PeriodS: period(p) / fs, Bursts: p.to - p.from + 1, Tempo: true}
	}
	phases[0].StartS = 0
	phases[len(phases)-1].EndS = float64(n) / fs
	return phases
}

// bestCut returns the cut k (minPhaseIntervals <= k <= len(v) -
// minPhaseIntervals) that best separates the means of v[:k] and v[k:],
// and its between-group sum of squares; k is -1 when v is too short.
func bestCut(v []float64) (int, float64) {
	n := len(v)
	if n < 2*minPhaseIntervals {
		return -1, 0
	}
	total := 0.0
	for _, x := range v {
		total += x
	}
	best, at, sum := -1.0, -1, 0.0
	for k := 1; k < n; k++ {
		sum += v[k-1]
		if k < minPhaseIntervals || n-k < minPhaseIntervals {
			continue
		}
		d := sum/float64(k) - (total-sum)/float64(n-k)
		if s := float64(k*(n-k)) / float64(n) * d * d; s > best {
			best, at = s, k
		}
	}
	return at, best
}

// mean is the mean of v (0 when empty).
func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

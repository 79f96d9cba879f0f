package ftio

import (
	"errors"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// TestSample proves the zero-order hold: a request covers the samples
// whose instants lie in [start, end), overlapping requests add, a request
// ending where another starts hands over at that instant, and a request
// between two sample instants leaves no trace.
func TestSample(t *testing.T) {
	reqs := []Request{
		{Start: 0, End: 0.3, Bandwidth: 1},      // samples 0,1,2
		{Start: 0.1, End: 0.2, Bandwidth: 10},   // sample 1
		{Start: 0.3, End: 0.5, Bandwidth: 100},  // samples 3,4 (starts as the first ends)
		{Start: 0.51, End: 0.59, Bandwidth: 7},  // between instants 0.5 and 0.6: invisible
		{Start: 0.6, End: 0.8, Bandwidth: 1000}, // samples 6,7
	}
	x, err := sample(Slice(reqs), 0, 10, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 11, 1, 100, 100, 0, 1000, 1000}
	for i := range want {
		if math.Abs(x[i]-want[i]) > 1e-9 {
			t.Errorf("sample %d = %g, want %g (all %v)", i, x[i], want[i], x)
		}
	}
}

// TestSampleAveraged proves the averaged samples: each is the mean
// bandwidth over its interval, so a request shorter than the interval
// keeps its bytes, and one spanning several intervals fills the whole ones
// and its share of the partial ones.
func TestSampleAveraged(t *testing.T) {
	reqs := []Request{
		{Start: 0.02, End: 0.03, Bandwidth: 1000}, // 10 bytes in interval 0
		{Start: 0.15, End: 0.42, Bandwidth: 100},  // half of 1, all of 2 and 3, a fifth of 4
		{Start: 0.75, End: 0.76, Bandwidth: 500},  // 5 bytes in interval 7
	}
	st := newSteps(8)
	var vol volume
	if err := addAveraged(Slice(reqs), st, 0, 10, 8, &vol); err != nil {
		t.Fatal(err)
	}
	x := integrate([][]float64{st.diff}, 8)
	want := []float64{100, 50, 100, 100, 20, 0, 0, 50}
	for i := range want {
		if math.Abs(x[i]-want[i]) > 1e-9 {
			t.Errorf("sample %d = %g, want %g (all %v)", i, x[i], want[i], x)
		}
	}
	if math.Abs(vol.sampled-vol.bytes) > 1e-9 {
		t.Errorf("the samples stand for %g bytes of %g", vol.sampled, vol.bytes)
	}
}

// TestAnalyzePureSquareWave proves a periodic burst is found with high
// confidence at its period, N follows floor((t_end - t_start) fs), and the
// metrics of a perfectly periodic signal are those of one.
func TestAnalyzePureSquareWave(t *testing.T) {
	var reqs []Request
	for i := 0; i < 20; i++ {
		s := 1 + 4*float64(i)
		reqs = append(reqs, Request{Start: s, End: s + 1, Bandwidth: 5e6})
	}
	res, err := Analyze(Slice(reqs), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.NSamples != 770 || res.TStart != 1 || res.TEnd != 78 {
		t.Errorf("N %d over [%g, %g], want 770 over [1, 78]", res.NSamples, res.TStart, res.TEnd)
	}
	if res.PeriodS == nil || math.Abs(*res.PeriodS-4) > 0.08 {
		t.Fatalf("period %v, want about 4 s; candidates %+v", res.PeriodS, res.Candidates)
	}
	if res.Verdict != "high" || res.Confidence <= 0.5 {
		t.Errorf("verdict %s confidence %g", res.Verdict, res.Confidence)
	}
	if *res.SigmaVol > 0.05 || *res.SigmaTime > 0.05 || *res.PeriodicityScore < 0.95 {
		t.Errorf("sigma_vol %g sigma_time %g score %g: a square wave is periodic", *res.SigmaVol, *res.SigmaTime, *res.PeriodicityScore)
	}
	if math.Abs(*res.RIO-0.25) > 0.02 || math.Abs(*res.BIO-5e6) > 1 {
		t.Errorf("R_IO %g B_IO %g, want 0.25 and 5e6", *res.RIO, *res.BIO)
	}
	if *res.Correlation < 0.5 {
		t.Errorf("correlation with the dominant cosine %g", *res.Correlation)
	}
}

// TestAnalyzeNotPeriodic proves a flat signal and white-noise-like bursts
// give no period.
func TestAnalyzeNotPeriodic(t *testing.T) {
	flat := []Request{{Start: 0, End: 100, Bandwidth: 1}}
	res, err := Analyze(Slice(flat), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.PeriodS != nil || res.FreqHz != nil || res.Verdict != "not periodic" {
		t.Errorf("flat signal: period %v verdict %s", res.PeriodS, res.Verdict)
	}
	// A linear congruential sequence of on/off samples has no dominant line.
	var reqs []Request
	state := uint32(12345)
	for i := 0; i < 2000; i++ {
		state = state*1664525 + 1013904223
		if state>>31 == 1 {
			reqs = append(reqs, Request{Start: float64(i) / 10, End: float64(i+1) / 10, Bandwidth: 1})
		}
	}
	res, err = Analyze(Slice(reqs), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.PeriodS != nil && res.Confidence > 0.5 {
		t.Errorf("random bursts: period %g with confidence %g", *res.PeriodS, res.Confidence)
	}
}

// TestAnalyzeErrors proves empty and too short inputs and sample counts
// beyond the bound are refused with an error.
func TestAnalyzeErrors(t *testing.T) {
	if _, err := Analyze(Slice(nil), Options{}); !errors.Is(err, ErrNoRequests) {
		t.Errorf("empty: %v", err)
	}
	if _, err := Analyze(Slice([]Request{{0, 0.2, 1}}), Options{}); err == nil {
		t.Error("0.2 s trace accepted")
	}
	if _, err := Analyze(Slice([]Request{{0, 1000, 1}}), Options{Fs: 1000, MaxSamples: 1000}); err == nil {
		t.Error("sample bound ignored")
	}
}

// TestAutoFs proves the automatic rate is twice the inverse of the
// smallest gap between event times, capped by the sample bound, and then
// lowered so that the number of samples has no prime factor above 7 (the
// FFT of such a length is fast), with a note saying so.
func TestAutoFs(t *testing.T) {
	reqs := []Request{{0, 1, 1}, {1.5, 1.75, 1}, {10, 12.5, 1}}
	for _, tc := range []struct {
		name       string
		maxSamples int
		wantN      int
		note       bool
	}{
		{"2/0.25 Hz over 12.5 s: 100 samples", 0, 100, false},
		{"capped at 56", 56, 56, true},
		{"capped at 55, lowered to 54 = 2·3³", 55, 54, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(Slice(reqs), Options{Fs: -1, MaxSamples: tc.maxSamples})
			if err != nil {
				t.Fatal(err)
			}
			if res.NSamples != tc.wantN || math.Abs(res.Fs-float64(tc.wantN)/12.5) > 1e-12 {
				t.Errorf("%d samples at %g Hz, want %d at %g Hz", res.NSamples, res.Fs, tc.wantN, float64(tc.wantN)/12.5)
			}
			if (len(res.Notes) > 0) != tc.note {
				t.Errorf("notes %q, want a note: %v", res.Notes, tc.note)
			}
		})
	}
}

// TestAutoSamplingSmooth proves the automatic sampling gives an FFT
// length without a prime factor above 7 near the bound (2^24-1, whose
// factor 241 made Bluestein's algorithm cost 54 s and 4.5 GB), capped at
// MaxAutoSamples, and says so.
func TestAutoSamplingSmooth(t *testing.T) {
	g := 1.0 / 1024
	for _, span := range []float64{8192, 8192 - 1.0/2048, 1000.3} {
		times := []float64{0, g, span - g, span}
		fs, n, note := autoSampling(times, span, MaxAutoSamples)
		want := min(MaxAutoSamples, int(span*2/g))
		if n > want || n < want*9/10 || largestPrimeFactor(n) > 7 {
			t.Errorf("span %g: %d samples (largest prime factor %d)", span, n, largestPrimeFactor(n))
		}
		if got := int(math.Floor(span * fs)); got < n {
			t.Errorf("span %g: %d samples at %g Hz do not fit %d", span, got, fs, n)
		}
		if note == "" {
			t.Errorf("span %g: no note for the lowered rate", span)
		}
	}
}

// TestOnline proves the online evaluator finds the period as the trace
// grows, narrows its window to three periods after the third find, and
// keeps its memory within the capacity.
func TestOnline(t *testing.T) {
	o := NewOnline(Options{}, 50)
	var found []float64
	for i := 0; i < 30; i++ {
		s := float64(i) * 5
		o.Add(int64(s*1e9), int64((s+1)*1e9), 1<<20, true)
		res, err := o.Evaluate()
		if err != nil || res.PeriodS == nil {
			continue
		}
		found = append(found, *res.PeriodS)
		if o.Found() >= 3 && math.Abs(o.Window()-3**res.PeriodS) > 1e-9 {
			t.Fatalf("after %d finds the window is %g, want 3 x %g", o.Found(), o.Window(), *res.PeriodS)
		}
	}
	if len(found) < 10 {
		t.Fatalf("only %d predictions", len(found))
	}
	last := found[len(found)-1]
	// A window of three periods resolves frequencies in steps of a third
	// of the dominant one, so the period is only known to about 10%.
	if math.Abs(last-5) > 0.5 {
		t.Errorf("last prediction %g s, want 5 s within 10%%", last)
	}
	if len(o.reqs) > 50 {
		t.Errorf("%d requests held, capacity 50", len(o.reqs))
	}
}

// TestBluestein proves the long-prime-factor path computes the same DFT as
// gonum's FFT (lengths 2·5·101, 2·211, a prime 1009).
func TestBluestein(t *testing.T) {
	for _, n := range []int{1010, 422, 1009} {
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Sin(float64(i)*0.37) + float64(i%7)
		}
		want := fourier.NewFFT(n).Coefficients(nil, x)
		got := bluestein(x)
		for k := range got {
			if cmplx.Abs(got[k]-want[k]) > 1e-8*float64(n) {
				t.Fatalf("n %d bin %d: %v, want %v", n, k, got[k], want[k])
			}
		}
	}
}

// TestSampledVolume proves the undersampling measure: phases lasting
// several sample intervals are represented by about the bytes they moved,
// while 50 us bursts every 0.4 s sampled at 10 Hz are mostly missed and,
// when hit, over-counted, and the text output warns then.
func TestSampledVolume(t *testing.T) {
	burst := func(length float64) []Request {
		var reqs []Request
		for k := 0; k < 20; k++ {
			start := 0.123 + 0.4*float64(k)
			reqs = append(reqs, Request{Start: start, End: start + length, Bandwidth: 1e9})
		}
		return reqs
	}
	for _, c := range []struct {
		name   string
		length float64
		warn   bool

		average bool
	}{
		{"phases of 0.2 s", 0.2, false, false},
		{"bursts of 50 us", 50e-6, true, false},
		{"bursts of 50 us, averaged", 50e-6, false, true},
	} {
		res, err := Analyze(Slice(burst(c.length)), Options{Fs: 10, Average: c.average})
		if err != nil {
			t.Fatal(err)
		}
		far := res.SampledVolume < 0.5 || res.SampledVolume > 2
		var text strings.Builder
		if err := WriteText(&text, res); err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(text.String(), "warning: the samples stand for")
		if far != c.warn || warned != c.warn {
			t.Errorf("%s: sampled volume %.3g, warning %v; want a warning: %v", c.name, res.SampledVolume, warned, c.warn)
		}
	}
}

// TestFundamentalBin proves the harmonic-series rule: a dominant bin whose
// lower harmonics all stand out (each within its quantisation) gives way
// to the fundamental; a lone low outlier, a series with a gap or with a
// member much weaker than the dominant bin, or a fundamental below bin 3
// (fewer than three periods in the window) do not.
func TestFundamentalBin(t *testing.T) {
	zWith := func(n int, high ...int) []float64 {
		z := make([]float64, n)
		for i := range z {
			z[i] = 1
		}
		for _, k := range high {
			z[k-1] = 10
		}
		return z
	}
	for _, c := range []struct {
		name string
		z    []float64
		dom  int
		want int
	}{
		{"second harmonic dominant", zWith(100, 14, 28, 42), 28, 14},
		{"third harmonic, bins rounded", zWith(100, 14, 29, 43), 43, 14},
		{"fifth harmonic of 7", zWith(100, 7, 14, 21, 28, 35, 42), 35, 7},
		{"fundamental dominant", zWith(100, 14, 28, 42), 14, 14},
		{"lone low outlier", zWith(100, 9, 28), 28, 28},
		{"series with a gap", zWith(100, 7, 21, 28), 28, 28},
		{"fewer than three periods in the window", zWith(100, 1, 2, 3, 4), 4, 4},
		{"an odd dominant bin and leakage below", zWith(100, 2, 3), 3, 3},
		{"the dominant bin is no member of its own series", zWith(100, 3), 3, 3},
		{"a weak member breaks the series", func() []float64 { z := zWith(100, 28); z[13] = 4; return z }(), 28, 28},
	} {
		if got := fundamentalBin(c.z, c.dom); got != c.want {
			t.Errorf("%s: fundamentalBin = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestAdjacentBinsAreOnePeak proves that a period falling between two
// bins (its power split over both) gives one candidate with the pair's
// confidence, not two rival periods.
func TestAdjacentBinsAreOnePeak(t *testing.T) {
	const n, fs = 1000, 10.0
	x := make([]float64, n)
	for i := range x {
		x[i] = 1 + math.Cos(2*math.Pi*50.5*float64(i)/n)
	}
	res := analyzeSamples(x, 0, fs, Options{}.withDefaults())
	if len(res.Candidates) != 1 || res.PeriodS == nil {
		t.Fatalf("candidates %+v, want one", res.Candidates)
	}
	if b := res.Candidates[0].Bin; b != 50 && b != 51 {
		t.Errorf("candidate bin %d, want 50 or 51", b)
	}
	if res.Verdict != "high" || res.Confidence < 0.9 {
		t.Errorf("verdict %s confidence %.3f, want high and the pair's confidence", res.Verdict, res.Confidence)
	}
}

// TestMinCycles proves Options.MinCycles: a job that writes for the first
// half of its span and then computes has its strongest bin at one cycle
// per window, which FTIO reports as a period as long as the job; with
// MinCycles 2 that bin is no candidate, while a square wave of 8 cycles
// keeps its period.
func TestMinCycles(t *testing.T) {
	once := make([]float64, 512)
	for i := range 256 {
		once[i] = 1e6
	}
	res, err := AnalyzeSignal(once, 0, 10, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.PeriodS == nil || math.Abs(*res.PeriodS-51.2) > 1e-9 {
		t.Fatalf("without MinCycles: period %v, want the window, 51.2 s (candidates %+v)", res.PeriodS, res.Candidates)
	}
	res, err = AnalyzeSignal(once, 0, 10, Options{MinCycles: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Candidates {
		if c.Bin < 2 {
			t.Errorf("MinCycles 2: candidate %+v at fewer than 2 cycles", c)
		}
	}
	if res.PeriodS != nil && *res.PeriodS > 51.2/2 {
		t.Errorf("MinCycles 2: period %g s repeats less than twice in 51.2 s", *res.PeriodS)
	}
	wave := make([]float64, 512)
	for i := range wave {
		if i%64 < 16 {
			wave[i] = 1e6
		}
	}
	res, err = AnalyzeSignal(wave, 0, 10, Options{MinCycles: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.PeriodS == nil || math.Abs(*res.PeriodS-6.4) > 1e-9 {
		t.Errorf("square wave of 8 cycles with MinCycles 2: period %v, want 6.4 s", res.PeriodS)
	}
}

// The headline never pairs "no period found" with a verdict that says a
// period is there: when FTIO's spectrum finds none and the significance
// test finds one, it says so, with the test's period.
func TestHeadlineWithoutFTIOPeriod(t *testing.T) {
	for _, c := range []struct {
		name    string
		verdict string
		sigS    float64
		want    string
	}{
		{"test finds a rhythm", "moderate", 0.4, "FTIO's spectrum finds no period (0 candidates); the significance test finds 0.4 s, verdict moderate"},
		{"test finds it high", "high", 1.5, "the significance test finds 1.5 s, verdict high"},
		{"nothing anywhere", "not significant", 0, "no period found (not significant; 0 candidates, 0 outliers with z > 3)"},
		{"test line not significant", "not periodic", 0.7, "no period found (not periodic; 0 candidates"},
	} {
		res := Result{Verdict: c.verdict, Significance: &Significance{Verdict: c.verdict, PeriodS: c.sigS}}
		var text strings.Builder
		if err := WriteText(&text, res); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), c.want) {
			t.Errorf("%s: %q, want %q", c.name, text.String(), c.want)
		}
		if c.verdict == "moderate" || c.verdict == "high" {
			if strings.Contains(text.String(), "no period found") {
				t.Errorf("%s: %q says no period with verdict %s", c.name, text.String(), c.verdict)
			}
		}
	}
}

package iosi

import (
	"math"
	"slices"
	"testing"
)

func TestTrim(t *testing.T) {
	// The paper's example: 4% longer, so the 1st, 26th, 51st and 76th of
	// 104 points go (indices 0, 26, 52, 78 of the 104, one every 26).
	x := make([]float64, 104)
	for i := range x {
		x[i] = float64(i)
	}
	got := trim(x, 100)
	if len(got) != 100 {
		t.Fatalf("%d points, want 100", len(got))
	}
	for _, gone := range []float64{0, 26, 52, 78} {
		if slices.Contains(got, gone) {
			t.Errorf("point %g kept", gone)
		}
	}
	if got[0] != 1 || got[99] != 103 {
		t.Errorf("ends %g and %g, want 1 and 103", got[0], got[99])
	}
}

func TestRefine(t *testing.T) {
	tests := []struct {
		x    []float64
		f    int
		want []float64
	}{
		{[]float64{0, 2, 6}, 2, []float64{0, 1, 2, 4, 6}},
		{[]float64{0, 3}, 3, []float64{0, 1, 2, 3}},
		{[]float64{5, 7}, 1, []float64{5, 7}},
	}
	for _, tc := range tests {
		if got := refine(tc.x, tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("refine(%v, %d) = %v, want %v", tc.x, tc.f, got, tc.want)
		}
	}
}

func TestResample(t *testing.T) {
	if got := resample([]float64{0, 10}, 3); !slices.Equal(got, []float64{0, 5, 10}) {
		t.Errorf("stretch: %v", got)
	}
	if got := resample([]float64{0, 1, 2, 3, 4}, 3); !slices.Equal(got, []float64{0, 2, 4}) {
		t.Errorf("shrink: %v", got)
	}
}

// TestRemoveBackground follows the paper's four steps: the mean of all
// points is 2.5; the points below it (1, 1, 1, 2 and 1) average 1.2,
// which every point loses, clipped at zero.
func TestRemoveBackground(t *testing.T) {
	xs := [][]float64{{1, 1, 8}, {1, 2, 1, 3.5}}
	removeBackground(xs)
	want := [][]float64{{0, 0, 6.8}, {0, 0.8, 0, 2.3}}
	for i := range xs {
		for k := range xs[i] {
			if math.Abs(xs[i][k]-want[i][k]) > 1e-12 {
				t.Fatalf("got %v, want %v", xs, want)
			}
		}
	}
}

func TestFillGaps(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		x       []float64
		want    []float64
		missing int
	}{
		{[]float64{1, nan, nan, 4}, []float64{1, 2, 3, 4}, 2},
		{[]float64{nan, 2, nan}, []float64{2, 2, 2}, 2},
		{[]float64{nan, nan}, []float64{0, 0}, 2},
		{[]float64{1, -5, 3}, []float64{1, 2, 3}, 1},
	}
	for _, tc := range tests {
		got, m := fillGaps(tc.x)
		if !slices.Equal(got, tc.want) || m != tc.missing {
			t.Errorf("fillGaps(%v) = %v, %d; want %v, %d", tc.x, got, m, tc.want, tc.missing)
		}
	}
}

// TestPreprocessDropsOutliersAndQuietRuns: of ten like runs, one twice as
// long with three times the volume is an outlier to LOF, and one without
// I/O is left out as quiet; the reasons name the jobs.
func TestPreprocessDropsOutliersAndQuietRuns(t *testing.T) {
	s := synthSamples(10, 600, 3)
	long := synthSamples(1, 1200, 4)[0]
	for i := range long.Write {
		long.Write[i] *= 1.5
	}
	s[3] = long
	s[3].JobID = "long"
	for i := range s[7].Write {
		s[7].Write[i], s[7].Read[i] = 3e8, 1e8
	}
	s[7].JobID = "idle"
	o := Default()
	o.LOFNeighbors = 5
	p, err := preprocess(s, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.t) != 8 || p.dropped["long"] == "" || p.dropped["idle"] == "" {
		t.Errorf("%d runs kept, dropped %v", len(p.t), p.dropped)
	}
	for _, x := range p.t {
		if len(x) != len(p.t[0]) {
			t.Fatal("samples of different lengths after duration correction")
		}
	}
}

func TestExtractErrors(t *testing.T) {
	good := synthSamples(3, 300, 5)
	tests := []struct {
		name    string
		samples []Sample
		opt     func(*Options)
	}{
		{"one run", good[:1], nil},
		{"steps differ", []Sample{good[0], {StepS: 5, Write: good[1].Write, Read: good[1].Read}}, nil},
		{"ragged", []Sample{good[0], {StepS: 2, Write: []float64{1, 2}, Read: []float64{1}}}, nil},
		{"level 0", good, func(o *Options) { o.Level = 0 }},
		{"gamma 2", good, func(o *Options) { o.Gamma = 2 }},
	}
	for _, tc := range tests {
		o := Default()
		if tc.opt != nil {
			tc.opt(&o)
		}
		if _, err := Extract(tc.samples, o); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestExtractSynthetic: on the benchmark's runs (a 2.5 GB/s burst of 24 s
// every 300 s among foreign bursts and a background that varies from one
// interval to the next), the default with NoiseMADs and MaxSpread (and
// crests rather than centroids, see Options.MaxSpread) finds one
// signature burst per period, at the right height and volume; the
// paper's method takes the bumps of the background for bursts common to
// the runs.
func TestExtractSynthetic(t *testing.T) {
	s := synthSamples(10, 1500, 6)
	if sig, err := Extract(s, Paper()); err != nil || len(sig.Bursts) <= 20 {
		t.Errorf("paper: %v, %d bursts; expected the background's bumps as bursts", err, len(sig.Bursts))
	}
	o := Default()
	o.NoiseMADs, o.MaxSpread, o.Centroid = 6, 1, false
	{
		sig, err := Extract(s, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(sig.Bursts) != 10 {
			t.Fatalf("%d bursts, want 10: %+v", len(sig.Bursts), sig.Bursts)
		}
		for _, b := range sig.Bursts {
			vol := b.WriteBytes + b.ReadBytes
			if vol < 0.8*60e9 || vol > 1.2*60e9 || b.PeakBytesPerS < 2e9 || b.PeakBytesPerS > 3e9 {
				t.Errorf("burst %+v: %.1f GB, want about 60", b, vol/1e9)
			}
		}
	}
}

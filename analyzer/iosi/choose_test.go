package iosi

import (
	"slices"
	"testing"
)

// TestChooseSignature proves the order in which Extract picks between
// the wavelet's signature and the aligned one, and that a time-line gap
// alone does not pick an aligned signature with a single supported
// burst over a wavelet one with more (the case fails without
// minTimelineBursts: before it, the aligned one was picked).
func TestChooseSignature(t *testing.T) {
	o := Default()
	cases := []struct {
		name             string
		wavelet, aligned backing
		gap, spread      float64
		want             int
	}{
		{"aligned: a larger share supported", backing{0.8, 3}, backing{1, 3}, 0, 0.04, pickAligned},
		{"wavelet: a larger share supported", backing{1, 3}, backing{0.9, 3}, 0.02, 0.04, pickWavelet},
		{"aligned: the time lines differ", backing{1, 4}, backing{1, 3}, 0.01, 0.04, pickAligned},
		{"wavelet: the aligned one keeps one burst (1008 flo/lattice_f)", backing{1, 2}, backing{1, 1}, 0.0164, 0.03, pickWavelet},
		{"aligned: more supported bursts", backing{1, 3}, backing{1, 4}, 0.001, 0.01, pickAligned},
		{"wavelet: more supported bursts", backing{1, 4}, backing{1, 3}, 0.001, 0.04, pickWavelet},
		{"wavelet: runs spread little", backing{1, 3}, backing{1, 3}, 0.001, 0.02, pickWavelet},
		{"consistency: runs spread more", backing{1, 3}, backing{1, 3}, 0.001, 0.04, pickConsistent},
	}
	for _, c := range cases {
		if got := chooseSignature(c.wavelet, c.aligned, c.gap, c.spread, o); got != c.want {
			t.Errorf("%s: picked %d, want %d", c.name, got, c.want)
		}
	}
}

// TestDropOddBursts proves which kept bursts dropOddBursts leaves out:
// one that fewer runs show than three quarters of the best-supported
// one's and that is smaller than every well-supported burst by more
// than tightVolumeRatio (another job's burst that lined up); not one as
// little supported but of a size the application writes elsewhere, nor
// a larger one, nor a small one most runs show, nor any in a train of
// more than oddMaxKept kept bursts. The first case fails without the
// rule, the long train's without oddMaxKept.
func TestDropOddBursts(t *testing.T) {
	runs := func(n int, vol float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = vol
		}
		return v
	}
	cases := []struct {
		name string
		vols [][]float64
		want []bool // kept after the rule
	}{
		{"a small burst 6 runs of 11 show among checkpoints 10 and 11 show",
			[][]float64{runs(11, 5e11), runs(6, 2e11), runs(10, 5e11), runs(11, 5e11)}, []bool{true, false, true, true}},
		{"a little-supported burst of a checkpoint's size",
			[][]float64{runs(11, 5e11), runs(6, 4.5e11), runs(11, 5e11)}, []bool{true, true, true}},
		{"a larger first burst 8 runs of 11 show (dov/cosmo_d)",
			[][]float64{runs(8, 3e11), runs(11, 1.1e11), runs(11, 2e11), runs(10, 1.1e11), runs(11, 2e11)}, []bool{true, true, true, true, true}},
		{"a small burst most runs show",
			[][]float64{runs(11, 5e11), runs(9, 1e11), runs(11, 5e11)}, []bool{true, true, true}},
		{"a long train: a small burst 6 runs of 11 show is kept",
			[][]float64{runs(11, 5e11), runs(6, 2e11), runs(10, 5e11), runs(11, 5e11), runs(11, 5e11), runs(11, 5e11), runs(11, 5e11)},
			[]bool{true, true, true, true, true, true, true}},
		{"a burst not kept stays out",
			[][]float64{runs(11, 5e11), nil, runs(11, 5e11)}, []bool{true, false, true}},
	}
	for _, c := range cases {
		m := matching{vols: slices.Clone(c.vols)}
		dropOddBursts(m)
		for k, v := range m.vols {
			if (v != nil) != c.want[k] {
				t.Errorf("%s: burst %d kept %v, want %v", c.name, k, v != nil, c.want[k])
			}
		}
	}
}

// TestRhythmPlaces proves where a train of kept bursts that keeps a
// rhythm is asked for the bursts it lacks: the middle of a gap of two
// periods, one period before the first and after the last when that is
// within the run, with gaps up to a fifth of a period off (the case
// 12% off fails at a tenth); and that a train without a rhythm (a gap
// further off one period or two, or mostly two), or of fewer than
// three bursts, is asked for none.
func TestRhythmPlaces(t *testing.T) {
	cases := []struct {
		name string
		lo   []int
		w, n int
		want []int
	}{
		{"a gap of two periods; the run ends before a burst after the last", []int{100, 300, 700, 900}, 20, 1000, []int{500}},
		{"no gap; room before the first and after the last", []int{300, 500, 700}, 20, 1000, []int{100, 900}},
		{"gaps within a tenth of the period", []int{250, 460, 650, 870}, 20, 1000, []int{40}},
		{"a gap 12% off (1008 cyd/cosmo_c's anchor)", []int{225, 455, 743, 1001, 1261}, 55, 1575, []int{1520}},
		{"a gap 30% off", []int{100, 300, 500, 760}, 20, 2000, nil},
		{"gaps of no rhythm", []int{100, 300, 650, 900}, 20, 1000, nil},
		{"mostly gaps of two periods", []int{100, 300, 700, 1100}, 20, 2000, nil},
		{"two bursts", []int{100, 300}, 20, 1000, nil},
	}
	for _, c := range cases {
		if got := rhythmPlaces(c.lo, c.w, c.n); !slices.Equal(got, c.want) {
			t.Errorf("%s: places %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAlignedBurstTheRhythmFinds proves that a burst of a regular train
// that another job's burst ten times its size covers in the anchor and
// in two other runs of nine, which otherBursts does not add (fewer runs
// show it than show the others), is still in the signature at its place
// because the train's rhythm says where to look and the runs that can
// tell show it; and that without the rhythm (NoRhythm) it is missed.
func TestAlignedBurstTheRhythmFinds(t *testing.T) {
	starts := trainStarts
	const step, vol, rate = trainStep, trainVol, trainRate
	samples := trainRuns(13, func(i int, st float64, w []float64) {
		if i%2 == 0 && i <= 4 { // the anchor and two more: the fourth burst under a foreign one
			putBurst(w, 2100*st-40, 10*vol, 2*rate)
		}
	})
	for _, noRhythm := range []bool{true, false} {
		o := Default()
		o.BurstAlign = true
		o.NoRhythm = noRhythm
		sig, err := Extract(samples, o)
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for _, b := range sig.Bursts {
			got = append(got, b.StartS)
		}
		if noRhythm {
			if len(sig.Bursts) != len(starts)-1 {
				t.Errorf("without the rhythm: %d bursts at %v, want %d (the fourth missed)", len(sig.Bursts), got, len(starts)-1)
			}
			continue
		}
		if len(sig.Bursts) != len(starts) {
			t.Fatalf("%d bursts at %v, want %d at %v", len(sig.Bursts), got, len(starts), starts)
		}
		checkBursts(t, sig, starts, 6*step, vol)
	}
}

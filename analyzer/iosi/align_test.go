package iosi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAlignedTimeLineAndShape proves what burst-by-burst alignment
// promises on runs stretched unevenly by contention: the signature
// follows the least-stretched run's time line (its bursts start where
// that run's did, late bursts included), keeps every burst the runs
// share and no foreign one, and gives each burst its own bytes even
// where another job's burst sits on it in one run or in the time line's
// run itself.
func TestAlignedTimeLineAndShape(t *testing.T) {
	const step, vol, rate = 5.0, 5e11, 5e9
	starts := []float64{600, 2400, 4200} // in the run alone
	stretches := []float64{1.00, 1.03, 1.06, 1.09, 1.12, 1.30, 1.05}
	rng := rand.New(rand.NewPCG(7, 7))
	var samples []Sample
	put := func(w []float64, at, bytes, r float64) {
		for t := at; t < at+bytes/r; t += step {
			if k := int(t / step); k < len(w) {
				w[k] += r
			}
		}
	}
	for i, st := range stretches {
		n := int(5000 * st / step)
		w, r := quietRates(n, rng)
		for _, at := range starts {
			put(w, at*st, vol, rate/(1+(st-1)*rng.Float64()))
		}
		switch i {
		case 0: // the least-stretched run: a foreign burst on its second
			put(w, 2400-50, 8e11, 4e9)
		case 2: // another job's burst on this run's last one
			put(w, 4200*1.06+20, 9e11, 6e9)
		case 4: // a foreign burst alone
			put(w, 3300*1.12, 5e11, 5e9)
		}
		samples = append(samples, Sample{JobID: fmt.Sprint("run", i), StepS: step, Write: w, Read: r})
	}
	o := Default()
	o.BurstAlign = true
	sig, err := Extract(samples, o)
	if err != nil {
		t.Fatal(err)
	}
	if sig.Reference != "run0" {
		t.Errorf("time line from %s, want run0 (the least stretched)", sig.Reference)
	}
	if len(sig.Bursts) != len(starts) {
		t.Fatalf("%d bursts, want %d: %+v", len(sig.Bursts), len(starts), sig.Bursts)
	}
	checkBursts(t, sig, starts, 2*step, vol)
}

// checkBursts fails t unless each burst of sig starts within slack
// seconds of its start in starts and moves vol bytes within 10% (more is
// a foreign burst leaked in); sig has as many bursts as starts.
func checkBursts(t *testing.T, sig *Signature, starts []float64, slack, vol float64) {
	t.Helper()
	for k, b := range sig.Bursts {
		if math.Abs(b.StartS-starts[k]) > slack {
			t.Errorf("burst %d starts at %.0f s, want %.0f within %.0f s", k, b.StartS, starts[k], slack)
		}
		if v := b.WriteBytes + b.ReadBytes; math.Abs(v-vol) > 0.1*vol {
			t.Errorf("burst %d moves %.3g bytes, want %.3g within 10%%", k, v, vol)
		}
	}
}

// TestSupportedShare proves the measure Extract chooses between its two
// signatures by: a signature whose bursts every run shows has all its
// bytes supported, and one that adds a burst no run shows (another
// job's, kept by one run) loses that burst's share, as does one whose
// burst is where the runs have none.
func TestSupportedShare(t *testing.T) {
	const step, vol, rate = 5.0, 4e11, 4e9
	starts := []float64{500, 1500, 2500}
	rng := rand.New(rand.NewPCG(3, 3))
	var samples []Sample
	for i := range 7 {
		n := int(3200 * (1 + 0.01*float64(i)) / step)
		w, r := quietRates(n, rng)
		for _, at := range starts {
			for q := at * (1 + 0.01*float64(i)); q < at*(1+0.01*float64(i))+vol/rate; q += step {
				w[int(q/step)] += rate
			}
		}
		samples = append(samples, Sample{JobID: fmt.Sprint("run", i), StepS: step, Write: w, Read: r})
	}
	sig := func(at ...float64) *Signature {
		s := &Signature{StepS: step, Write: make([]float64, int(3200/step)), Read: make([]float64, int(3200/step))}
		for _, a := range at {
			s.Bursts = append(s.Bursts, Burst{StartS: a, EndS: a + vol/rate, WriteBytes: vol})
			for q := a; q < a+vol/rate; q += step {
				s.Write[int(q/step)] += rate
			}
		}
		return s
	}
	o := Default()
	cases := []struct {
		name string
		sig  *Signature
		want float64
	}{
		{"the runs' bursts", sig(starts...), 1},
		{"a fourth burst no run shows", sig(500, 1500, 2000, 2500), 0.75},
		{"one burst misplaced", sig(500, 1000, 2500), 2.0 / 3},
		{"no bursts", &Signature{StepS: step, Write: make([]float64, 10), Read: make([]float64, 10)}, 0},
	}
	for _, c := range cases {
		if got, _ := supportedShare(c.sig, samples, o); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: supported share %.3f, want %.3f", c.name, got, c.want)
		}
	}
}

// TestAlignedBurstTheAnchorMisses proves that a burst the anchor run
// cannot show, because another job's burst ten times its size sits on
// it there, is still in the signature when the other runs show it (found
// with another run as the reference), at its place on the time line;
// that the anchor's bursts alone miss it (AnchorOnly); and that another
// job's burst that recurs at one place in a third of the runs is not
// added, nor one every run shows but the anchor is quiet at.
func TestAlignedBurstTheAnchorMisses(t *testing.T) {
	starts := trainStarts
	const step, vol, rate = trainStep, trainVol, trainRate
	samples := trainRuns(11, func(i int, st float64, w []float64) {
		if i == 0 { // the least-stretched run: its fourth burst under a foreign one ten times its size
			putBurst(w, 2100-40, 10*vol, 2*rate)
		}
		if i%3 == 1 { // a foreign burst at one place in a third of the runs
			putBurst(w, 1200*st, vol, rate)
		}
	})
	for _, anchorOnly := range []bool{false, true} {
		o := Default()
		o.BurstAlign = true
		o.AnchorOnly = anchorOnly
		sig, err := Extract(samples, o)
		if err != nil {
			t.Fatal(err)
		}
		if sig.Reference != "run0" {
			t.Errorf("AnchorOnly %v: time line from %s, want run0", anchorOnly, sig.Reference)
		}
		var got []float64
		for _, b := range sig.Bursts {
			got = append(got, b.StartS)
		}
		if anchorOnly {
			if len(sig.Bursts) != len(starts)-1 {
				t.Errorf("the anchor's bursts alone: %d bursts %v, want %d (the anchor's fourth is not its own)", len(sig.Bursts), got, len(starts)-1)
			}
			continue
		}
		if len(sig.Bursts) != len(starts) {
			t.Fatalf("%d bursts at %v, want %d at %v", len(sig.Bursts), got, len(starts), starts)
		}
		checkBursts(t, sig, starts, 6*step, vol)
	}
}

// TestTimelineGap proves the measure of how far apart the two
// signatures' time lines are: the share by which the wavelet's length
// is off the aligned one's, either way, and 0 for an empty aligned one.
func TestTimelineGap(t *testing.T) {
	sig := func(n int) *Signature {
		return &Signature{StepS: 2, Write: make([]float64, n), Read: make([]float64, n)}
	}
	cases := []struct {
		w, a int
		want float64
	}{
		{1000, 1000, 0},
		{1010, 1000, 0.01},
		{990, 1000, 0.01},
		{1000, 0, 0},
	}
	for _, c := range cases {
		if got := timelineGap(sig(c.w), sig(c.a)); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("wavelet %d points, aligned %d: gap %g, want %g", c.w, c.a, got, c.want)
		}
	}
}

// The regular train the burst-alignment tests share: six bursts of
// trainVol bytes at trainRate, 600 s apart, in runs of trainStep steps.
const trainStep, trainVol, trainRate = 5.0, 3e11, 5e9

var trainStarts = []float64{300, 900, 1500, 2100, 2700, 3300} // in the run alone

// putBurst adds a burst of bytes at rate r from time at to the write
// series w of trainStep steps.
func putBurst(w []float64, at, bytes, r float64) {
	for q := at; q < at+bytes/r; q += trainStep {
		if k := int(q / trainStep); k >= 0 && k < len(w) {
			w[k] += r
		}
	}
}

// trainRuns draws nine runs of the train, stretched by 0 to 8%, each
// burst 10 s off its place at one standard deviation, over the quiet
// background, from seed; foreign adds to run i (stretched by st) what
// other jobs write there.
func trainRuns(seed uint64, foreign func(i int, st float64, w []float64)) []Sample {
	stretches := []float64{1.00, 1.02, 1.04, 1.06, 1.03, 1.08, 1.05, 1.07, 1.01}
	rng := rand.New(rand.NewPCG(seed, seed))
	var samples []Sample
	for i, st := range stretches {
		n := int(3700 * st / trainStep)
		w, r := quietRates(n, rng)
		for _, at := range trainStarts {
			putBurst(w, at*st+10*rng.NormFloat64(), trainVol, trainRate)
		}
		foreign(i, st, w)
		samples = append(samples, Sample{JobID: fmt.Sprint("run", i), StepS: trainStep, Write: w, Read: r})
	}
	return samples
}

// quietRates returns n steps of the background every run shows: writes
// of 200 to 220 MB/s and reads of 100 to 110 MB/s, drawn from rng.
func quietRates(n int, rng *rand.Rand) (w, r []float64) {
	w, r = make([]float64, n), make([]float64, n)
	for k := range w {
		w[k] = 2e8 + 2e7*rng.Float64()
		r[k] = 1e8 + 1e7*rng.Float64()
	}
	return w, r
}

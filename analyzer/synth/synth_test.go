package synth

import (
	"math"
	"sort"
	"testing"

	"iopred/analyzer/ftio"
)

func analyze(t *testing.T, c Config) (ftio.Result, Plan) {
	t.Helper()
	var col Collect
	pl, err := Generate(c, &col)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []ftio.Request
	for _, rs := range col.Procs {
		for _, r := range rs {
			reqs = append(reqs, ftio.Request{Start: r.Start, End: r.End, Bandwidth: float64(r.Bytes) / (r.End - r.Start)})
		}
	}
	res, err := ftio.Analyze(ftio.Slice(reqs), ftio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res, pl
}

func phase() Template { return Burst(8, 20, 1<<20, 100e6, true) }

// TestDetectionFixedCompute reproduces Figure 19(a): with a compute phase
// of constant length, desynchronised processes and noise, the detected
// period is within 5% of the mean iteration length.
func TestDetectionFixedCompute(t *testing.T) {
	for _, mean := range []float64{2, 5, 10, 20} {
		for seed := uint64(1); seed <= 5; seed++ {
			c := Config{Iterations: 20, ComputeMean: mean, DelayMean: 0.1, Phase: phase(), Seed: seed,
				NoiseRate: 0.5, NoiseBytes: 4096, NoiseBandwidth: 1e6}
			res, pl := analyze(t, c)
			if res.PeriodS == nil {
				t.Errorf("compute %g s seed %d: no period (%s, %d candidates)", mean, seed, res.Verdict, len(res.Candidates))
				continue
			}
			if e := math.Abs(*res.PeriodS-pl.MeanIteration()) / pl.MeanIteration(); e >= 0.05 {
				t.Errorf("compute %g s seed %d: period %g s, mean iteration %g s: error %.1f%%", mean, seed, *res.PeriodS, pl.MeanIteration(), 100*e)
			}
		}
	}
}

// TestMetricsRiseWithVariability reproduces the trend of Figure 20: as the
// compute phase length varies more, sigma_time rises and the periodicity
// score falls (medians over several traces).
func TestMetricsRiseWithVariability(t *testing.T) {
	var prevTime, prevScore float64 = -1, 2
	for _, std := range []float64{0, 2, 5} {
		var times, scores []float64
		for seed := uint64(1); seed <= 9; seed++ {
			c := Config{Iterations: 20, ComputeMean: 10, ComputeStd: std, Phase: phase(), Seed: seed}
			res, _ := analyze(t, c)
			if res.SigmaTime == nil {
				times, scores = append(times, 1), append(scores, 0) // no period: least periodic
				continue
			}
			times, scores = append(times, *res.SigmaTime), append(scores, *res.PeriodicityScore)
		}
		mt, ms := median(times), median(scores)
		t.Logf("compute std %g s: median sigma_time %.4f, periodicity score %.4f", std, mt, ms)
		if mt <= prevTime || ms >= prevScore {
			t.Errorf("compute std %g s: sigma_time %.4f (before %.4f), score %.4f (before %.4f): not monotone", std, mt, prevTime, ms, prevScore)
		}
		prevTime, prevScore = mt, ms
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// TestDrawRejectsBadConfig proves invalid parameters are refused.
func TestDrawRejectsBadConfig(t *testing.T) {
	for _, c := range []Config{
		{Iterations: 0, Phase: phase()},
		{Iterations: 1},
		{Iterations: 1, Phase: phase(), ComputeMean: -1},
		{Iterations: 1, Phase: phase(), NoiseRate: 1},
	} {
		if _, err := Draw(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

// TestPlanTiming proves the iterations do not overlap: each starts when
// the previous compute phase and every process's delayed phase are done.
func TestPlanTiming(t *testing.T) {
	c := Config{Iterations: 50, ComputeMean: 3, ComputeStd: 1, DelayMean: 0.5, Phase: phase(), Seed: 7}
	var col Collect
	pl, err := Generate(c, &col)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pl.IterStart {
		if pl.Compute[i] <= 0 {
			t.Fatalf("iteration %d: compute length %g not positive", i, pl.Compute[i])
		}
	}
	for p, rs := range col.Procs {
		if len(rs) != 50*20 {
			t.Fatalf("process %d: %d requests, want %d", p, len(rs), 50*20)
		}
		for i := 1; i < len(rs); i++ {
			if rs[i].Start < rs[i-1].End-1e-9 {
				t.Fatalf("process %d: request %d starts before the previous ends", p, i)
			}
		}
		if rs[len(rs)-1].End > pl.End+1e-9 {
			t.Fatalf("process %d ends after the application", p)
		}
	}
}

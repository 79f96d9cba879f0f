package aid

import "testing"

// TestPeriodicAsksTheSameBytes proves that a run whose gaps look regular
// but whose bursts move bytes of every size does not keep a rhythm of
// all of them when it has gaps enough to ask bytes of (a chain of three
// like bursts may still be found; oneInterval weighs its interval): a checkpointer writes the same bytes
// every time, other jobs' bursts of its kind vary. The first two cases
// are runs of seed 1312's foreign f022/cp2k_41/256 (bursts at random
// times, lognormal bytes) and f022/postproc_31/32 (no bursts of its own,
// other jobs' in its runs) as AID measured them; both were periodic and
// the applications false positives. A checkpointer whose burst met
// another job's keeps its rhythm: one merged burst breaks at most two
// gaps, and below minGapsForBytes gaps bytes are not asked (the third
// case is a run of seed 1104's bea/dynamo_b/64, an hourly checkpointer
// whose bursts of 9.2e11 B were slowed and met others' in that run).
func TestPeriodicAsksTheSameBytes(t *testing.T) {
	cases := []struct {
		name  string
		runS  int64
		at    []int64
		bytes []float64
		// wantOn is how many bursts are on the run's rhythm, 0 when it
		// has none.
		wantOn int
	}{
		{"1312 cp2k_41: regular gaps, bytes 2.0 to 3.5e12", 13396,
			[]int64{2266, 3066, 3962, 5322, 5606, 7046, 8474, 11622, 12074},
			[]float64{2.43e12, 1.98e12, 2.61e12, 3.05e12, 2.6e12, 2.58e12, 3.52e12, 2.13e12, 2.05e12}, 3},
		{"1312 postproc_31: regular gaps, bytes 1.5e12 to 1.3e13", 5742,
			[]int64{817, 2117, 2793, 3749, 4773, 5097},
			[]float64{1.26e13, 2.46e12, 5.73e12, 1.52e12, 3.26e12, 2.67e12}, 0},
		{"1104 dynamo_b: four bursts, too few gaps to ask bytes", 8835,
			[]int64{2198, 4336, 4468, 7100},
			[]float64{1.32e12, 8.42e11, 9.1e11, 7.42e11}, 4},
		{"a checkpointer, the same bytes", 13396,
			[]int64{2266, 3380, 4510, 5640, 6790, 7900, 9040, 10150, 11290},
			[]float64{9.2e11, 9.21e11, 9.2e11, 9.22e11, 9.2e11, 9.19e11, 9.2e11, 9.21e11, 9.2e11}, 9},
		{"a checkpointer, one burst merged with another job's", 13396,
			[]int64{2266, 3380, 4510, 5640, 6790, 7900, 9040, 10150, 11290},
			[]float64{9.2e11, 9.21e11, 9.2e11, 1.6e12, 9.2e11, 9.19e11, 9.2e11, 9.21e11, 9.2e11}, 9},
		{"a checkpointer, a foreign burst between two of its own", 13396,
			[]int64{2266, 3380, 4510, 5100, 5640, 6790, 7900, 9040, 10150, 11290},
			[]float64{9.2e11, 9.21e11, 9.2e11, 2.5e12, 9.22e11, 9.2e11, 9.19e11, 9.2e11, 9.21e11, 9.2e11}, 10},
	}
	const s = int64(1e9)
	for _, c := range cases {
		var bursts []Burst
		var times []int
		for i, a := range c.at {
			bursts = append(bursts, Burst{StartNS: a * s, EndNS: (a + 60) * s, Bytes: c.bytes[i]})
			times = append(times, i)
		}
		ok, iv, on := periodic(bursts, times, Run{StartNS: 0, EndNS: c.runS * s})
		if !ok {
			on = nil
		}
		if len(on) != c.wantOn {
			t.Errorf("%s: %d bursts on a rhythm of %.0f s, want %d", c.name, len(on), iv, c.wantOn)
		}
	}
}

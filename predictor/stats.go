package predictor

import "math"

// Stats summarises a series of measurements (inter-arrival times in
// nanoseconds, sizes in bytes): count, extremes, mean and variance
// (Welford's update, stable for long series), and the weighted average of
// equation (1) of the Omnisc'IO paper, which halves the weight of the past
// at every observation so that it follows changes quickly.
type Stats struct {
	N        uint64  `msgpack:"n"`
	Min      float64 `msgpack:"lo"`
	Max      float64 `msgpack:"hi"`
	Mean     float64 `msgpack:"m"`
	M2       float64 `msgpack:"m2"` // sum of squared deviations from the mean
	Weighted float64 `msgpack:"w"`
}

// Add records one measurement.
func (s *Stats) Add(x float64) {
	s.N++
	if s.N == 1 {
		s.Min, s.Max, s.Mean, s.M2, s.Weighted = x, x, x, 0, x
		return
	}
	// Plain comparisons rather than math.Min and math.Max: the
	// measurements come from integers, so neither NaN nor -0 occurs, and
	// the results are the same.
	if x < s.Min {
		s.Min = x
	}
	if x > s.Max {
		s.Max = x
	}
	d := x - s.Mean
	s.Mean += d / float64(s.N)
	s.M2 += d * (x - s.Mean)
	s.Weighted = (s.Weighted + x) / 2
}

// Variance is the population variance of the measurements (0 for fewer
// than two).
func (s *Stats) Variance() float64 {
	if s.N < 2 {
		return 0
	}
	return s.M2 / float64(s.N)
}

// valid rejects decoded statistics that no series could produce.
func (s *Stats) valid() bool {
	for _, x := range []float64{s.Min, s.Max, s.Mean, s.M2, s.Weighted} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return s.M2 >= 0 && (s.N == 0 || s.Min <= s.Max)
}

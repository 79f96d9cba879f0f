package aid

import (
	"math"

	"iopred/analyzer/iosi/wavelet"
)

// waveletLevel is the decomposition level of the wavelet detector: IOSI
// keeps the level-2 approximation of the discrete Meyer wavelet, which
// removes the sample-to-sample noise and keeps bursts of a few samples.
const waveletLevel = 2

// waveletSmooth is IOSI's wavelet step as a low-pass: the level-2
// approximation of the excess (NaN as 0), at the input's length.
func waveletSmooth(x []float64) []float64 {
	in := make([]float64, len(x))
	for i, v := range x {
		if !math.IsNaN(v) {
			in[i] = v
		}
	}
	b := wavelet.Dmey()
	lv := min(waveletLevel, wavelet.MaxLevel(len(in), len(b.DecLo)))
	if lv < 1 {
		return in
	}
	out, err := wavelet.Approx(in, b, lv)
	if err != nil {
		return in
	}
	return out
}

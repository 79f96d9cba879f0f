package wavelet_test

import (
	"fmt"

	"iopred/analyzer/iosi/wavelet"
)

// A triangular burst peaking at sample 60 on a quiet background: the
// level-2 discrete Meyer approximation is a smooth wave with its crest
// where the burst peaks and the burst's area.
func ExampleApprox() {
	x := make([]float64, 128)
	for i := 40; i <= 80; i++ {
		x[i] = 10 - float64(max(i-60, 60-i))/2
	}
	a, err := wavelet.Approx(x, wavelet.Dmey(), 2)
	if err != nil {
		panic(err)
	}
	crest, area := 0, 0.0
	for i, v := range a {
		if v > a[crest] {
			crest = i
		}
		area += v
	}
	fmt.Printf("crest at %d, area %.0f of %.0f\n", crest, area, 200.0)
	// Output: crest at 60, area 200 of 200
}

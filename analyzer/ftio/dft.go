package ftio

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// maxDirectFactor is the largest prime factor of N for which gonum's
// mixed-radix FFT is used directly; its cost grows with N times the prime
// factors, so a length such as 2·5·99991 would take minutes. Longer
// factors go through Bluestein's algorithm on a power-of-two FFT.
const maxDirectFactor = 64

// realDFT returns X_k = sum_n x_n exp(-2 pi i k n / N) for k = 0..N/2.
func realDFT(x []float64) []complex128 {
	n := len(x)
	if largestPrimeFactor(n) <= maxDirectFactor {
		return fourier.NewFFT(n).Coefficients(nil, x)
	}
	return bluestein(x)
}

func largestPrimeFactor(n int) int {
	largest := 1
	for p := 2; p*p <= n; p++ {
		for n%p == 0 {
			largest, n = p, n/p
		}
	}
	return max(largest, n)
}

// bluestein computes the DFT of any length as a convolution, using
// nk = (n² + k² - (k-n)²) / 2: X_k = c_k* · sum_n (x_n c_n*) c_{k-n} with
// c_m = exp(i pi m² / N), the convolution done by power-of-two FFTs.
func bluestein(x []float64) []complex128 {
	n := len(x)
	m := 1
	for m < 2*n-1 {
		m <<= 1
	}
	chirp := make([]complex128, n)
	for i := range chirp {
		// i² mod 2N keeps the angle small, hence accurate, for large i.
		q := (int64(i) * int64(i)) % (2 * int64(n))
		chirp[i] = cmplx.Exp(complex(0, math.Pi*float64(q)/float64(n)))
	}
	a := make([]complex128, m)
	for i, v := range x {
		a[i] = complex(v, 0) * cmplx.Conj(chirp[i])
	}
	b := make([]complex128, m)
	b[0] = chirp[0]
	for i := 1; i < n; i++ {
		b[i], b[m-i] = chirp[i], chirp[i]
	}
	fft := fourier.NewCmplxFFT(m)
	fa := fft.Coefficients(nil, a)
	fb := fft.Coefficients(a, b) // a is no longer needed
	for i := range fa {
		fa[i] *= fb[i]
	}
	conv := fft.Sequence(b, fa)
	out := make([]complex128, n/2+1)
	scale := complex(1/float64(m), 0)
	for k := range out {
		out[k] = conv[k] * scale * cmplx.Conj(chirp[k])
	}
	return out
}

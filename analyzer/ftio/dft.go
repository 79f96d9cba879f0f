package ftio

import (
	"math"
	"math/cmplx"
	"sync"

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
	k := chirpFor(n)
	chirp, m := k.chirp, len(k.fb)
	a := make([]complex128, m)
	for i, v := range x {
		a[i] = complex(v, 0) * cmplx.Conj(chirp[i])
	}
	k.mu.Lock() // the plan holds work space
	fa := k.fft.Coefficients(nil, a)
	for i := range fa {
		fa[i] *= k.fb[i]
	}
	conv := k.fft.Sequence(a, fa)
	k.mu.Unlock()
	out := make([]complex128, n/2+1)
	scale := complex(1/float64(m), 0)
	for k := range out {
		out[k] = conv[k] * scale * cmplx.Conj(chirp[k])
	}
	return out
}

// bluesteinKernel is what Bluestein's algorithm needs for one length: the
// chirp, the FFT plan of the convolution and the FFT of the chirp.
type bluesteinKernel struct {
	mu    sync.Mutex
	chirp []complex128
	fft   *fourier.CmplxFFT
	fb    []complex128
}

// kernels keeps the kernels of the last few lengths: analyses of one
// trace (its reads, writes and both, or a job's signal) share a length.
var kernels struct {
	sync.Mutex
	recent []*bluesteinKernel
}

const keptKernels = 4

func chirpFor(n int) *bluesteinKernel {
	kernels.Lock()
	for i, k := range kernels.recent {
		if len(k.chirp) == n {
			copy(kernels.recent[1:i+1], kernels.recent[:i])
			kernels.recent[0] = k
			kernels.Unlock()
			return k
		}
	}
	kernels.Unlock()
	m := 1
	for m < 2*n-1 {
		m <<= 1
	}
	k := &bluesteinKernel{chirp: make([]complex128, n), fft: fourier.NewCmplxFFT(m)}
	for i := range k.chirp {
		// i² mod 2N keeps the angle small, hence accurate, for large i.
		q := (int64(i) * int64(i)) % (2 * int64(n))
		k.chirp[i] = cmplx.Exp(complex(0, math.Pi*float64(q)/float64(n)))
	}
	b := make([]complex128, m)
	b[0] = k.chirp[0]
	for i := 1; i < n; i++ {
		b[i], b[m-i] = k.chirp[i], k.chirp[i]
	}
	k.fb = k.fft.Coefficients(nil, b)
	kernels.Lock()
	kernels.recent = append([]*bluesteinKernel{k}, kernels.recent...)
	if len(kernels.recent) > keptKernels {
		kernels.recent = kernels.recent[:keptKernels]
	}
	kernels.Unlock()
	return k
}

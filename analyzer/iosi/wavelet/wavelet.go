// Package wavelet is the discrete wavelet transform IOSI smooths its
// samples with: the discrete Meyer ("dmey") filter bank, computed from the
// Meyer scaling function's definition, and a multilevel DWT and its inverse
// with the same conventions as PyWavelets (pywt) in its "symmetric"
// (half-sample symmetric) extension mode, so that lengths and values agree
// with pywt.wavedec and pywt.waverec on the same filter bank.
//
// The API is stable; AID (analyzer/aid) uses it as IOSI does:
//
//	b := wavelet.Dmey()               // 62-tap discrete Meyer bank
//	c := wavelet.Wavedec(x, b, 2)     // [cA2, cD2, cD1], as pywt.wavedec
//	y := wavelet.Waverec(c, b)        // as pywt.waverec
//	a := wavelet.Approx(x, b, 2)      // level-2 approximation, len(a) == len(x)
package wavelet

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// Bank is a two-channel orthogonal filter bank in pywt's layout: DecLo and
// DecHi are the analysis (decomposition) filters, RecLo and RecHi the
// synthesis (reconstruction) filters, all of the same even length.
type Bank struct {
	DecLo, DecHi, RecLo, RecHi []float64
}

// Len is the filter length.
func (b Bank) Len() int { return len(b.DecLo) }

// NewBank builds the orthogonal bank whose decomposition low-pass filter is
// decLo, with pywt's quadrature-mirror conventions: RecLo is DecLo
// reversed, DecHi[k] = (-1)^(k+1) RecLo[k], RecHi is DecHi reversed.
func NewBank(decLo []float64) Bank {
	n := len(decLo)
	b := Bank{DecLo: slices.Clone(decLo), DecHi: make([]float64, n), RecLo: make([]float64, n), RecHi: make([]float64, n)}
	for k := range n {
		b.RecLo[k] = decLo[n-1-k]
	}
	for k := range n {
		b.DecHi[k] = b.RecLo[k]
		if k%2 == 0 {
			b.DecHi[k] = -b.RecLo[k]
		}
	}
	for k := range n {
		b.RecHi[k] = b.DecHi[n-1-k]
	}
	return b
}

// DmeyLen is the length of the discrete Meyer filters, as in pywt and MATLAB.
const DmeyLen = 62

var (
	dmeyOnce sync.Once
	dmeyLo   []float64
)

// Dmey returns the discrete Meyer filter bank: the Meyer scaling filter
// h[k] = φ(k/2)/√2, k = -31..30, at indices 0..61 (pywt's dmey has the same
// length and alignment), computed from the scaling function's Fourier
// transform
//
//	φ̂(ω) = 1                                for |ω| ≤ 2π/3
//	φ̂(ω) = cos(π/2 · ν(3|ω|/(2π) − 1))       for 2π/3 ≤ |ω| ≤ 4π/3
//	φ̂(ω) = 0                                otherwise
//	ν(x)  = x⁴ (35 − 84x + 70x² − 20x³)
//
// so h[k] = (√2/π) ∫₀^π φ̂(2ω) cos(kω) dω, integrated numerically to about
// 1e-14. The truncated taps are then scaled so that they sum to √2: the
// low-pass gain at frequency zero is exactly one and the approximation
// keeps a signal's mean (its I/O volume). pywt's dmey is MATLAB's table,
// a coarser numerical approximation of the same function: its taps differ
// from these by at most 8.4e-4 (testdata/golden.json holds both).
// The returned bank is shared; callers must not modify it.
func Dmey() Bank {
	dmeyOnce.Do(func() { dmeyLo = meyerTaps(DmeyLen) })
	return NewBank(dmeyLo)
}

// meyerTaps computes n taps of the Meyer scaling filter centred at index
// n/2 and normalises their sum to √2.
func meyerTaps(n int) []float64 {
	h := make([]float64, n)
	sum := 0.0
	for i := range n {
		h[i] = meyerTap(float64(i - n/2))
		sum += h[i]
	}
	for i := range h {
		h[i] *= math.Sqrt2 / sum
	}
	return h
}

// meyerTap is h[k] = (√2/π) ∫₀^π φ̂(2ω) cos(kω) dω. φ̂(2ω) is one on
// [0, π/3] (integrated in closed form) and zero beyond 2π/3; on the
// transition band it is a smooth polynomial composition, integrated by
// composite Simpson's rule.
func meyerTap(k float64) float64 {
	flat := math.Pi / 3
	if k != 0 {
		flat = math.Sin(k*math.Pi/3) / k
	}
	const panels = 1 << 13
	a, b := math.Pi/3, 2*math.Pi/3
	w := (b - a) / panels
	f := func(om float64) float64 {
		x := 3*(2*om)/(2*math.Pi) - 1
		nu := x * x * x * x * (35 - 84*x + 70*x*x - 20*x*x*x)
		return math.Cos(math.Pi/2*nu) * math.Cos(k*om)
	}
	s := f(a) + f(b)
	for i := 1; i < panels; i++ {
		c := 2.0
		if i%2 == 1 {
			c = 4
		}
		s += c * f(a+float64(i)*w)
	}
	return math.Sqrt2 / math.Pi * (flat + s*w/3)
}

// symIndex maps an index outside [0, n) onto the signal by half-sample
// symmetric extension (x[-1] = x[0], x[n] = x[n-1]), repeated as often as
// needed, which is pywt's "symmetric" mode also for signals shorter than
// the filter.
func symIndex(i, n int) int {
	p := 2 * n
	i %= p
	if i < 0 {
		i += p
	}
	if i >= n {
		i = p - 1 - i
	}
	return i
}

// CoeffLen is the number of coefficients one DWT level gives for n samples
// and filters of length f: floor((n+f-1)/2), as pywt.dwt_coeff_len in
// symmetric mode.
func CoeffLen(n, f int) int { return (n + f - 1) / 2 }

// DWT is one level of the transform: approximation and detail
// coefficients of x, each of length CoeffLen(len(x), b.Len()). It is
// pywt.dwt(x, bank, mode="symmetric"). An empty x gives empty slices.
func DWT(x []float64, b Bank) (cA, cD []float64) {
	n, f := len(x), b.Len()
	if n == 0 || f == 0 {
		return []float64{}, []float64{}
	}
	m := CoeffLen(n, f)
	cA, cD = make([]float64, m), make([]float64, m)
	for o := range m {
		i := 2*o + 1
		var sa, sd float64
		if i-f+1 >= 0 && i < n {
			// Interior: no extension, the hot loop.
			for j := range f {
				v := x[i-j]
				sa += b.DecLo[j] * v
				sd += b.DecHi[j] * v
			}
		} else {
			for j := range f {
				v := x[symIndex(i-j, n)]
				sa += b.DecLo[j] * v
				sd += b.DecHi[j] * v
			}
		}
		cA[o], cD[o] = sa, sd
	}
	return cA, cD
}

// IDWT is one level of the inverse transform, pywt.idwt(cA, cD, bank,
// mode="symmetric"): the "valid" part of the upsampled convolution, of
// length 2·len(cA) − b.Len() + 2. A nil cD counts as zeros (only the
// approximation is reconstructed); otherwise it must be as long as cA.
func IDWT(cA, cD []float64, b Bank) ([]float64, error) {
	n, f := len(cA), b.Len()
	if cD != nil && len(cD) != n {
		return nil, fmt.Errorf("wavelet: %d approximation and %d detail coefficients", n, len(cD))
	}
	m := 2*n - f + 2
	if m <= 0 {
		return nil, fmt.Errorf("wavelet: %d coefficients are too few for filters of length %d", n, f)
	}
	out := make([]float64, m)
	// out[o] = Σ_j rec[j]·up[o+f-2-j], up[2k] = c[k], up[odd] = 0.
	for o := range m {
		p := o + f - 2
		j0 := p % 2 // j with p-j even
		s := 0.0
		for j := j0; j < f; j += 2 {
			k := (p - j) / 2
			if k < 0 {
				break
			}
			if k >= n {
				continue
			}
			s += b.RecLo[j] * cA[k]
			if cD != nil {
				s += b.RecHi[j] * cD[k]
			}
		}
		out[o] = s
	}
	return out, nil
}

// MaxLevel is the deepest useful level for n samples and filters of
// length f, as pywt.dwt_max_level: floor(log2(n/(f-1))), 0 if n < f-1.
func MaxLevel(n, f int) int {
	if f < 2 || n < f-1 {
		return 0
	}
	l := 0
	for q := n / (f - 1); q > 1; q /= 2 {
		l++
	}
	return l
}

// Wavedec is the multilevel transform, pywt.wavedec(x, bank,
// mode="symmetric", level=level): [cA_level, cD_level, ..., cD_1]. Levels
// beyond MaxLevel are allowed, as in pywt (which only warns), and level
// must be at least 1.
func Wavedec(x []float64, b Bank, level int) ([][]float64, error) {
	if level < 1 {
		return nil, fmt.Errorf("wavelet: level %d, must be at least 1", level)
	}
	if len(x) == 0 {
		return nil, fmt.Errorf("wavelet: empty signal")
	}
	out := make([][]float64, level+1)
	a := x
	for l := level; l >= 1; l-- {
		var d []float64
		a, d = DWT(a, b)
		out[l] = d
	}
	out[0] = a
	return out, nil
}

// Waverec is the multilevel inverse, pywt.waverec(coeffs, bank,
// mode="symmetric"): coeffs is [cA_L, cD_L, ..., cD_1] as Wavedec gives
// it. A nil detail array counts as zeros. As pywt, an approximation one
// longer than the next detail array loses its last value; the result may
// be one longer than the original signal (pywt's behaviour for odd
// lengths).
func Waverec(coeffs [][]float64, b Bank) ([]float64, error) {
	if len(coeffs) == 0 {
		return nil, fmt.Errorf("wavelet: no coefficients")
	}
	a := coeffs[0]
	for _, d := range coeffs[1:] {
		if d != nil {
			if len(a) == len(d)+1 {
				a = a[:len(a)-1]
			} else if len(a) != len(d) {
				return nil, fmt.Errorf("wavelet: approximation of %d and detail of %d coefficients do not match", len(a), len(d))
			}
		}
		var err error
		if a, err = IDWT(a, d, b); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Approx returns the level-level approximation of x reconstructed to the
// length of x: pywt.waverec([cA_level, 0, ..., 0], bank)[:len(x)], the
// low-frequency component IOSI finds bursts in. Details are dropped, so
// the result is smooth at the scale of 2^level samples; with Dmey its
// mean equals the mean of x up to edge effects.
func Approx(x []float64, b Bank, level int) ([]float64, error) {
	c, err := Wavedec(x, b, level)
	if err != nil {
		return nil, err
	}
	a := c[0]
	for l := 1; l <= level; l++ {
		// The detail array this level would pair with has the length of
		// the next level's input transform, which Wavedec dropped.
		dl := len(c[l])
		if len(a) == dl+1 {
			a = a[:dl]
		}
		if a, err = IDWT(a, nil, b); err != nil {
			return nil, err
		}
	}
	if len(a) < len(x) {
		return nil, fmt.Errorf("wavelet: reconstruction of %d samples from %d", len(a), len(x))
	}
	return a[:len(x)], nil
}

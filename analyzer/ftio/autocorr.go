package ftio

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// FTIO's --autocorrelation runs a second estimate of the period beside the
// DFT's: the lags between consecutive peaks of the signal's autocorrelation
// are candidate periods, those far from their weighted mean are dropped,
// and the rest give a period (their weighted mean) and a confidence (one
// minus their coefficient of variation). FTIO then merges the two into one
// prediction. MergeAutocorrelation reproduces what FTIO v0.0.9 computes,
// on the same samples, so that its numbers can be compared with FTIO's;
// where FTIO's merge departs from what its code sets out to do, the
// result says so beside FTIO's figure rather than changing it.

// minPeakHeight is the autocorrelation a peak needs to count (FTIO's
// find_peaks height).
const minPeakHeight = 0.15

// minMergedConfidence is the merged confidence below which FTIO drops the
// period.
const minMergedConfidence = 0.2

// AutocorrEstimate is FTIO's autocorrelation estimate of the period.
type AutocorrEstimate struct {
	// PeakLags are the lags (s) of the autocorrelation's peaks of at
	// least minPeakHeight, in order.
	PeakLags []float64 `json:"peak_lags_s"`
	// Candidates are the intervals between consecutive peaks (s), and
	// Kept those left after FTIO's filter (a weighted z-score above 1
	// drops a candidate, the weights being the differences between
	// consecutive peaks' heights, as FTIO takes them).
	Candidates []float64 `json:"candidates_s"`
	Kept       []float64 `json:"kept_s"`
	// PeriodS is the weighted mean of Kept, nil when there is none or it
	// is not positive (the weights can be negative); Confidence is one
	// minus their weighted coefficient of variation.
	PeriodS    *float64 `json:"period_s"`
	Confidence float64  `json:"confidence"`
	// Note says why there is no estimate when FTIO would fail.
	Note string `json:"note,omitempty"`
}

// MergedPrediction is FTIO's merge of the DFT's period with the
// autocorrelation's estimate.
type MergedPrediction struct {
	Autocorrelation AutocorrEstimate `json:"autocorrelation"`
	// PeriodS and Confidence are FTIO's merged prediction: the DFT's
	// first candidate with the mean of 1, its confidence and the
	// autocorrelation's; the autocorrelation's period with a third of
	// its confidence when the DFT found none; the DFT's alone when the
	// autocorrelation found none. Nil when the merged confidence is below
	// 0.2 (FTIO then reports no dominant frequency).
	PeriodS    *float64 `json:"period_s"`
	Confidence float64  `json:"confidence"`
	// Source is "merged", "dft" (no autocorrelation estimate) or
	// "autocorrelation" (no DFT period).
	Source string `json:"source"`
	// CandidateAgreement is what the "1" in FTIO's mean is meant to be:
	// one minus the coefficient of variation of the autocorrelation's
	// kept candidates together with the DFT's period. FTIO v0.0.9 passes
	// its merge an empty list of candidates, so the term is always 1
	// there; here it is computed for the reader, and left out of
	// Confidence.
	CandidateAgreement *float64 `json:"candidate_agreement,omitempty"`
}

// Autocorrelation computes FTIO's autocorrelation estimate on res's
// samples.
func (res *Result) Autocorrelation() AutocorrEstimate {
	return autocorrEstimate(res.Signal, res.Fs)
}

func autocorrEstimate(x []float64, fs float64) AutocorrEstimate {
	var est AutocorrEstimate
	acorr := fullAutocorrelation(x)
	if acorr == nil {
		est.Note = "a constant signal has no autocorrelation"
		return est
	}
	peaks := findPeaks(acorr, minPeakHeight)
	for _, p := range peaks {
		est.PeakLags = append(est.PeakLags, float64(p)/fs)
	}
	var weights []float64
	for i := 1; i < len(peaks); i++ {
		est.Candidates = append(est.Candidates, float64(peaks[i]-peaks[i-1])/fs)
		weights = append(weights, acorr[peaks[i]]-acorr[peaks[i-1]])
	}
	// Peaks are at least two samples apart, so every candidate passes
	// FTIO's filter of periods above one sample.
	kept, keptW := est.Candidates, weights
	if len(kept) > 0 {
		mean, std, ok := weightedMeanStd(kept, weights)
		if !ok {
			est.Note = "the candidates' weights sum to zero (FTIO v0.0.9 fails here)"
			return est
		}
		if std != 0 {
			kept, keptW = nil, nil
			for i, c := range est.Candidates {
				if math.Abs(c-mean)/std <= 1 {
					kept, keptW = append(kept, c), append(keptW, weights[i])
				}
			}
		}
	}
	est.Kept = kept
	if len(kept) == 0 {
		return est
	}
	mean, std, ok := weightedMeanStd(kept, keptW)
	if !ok {
		est.Note = "the kept candidates' weights sum to zero (FTIO v0.0.9 fails here)"
		return est
	}
	if mean > 0 {
		est.PeriodS = &mean
		est.Confidence = 1 - math.Abs(std/mean)
	}
	return est
}

// weightedMeanStd is numpy's average of v with weights w and the square
// root of the absolute weighted mean square deviation (ok false when the
// weights sum to zero).
func weightedMeanStd(v, w []float64) (mean, std float64, ok bool) {
	var sw, swv float64
	for i := range v {
		sw += w[i]
		swv += w[i] * v[i]
	}
	if sw == 0 {
		return 0, 0, false
	}
	mean = swv / sw
	var sd float64
	for i := range v {
		sd += w[i] * (v[i] - mean) * (v[i] - mean)
	}
	return mean, math.Sqrt(math.Abs(sd / sw)), true
}

// fullAutocorrelation returns the autocorrelation of x at lags 0..n-1,
// normalised by its variance and n (1 at lag 0), as FTIO computes it; nil
// for a constant or empty signal. It is computed through an FFT of x
// zero-padded to twice its length.
func fullAutocorrelation(x []float64) []float64 {
	n := len(x)
	if n == 0 {
		return nil
	}
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(n)
	var variance float64
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	variance /= float64(n)
	if variance == 0 {
		return nil
	}
	m := fftLength(2 * n)
	padded := make([]float64, m)
	for i, v := range x {
		padded[i] = v - mean
	}
	fft := fourier.NewFFT(m)
	coef := fft.Coefficients(nil, padded)
	for i, c := range coef {
		coef[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	lagged := fft.Sequence(nil, coef)
	out := make([]float64, n)
	for k := range out {
		// gonum's inverse is unnormalised: divide by m.
		out[k] = lagged[k] / float64(m) / variance / float64(n)
	}
	return out
}

// fftLength is the smallest length at least n whose only prime factors
// are 2, 3 and 5 (fast for the FFT).
func fftLength(n int) int {
	for m := n; ; m++ {
		r := m
		for _, p := range []int{2, 3, 5} {
			for r%p == 0 {
				r /= p
			}
		}
		if r == 1 {
			return m
		}
	}
}

// MergeAutocorrelation merges res's period with the autocorrelation's
// estimate as FTIO's --autocorrelation does. The DFT's candidate is FTIO's
// first dominant frequency: the period reported when there is one
// candidate (or a fundamental iopred chose), the lower-frequency one of
// two.
func (res *Result) MergeAutocorrelation() MergedPrediction {
	m := MergedPrediction{Autocorrelation: res.Autocorrelation()}
	auto := m.Autocorrelation
	dftPeriod, dftConf := 0.0, 0.0
	if res.PeriodS != nil {
		dftPeriod, dftConf = *res.PeriodS, res.Confidence
		if len(res.Candidates) == 2 && !res.Fundamental {
			dftPeriod, dftConf = res.Candidates[0].PeriodS, res.Candidates[0].Confidence
		}
	}
	switch {
	case auto.PeriodS == nil:
		m.Source = "dft"
		if dftPeriod > 0 {
			m.PeriodS, m.Confidence = &dftPeriod, dftConf
		}
		return m
	case dftPeriod == 0:
		m.Source = "autocorrelation"
		p := *auto.PeriodS
		m.PeriodS, m.Confidence = &p, auto.Confidence/3
		return m
	}
	m.Source = "merged"
	m.Confidence = (1 + dftConf + auto.Confidence) / 3
	if m.Confidence >= minMergedConfidence {
		m.PeriodS = &dftPeriod
	}
	if len(auto.Kept) > 0 {
		all := append(append([]float64(nil), auto.Kept...), dftPeriod)
		var mean, sd float64
		for _, v := range all {
			mean += v / float64(len(all))
		}
		for _, v := range all {
			sd += (v - mean) * (v - mean) / float64(len(all))
		}
		a := 1 - math.Abs(math.Sqrt(sd)/mean)
		m.CandidateAgreement = &a
	}
	return m
}

// WriteMerged prints a merged prediction for people.
func WriteMerged(w io.Writer, m MergedPrediction) error {
	ew := &errWriter{w: w}
	a := m.Autocorrelation
	ew.printf("autocorrelation (FTIO's --autocorrelation): %d peaks of at least %g", len(a.PeakLags), minPeakHeight)
	if len(a.Candidates) > 0 {
		ew.printf(", periods between them %s s, kept %s s", seconds(a.Candidates), seconds(a.Kept))
	}
	if a.PeriodS != nil {
		ew.printf("; period %.6g s, confidence %.4f", *a.PeriodS, a.Confidence)
	} else {
		ew.printf("; no period")
	}
	if a.Note != "" {
		ew.printf(" (%s)", a.Note)
	}
	ew.printf("\n")
	switch {
	case m.PeriodS != nil:
		ew.printf("merged with the DFT as FTIO does (%s): period %.6g s, confidence %.4f", m.Source, *m.PeriodS, m.Confidence)
	default:
		ew.printf("merged with the DFT as FTIO does (%s): no period (confidence %.4f)", m.Source, m.Confidence)
	}
	if m.CandidateAgreement != nil {
		ew.printf("; the autocorrelation's candidates agree with that period to %.4f (FTIO counts 1: it passes its merge no candidates)", *m.CandidateAgreement)
	}
	ew.printf("\n")
	return ew.err
}

func seconds(v []float64) string {
	s := "["
	for i, x := range v {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.4g", x)
	}
	return s + "]"
}

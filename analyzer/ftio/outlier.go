package ftio

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"iopred/analyzer/iosi/lof"
	"iopred/analyzer/isoforest"
)

// Outlier names the detector that picks the outlying bins of the spectrum
// (FTIO's --outlier).
type Outlier string

// FTIO's outlier detectors. Each but the z-score runs, as FTIO's do, on
// the spectrum's points (k/(N/2), p_k) for k = 1..N/2: the frequency
// scaled to 1 at the Nyquist bin and the bin's share of the spectrum.
const (
	// OutlierZScore is FTIO's default: bins whose z-score exceeds 3 and
	// tol times the largest.
	OutlierZScore Outlier = "zscore"
	// OutlierDBSCAN is DBSCAN with 2 points per core and a radius of
	// (max p - min p)·(1 - tol) in share and one bin in frequency: the
	// noise points are the outliers, the share over the largest their
	// confidence.
	OutlierDBSCAN Outlier = "dbscan"
	// OutlierLOF is the local outlier factor with 20 neighbours, scored
	// as new samples against the spectrum, outlying beyond the 0.1st
	// percentile of the training scores (contamination 0.001).
	OutlierLOF Outlier = "lof"
	// OutlierIsoForest is an isolation forest of 100 trees on up to 256
	// points each, contamination 0.001. It is randomised: iopred seeds it
	// (Options.Seed), so its answers repeat, but they are FTIO-like, not
	// FTIO's, whose forest is seeded afresh on every run.
	OutlierIsoForest Outlier = "isoforest"
	// OutlierPeaks is scipy's find_peaks on the shares with a height of
	// tol times the largest: local maxima (a plateau's middle), never the
	// first or last bin; each with confidence 1.
	OutlierPeaks Outlier = "peaks"
)

// ParseOutlier accepts a detector's name, with FTIO's spellings too
// (z-score, db-scan, forest, isolation_forest, peak, find_peaks).
func ParseOutlier(s string) (Outlier, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "zscore", "z-score":
		return OutlierZScore, nil
	case "dbscan", "db-scan", "db":
		return OutlierDBSCAN, nil
	case "lof", "local outlier factor":
		return OutlierLOF, nil
	case "isoforest", "forest", "isolation_forest", "isolation-forest":
		return OutlierIsoForest, nil
	case "peaks", "peak", "find_peaks", "find peaks":
		return OutlierPeaks, nil
	}
	return "", fmt.Errorf("ftio: unknown outlier detector %q (zscore, dbscan, lof, isoforest or peaks)", s)
}

// spectrumPoints are FTIO's points for the detectors: the bin's frequency
// over the Nyquist bin's (computed as FTIO does, from k·fs/N) and its
// share p_k.
func spectrumPoints(p []float64, fs float64, n int) [][]float64 {
	half := len(p)
	top := fs * float64(half) / float64(n)
	pts := make([][]float64, half)
	for i := range p {
		pts[i] = []float64{fs * float64(i+1) / float64(n) / top, p[i]}
	}
	return pts
}

// detect returns the outlying bins' indices (k-1, ascending) and every
// bin's confidence under the detector.
func detect(method Outlier, p []float64, fs float64, n int, tol float64, seed int64) ([]int, []float64, error) {
	conf := make([]float64, len(p))
	sum, hi := 0.0, 0.0
	for _, v := range p {
		sum += v
		hi = math.Max(hi, v)
	}
	if len(p) < 2 || sum <= 0 {
		return nil, conf, nil // a flat spectrum has nothing to stand out
	}
	pts := spectrumPoints(p, fs, n)
	var out []int
	switch method {
	case OutlierDBSCAN:
		out = dbscanNoise(pts, tol)
		for i, v := range p {
			conf[i] = v / hi
		}
	case OutlierPeaks:
		out = findPeaks(p, tol*hi)
		for _, i := range out {
			conf[i] = 1
		}
	case OutlierLOF:
		train, again, err := lof.Novelty(pts, 20)
		if err != nil {
			return nil, nil, err
		}
		neg := make([]float64, len(train))
		for i, v := range train {
			neg[i] = -v
		}
		offset := percentile(neg, 0.1)
		dec := make([]float64, len(again))
		for i, v := range again {
			dec[i] = -v - offset
			if dec[i] < 0 {
				out = append(out, i)
			}
		}
		conf = normConf(dec)
	case OutlierIsoForest:
		f := isoforest.Fit(pts, isoforest.Options{Seed: seed})
		scores := f.ScoreSamples(pts)
		offset := percentile(scores, 0.1)
		dec := make([]float64, len(scores))
		for i, v := range scores {
			dec[i] = v - offset
			if dec[i] < 0 {
				out = append(out, i)
			}
		}
		conf = normConf(dec)
	default:
		return nil, nil, fmt.Errorf("ftio: detector %q does not run on points", method)
	}
	return out, conf, nil
}

// dbscanNoise returns the points DBSCAN with two points per core leaves
// as noise: with two, a point is a core point as soon as another lies
// within the radius, so the noise is the points with no other within it.
// The points are in ascending order of their first coordinate.
func dbscanNoise(pts [][]float64, tol float64) []int {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range pts {
		lo, hi = math.Min(lo, q[1]), math.Max(hi, q[1])
	}
	dy, dx := (hi-lo)*(1-tol), pts[1][0]-pts[0][0]
	eps := math.Sqrt(dy*dy + dx*dx)
	var noise []int
	for i, q := range pts {
		alone := true
		for _, step := range []int{-1, 1} {
			for j := i + step; alone && j >= 0 && j < len(pts) && math.Abs(pts[j][0]-q[0]) <= eps; j += step {
				alone = math.Hypot(pts[j][0]-q[0], pts[j][1]-q[1]) > eps
			}
		}
		if alone {
			noise = append(noise, i)
		}
	}
	return noise
}

// findPeaks is scipy.signal.find_peaks(x, height=min): the local maxima
// of x (for a flat top, its middle, rounded down), never the first or last
// sample, at least min high.
func findPeaks(x []float64, min float64) []int {
	var out []int
	for i := 1; i < len(x)-1; i++ {
		if !(x[i-1] < x[i]) {
			continue
		}
		ahead := i + 1
		for ahead < len(x)-1 && x[ahead] == x[i] {
			ahead++
		}
		if x[ahead] < x[i] {
			if mid := (i + ahead - 1) / 2; x[mid] >= min {
				out = append(out, mid)
			}
			i = ahead - 1
		}
	}
	return out
}

// percentile is numpy's percentile with linear interpolation.
func percentile(v []float64, q float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	pos := q / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	t := pos - float64(lo)
	return s[lo] + (s[lo+1]-s[lo])*t
}

// normConf is FTIO's norm_conf: 1 for the strongest outlier (the lowest
// decision value), 0 for the strongest inlier.
func normConf(dec []float64) []float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range dec {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	out := make([]float64, len(dec))
	for i, v := range dec {
		switch {
		case lo == hi:
		case lo == 0:
			out[i] = 1 - v/hi
		default:
			out[i] = (hi - v) / (hi - lo)
		}
	}
	return out
}

// detectedCandidates keeps FTIO's way with a detector's outliers: walking
// up in frequency, a bin whose frequency is a multiple of one already kept
// is a harmonic and dropped; more than two left means no period.
func detectedCandidates(out []int, conf, p, z []float64, fs float64, n, minCycles int) ([]Candidate, int) {
	var kept []int
	count := 0
	for _, i := range out {
		k := i + 1
		if k < minCycles {
			continue
		}
		// FTIO's test on the frequencies as numpy computes them, fs·k/N,
		// with a remainder below 1e-5 Hz: rounding makes some exact
		// multiples fail it (they then count as rival periods), and below
		// 1e-5 Hz every bin passes. Kept as FTIO has it, so that its
		// answers are reproduced.
		harmonic := false
		for _, c := range kept {
			harmonic = harmonic || math.Mod(fs*float64(k)/float64(n), fs*float64(c)/float64(n)) < 1e-5
		}
		if !harmonic {
			kept = append(kept, k)
			count++
		}
	}
	if len(kept) > 2 {
		return nil, count
	}
	var cands []Candidate
	for _, k := range kept {
		f := float64(k) * fs / float64(n)
		cands = append(cands, Candidate{FreqHz: f, PeriodS: 1 / f, Bin: k, Z: z[k-1], Amplitude: p[k-1], Confidence: math.Abs(conf[k-1])})
	}
	return cands, count
}

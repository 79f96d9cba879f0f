package aid

import (
	"errors"
	"fmt"
)

// Options are the knobs of learning, with the paper's defaults. They are
// kept in the knowledge base; a learn with other options classifies every
// application again (bursts are only detected again for the days it
// reads, so a new detector or threshold needs a fresh knowledge base).
type Options struct {
	// Detector finds the bursts of the aggregate log: "gaussian" (a
	// Gaussian low-pass over the rate above a rolling baseline, then a
	// threshold) or "wavelet" (IOSI's wavelet step).
	Detector string `json:"detector"`
	// Sigma is the Gaussian's width in samples.
	Sigma float64 `json:"sigma"`
	// MinPeak is the least rate above the baseline a burst must reach,
	// bytes/s; NoiseK the same in multiples of the baseline's noise (the
	// larger of the two applies).
	MinPeak float64 `json:"min_peak"`
	NoiseK  float64 `json:"noise_k"`
	// OSTMinPeak is the least rate above one OST's own baseline a burst
	// found OST by OST must reach (with NoiseK times that OST's noise);
	// -1 turns the per-OST detection off.
	OSTMinPeak float64 `json:"ost_min_peak,omitempty"`
	// MinPts and Xi are OPTICS's neighbourhood size and ξ steepness.
	MinPts int     `json:"min_pts"`
	Xi     float64 `json:"xi"`
	// Resolution is the distance in (log10 peak, log10 bytes) under
	// which two bursts count as equally close (0.03: 7%).
	Resolution float64 `json:"resolution"`
	// MaxPoints bounds the bursts of one application given to OPTICS
	// (O(n²)); beyond it a regular subset is clustered and the rest join
	// their nearest clustered neighbour's cluster.
	MaxPoints int `json:"max_points"`
	// Presence is the share of an application's runs in which a cluster
	// must recur periodically for the application to be a candidate.
	Presence float64 `json:"presence"`
	// ScopeIntervals is how many burst intervals the scope check looks
	// beyond each side of a run (two bursts of the pattern on one side and
	// the run is out of scope); ScopeMax the share of periodic runs out of
	// scope at which the candidate is rejected.
	ScopeIntervals float64 `json:"scope_intervals"`
	ScopeMax       float64 `json:"scope_max"`
	// MinSupport is the runs a candidate needs to be accepted; with fewer
	// it stays on probation.
	MinSupport int `json:"min_support"`
}

// DefaultOptions are the paper's settings where it gives them (60%
// presence, 5 intervals for the scope check, 5 samples of support) and
// the ones measured on the simulated center otherwise.
func DefaultOptions() Options {
	return Options{Detector: "gaussian", Sigma: 1, MinPeak: 1e9, NoiseK: 8, OSTMinPeak: 1e7, MinPts: 5, Xi: 0.05, Resolution: 0.03, MaxPoints: 4000,
		Presence: 0.6, ScopeIntervals: 5, ScopeMax: 0.5, MinSupport: 5}
}

func (o Options) check() error {
	switch {
	case o.Detector != "gaussian" && o.Detector != "wavelet" && o.Detector != "":
		return fmt.Errorf("detector %q: want gaussian or wavelet", o.Detector)
	case o.Sigma < 0 || o.Sigma > 100:
		return errors.New("sigma must be in [0, 100] samples")
	case o.MinPeak < 0 || o.NoiseK < 0:
		return errors.New("min_peak and noise_k must not be negative")
	case o.OSTMinPeak < 0 && o.OSTMinPeak != -1:
		return errors.New("ost_min_peak must not be negative (-1: no per-OST detection)")
	case o.MinPts < 0 || o.MinPts == 1 || o.MaxPoints < 0:
		return errors.New("min_pts must be at least 2, max_points not negative")
	case o.Resolution < 0 || o.Resolution > 10:
		return errors.New("resolution must be in [0, 10]")
	case o.Xi < 0 || o.Xi >= 1:
		return errors.New("xi must be in (0, 1)")
	case o.Presence < 0 || o.Presence > 1 || o.ScopeMax < 0 || o.ScopeMax > 1:
		return errors.New("presence and scope_max are shares in [0, 1]")
	case o.ScopeIntervals < 0 || o.MinSupport < 0:
		return errors.New("scope_intervals and min_support must not be negative")
	}
	return nil
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Detector == "" {
		o.Detector = d.Detector
	}
	if o.Sigma == 0 {
		o.Sigma = d.Sigma
	}
	if o.MinPeak == 0 {
		o.MinPeak = d.MinPeak
	}
	if o.NoiseK == 0 {
		o.NoiseK = d.NoiseK
	}
	if o.OSTMinPeak == 0 {
		o.OSTMinPeak = d.OSTMinPeak
	}
	if o.MinPts == 0 {
		o.MinPts = d.MinPts
	}
	if o.Xi == 0 {
		o.Xi = d.Xi
	}
	if o.Resolution == 0 {
		o.Resolution = d.Resolution
	}
	if o.MaxPoints == 0 {
		o.MaxPoints = d.MaxPoints
	}
	if o.Presence == 0 {
		o.Presence = d.Presence
	}
	if o.ScopeIntervals == 0 {
		o.ScopeIntervals = d.ScopeIntervals
	}
	if o.ScopeMax == 0 {
		o.ScopeMax = d.ScopeMax
	}
	if o.MinSupport == 0 {
		o.MinSupport = d.MinSupport
	}
	return o
}

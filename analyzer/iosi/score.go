package iosi

import (
	"math"
)

// Truth is a ground-truth signature to score against: rates on a grid of
// StepS from the run's start, and its bursts.
type Truth struct {
	StepS  float64
	Write  []float64
	Read   []float64
	Bursts []Burst
}

// Score compares an extracted signature with the truth, as the paper's
// section 6.3 does, on the signature's grid (the truth is held constant
// over each of its intervals) and over the shorter of the two.
type Score struct {
	// XCorr is the largest normalised cross-correlation of the total
	// rates, Σ s(t)·g(t+l) / √(Σ s² Σ g²), over lags l within 10% of the
	// duration: similarity that tolerates drift.
	XCorr float64
	// Corr is the correlation coefficient at lag zero.
	Corr float64
	// VolumeErr is |V(s) − V(g)| / V(g) over the whole of both.
	VolumeErr float64
	// Missed counts truth bursts that no signature burst overlaps;
	// Invented signature bursts that overlap no truth burst. Bursts with
	// less than MinBurstShare of the largest one's bytes are not counted.
	Missed, Invented int
}

// MinBurstShare is the share of the largest burst's bytes below which a
// burst is too small to count as missed or invented.
const MinBurstShare = 0.05

// Clean tells whether no burst was missed or invented.
func (s Score) Clean() bool { return s.Missed == 0 && s.Invented == 0 }

// Compare scores sig against the truth.
func Compare(sig *Signature, g *Truth) Score {
	n := len(sig.Write)
	st := make([]float64, n)
	for i := range st {
		st[i] = sig.Write[i] + sig.Read[i]
	}
	gn := int(math.Ceil(float64(len(g.Write)) * g.StepS / sig.StepS))
	gt := make([]float64, gn)
	for i := range gt {
		k := int(float64(i) * sig.StepS / g.StepS)
		if k < len(g.Write) {
			gt[i] = g.Write[k] + g.Read[k]
		}
	}
	var sc Score
	m := min(n, gn)
	sc.Corr = pearson(st[:m], gt[:m])
	if math.IsNaN(sc.Corr) {
		sc.Corr = 0
	}
	e1, e2 := 0.0, 0.0
	for _, v := range st {
		e1 += v * v
	}
	for _, v := range gt {
		e2 += v * v
	}
	if e1 > 0 && e2 > 0 {
		maxLag := max(n, gn) / 10
		for l := -maxLag; l <= maxLag; l++ {
			c := 0.0
			for i := max(0, -l); i < n && i+l < gn; i++ {
				c += st[i] * gt[i+l]
			}
			sc.XCorr = max(sc.XCorr, c/math.Sqrt(e1*e2))
		}
	}
	sw, sr := sig.Volume()
	gv := 0.0
	for i := range g.Write {
		gv += (g.Write[i] + g.Read[i]) * g.StepS
	}
	if gv > 0 {
		sc.VolumeErr = math.Abs(sw+sr-gv) / gv
	}
	overlaps := func(a, b Burst) bool {
		// A little slack: a burst found a few seconds off is found.
		slack := 2 * g.StepS
		return a.StartS < b.EndS+slack && b.StartS < a.EndS+slack
	}
	big := func(bs []Burst) []Burst {
		top := 0.0
		for _, b := range bs {
			top = max(top, b.WriteBytes+b.ReadBytes)
		}
		var out []Burst
		for _, b := range bs {
			if b.WriteBytes+b.ReadBytes >= MinBurstShare*top {
				out = append(out, b)
			}
		}
		return out
	}
	gb, sb := big(g.Bursts), big(sig.Bursts)
	for _, t := range gb {
		found := false
		for _, s := range sig.Bursts {
			found = found || overlaps(s, t)
		}
		if !found {
			sc.Missed++
		}
	}
	for _, s := range sb {
		found := false
		for _, t := range g.Bursts {
			found = found || overlaps(s, t)
		}
		if !found {
			sc.Invented++
		}
	}
	return sc
}

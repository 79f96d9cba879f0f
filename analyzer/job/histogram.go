package job

import (
	"fmt"
	"math/bits"
)

// MaxBins bounds the bins of a Histogram: a signal of at most this many
// samples, whatever the job's length or number of ranks.
const MaxBins = 1 << 14

// MinBinNs is the finest bin width, about a microsecond.
const MinBinNs = 1 << 10

// Histogram is a bandwidth signal in bounded memory: the bytes moved in
// each bin of an absolute time grid, bin k covering [k*Width, (k+1)*Width)
// ns of wall-clock time. Width is a power of two, so the grids of all
// processes nest: two histograms merge exactly by coarsening the finer one,
// and the order of merges does not change the result. When the bins a
// signal spans would exceed MaxBins, the width doubles and bins merge in
// pairs.
type Histogram struct {
	WidthNs int64     `msgpack:"w" json:"width_ns"`
	First   int64     `msgpack:"f" json:"first"` // grid index of Bins[0]
	Bins    []float64 `msgpack:"b" json:"bins"`  // bytes per bin
}

// Empty reports whether no bytes were added.
func (h *Histogram) Empty() bool { return len(h.Bins) == 0 }

// Add spreads bytes moved over [start, end) (wall-clock ns) over the bins
// it covers, in proportion to the time it spends in each; a request
// without duration counts in the bin of its start.
func (h *Histogram) Add(start, end, bytes int64) {
	if bytes <= 0 || start < 0 {
		return
	}
	if end < start {
		end = start
	}
	if h.WidthNs == 0 {
		h.WidthNs = MinBinNs
	}
	last := end
	if end > start {
		last = end - 1
	}
	w := h.WidthNs
	a, b := start/w, last/w
	if len(h.Bins) == 0 || len(h.Bins) > MaxBins || a < h.First || b >= h.First+int64(len(h.Bins)) {
		// Bins to add (else cover would leave the histogram as it is).
		h.cover(a, b)
		w = h.WidthNs
		a, b = start/w, last/w
	}
	if a == b {
		h.Bins[a-h.First] += float64(bytes)
		return
	}
	rate := float64(bytes) / float64(end-start)
	for k := a; k <= b; k++ {
		lo, hi := max(start, k*w), min(end, (k+1)*w)
		h.Bins[k-h.First] += rate * float64(hi-lo)
	}
}

// cover makes the bins span grid indexes lo..hi (at the current width),
// coarsening as needed.
func (h *Histogram) cover(lo, hi int64) {
	if len(h.Bins) == 0 {
		for hi-lo+1 > MaxBins {
			h.WidthNs *= 2
			lo, hi = lo/2, hi/2
		}
		h.First = lo
		h.Bins = make([]float64, hi-lo+1, max(hi-lo+1, 64))
		return
	}
	for {
		first, last := min(h.First, lo), max(h.First+int64(len(h.Bins))-1, hi)
		if last-first+1 <= MaxBins {
			break
		}
		h.coarsen()
		lo, hi = lo/2, hi/2
	}
	if lo < h.First {
		grown := make([]float64, h.First-lo+int64(len(h.Bins)))
		copy(grown[h.First-lo:], h.Bins)
		h.Bins, h.First = grown, lo
	}
	if n := hi - h.First + 1; n > int64(len(h.Bins)) {
		h.Bins = append(h.Bins, make([]float64, n-int64(len(h.Bins)))...)
	}
}

// Limit coarsens the histogram until it has at most maxBins bins (at
// least 1), for a view that needs fewer than MaxBins.
func (h *Histogram) Limit(maxBins int) {
	for len(h.Bins) > max(maxBins, 1) {
		h.coarsen()
	}
}

// coarsen doubles the width, adding bins in aligned pairs.
//
// It works in place: bin i's pair lands at an index j <= i, every bin
// below i is already consumed, and each merged bin sums its pair from 0
// in the order a fresh slice would, so the result is bit for bit that of
// a copy, without allocating one (a rank's histogram coarsens about ten
// times over a run of seconds).
func (h *Histogram) coarsen() {
	first := h.First / 2
	n := (h.First+int64(len(h.Bins))-1)/2 - first + 1
	bins := h.Bins
	for i, v := range bins {
		bins[i] = 0
		bins[(h.First+int64(i))/2-first] += v
	}
	h.Bins, h.First, h.WidthNs = bins[:n], first, h.WidthNs*2
}

// Merge adds o's bytes to h. The result is the same whatever the order in
// which a set of histograms is merged.
func (h *Histogram) Merge(o *Histogram) error {
	if o.Empty() {
		return nil
	}
	if err := o.check(); err != nil {
		return err
	}
	if h.Empty() {
		h.WidthNs, h.First, h.Bins = o.WidthNs, o.First, append([]float64(nil), o.Bins...)
		return nil
	}
	src := *o
	src.Bins = append([]float64(nil), o.Bins...)
	for src.WidthNs < h.WidthNs {
		src.coarsen()
	}
	for h.WidthNs < src.WidthNs {
		h.coarsen()
	}
	h.cover(src.First, src.First+int64(len(src.Bins))-1)
	for src.WidthNs < h.WidthNs { // cover may have coarsened h further
		src.coarsen()
	}
	for i, v := range src.Bins {
		h.Bins[src.First+int64(i)-h.First] += v
	}
	return nil
}

func (h *Histogram) check() error {
	switch {
	case h.WidthNs < MinBinNs || bits.OnesCount64(uint64(h.WidthNs)) != 1:
		return fmt.Errorf("histogram bin width %d ns is not a power of two of at least %d", h.WidthNs, MinBinNs)
	case len(h.Bins) > MaxBins:
		return fmt.Errorf("histogram of %d bins, more than %d", len(h.Bins), MaxBins)
	case h.First < 0 || h.First > (1<<62)/h.WidthNs:
		return fmt.Errorf("histogram starts at grid index %d, out of range", h.First)
	}
	return nil
}

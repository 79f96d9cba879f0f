package job

import (
	"fmt"
	"math/bits"
	"slices"
	"sync"
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
		h.Bins = h.grow(h.Bins[:0], int(hi-lo+1))
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
		shift, n := int(h.First-lo), len(h.Bins)
		bins := h.grow(h.Bins, shift+n)
		copy(bins[shift:], h.Bins) // the same array or a new one: copy moves either way
		clear(bins[:shift])
		h.Bins, h.First = bins, lo
	}
	if n := hi - h.First + 1; n > int64(len(h.Bins)) {
		h.Bins = h.grow(h.Bins, int(n))
	}
}

// grow returns bins lengthened to n, the bins past len(bins) zero: in
// place when the capacity allows, else in an array of twice the capacity
// (at most MaxBins), so that a signal growing to MaxBins bins costs about
// twice its final memory in allocations, not the five times append's
// growth of a large slice costs. A histogram's first array comes from
// binArrays when one is there.
func (h *Histogram) grow(bins []float64, n int) []float64 {
	if n <= cap(bins) {
		old := len(bins)
		bins = bins[:n]
		clear(bins[old:])
		return bins
	}
	if cap(bins) == 0 {
		if a, ok := binArrays.Get().(*[]float64); ok && n <= cap(*a) {
			bins = (*a)[:n]
			clear(bins)
			return bins
		}
	}
	c := max(64, 2*cap(bins), n)
	if n <= MaxBins {
		c = min(c, MaxBins)
	}
	grown := make([]float64, n, c)
	copy(grown, bins)
	return grown
}

// binArrays holds arrays of MaxBins bins that a builder's histograms are
// done with (release): the ranks' signals are built one trace after
// another, each growing to about the same length.
var binArrays sync.Pool // *[]float64 of capacity MaxBins

// release hands h's array to the next histogram when it is a full-sized
// one, and empties h.
func (h *Histogram) release() {
	if cap(h.Bins) == MaxBins {
		b := h.Bins[:0]
		binArrays.Put(&b)
	}
	h.Bins = nil
}

// Limit coarsens the histogram until it has at most maxBins bins (at
// least 1), for a view that needs fewer than MaxBins.
func (h *Histogram) Limit(maxBins int) {
	for len(h.Bins) > max(maxBins, 1) {
		h.coarsen()
	}
}

// Shrink is Limit(maxBins) with the bins moved to an array of their
// length: the histogram's growing array goes to the next histogram that
// starts, so that a signal kept per process of a long job costs its bins
// and no fresh full-sized array per process.
func (h *Histogram) Shrink(maxBins int) {
	h.Limit(maxBins)
	bins := slices.Clone(h.Bins)
	h.release()
	h.Bins = bins
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
	// src is o until it must be coarsened, which is done on a copy.
	src, copied := *o, false
	coarsenSrc := func() {
		if !copied {
			src.Bins, copied = append([]float64(nil), src.Bins...), true
		}
		src.coarsen()
	}
	for src.WidthNs < h.WidthNs {
		coarsenSrc()
	}
	for h.WidthNs < src.WidthNs {
		h.coarsen()
	}
	h.cover(src.First, src.First+int64(len(src.Bins))-1)
	for src.WidthNs < h.WidthNs { // cover may have coarsened h further
		coarsenSrc()
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

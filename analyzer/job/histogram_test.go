package job

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveAdd is Histogram.Add's arithmetic on a map from grid index to
// bytes, at a fixed width: the reference the growing, shifting and
// recycled arrays must agree with.
func naiveAdd(bins map[int64]float64, w, start, end, bytes int64) {
	if end < start {
		end = start
	}
	last := end
	if end > start {
		last = end - 1
	}
	a, b := start/w, last/w
	if a == b {
		bins[a] += float64(bytes)
		return
	}
	rate := float64(bytes) / float64(end-start)
	for k := a; k <= b; k++ {
		lo, hi := max(start, k*w), min(end, (k+1)*w)
		bins[k] += rate * float64(hi-lo)
	}
}

// A histogram grows its array in place, to the left (earlier requests)
// and to the right, and takes a released array that still holds another
// signal's bins: every bin must be what adding the same requests at the
// final width gives, whatever array it started from. The requests stay
// within MaxBins bins of the finest width, so that no coarsening mixes
// in (coarsen has its own tests through Merge).
func TestHistogramGrowsAndReusesArrays(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	cases := []struct {
		name  string
		order func([]int64) // the order the requests come in
	}{
		{"forward", func([]int64) {}},
		{"backward", func(s []int64) { slices.Reverse(s) }},
		{"shuffled", func(s []int64) { rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] }) }},
	}
	for round := range 3 {
		for _, c := range cases {
			// A full-sized array, dirty, goes back to the pool first.
			dirty := Histogram{WidthNs: MinBinNs}
			dirty.Add(0, MaxBins*MinBinNs-1, 1<<40)
			if cap(dirty.Bins) != MaxBins {
				t.Fatalf("a signal of MaxBins bins has an array of %d", cap(dirty.Bins))
			}
			dirty.release()

			starts := make([]int64, 3000)
			base := int64(1<<30) + int64(round)*7777
			for i := range starts {
				starts[i] = base + rng.Int64N((MaxBins-40)*MinBinNs)
			}
			c.order(starts)
			var h Histogram
			want := map[int64]float64{}
			for i, s := range starts {
				d, b := rng.Int64N(30*MinBinNs), int64(1+i%4096)
				h.Add(s, s+d, b)
				naiveAdd(want, MinBinNs, s, s+d, b)
			}
			if h.WidthNs != MinBinNs {
				t.Fatalf("%s: width %d, want %d (no coarsening)", c.name, h.WidthNs, MinBinNs)
			}
			for i, v := range h.Bins {
				if w := want[h.First+int64(i)]; v != w {
					t.Fatalf("round %d, %s: bin %d is %v, want %v", round, c.name, h.First+int64(i), v, w)
				}
			}
			for k := range want {
				if k < h.First || k >= h.First+int64(len(h.Bins)) {
					t.Fatalf("round %d, %s: bin %d outside the histogram's %d..%d", round, c.name, k, h.First, h.First+int64(len(h.Bins))-1)
				}
			}
			if cap(h.Bins) > MaxBins {
				t.Fatalf("%s: array of %d bins, more than MaxBins", c.name, cap(h.Bins))
			}
			h.release()
		}
	}
}

// Shrink gives the bins Limit gives, in an array of their own length, and
// leaves nothing of them in the array it hands on.
func TestHistogramShrink(t *testing.T) {
	var h, ref Histogram
	for i := range int64(MaxBins) {
		h.Add(i*MinBinNs*3, i*MinBinNs*3+MinBinNs*2, i+1)
		ref.Add(i*MinBinNs*3, i*MinBinNs*3+MinBinNs*2, i+1)
	}
	ref.Limit(512)
	h.Shrink(512)
	if h.WidthNs != ref.WidthNs || h.First != ref.First || !slices.Equal(h.Bins, ref.Bins) || cap(h.Bins) != len(h.Bins) {
		t.Fatalf("Shrink: width %d first %d %d bins (cap %d), want width %d first %d %d bins", h.WidthNs, h.First, len(h.Bins), cap(h.Bins), ref.WidthNs, ref.First, len(ref.Bins))
	}
	kept := slices.Clone(h.Bins)
	var next Histogram // may take the array h handed on
	next.Add(0, MaxBins*MinBinNs-1, 1)
	if !slices.Equal(h.Bins, kept) {
		t.Fatal("the next histogram wrote into the shrunk one's bins")
	}
}

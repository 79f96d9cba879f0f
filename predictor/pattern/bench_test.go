package pattern

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

func strided(n int) []int64 {
	q := make([]int64, n)
	for i := range q {
		q[i] = int64(i) * 4096
	}
	return q
}

// BenchmarkDetectFixedStride: detection time per entry on a fixed stride
// (goal: at least 10 million entries per second, i.e. <= 100 ns/entry).
// The sizes show whether the time per entry stays flat (linear detection).
func BenchmarkDetectFixedStride(b *testing.B) {
	for _, n := range []int{1 << 12, 1 << 16, 1 << 20} {
		q := strided(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				Detect(q, DefaultWindow)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(q)), "ns/entry")
		})
	}
}

// BenchmarkDetect2D: a 2-D walk of 1000 rows of 100 entries.
func BenchmarkDetect2D(b *testing.B) {
	q := make([]int64, 0, 100000)
	for i := int64(0); i < 1000; i++ {
		for j := int64(0); j < 100; j++ {
			q = append(q, i<<20+j*64)
		}
	}
	for b.Loop() {
		Detect(q, DefaultWindow)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(q)), "ns/entry")
}

// BenchmarkDetectRandom: the worst case, no repetition (O(w^2) per entry).
func BenchmarkDetectRandom(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	q := make([]int64, 1<<16)
	for i := range q {
		q[i] = rng.Int64N(1 << 40)
	}
	for b.Loop() {
		Detect(q, DefaultWindow)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(q)), "ns/entry")
}

// BenchmarkStreamAdd: the live detector, per access, on a fixed stride.
func BenchmarkStreamAdd(b *testing.B) {
	s := NewStream(DefaultWindow)
	var off int64
	for b.Loop() {
		s.Add(off, 4096)
		off += 8192
	}
}

// BenchmarkStreamAddRandom: the live detector's worst case, no repetition.
func BenchmarkStreamAddRandom(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	offs := make([]int64, 1<<16)
	for i := range offs {
		offs[i] = rng.Int64N(1 << 40)
	}
	s := NewStream(DefaultWindow)
	i := 0
	for b.Loop() {
		s.Add(offs[i&(1<<16-1)], 4096)
		i++
	}
}

// BenchmarkLookup: Algorithm 2 on the Figure 9 index (goal: under 100 ns).
func BenchmarkLookup(b *testing.B) {
	logical, length, physical := figure9Entries()
	idx, _ := BuildIndex(0, logical, length, physical, 3)
	offs := []int64{29, 1, 44, 57, 15}
	i := 0
	for b.Loop() {
		LookupIndex(idx, offs[i%len(offs)])
		i++
	}
}

// BenchmarkLookupStrided: Algorithm 2 on a one-entry index of a million
// strided writes.
func BenchmarkLookupStrided(b *testing.B) {
	q := strided(1 << 20)
	l := make([]int64, len(q))
	p := make([]int64, len(q))
	for i := range l {
		l[i], p[i] = 1024, int64(i)*1024
	}
	idx, _ := BuildIndex(0, q, l, p, DefaultWindow)
	rng := rand.New(rand.NewPCG(2, 2))
	offs := make([]int64, 1024)
	for i := range offs {
		offs[i] = rng.Int64N(int64(len(q)) * 4096)
	}
	i := 0
	for b.Loop() {
		idx[0].Lookup(offs[i&1023])
		i++
	}
}

// BenchmarkLookup2D: Algorithm 2 on the one-entry index of a 2-D walk
// whose rows of 100 records fold into a pattern of 100 deltas.
func BenchmarkLookup2D(b *testing.B) {
	var q, l, p []int64
	for i := int64(0); i < 1000; i++ {
		for j := int64(0); j < 100; j++ {
			q = append(q, i*400*16+j*16)
			l = append(l, 16)
			p = append(p, int64(len(p))*16)
		}
	}
	idx, _ := BuildIndex(0, q, l, p, DefaultWindow)
	if len(idx) != 1 {
		b.Fatalf("%d entries", len(idx))
	}
	rng := rand.New(rand.NewPCG(3, 3))
	offs := make([]int64, 1024)
	for i := range offs {
		offs[i] = q[rng.IntN(len(q))] + 5
	}
	i := 0
	for b.Loop() {
		if _, ok := idx[0].Lookup(offs[i&1023]); !ok {
			b.Fatal("miss")
		}
		i++
	}
}

// BenchmarkGlobalLookup: Algorithm 3 on the Figure 10 global pattern.
func BenchmarkGlobalLookup(b *testing.B) {
	var runs []Run
	for id, e := range figure10() {
		runs = append(runs, Runs(id, e[0], e[1], e[2])...)
	}
	g, _ := Merge(runs)
	i := int64(0)
	for b.Loop() {
		g[0].Lookup(1000 + i%480)
		i++
	}
}

package job

import "testing"

// fullPartial is a rank whose signal fills every bin: the largest partial
// a rank sends.
func fullPartial(rank int) *Partial {
	p := ranks(1, 3, 8192, 2048, 20, 15e7)[0]
	p.FirstRank = rank
	for i := range p.Streams {
		for j := range p.Streams[i].Runs {
			p.Streams[i].Runs[j].ID = int64(rank)
		}
	}
	for _, h := range []*Histogram{&p.Write, &p.Read} {
		h.WidthNs, h.First, h.Bins = 1<<18, 1e18/(1<<18), make([]float64, 9415)
		for k := range h.Bins {
			h.Bins[k] = float64(k%7) * 4096.5
		}
	}
	return p
}

// BenchmarkMergeStep is one step of the tree at MPI_Finalize: decode the
// received partial and this rank's, merge, encode.
func BenchmarkMergeStep(b *testing.B) {
	ea, _ := fullPartial(0).Encode()
	eb, _ := fullPartial(1).Encode()
	b.ReportMetric(float64(len(ea)), "partial-bytes")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pa, err := Decode(ea)
		if err != nil {
			b.Fatal(err)
		}
		pb, _ := Decode(eb)
		m, _ := Merge(pa, pb)
		if _, err := m.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSummarize is rank 0's last step: the summary of a full
// partial, FTIO at every resolution of both signals included.
func BenchmarkSummarize(b *testing.B) {
	p := fullPartial(0)
	for i := 0; i < b.N; i++ {
		Summarize(p)
	}
}

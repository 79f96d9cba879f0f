package job

import (
	"fmt"
	"testing"
)

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

// BenchmarkRank0 simulates rank 0's side of the finalize step of an N-1
// strided checkpointing job (3 segments of 8 KiB per rank in 2 KiB
// writes, 10 checkpoints) at 8 to 10,000 ranks: the log2(N) messages it
// receives along the tree (encoded partials of 1, 2, 4, ... ranks),
// decoding and merging each, then the summary. The other ranks' merges
// happen in parallel on their own ranks and are not counted.
func BenchmarkRank0(b *testing.B) {
	for _, n := range []int{8, 64, 1024, 10000} {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			parts := ranks(n, 3, 8192, 2048, 10, 15e7)
			// What rank 0 receives at step s: the merged partial of ranks
			// s .. min(2s, n)-1.
			var msgs [][]byte
			var received int
			for s := 1; s < n; s *= 2 {
				m, err := MergeTree(parts[s:min(2*s, n)])
				if err != nil {
					b.Fatal(err)
				}
				enc, _ := m.Encode()
				msgs = append(msgs, enc)
				received += len(enc)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				own := parts[0]
				for _, enc := range msgs {
					other, err := Decode(enc)
					if err != nil {
						b.Fatal(err)
					}
					if own, err = Merge(own, other); err != nil {
						b.Fatal(err)
					}
				}
				Summarize(own)
			}
			b.ReportMetric(float64(received), "received-bytes")
		})
	}
}

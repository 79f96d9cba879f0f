package iosi

import (
	"math"
	"testing"
)

// FuzzExtract feeds the pipeline's entry arbitrary runs: the first byte
// picks the run count, the second the log step, every next pair of bytes
// is one interval's write and read rate (0xff is a gap, NaN), and a zero
// byte pair ends a run. Extract and ExtractDTW must return a signature or
// an error, never panic, and a signature must have finite, non-negative
// rates and bursts inside it.
func FuzzExtract(f *testing.F) {
	f.Add([]byte{3, 2, 10, 1, 200, 1, 10, 1, 0, 0, 10, 1, 190, 2, 12, 1, 0, 0, 9, 1, 210, 1, 11, 1})
	f.Add([]byte{2, 0, 1, 1})
	f.Add([]byte{4, 5, 255, 255, 1, 1, 0, 0, 1, 1, 200, 200, 0, 0, 0, 0, 7, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		runs := int(data[0])%6 + 1
		step := float64(data[1]) / 2
		samples := make([]Sample, runs)
		k := 0
		for i := 2; i+1 < len(data) && len(samples[runs-1].Write) < 128; i += 2 {
			if data[i] == 0 && data[i+1] == 0 {
				k = min(k+1, runs-1)
				continue
			}
			v := func(b byte) float64 {
				if b == 0xff {
					return math.NaN()
				}
				return float64(b) * 1e7
			}
			samples[k].Write = append(samples[k].Write, v(data[i]))
			samples[k].Read = append(samples[k].Read, v(data[i+1]))
		}
		for i := range samples {
			samples[i].StepS = step
		}
		for _, o := range []Options{Default(), Paper()} {
			for _, run := range []func([]Sample, Options) (*Signature, error){Extract, ExtractDTW} {
				sig, err := run(samples, o)
				if err != nil {
					continue
				}
				for i := range sig.Write {
					if !(sig.Write[i] >= 0) || !(sig.Read[i] >= 0) || math.IsInf(sig.Write[i]+sig.Read[i], 0) {
						t.Fatalf("rate %d: write %g read %g", i, sig.Write[i], sig.Read[i])
					}
				}
				for _, b := range sig.Bursts {
					if b.StartS < 0 || b.EndS > sig.DurationS()+1e-9 || b.EndS <= b.StartS {
						t.Fatalf("burst %+v outside the signature of %g s", b, sig.DurationS())
					}
				}
			}
		}
	})
}

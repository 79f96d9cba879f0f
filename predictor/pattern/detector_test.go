package pattern

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// detectStreaming runs a Detector over q.
func detectStreaming(q []int64, window int) []Unit {
	d := NewDetector(window)
	for _, v := range q {
		d.Add(v)
	}
	return d.Units()
}

// The streaming detector gives what the batch one (Detect, the
// reference) gives, unit for unit: on the structured sequences at every
// window, on long 2-D walks whose rows exceed the window (the regrouping),
// on walks that stop part-way through a row (the tail), and on random
// sequences of every kind.
func TestDetectorMatchesDetect(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	seqs := structured(rng)
	var s []int64
	for i := int64(0); i < 40; i++ {
		for j := int64(0); j < 100; j++ {
			s = append(s, i*1<<20+j*4096)
		}
	}
	seqs["2-D, rows of 100"] = s
	seqs["2-D, last row cut"] = s[:len(s)-37]
	s = nil
	for i := int64(0); i < 5000; i++ {
		s = append(s, 65536*i+int64(i%3)*7)
	}
	seqs["strided with a 3-cycle"] = s
	for name, q := range seqs {
		for _, w := range []int{0, 1, 2, 3, 8, 16, 64} {
			if got, want := detectStreaming(q, w), Detect(q, w); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, window %d: streaming %s, batch %s", name, w, Format(got), Format(want))
			}
		}
	}
	for trial := 0; trial < 3000; trial++ {
		n := rng.IntN(300)
		q := make([]int64, n)
		alphabet := rng.IntN(4) + 1
		period := rng.IntN(12) + 1
		for i := range q {
			switch trial % 4 {
			case 0:
				q[i] = rng.Int64N(1 << 40)
			case 1:
				// A repeated group of deltas with rare breaks.
				if i >= period {
					q[i] = q[i-1] + (q[i-period] - q[i-period-1+boolInt(i-period == 0)])
					if rng.IntN(50) == 0 {
						q[i] += int64(rng.IntN(3))
					}
				} else if i > 0 {
					q[i] = q[i-1] + int64(rng.IntN(alphabet))
				}
			default:
				if i > 0 {
					q[i] = q[i-1] + int64(rng.IntN(alphabet)) - 1
				}
			}
		}
		w := rng.IntN(20)
		if got, want := detectStreaming(q, w), Detect(q, w); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d window %d, %v: streaming %s, batch %s", trial, w, q, Format(got), Format(want))
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The detector's memory follows the patterns, not the values: a strided
// stream of a million values keeps one span and a few windows of values.
func TestDetectorBounded(t *testing.T) {
	d := NewDetector(0)
	for i := int64(0); i < 1_000_000; i++ {
		d.Add(i * 8192)
	}
	if len(d.done)+len(d.st) > 2 || cap(d.buf) > 8*DefaultWindow {
		t.Errorf("after 1e6 strided values: %d spans, a buffer of %d values", len(d.done)+len(d.st), cap(d.buf))
	}
	if u := d.Units(); len(u) != 1 || u[0].Len() != 1_000_000 {
		t.Errorf("units %s", Format(u))
	}
}

// FuzzDetector checks the streaming detector against the batch one on
// any sequence (cut at 256 values, which keeps the target fast).
func FuzzDetector(f *testing.F) {
	f.Add([]byte{0, 3, 7, 14, 17, 21, 28, 31, 35, 42, 46, 50, 54, 58}, uint8(3))
	f.Add([]byte{1, 1, 1, 2, 1, 1, 1, 2, 1, 1}, uint8(0))
	f.Add([]byte{2, 2, 4, 2, 2, 4, 2, 2, 4, 2, 2, 4, 2, 2}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, w uint8) {
		if len(data) > 256 {
			data = data[:256]
		}
		q := make([]int64, len(data))
		for i, b := range data {
			q[i] = int64(int8(b)) * 1000
			if i > 0 && b&1 == 0 {
				q[i] += q[i-1]
			}
		}
		if got, want := detectStreaming(q, int(w%40)), Detect(q, int(w%40)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%v window %d: streaming %s, batch %s", q, w%40, Format(got), Format(want))
		}
	})
}

// Segment and Tree read the values back from the spans: Segment equals
// Detect of the slice, and Tree equals BuildTree, at every cut of
// structured and random sequences.
func TestDetectorSegmentAndTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	seqs := structured(rng)
	for trial := 0; trial < 200; trial++ {
		q := make([]int64, rng.IntN(120))
		for i := range q {
			if i > 0 {
				q[i] = q[i-1] + int64(rng.IntN(3))*512
			}
		}
		seqs[fmt.Sprint("random ", trial)] = q
	}
	for name, q := range seqs {
		d := NewDetector(0)
		for _, v := range q {
			d.Add(v)
		}
		if got, want := d.Tree(4), BuildTree(q, 0, 4); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: tree %s, BuildTree %s", name, got.String(), want.String())
		}
		for k := 0; k < 20; k++ {
			from := rng.IntN(len(q) + 1)
			n := rng.IntN(len(q) - from + 1)
			if got, want := d.Segment(int64(from), int64(n)), Detect(q[from:from+n], 0); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: segment [%d, %d): %s, Detect %s", name, from, from+n, Format(got), Format(want))
			}
		}
	}
}

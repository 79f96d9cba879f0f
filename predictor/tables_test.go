package predictor

import (
	"math"
	"math/rand"
	"testing"
)

// TestStats proves the running statistics and equation (1) on a series
// whose answers are computed by hand.
func TestStats(t *testing.T) {
	var s Stats
	for _, x := range []float64{1, 2, 3, 4} {
		s.Add(x)
	}
	// Weighted: 1 -> (1+2)/2 = 1.5 -> (1.5+3)/2 = 2.25 -> (2.25+4)/2 = 3.125.
	want := Stats{N: 4, Min: 1, Max: 4, Mean: 2.5, Weighted: 3.125}
	if s.N != want.N || s.Min != want.Min || s.Max != want.Max || s.Mean != want.Mean || s.Weighted != want.Weighted {
		t.Errorf("stats %+v, want %+v", s, want)
	}
	if v := s.Variance(); math.Abs(v-1.25) > 1e-12 {
		t.Errorf("variance %g, want 1.25", v)
	}
	var one Stats
	one.Add(7)
	if one.Variance() != 0 || one.Weighted != 7 || !one.valid() {
		t.Errorf("one sample: %+v", one)
	}
	if bad := (Stats{N: 2, Min: 3, Max: 1}); bad.valid() {
		t.Error("min above max accepted")
	}
}

// TestValueTableStages proves the three stages of an access table: a
// single value, a local grammar that predicts an alternation exactly, and
// statistics only once the bound on distinct values is passed.
func TestValueTableStages(t *testing.T) {
	var tb valueTable[int64]
	for i := 0; i < 15; i++ {
		tb.observe(512, 4)
	}
	if v, certain, ok := tb.next(0); v != 512 || !certain || !ok || tb.Local != nil {
		t.Fatalf("single size: next = %d, %v, %v (grammar %v)", v, certain, ok, tb.Local != nil)
	}
	seq := []int64{100, 200, 300}
	for i := 0; i < 30; i++ {
		tb.observe(seq[i%3], 4)
	}
	if tb.Local == nil {
		t.Fatal("several sizes: no local grammar")
	}
	// The last observed was seq[29%3] = 300; the alternation continues.
	for ahead, want := range []int64{100, 200, 300} {
		if v, _, ok := tb.next(ahead); !ok || v != want {
			t.Errorf("next(%d) = %d, %v; want %d", ahead, v, ok, want)
		}
	}
	tb.observe(400, 4)
	tb.observe(500, 4)
	if !tb.Over || tb.Local != nil || len(tb.Values) != 4 || tb.N != 47 {
		t.Errorf("past the bound: over %v, grammar %v, values %v, n %d", tb.Over, tb.Local != nil, tb.Values, tb.N)
	}
	if v, certain, _ := tb.next(0); certain || v != 512 {
		t.Errorf("past the bound: next = %d (certain %v), want the most frequent, 512", v, certain)
	}
}

// TestOffsetClassify proves how offsets become transformations: sequential
// when the call starts where the previous one ended, absolute after open,
// for 0, or when the offset repeats, relative otherwise, and a known
// description is reused.
func TestOffsetClassify(t *testing.T) {
	cases := []struct {
		name            string
		known           []transform
		last            int64
		offset, prevEnd int64
		fresh           bool
		want            transform
	}{
		{"sequential", nil, -1, 4096, 4096, false, transform{Kind: transformSequential}},
		{"fresh file at 0", nil, -1, 0, 777, true, transform{Kind: transformSequential}},
		{"fresh file elsewhere", nil, -1, 512, 777, true, transform{transformAbsolute, 512}},
		{"back to 0", nil, -1, 0, 9000, false, transform{transformAbsolute, 0}},
		{"forward jump", nil, -1, 10000, 9000, false, transform{transformRelative, 1000}},
		{"backward jump", nil, -1, 96, 9000, false, transform{transformRelative, -8904}},
		{"repeated offset", nil, 96, 96, 9000, false, transform{transformAbsolute, 96}},
		{"known relative wins", []transform{{transformRelative, -8904}}, 96, 96, 9000, false, transform{transformRelative, -8904}},
		{"known absolute", []transform{{transformAbsolute, 96}}, -1, 96, 12000, false, transform{transformAbsolute, 96}},
	}
	for _, c := range cases {
		o := offsetTable{}
		o.Seq.Values = c.known
		o.Seq.Counts = make([]uint64, len(c.known))
		if c.last >= 0 {
			o.Last, o.HasLast = c.last, true
		}
		got := o.classify(c.offset, c.prevEnd, c.fresh)
		if got != c.want {
			t.Errorf("%s: classify = %+v, want %+v", c.name, got, c.want)
		}
		if back := got.apply(c.prevEnd, c.fresh); back != c.offset {
			t.Errorf("%s: apply gives %d, want %d", c.name, back, c.offset)
		}
	}
}

// TestOffsetFallbackPastBound proves the paper's fallback: a transition
// with more distinct transformations than the bound predicts sequential
// access and says it is unsure.
func TestOffsetFallbackPastBound(t *testing.T) {
	var o offsetTable
	end := int64(0)
	for i := int64(1); i <= 5; i++ {
		o.observe(end+i*1000, end, false, 3)
		end += i*1000 + 10
	}
	off, certain, _ := o.predict(777, false, 0)
	if off != 777 || certain {
		t.Errorf("predict = %d, %v; want 777 (sequential), false", off, certain)
	}
}

// TestFileTable proves the file relation of a transition: the relation
// seen most often wins, a fixed path is remembered.
func TestFileTable(t *testing.T) {
	var f fileTable
	f.observe("a", "a", "x")
	f.observe("b", "b", "x")
	if got := f.predict("c", "x"); got != "c" {
		t.Errorf("same file as the previous call: got %q", got)
	}
	f = fileTable{}
	f.observe("log", "data", "log")
	f.observe("log", "data2", "log")
	if got := f.predict("data3", "log"); got != "log" {
		t.Errorf("same file as the context's last call: got %q", got)
	}
	f = fileTable{}
	f.observe("/etc/conf", "data", "")
	if got := f.predict("data", "old"); got != "/etc/conf" {
		t.Errorf("fixed path: got %q", got)
	}
}

// TestOffsetIndexFilter checks the offset table's filtered index against
// the plain scan: on tables filled with random transforms up to the
// bound and past it, every value in the table is found at its position
// and every probe gets the scan's answer, present or not; a table whose
// values were replaced by a shorter list (as a decoded one would be) is
// filtered anew.
func TestOffsetIndexFilter(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for trial := 0; trial < 200; trial++ {
		var o offsetTable
		spread := int64(1 + r.Intn(1000))
		for step := 0; step < 60; step++ {
			v := transform{Kind: uint8(r.Intn(3)), Value: r.Int63n(spread) - spread/2}
			o.Seq.observe(v, 24)
			for _, probe := range []transform{v, {Kind: uint8(r.Intn(3)), Value: r.Int63n(2*spread) - spread}} {
				if got, want := o.index(probe), o.Seq.index(probe); got != want {
					t.Fatalf("trial %d step %d: index(%+v) = %d, the scan says %d", trial, step, probe, got, want)
				}
			}
			for i, x := range o.Seq.Values {
				if got := o.index(x); got != i {
					t.Fatalf("trial %d step %d: value %d (%+v) found at %d", trial, step, i, x, got)
				}
			}
		}
		o.Seq.Values = []transform{{Kind: transformAbsolute, Value: 7}}
		if got := o.index(transform{Kind: transformAbsolute, Value: 7}); got != 0 {
			t.Fatalf("trial %d: after the values were replaced, index = %d, want 0", trial, got)
		}
	}
}

package serverlog

import (
	"math"
	"testing"
	"time"
)

func TestParseApp(t *testing.T) {
	cases := []struct {
		in   string
		want App
		ok   bool
	}{
		{"alice/s3d/128", App{"alice", "s3d", 128}, true},
		{"bob/run/a/b/4", App{"bob", "run/a/b", 4}, true},
		{"bob/run", App{}, false},
		{"/x/3", App{}, false},
		{"u//3", App{}, false},
		{"u/x/", App{}, false},
		{"u/x/0", App{}, false},
		{"u/x/many", App{}, false},
	}
	for _, c := range cases {
		got, err := ParseApp(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseApp(%q) = %+v, %v; want %+v, ok %v", c.in, got, err, c.want, c.ok)
		}
		if c.ok && got.String() != c.in {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), c.in)
		}
	}
}

// TestRatesWindow proves Index, Slice and Aggregate on a grid: gaps stay
// NaN in the aggregate only where no OST has data.
func TestRatesWindow(t *testing.T) {
	nan := math.NaN()
	t0 := time.Date(2018, 1, 28, 0, 0, 0, 0, time.UTC)
	r := &Rates{Start: t0, Step: 5 * time.Second, OSTs: []string{"a", "b"},
		Read:  [][]float64{{1, 2, nan, 4}, {10, nan, nan, 40}},
		Write: [][]float64{{0, 0, 0, 0}, {5, 5, 5, 5}}}
	read, write := r.Aggregate()
	wantRead := []float64{11, 2, nan, 44}
	for i := range wantRead {
		if !(read[i] == wantRead[i] || math.IsNaN(read[i]) && math.IsNaN(wantRead[i])) || write[i] != 5 {
			t.Errorf("sample %d: aggregate read %v write %v, want %v and 5", i, read[i], write[i], wantRead[i])
		}
	}
	if got := r.Index(t0.Add(-time.Second)); got != -1 {
		t.Errorf("Index before start = %d, want -1", got)
	}
	if got := r.Index(t0.Add(12 * time.Second)); got != 2 {
		t.Errorf("Index(12 s) = %d, want 2", got)
	}
	s := r.Slice(t0.Add(6*time.Second), t0.Add(16*time.Second))
	if s.Len() != 3 || !s.Start.Equal(t0.Add(5*time.Second)) || s.Read[1][2] != 40 {
		t.Errorf("Slice(6 s, 16 s): %d samples from %v, read %v", s.Len(), s.Start, s.Read)
	}
	if s := r.Slice(t0.Add(-time.Hour), t0.Add(time.Hour)); s.Len() != 4 {
		t.Errorf("Slice beyond both ends: %d samples, want 4", s.Len())
	}
	// Windows wholly after or before the samples are empty (one after the
	// end used to slice past the capacity and panic).
	for _, w := range [][2]time.Duration{{time.Hour, 2 * time.Hour}, {-2 * time.Hour, -time.Hour}, {20 * time.Second, time.Minute}} {
		if s := r.Slice(t0.Add(w[0]), t0.Add(w[1])); s.Len() != 0 {
			t.Errorf("Slice(%v, %v): %d samples, want 0", w[0], w[1], s.Len())
		}
	}
	if !r.End().Equal(t0.Add(20 * time.Second)) {
		t.Errorf("End = %v", r.End())
	}
}

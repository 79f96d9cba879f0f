package serverlog

import (
	"math"
	"testing"
	"time"
)

// TestGridReadings proves how counter readings become cells, case by
// case, with the arithmetic in each case's comment: readings on the grid
// give each cell its interval's difference over the step; readings off
// the grid share an interval's bytes between the cells it overlaps in
// proportion; a cell less than half known is NaN; an interval longer than
// the gap threshold, a counter that goes down, and a rate above MaxRate
// are unknown; readings outside the window still close its edge cells.
func TestGridReadings(t *testing.T) {
	const s = int64(time.Second)
	nan := math.NaN()
	cases := []struct {
		name  string
		rs    []reading // write counters only
		n     int
		maxIv int64
		want  []float64
	}{
		// (100-0)/10 s and (400-100)/10 s.
		{"on grid", []reading{wr(0, 0), wr(10*s, 100), wr(20*s, 400)}, 2, 15 * s, []float64{10, 30}},
		// Readings at 5 s and 15 s: 0 -> 100 over [5,15) puts 50 B in
		// [5,10) of cell 0 and 50 B in [10,15) of cell 1; then 100 -> 300
		// over [15,25) puts 100 B in [15,20) of cell 1. Cell 0 is half
		// known: 50 B / 5 s; cell 1 fully: 150 B / 10 s.
		{"off grid", []reading{wr(5*s, 0), wr(15*s, 100), wr(25*s, 300)}, 2, 15 * s, []float64{10, 15}},
		// The 0 -> 100 interval [0,30) is longer than 15 s: unknown.
		{"gap", []reading{wr(0, 0), wr(30*s, 100), wr(40*s, 200)}, 4, 15 * s, []float64{nan, nan, nan, 10}},
		// 500 -> 20 went down: a reset; 20 -> 120 is known.
		{"reset", []reading{wr(0, 500), wr(10*s, 20), wr(20*s, 120)}, 2, 15 * s, []float64{nan, 10}},
		// 0 -> 1e15 in 10 s is 1e14 B/s, above MaxRate 1e12.
		{"glitch", []reading{wr(0, 0), wr(10*s, 1e15), wr(20*s, 1e15+50)}, 2, 15 * s, []float64{nan, 5}},
		// Only [0,3) of cell 0 is known (3 s < half of 10 s).
		{"under half", []reading{wr(-7*s, 0), wr(3*s, 100)}, 1, 15 * s, []float64{nan}},
		// [0,6) of cell 0 known: 60 B of 100 over [-4,6), 6 s: 10 B/s.
		{"over half", []reading{wr(-4*s, 0), wr(6*s, 100)}, 1, 15 * s, []float64{10}},
	}
	for _, c := range cases {
		r := gridReadings([][]reading{c.rs}, []string{"ost"}, 0, 10*time.Second, c.n, c.maxIv, DefaultMaxRate)
		for k, w := range c.want {
			got := r.Write[0][k]
			if !(got == w || math.IsNaN(got) && math.IsNaN(w)) {
				t.Errorf("%s: cell %d = %v, want %v", c.name, k, got, w)
			}
			if !math.IsNaN(r.Read[0][k]) && r.Read[0][k] != 0 {
				t.Errorf("%s: read cell %d = %v, want 0 or NaN", c.name, k, r.Read[0][k])
			}
		}
	}
}

// wr is a reading of a write counter.
func wr(t int64, w uint64) reading { return reading{t: t, w: w} }

// TestNativeStep proves that the sample width is the median interval,
// rounded to the second, whatever jitter and gaps the readings have.
func TestNativeStep(t *testing.T) {
	ms := int64(time.Millisecond)
	ts := []int64{0, 5003 * ms, 9998 * ms, 15001 * ms, 30000 * ms, 35002 * ms, 40000 * ms}
	if d, err := nativeStep(ts); err != nil || d != 5*time.Second {
		t.Errorf("nativeStep = %v, %v; want 5s", d, err)
	}
	if _, err := nativeStep([]int64{7, 7}); err == nil {
		t.Error("one distinct time gave a step")
	}
}

// TestParseTime proves the time forms the logs use.
func TestParseTime(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2018, 1, 28, 5, 0, 5, 0, time.UTC)
	for _, s := range []string{"2018-01-28 00:00:05", "2018-01-28T00:00:05", "2018-01-28T05:00:05Z",
		"2018-01-28T06:00:05+01:00", "1517115605", "01/28/2018 00:00:05"} {
		got, err := ParseTime(s, ny)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if got, err := ParseTime("2018-01-28", ny); err != nil || !got.Equal(want.Add(-5*time.Second)) {
		t.Errorf("a date alone: %v %v, want its midnight in New York", got, err)
	}
	if got, err := ParseTime("1510782606.789180921", nil); err != nil || got.UnixNano() != 1510782606789180921 {
		t.Errorf("decimal Unix seconds: %v %v", got.UnixNano(), err)
	}
	for _, s := range []string{"", "yesterday", "2018-13-01 00:00:00", "2018-01-28 00:00:05 CET", "1.2.3"} {
		if _, err := ParseTime(s, ny); err == nil {
			t.Errorf("ParseTime(%q) accepted", s)
		}
	}
}

// whole returns a function that reads the whole span of the source an
// Open function returns, closes it and fails the test on an error:
// whole(t)(OpenLMT(path, opts)).
func whole(t *testing.T) func(Source, error) *Rates {
	return func(src Source, err error) *Rates {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		r, err := src.Window(time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

package aid

import "testing"

// TestOnRhythm proves when a run with two or three bursts of a cluster
// joins the periodic runs: only when two of its bursts are a whole
// number of the periodic runs' interval apart, of the same bytes, at
// their phase from the run's start, and cover half the run; and never
// without two periodic runs to learn the rhythm from.
func TestOnRhythm(t *testing.T) {
	const s = int64(1e9)
	var bursts []Burst
	add := func(atS int64, bytes float64) int {
		bursts = append(bursts, Burst{StartNS: atS * s, EndNS: (atS + 60) * s, Bytes: bytes, Peak: bytes / 60})
		return len(bursts) - 1
	}
	// Two runs periodic on their own: bursts 300 s after the start, then
	// every 3,600 s.
	var pr []periodicRun
	for _, start := range []int64{0, 20000} {
		on := []int{add(start+300, 1e11), add(start+3900, 1e11), add(start+7500, 1e11)}
		pr = append(pr, periodicRun{run: Run{StartNS: start * s, EndNS: (start + 9000) * s}, bursts: on, interval: 3600})
	}
	run := func(start int64) Run { return Run{StartNS: start * s, EndNS: (start + 9000) * s} }
	cases := []struct {
		name  string
		start int64
		at    []int64
		bytes []float64
		want  bool
	}{
		{"one interval apart, in phase", 40000, []int64{300, 3950}, []float64{1e11, 1e11}, true},
		{"two intervals apart (the middle one merged)", 50000, []int64{320, 7450}, []float64{1e11, 1.05e11}, true},
		{"a foreign burst between them", 60000, []int64{300, 2000, 7500}, []float64{1e11, 1e11, 1e11}, true},
		{"out of phase", 70000, []int64{1900, 5500}, []float64{1e11, 1e11}, false},
		{"not a whole number of intervals", 80000, []int64{300, 5700}, []float64{1e11, 1e11}, false},
		{"other bytes", 90000, []int64{300, 3900}, []float64{1e11, 1.5e11}, false},
		{"covering too little of a long run", 100000, []int64{300, 3900}, []float64{1e11, 1e11}, false},
	}
	for _, c := range cases {
		var times []int
		for i, a := range c.at {
			times = append(times, add(c.start+a, c.bytes[i]))
		}
		r := run(c.start)
		if c.name == "covering too little of a long run" {
			r.EndNS = (c.start + 20000) * s
		}
		got := onRhythm(bursts, pr, [][]int{times}, []Run{r})
		if (len(got) == 1) != c.want {
			t.Errorf("%s: periodic %v, want %v", c.name, len(got) == 1, c.want)
		}
		if none := onRhythm(bursts, pr[:1], [][]int{times}, []Run{r}); len(none) != 0 {
			t.Errorf("%s: periodic with one periodic run to learn from", c.name)
		}
	}
}

// TestSharedRhythm proves how runs none of which is periodic on its own
// (two or three bursts each, as an hourly checkpointer's) support an
// application: when three runs or more keep one interval at one phase
// from their starts, with the same bytes, they are its periodic runs;
// two such runs, runs whose pairs keep different intervals or phases,
// and pairs of different bytes are not.
func TestSharedRhythm(t *testing.T) {
	const s = int64(1e9)
	type run struct {
		at    []int64
		bytes []float64
	}
	cases := []struct {
		name string
		runs []run
		want int
	}{
		{"three runs at one rhythm", []run{{[]int64{300, 3900}, []float64{1e11, 1e11}}, {[]int64{320, 3950, 7480}, []float64{1e11, 1.05e11, 1e11}},
			{[]int64{290, 7500}, []float64{1e11, 1e11}}}, 3},
		{"three runs, a foreign burst in one", []run{{[]int64{300, 3900}, []float64{1e11, 1e11}}, {[]int64{300, 2000, 3900}, []float64{1e11, 1e11, 1e11}},
			{[]int64{310, 3920}, []float64{1e11, 1e11}}}, 3},
		{"two runs only", []run{{[]int64{300, 3900}, []float64{1e11, 1e11}}, {[]int64{320, 3950}, []float64{1e11, 1e11}}}, 0},
		{"other phases", []run{{[]int64{300, 3900}, []float64{1e11, 1e11}}, {[]int64{1500, 5100}, []float64{1e11, 1e11}},
			{[]int64{2600, 6200}, []float64{1e11, 1e11}}}, 0},
		{"other intervals", []run{{[]int64{300, 3900}, []float64{1e11, 1e11}}, {[]int64{300, 2800}, []float64{1e11, 1e11}},
			{[]int64{300, 5200}, []float64{1e11, 1e11}}}, 0},
		{"other bytes", []run{{[]int64{300, 3900}, []float64{1e11, 1.5e11}}, {[]int64{320, 3950}, []float64{1e11, 1.5e11}},
			{[]int64{290, 3880}, []float64{1.5e11, 1e11}}}, 0},
	}
	for _, c := range cases {
		var bursts []Burst
		var few [][]int
		var runs []Run
		for i, r := range c.runs {
			start := int64(i) * 20000
			var times []int
			for k, a := range r.at {
				bursts = append(bursts, Burst{StartNS: (start + a) * s, EndNS: (start + a + 60) * s, Bytes: r.bytes[k]})
				times = append(times, len(bursts)-1)
			}
			few = append(few, times)
			runs = append(runs, Run{StartNS: start * s, EndNS: (start + 9000) * s})
		}
		if got := sharedRhythm(bursts, few, runs); len(got) != c.want {
			t.Errorf("%s: %d periodic runs, want %d", c.name, len(got), c.want)
		}
	}
}

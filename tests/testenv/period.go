package testenv

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"sort"
	"testing"

	"iopred/analyzer/job"
	"iopred/tracefmt"
)

// Intervals describes the intervals between successive events of a run
// (a program's dumps, checkpoints or bursts) as measured in its trace.
// The period a spectrum finds for them is not their median: a DFT over a
// window of W seconds resolves frequencies to 1/W, and on a shared
// machine the intervals spread (a descheduled process stretches some).
// So a test accepts a period whose frequency lies between those of the
// interval's 10th and 90th percentiles (the mean's included), widened by
// one frequency bin of the window analysed.
type Intervals struct {
	Median, Mean float64
	// Lo and Hi are the 10th and 90th percentiles, widened to hold the
	// median and the mean.
	Lo, Hi float64
	// P10 and P90 are the 10th and 90th percentiles themselves.
	P10, P90 float64
	// Jitter is the intervals' coefficient of variation, estimated
	// robustly: 1.4826 median absolute deviations over the median (the
	// standard deviation of a normal distribution). Unlike the spread
	// between percentiles, it leaves out a program's deliberate second
	// kind of interval (every fifth step a checkpoint) and rare stalls.
	Jitter float64
	Count  int
}

// MeasureIntervals returns the intervals between successive times
// (seconds, in order) and logs them.
func MeasureIntervals(t testing.TB, times []float64) Intervals {
	t.Helper()
	if len(times) < 2 {
		t.Fatalf("%d times: no interval", len(times))
	}
	iv := make([]float64, len(times)-1)
	for i := range iv {
		iv[i] = times[i+1] - times[i]
	}
	sort.Float64s(iv)
	n := len(iv)
	m := Intervals{Median: iv[n/2], Mean: (times[len(times)-1] - times[0]) / float64(n), Count: n,
		Lo: iv[n/10], Hi: iv[(9*n)/10], P10: iv[n/10], P90: iv[(9*n)/10]}
	dev := make([]float64, n)
	for i, v := range iv {
		dev[i] = math.Abs(v - m.Median)
	}
	sort.Float64s(dev)
	m.Jitter = 1.4826 * dev[n/2] / m.Median
	m.Lo = math.Min(m.Lo, math.Min(m.Median, m.Mean))
	m.Hi = math.Max(m.Hi, math.Max(m.Median, m.Mean))
	t.Logf("%d intervals: median %.5f s, mean %.5f s, 10th to 90th percentile %.5f to %.5f s, min %.5f s, max %.5f s; jitter %.3f, spectral line %.2f bins wide",
		n, m.Median, m.Mean, iv[n/10], iv[(9*n)/10], iv[0], iv[n-1], m.Jitter, m.LineBins())
	return m
}

// Accepts tells whether period (s), found by a DFT over a window of
// window seconds, is within the intervals' spread widened by one
// frequency bin, and describes the range accepted.
func (m Intervals) Accepts(period, window float64) (bool, string) {
	bin := 1 / window
	fLo, fHi := 1/m.Hi-bin, 1/m.Lo+bin
	lo, hi := 1/fHi, math.Inf(1)
	if fLo > 0 {
		hi = 1 / fLo
	}
	f := 1 / period
	return f >= fLo && f <= fHi, fmt.Sprintf("[%.5f s, %.5f s] (intervals %.5f to %.5f s, one bin of %.4g Hz over %.4g s)", lo, hi, m.Lo, m.Hi, bin, window)
}

// CheckPeriodOf fails the test unless period p (nil: none found), found
// over a window of window seconds, is within the intervals' spread
// widened by one frequency bin.
func CheckPeriodOf(t testing.TB, what string, p *float64, window float64, m Intervals) {
	t.Helper()
	if p == nil {
		t.Fatalf("%s: no period found, intervals median %.5f s", what, m.Median)
	}
	ok, span := m.Accepts(*p, window)
	t.Logf("%s: period %.5f s, accepted %s", what, *p, span)
	if !ok {
		t.Errorf("%s: period %.5f s outside %s", what, *p, span)
	}
}

// Steady tells whether the run kept a period that a spectrum can show:
// its intervals' 10th and 90th percentiles within a factor of 2, and
// their jitter small enough for the spectral line not to smear over more
// than two frequency bins. On a machine loaded enough to starve a job
// (two MPI ranks that must meet at every snapshot, on two cores shared
// with other work), snapshots came 0.6 to 5.8 s apart where they come
// every 35 ms on a quiet one: there is no period to find.
//
// Why the jitter bound: when a late event delays the ones after it (a
// program's steps are sequential), the events' phase drifts as a random
// walk, and the line at the mean frequency widens to about π·N·c² bins
// of a window of N periods, c being the intervals' coefficient of
// variation. The line then no longer stands out of the spectrum, and a
// coherent structure inside each burst (a rank's writes during a
// snapshot) wins: a LAMMPS run of 80 snapshots on a loaded machine, its
// intervals 0.075 to 0.127 s apart (10th to 90th percentile), gave FTIO
// the 19 ms between the writes of a snapshot. Quiet runs of the
// integration tests have lines under half a bin wide.
func (m Intervals) Steady() bool {
	return m.Hi <= 2*m.Lo && m.LineBins() <= 2
}

// LineBins is the width, in frequency bins, of the spectral line of
// events at these intervals (see Steady): π·N·c², c being their Jitter.
func (m Intervals) LineBins() float64 {
	return math.Pi * float64(m.Count) * m.Jitter * m.Jitter
}

// CheckJobPeriod checks the period of a job's signal (job.Period) against
// the measured intervals: within their spread widened by one frequency
// bin when the run was steady. When it was not, the program kept no
// period for the analysis to find, and the period is logged, not
// checked: a starved MPICH job's checkpoints came 0.15 to 0.41 s apart,
// and the signal's strongest repetition was then the 83 ms between the
// ranks' turns inside a checkpoint, which 4 of 6 resolutions agreed on.
func CheckJobPeriod(t testing.TB, what string, p *job.Period, m Intervals) {
	t.Helper()
	if p == nil {
		t.Fatalf("%s: no signal", what)
	}
	var res []string
	for _, r := range p.Resolutions {
		if r.PeriodS == nil {
			res = append(res, fmt.Sprintf("%.4g Hz none", r.Fs))
		} else {
			res = append(res, fmt.Sprintf("%.4g Hz %.5f s", r.Fs, *r.PeriodS))
		}
	}
	t.Logf("%s: %d of %d resolutions agree %v, multiple %d, confidence %.3f", what, p.Agreeing, len(p.Resolutions), res, p.Multiple, p.Confidence)
	if !m.Steady() {
		t.Logf("%s: NOT CHECKED: the run kept no period (intervals %.5f to %.5f s, 10th to 90th percentile; spectral line %.1f bins wide): the machine starved it", what, m.P10, m.P90, m.LineBins())
		return
	}
	CheckPeriodOf(t, what, p.PeriodS, p.TEnd-p.TStart, m)
}

// CheckPeriod runs `iopred period`'s default analysis of iopred traces
// over the traces in dir (the job's write signal: job.FromTracesWith with
// its processes) and fails the test unless it finds a period within the
// measured intervals' spread widened by one frequency bin (CheckJobPeriod).
// It returns the period found.
func CheckPeriod(t testing.TB, dir string, m Intervals) *job.Period {
	t.Helper()
	files, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum, warnings, err := job.FromTracesWith(files, job.Options{Processes: true, NoAccuracy: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warnings {
		t.Logf("warning: %s", w)
	}
	p := sum.Period.Write
	if p == nil {
		t.Fatalf("no write signal in %s", dir)
	}
	CheckJobPeriod(t, "job signal", p, m)
	return p
}

// TypicalInterval returns the median interval between successive times
// (seconds) and logs it beside the mean and the spread.
func TypicalInterval(t testing.TB, times []float64) float64 {
	t.Helper()
	return MeasureIntervals(t, times).Median
}

// MarkerOffsets returns the byte offsets in the file at path of every
// line that starts with marker: the starts of a text dump's snapshots
// ("ITEM: TIMESTEP" in LAMMPS's), wherever its writes were split.
func MarkerOffsets(t testing.TB, path, marker string) []int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for at := 0; at < len(data); {
		if bytes.HasPrefix(data[at:], []byte(marker)) {
			offs = append(offs, int64(at))
		}
		nl := bytes.IndexByte(data[at:], '\n')
		if nl < 0 {
			break
		}
		at += nl + 1
	}
	return offs
}

// WriteTimes returns, for each offset, when the first traced call that
// wrote the byte at that offset of path started (seconds since the Unix
// epoch; a stdio call before the system call that flushed it), from the
// traces in dir: the starts of the snapshots a program wrote, however the
// load on the machine spread each one's writes. Offsets past the last
// byte written (a file laid out ahead) are left out; the test fails when
// a byte before it was written by no traced call.
func WriteTimes(t testing.TB, dir, path string, offsets []int64) []float64 {
	t.Helper()
	files, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	times := make([]float64, len(offsets))
	for i := range times {
		times[i] = math.Inf(1)
	}
	var end int64
	for _, f := range files {
		r, err := tracefmt.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		t0 := r.Header().StartUnixNs
		err = r.Each(func(rec tracefmt.Record) error {
			e := rec.Event
			if e == nil || e.Path != path || !tracefmt.IsWrite(e.Op) || e.Bytes <= 0 || e.Offset == tracefmt.NoOffset {
				return nil
			}
			end = max(end, e.Offset+e.Bytes)
			lo := sort.Search(len(offsets), func(i int) bool { return offsets[i] >= e.Offset })
			for i := lo; i < len(offsets) && offsets[i] < e.Offset+e.Bytes; i++ {
				times[i] = math.Min(times[i], float64(t0+e.StartNs)/1e9)
			}
			return nil
		})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	n := sort.Search(len(offsets), func(i int) bool { return offsets[i] >= end })
	times = times[:n]
	for i, at := range times {
		if math.IsInf(at, 1) {
			t.Fatalf("%s: no traced write of offset %d", path, offsets[i])
		}
	}
	return times
}

// WritesAt returns when each traced write that covered the byte at
// offset of path started (seconds since the Unix epoch), in time order:
// the starts of the bursts of a program that rewrites its file from the
// start in every burst.
func WritesAt(t testing.TB, dir, path string, offset int64) []float64 {
	t.Helper()
	files, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	var times []float64
	for _, f := range files {
		r, err := tracefmt.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		t0 := r.Header().StartUnixNs
		err = r.Each(func(rec tracefmt.Record) error {
			if e := rec.Event; e != nil && e.Path == path && tracefmt.IsWrite(e.Op) && e.Bytes > 0 && e.Offset <= offset && offset < e.Offset+e.Bytes {
				times = append(times, float64(t0+e.StartNs)/1e9)
			}
			return nil
		})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Float64s(times)
	return times
}

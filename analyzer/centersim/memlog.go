package centersim

import (
	"errors"
	"math"
	"time"

	"iopred/analyzer/serverlog"
)

// MemoryLog keeps a per-OST log in memory (4 bytes a value) and serves it
// as a serverlog.Source. It is a Sink: give it to Run to read the log
// back without files, as the simulator itself does to show advisors the
// log up to the moment they are asked.
type MemoryLog struct {
	start time.Time
	step  time.Duration
	osts  []string
	read  [][]float32
	write [][]float32
}

var _ serverlog.Source = (*MemoryLog)(nil)
var _ Sink = (*MemoryLog)(nil)

// NewMemoryLog returns an empty log starting at start.
func NewMemoryLog(start time.Time, step time.Duration, osts []string) *MemoryLog {
	return &MemoryLog{start: start, step: step, osts: osts, read: make([][]float32, len(osts)), write: make([][]float32, len(osts))}
}

// WriteRates appends a chunk, which must follow the last one on the same
// grid and OSTs.
func (m *MemoryLog) WriteRates(r *serverlog.Rates) error {
	if r.Step != m.step || len(r.OSTs) != len(m.osts) {
		return errors.New("memory log: chunk on another grid or with other OSTs")
	}
	if want := m.start.Add(time.Duration(m.Len()) * m.step); !r.Start.Equal(want) {
		return errors.New("memory log: chunk does not follow the previous one")
	}
	for i := range m.osts {
		for _, v := range r.Read[i] {
			m.read[i] = append(m.read[i], float32(v))
		}
		for _, v := range r.Write[i] {
			m.write[i] = append(m.write[i], float32(v))
		}
	}
	return nil
}

// appendColumn appends sample c of a chunk, NaN when lost.
func (m *MemoryLog) appendColumn(r *serverlog.Rates, c int, lost bool) {
	nan := float32(math.NaN())
	for i := range m.osts {
		rr, ww := float32(r.Read[i][c]), float32(r.Write[i][c])
		if lost {
			rr, ww = nan, nan
		}
		m.read[i] = append(m.read[i], rr)
		m.write[i] = append(m.write[i], ww)
	}
}

// Len is the number of samples held.
func (m *MemoryLog) Len() int {
	if len(m.write) == 0 {
		return 0
	}
	return len(m.write[0])
}

// Span returns the time the log covers and its sample width.
func (m *MemoryLog) Span() (time.Time, time.Time, time.Duration, error) {
	return m.start, m.start.Add(time.Duration(m.Len()) * m.step), m.step, nil
}

// OSTs lists the OSTs.
func (m *MemoryLog) OSTs() ([]string, error) { return m.osts, nil }

// Window returns the samples of [from, to) that the log holds.
func (m *MemoryLog) Window(from, to time.Time) (*serverlog.Rates, error) {
	floor := func(t time.Time) (int, bool) {
		d := t.Sub(m.start)
		i := int(d / m.step)
		if d < 0 && d%m.step != 0 {
			i--
		}
		return i, d%m.step == 0
	}
	clamp := func(i int) int { return min(max(i, 0), m.Len()) }
	lo, _ := floor(from)
	hi, exact := floor(to)
	if !exact {
		hi++ // a partly covered last sample is included
	}
	lo, hi = clamp(lo), clamp(hi)
	hi = max(hi, lo)
	out := &serverlog.Rates{Start: m.start.Add(time.Duration(lo) * m.step), Step: m.step, OSTs: m.osts,
		Read: make([][]float64, len(m.osts)), Write: make([][]float64, len(m.osts))}
	for i := range m.osts {
		out.Read[i] = widen(m.read[i][lo:hi])
		out.Write[i] = widen(m.write[i][lo:hi])
	}
	return out, nil
}

func widen(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
		if math.IsNaN(float64(v)) {
			out[i] = math.NaN()
		}
	}
	return out
}

// Close releases nothing: the log stays readable.
func (m *MemoryLog) Close() error { return nil }

// RunInMemory runs s with seed into a MemoryLog of all its OSTs and
// returns the log, the result, and the jobs that started, as a job log
// (sacct) lists them: what a learner reads from a center with no files.
func RunInMemory(s *Scenario, seed uint64) (*MemoryLog, *Result, []serverlog.Job, error) {
	m := NewMemoryLog(s.Start, s.Step(), s.OSTNames())
	res, err := Run(s, Options{Seed: seed, Sinks: []Sink{m}})
	if err != nil {
		return nil, nil, nil, err
	}
	var jobs []serverlog.Job
	for _, j := range res.Jobs {
		if j.Started() {
			jobs = append(jobs, j.Job)
		}
	}
	return m, res, jobs, nil
}

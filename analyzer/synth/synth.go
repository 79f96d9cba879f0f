// Package synth generates the semi-synthetic I/O traces of the FTIO
// paper's section 5: an application is a sequence of iterations, each a
// compute phase of a length drawn from a normal distribution truncated to
// positive values, followed by an I/O phase in which every process replays
// its part of an I/O phase template after a start delay drawn from an
// exponential distribution. The next iteration starts when the last
// process has finished. Optional noise adds small requests at random
// times.
//
// Generation streams: requests are handed to a Sink process by process, in
// time order within a process, and memory holds only one compute length
// and one delay per iteration and process.
package synth

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Request is one generated request. Times are seconds since the start of
// the application.
type Request struct {
	Start, End float64
	Bytes      int64
	Write      bool
}

// Template is one I/O phase: per process, requests with times relative to
// the phase start of that process.
type Template struct {
	Procs [][]Request
}

// Length returns the time from the phase start to the end of the last
// request of process p.
func (t Template) Length(p int) float64 {
	var end float64
	for _, r := range t.Procs[p] {
		end = math.Max(end, r.End)
	}
	return end
}

// Burst returns a synthetic I/O phase: procs processes each issue count
// back-to-back requests of size bytes at bandwidth bytesPerS.
func Burst(procs, count int, size int64, bytesPerS float64, write bool) Template {
	d := float64(size) / bytesPerS
	t := Template{Procs: make([][]Request, procs)}
	for p := range t.Procs {
		for i := 0; i < count; i++ {
			t.Procs[p] = append(t.Procs[p], Request{Start: float64(i) * d, End: float64(i+1) * d, Bytes: size, Write: write})
		}
	}
	return t
}

// TemplateFrom makes a template of the requests of several processes
// (for instance, read from an iopred trace set or an FTIO trace): times are
// made relative to the earliest start over all processes, so that the
// processes keep their offsets within the phase.
func TemplateFrom(procs [][]Request) (Template, error) {
	first := math.Inf(1)
	n := 0
	for _, rs := range procs {
		for _, r := range rs {
			first = math.Min(first, r.Start)
			n++
		}
	}
	if n == 0 {
		return Template{}, errors.New("synth: the template holds no request")
	}
	t := Template{Procs: make([][]Request, len(procs))}
	for p, rs := range procs {
		out := make([]Request, len(rs))
		for i, r := range rs {
			out[i] = Request{Start: r.Start - first, End: r.End - first, Bytes: r.Bytes, Write: r.Write}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
		t.Procs[p] = out
	}
	return t, nil
}

// Config describes an application.
type Config struct {
	Iterations  int
	ComputeMean float64 // mean compute phase length, seconds
	ComputeStd  float64 // its standard deviation; the draw is truncated to > 0
	DelayMean   float64 // mean of the exponential per-process start delay; 0: none
	Phase       Template
	// NoiseRate is the mean number of noise requests per second and
	// process (Poisson arrivals); each moves NoiseBytes at NoiseBandwidth.
	NoiseRate      float64
	NoiseBytes     int64
	NoiseBandwidth float64
	Seed           uint64
}

// Sink receives the generated requests: all of process 0 in time order,
// then process 1, and so on. BeginProcess announces each process.
type Sink interface {
	BeginProcess(p int) error
	Request(p int, r Request) error
}

// Plan is the drawn shape of an application: where each iteration starts,
// its compute length, and the delay of every process in it.
type Plan struct {
	IterStart []float64
	Compute   []float64
	Delay     [][]float64 // [iteration][process]
	End       float64
}

// MeanIteration returns the mean iteration length, the period a detector
// should find (the paper's reference value).
func (p Plan) MeanIteration() float64 {
	if len(p.IterStart) == 0 {
		return 0
	}
	return p.End / float64(len(p.IterStart))
}

func (c Config) validate() error {
	switch {
	case c.Iterations <= 0:
		return errors.New("synth: iterations must be positive")
	case len(c.Phase.Procs) == 0:
		return errors.New("synth: the I/O phase template has no process")
	case c.ComputeMean < 0 || c.ComputeStd < 0 || c.DelayMean < 0 || c.NoiseRate < 0:
		return errors.New("synth: compute mean and deviation, delay mean and noise rate must not be negative")
	case c.NoiseRate > 0 && (c.NoiseBytes <= 0 || c.NoiseBandwidth <= 0):
		return errors.New("synth: noise needs positive bytes and bandwidth")
	case c.ComputeMean == 0 && c.ComputeStd > 0:
		return errors.New("synth: a compute deviation needs a positive mean")
	}
	return nil
}

// Draw draws the plan of an application.
func Draw(c Config) (Plan, error) {
	if err := c.validate(); err != nil {
		return Plan{}, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x5eed))
	procs := len(c.Phase.Procs)
	pl := Plan{IterStart: make([]float64, c.Iterations), Compute: make([]float64, c.Iterations), Delay: make([][]float64, c.Iterations)}
	t := 0.0
	for i := 0; i < c.Iterations; i++ {
		pl.IterStart[i] = t
		comp := c.ComputeMean
		if c.ComputeStd > 0 {
			for comp = -1; comp <= 0; {
				comp = c.ComputeMean + c.ComputeStd*rng.NormFloat64()
			}
		}
		pl.Compute[i] = comp
		pl.Delay[i] = make([]float64, procs)
		end := t + comp
		for p := 0; p < procs; p++ {
			if c.DelayMean > 0 {
				pl.Delay[i][p] = c.DelayMean * rng.ExpFloat64()
			}
			end = math.Max(end, t+comp+pl.Delay[i][p]+c.Phase.Length(p))
		}
		t = end
	}
	pl.End = t
	return pl, nil
}

// Generate draws a plan and streams its requests to sink.
func Generate(c Config, sink Sink) (Plan, error) {
	pl, err := Draw(c)
	if err != nil {
		return pl, err
	}
	for p := range c.Phase.Procs {
		if err := sink.BeginProcess(p); err != nil {
			return pl, err
		}
		noise := rand.New(rand.NewPCG(c.Seed, uint64(p)+1))
		nextNoise := math.Inf(1)
		if c.NoiseRate > 0 {
			nextNoise = noise.ExpFloat64() / c.NoiseRate
		}
		emitNoiseUntil := func(t float64) error {
			for nextNoise < t {
				d := float64(c.NoiseBytes) / c.NoiseBandwidth
				r := Request{Start: nextNoise, End: nextNoise + d, Bytes: c.NoiseBytes, Write: true}
				if err := sink.Request(p, r); err != nil {
					return err
				}
				nextNoise += d + noise.ExpFloat64()/c.NoiseRate
			}
			return nil
		}
		for i := range pl.IterStart {
			base := pl.IterStart[i] + pl.Compute[i] + pl.Delay[i][p]
			for _, r := range c.Phase.Procs[p] {
				if err := emitNoiseUntil(base + r.Start); err != nil {
					return pl, err
				}
				r.Start += base
				r.End += base
				if err := sink.Request(p, r); err != nil {
					return pl, err
				}
			}
		}
		if err := emitNoiseUntil(pl.End); err != nil {
			return pl, err
		}
	}
	return pl, nil
}

// Collect is a Sink that keeps every request in memory, per process.
type Collect struct {
	Procs [][]Request
}

// BeginProcess starts a process's list.
func (c *Collect) BeginProcess(p int) error {
	for len(c.Procs) <= p {
		c.Procs = append(c.Procs, nil)
	}
	return nil
}

// Request appends a request.
func (c *Collect) Request(p int, r Request) error {
	if p >= len(c.Procs) {
		return fmt.Errorf("synth: request for process %d before it began", p)
	}
	c.Procs[p] = append(c.Procs[p], r)
	return nil
}

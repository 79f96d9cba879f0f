package summary

import (
	"testing"

	"iopred/analyzer/synth"
	"iopred/tracefmt"
)

// FuzzDecodePartial: another rank's message, however mangled, is refused
// with an error or combines into a report; it never panics.
func FuzzDecodePartial(f *testing.F) {
	set := &synth.TraceSet{Dir: f.TempDir()}
	synth.Generate(synth.Config{Iterations: 2, ComputeMean: 1, Phase: synth.Burst(3, 4, 1<<12, 1e8, true),
		NoiseRate: 50, NoiseBytes: 512, NoiseBandwidth: 1e6, Seed: 1}, set)
	set.Close()
	traces, err := tracefmt.Discover(set.Dir)
	if err == nil && len(traces) > 0 {
		if b, err := Read(traces, 0, len(traces), Options{}).Encode(); err == nil {
			f.Add(b)
		}
	}
	if b, err := Read(nil, 0, 0, Options{}).Encode(); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePartial(b, Options{})
		if err != nil {
			return
		}
		names := make([]string, p.first+len(p.procs))
		if p.first == 0 {
			Combine(names, []*Partial{p}, Options{})
		}
	})
}

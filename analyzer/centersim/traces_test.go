package centersim

import (
	"math"
	"testing"
)

// The embedded traces are real runs whose structure is known from how
// traces/record.sh ran them: the IOR-like job writes three phases of 3 x
// 64 KiB per rank on 4 ranks, reads the first back, then writes 12
// checkpoints 200 ms apart; LAMMPS writes 21 snapshots (steps 0 to 1000
// every 50); fio writes 96 MiB in bursts of 8 MiB with 250 ms of think
// time, and lays out and reads a 32 MiB input. The profile finds those
// bursts, their bytes and their spacing.
func TestBuiltinTraceProfiles(t *testing.T) {
	const kib, mib = 1024.0, 1024.0 * 1024
	for _, c := range []struct {
		name          string
		bursts        int // 0: at least minBursts
		minBursts     int
		write, read   float64
		intervalS     float64 // median interval between burst starts
		intervalSlack float64
	}{
		{name: "ior", bursts: 16, write: 4 * 3 * 64 * kib * 15, read: 4 * 3 * 64 * kib, intervalS: 0.2, intervalSlack: 0.1},
		{name: "lammps", bursts: 21, intervalS: 0.073, intervalSlack: 0.3},
		{name: "fio", minBursts: 12, write: 128 * mib, read: 32 * mib, intervalS: 0.25, intervalSlack: 0.15},
	} {
		p, err := LoadTraceProfile("builtin:"+c.name, 0)
		if err != nil {
			t.Fatal(err)
		}
		var w, r float64
		var ivals []float64
		for i, b := range p.Bursts {
			w += b.WriteBytes
			r += b.ReadBytes
			if i > 0 {
				ivals = append(ivals, b.StartS-p.Bursts[i-1].StartS)
			}
		}
		if c.bursts > 0 && len(p.Bursts) != c.bursts || len(p.Bursts) < c.minBursts {
			t.Errorf("%s: %d bursts, want %d (at least %d)", c.name, len(p.Bursts), c.bursts, c.minBursts)
		}
		if c.write > 0 && (w != c.write || r != c.read) {
			t.Errorf("%s: %g bytes written, %g read; want %g and %g", c.name, w, r, c.write, c.read)
		}
		if m := median(ivals); math.Abs(m-c.intervalS) > c.intervalSlack*c.intervalS {
			t.Errorf("%s: median interval %.4f s, want %.3f s within %.0f%%", c.name, m, c.intervalS, 100*c.intervalSlack)
		}
	}
}

// Program stretches a profile to a center job: the median interval
// between burst starts becomes the one asked for, the median burst moves
// the bytes asked for, and the proportions between bursts stay.
func TestTraceProgram(t *testing.T) {
	p := &TraceProfile{DurationS: 10, Bursts: []TraceBurst{
		{StartS: 1, EndS: 1.5, WriteBytes: 100}, {StartS: 3, EndS: 3.5, WriteBytes: 300}, {StartS: 5, EndS: 5.5, ReadBytes: 200}}}
	cycle, tail := p.Program(100, 1e9)
	want := []Phase{{ComputeS: 50, WriteBytes: 0.5e9}, {ComputeS: 75, WriteBytes: 1.5e9}, {ComputeS: 75, ReadBytes: 1e9}}
	for i := range want {
		if !near(cycle[i].ComputeS, want[i].ComputeS, 1e-12) || !near(cycle[i].WriteBytes, want[i].WriteBytes, 1e-12) || !near(cycle[i].ReadBytes, want[i].ReadBytes, 1e-12) {
			t.Errorf("phase %d: %+v, want %+v", i, cycle[i], want[i])
		}
	}
	if !near(tail, 225, 1e-12) {
		t.Errorf("tail %g s, want 225", tail)
	}
}

// A directory without traces and an unknown built-in name are errors
// that say what is wrong.
func TestTraceProfileErrors(t *testing.T) {
	if _, err := LoadTraceProfile(t.TempDir(), 0); err == nil {
		t.Error("empty directory: no error")
	}
	if _, err := LoadTraceProfile("builtin:nope", 0); err == nil {
		t.Error("builtin:nope: no error")
	}
}

package centersim

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func runDriftPreset(t *testing.T, name string, seed uint64, days float64) *Result {
	t.Helper()
	s, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	s.Days = days
	s.DrawFamily(seed)
	if s.OSTs > 128 {
		s.OSTs = 128 // the draw is checked below; the log's width only costs time here
	}
	m := NewMemoryLog(s.Start, s.Step(), make([]string, s.OSTs))
	res, err := Run(s, Options{Seed: seed, Sinks: []Sink{m}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestDriftFamilyDraws proves that the drift family draws its center
// from the seed within the ranges (24 to 1,000 OSTs, 2 to 10 s),
// and that the same seed gives the same center.
func TestDriftFamilyDraws(t *testing.T) {
	seen := map[int]bool{}
	for seed := uint64(1); seed <= 40; seed++ {
		s, _ := Preset("drift")
		s.DrawFamily(seed)
		if s.OSTs < 24 || s.OSTs > 1000 || s.StepS < 2 || s.StepS > 10 || !(s.OSTBandwidth > 0) {
			t.Errorf("seed %d: %d OSTs at %d s, %g B/s", seed, s.OSTs, s.StepS, s.OSTBandwidth)
		}
		seen[s.StepS] = true
		again, _ := Preset("drift")
		again.DrawFamily(seed)
		if again.OSTs != s.OSTs || again.StepS != s.StepS {
			t.Errorf("seed %d drew %d/%d then %d/%d", seed, s.OSTs, s.StepS, again.OSTs, again.StepS)
		}
	}
	if len(seen) < 5 {
		t.Errorf("40 seeds drew only %d step widths", len(seen))
	}
	// Given values are kept.
	s, _ := Preset("drift")
	s.OSTs, s.StepS = 48, 5
	s.DrawFamily(9)
	if s.OSTs != 48 || s.StepS != 5 {
		t.Errorf("given 48 OSTs at 5 s, drew %d at %d", s.OSTs, s.StepS)
	}
}

// TestDriftFamilyTruth proves what the family's truth is and that the
// runs are disturbed as the issue asks: every target has runs with and
// without I/O; the runs with I/O are stretched (the longest at least a
// few percent longer than the shortest); the signature's bursts start
// where the least-disturbed run's did, and move the bytes each burst
// moves; and the simulation is deterministic.
func TestDriftFamilyTruth(t *testing.T) {
	res := runDriftPreset(t, "drift", 4, 0.5)
	var buf, again bytes.Buffer
	WriteTruth(&buf, res.Truth)
	WriteTruth(&again, runDriftPreset(t, "drift", 4, 0.5).Truth)
	if buf.String() != again.String() {
		t.Error("the same seed gave another truth")
	}
	byID := map[string]*JobRecord{}
	for i := range res.Jobs {
		byID[res.Jobs[i].ID] = &res.Jobs[i]
	}
	targets, hourly := 0, 0
	for _, a := range res.Truth.Apps {
		if a.Class != ClassIOIntensive {
			continue
		}
		targets++
		if a.Runs < 8 || a.RunsWithoutIO < 1 {
			t.Errorf("%s: %d runs with I/O, %d without", a.App.Name, a.Runs, a.RunsWithoutIO)
		}
		if a.Pattern != nil && a.Pattern.IntervalS > 2900 {
			hourly++
		}
		sig := a.Signature
		lo, hi := math.Inf(1), 0.0
		matched := false
		for _, id := range a.JobIDs {
			j := byID[id]
			if !j.WithIO {
				continue
			}
			d := j.End.Sub(j.Start).Seconds()
			lo, hi = min(lo, d), max(hi, d)
			if len(j.Bursts) != len(sig.Bursts) {
				t.Fatalf("%s: job %s has %d bursts, the signature %d", a.App.Name, id, len(j.Bursts), len(sig.Bursts))
			}
			same := true
			for k, b := range j.Bursts {
				same = same && b.StartS == sig.Bursts[k].StartS
				if b.WriteBytes != sig.Bursts[k].WriteBytes || b.ReadBytes != sig.Bursts[k].ReadBytes {
					t.Errorf("%s: job %s burst %d moves other bytes than the signature's", a.App.Name, id, k)
				}
			}
			if same {
				matched = true
				if math.Abs(d-sig.DurationS) > 1e-6 {
					t.Errorf("%s: the reference run lasts %g s, the signature %g s", a.App.Name, d, sig.DurationS)
				}
			}
		}
		if !matched {
			t.Errorf("%s: no run has the signature's time line", a.App.Name)
		}
		if hi < 1.02*lo {
			t.Errorf("%s: runs with I/O last %g to %g s: not stretched", a.App.Name, lo, hi)
		}
		for k, b := range sig.Bursts {
			if d := b.EndS - b.StartS; !(d > 0) || math.Abs(b.PeakBytesPerS*d-(b.WriteBytes+b.ReadBytes)) > 1e-6*(b.WriteBytes+b.ReadBytes) {
				t.Errorf("%s: signature burst %d is not its bytes at its rate alone", a.App.Name, k)
			}
		}
	}
	if targets != 6 || hourly == 0 {
		t.Errorf("%d targets, %d hourly; want 6 and some", targets, hourly)
	}
}

// TestDriftFamilyValidate proves the family's scenario errors name what
// is wrong.
func TestDriftFamilyValidate(t *testing.T) {
	for _, c := range []struct {
		edit func(*Scenario)
		want string
	}{
		{func(s *Scenario) { s.Apps = []AppSpec{{User: "a", Name: "b", Nodes: 1}} }, "draws its applications"},
		{func(s *Scenario) { s.Days = 0 }, "days"},
		{func(s *Scenario) { s.OSTs = -1 }, "osts"},
		{func(s *Scenario) { s.Family = "other" }, `family "other"`},
	} {
		s, _ := Preset("drift")
		c.edit(s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one naming %q", err, c.want)
		}
	}
}

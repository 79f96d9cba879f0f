package centersim

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Validate names the field at fault for each kind of bad scenario.
func TestValidateErrors(t *testing.T) {
	ok := func() *Scenario {
		return quiet(4, 1e8, 0, burstApp("a", 1, 10, 1e9, 1e9, Layout{}, 0))
	}
	for _, c := range []struct {
		name string
		edit func(s *Scenario)
		want string
	}{
		{"days", func(s *Scenario) { s.Days = 0 }, "days"},
		{"step", func(s *Scenario) { s.StepS = 1000 }, "step_s"},
		{"osts", func(s *Scenario) { s.OSTs = -1 }, "osts"},
		{"policy", func(s *Scenario) { s.Policy = "lifo" }, "policy"},
		{"correlation", func(s *Scenario) { s.Background.Correlation = 1 }, "correlation"},
		{"class", func(s *Scenario) { s.Apps[0].Class = "heavy" }, "class"},
		{"no runs", func(s *Scenario) { s.Apps[0].Runs, s.Apps[0].SubmitS = 0, nil }, "at least one run"},
		{"iterations", func(s *Scenario) { s.Apps[0].Iterations = [2]int{3, 2} }, "iterations"},
		{"layout", func(s *Scenario) { s.Apps[0].Layout.Model = "n-to-2" }, "layout"},
		{"n-to-m files", func(s *Scenario) { s.Apps[0].Layout = Layout{Model: "n-to-m"} }, "files"},
		{"duplicate", func(s *Scenario) { s.Apps = append(s.Apps, s.Apps[0]) }, "twice"},
		{"within", func(s *Scenario) {
			s.Apps = append(s.Apps, AppSpec{User: "n", Name: "n", Nodes: 1, Class: ClassNested, Runs: 1, DurationS: [2]float64{1, 1}, Within: "x/y/1"})
		}, "within"},
		{"submit", func(s *Scenario) { s.Apps[0].SubmitS = []float64{1e9} }, "submit_s"},
		{"separator", func(s *Scenario) { s.Apps[0].Name = "a|b" }, "name"},
		{"foreign", func(s *Scenario) { s.Foreign = Foreign{Jobs: 1, Light: 0.8, Random: 0.5} }, "foreign"},
	} {
		s := ok()
		c.edit(s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
	if err := ok().Validate(); err != nil {
		t.Errorf("good scenario: %v", err)
	}
}

// Every built-in scenario is valid, and a scenario written as JSON (what
// --print-config prints) reads back the same.
func TestPresetsRoundTrip(t *testing.T) {
	for _, name := range PresetNames() {
		s, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name+".json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := ReadScenario(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b2, _ := json.Marshal(back)
		if !bytes.Equal(b, b2) {
			t.Errorf("%s: JSON round trip changed the scenario", name)
		}
	}
	path := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(path, []byte(`{"days": 1, "osts": 4, "nope": 3}`), 0o644)
	if _, err := ReadScenario(path); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown field: %v", err)
	}
}

// The aid scenario is what the AID evaluation needs: at least 200 OSTs
// and 40 applications over a month; 8 I/O-intensive applications with
// n-to-1, n-to-m and n-to-n layouts (different footprints), at least 5
// completed runs each, 1 to 5 runs without I/O each and varied iteration
// counts; two I/O-intensive ones with fewer than 5 runs; light,
// non-periodic and compute-only ones; nested applications whose every
// run lies inside a run of an I/O-intensive one; interactive traffic.
func TestAIDScenarioShape(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a month of 256 OSTs")
	}
	s, _ := Preset("aid")
	res, err := Run(s, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Truth
	if s.OSTs < 200 || s.Days < 28 || len(tr.Apps)+tr.Foreign.Apps < 40 || s.Interactive.PerHour <= 0 {
		t.Fatalf("%d OSTs, %g days, %d apps", s.OSTs, s.Days, len(tr.Apps)+tr.Foreign.Apps)
	}
	models := map[string]bool{}
	footprints := map[int]bool{}
	var intensive, probation int
	classes := map[string]int{}
	for _, a := range tr.Apps {
		classes[a.Class]++
		if a.Class != ClassIOIntensive {
			continue
		}
		if a.Runs < 5 {
			probation++
			continue
		}
		intensive++
		models[a.FileModel] = true
		footprints[a.OSTFootprint] = true
		if a.RunsWithoutIO < 1 || a.RunsWithoutIO > 5 {
			t.Errorf("%v: %d runs without I/O", a.App, a.RunsWithoutIO)
		}
	}
	if intensive != 8 || probation != 2 || len(models) != 3 || len(footprints) < 5 {
		t.Errorf("%d I/O-intensive, %d on probation, models %v, footprints %v", intensive, probation, models, footprints)
	}
	for _, c := range []string{ClassLight, ClassRandom, ClassNested, ClassNone} {
		if classes[c] == 0 {
			t.Errorf("no %s application", c)
		}
	}
	iters := map[string]map[int]bool{}
	var hostRuns = map[string][]JobRecord{}
	for _, j := range res.Jobs {
		key := j.User + "/" + j.Name
		if j.Class == ClassIOIntensive && j.WithIO {
			if iters[key] == nil {
				iters[key] = map[int]bool{}
			}
			iters[key][j.Iterations] = true
		}
		hostRuns[j.App().String()] = append(hostRuns[j.App().String()], j)
	}
	varied := 0
	for _, m := range iters {
		if len(m) > 1 {
			varied++
		}
	}
	if varied < 6 {
		t.Errorf("only %d I/O-intensive applications vary their iteration counts", varied)
	}
	for _, a := range tr.Apps {
		if a.Class != ClassNested {
			continue
		}
		for _, n := range hostRuns[a.App.User+"/"+a.App.Name+"/1"] {
			inside := false
			for _, h := range hostRuns[a.Within] {
				if h.Started() && !n.Start.Before(h.Start) && !n.End.After(h.End) {
					inside = true
				}
			}
			if !inside {
				t.Errorf("%v run %s is not inside a run of %s", a.App, n.ID, a.Within)
			}
		}
	}
}

package centersim

import (
	"encoding/json"
	"testing"

	"iopred/tests/fuzzinput"
)

// ParseScenario never panics or hangs on any input, and what it accepts
// validates again unchanged. The seeds are the presets with what
// ParseScenario can do without left out, and small edits of them: whole
// presets are kilobytes, and Go's fuzzer minimises each input that finds
// new code at a cost quadratic in its length (tests/fuzzinput).
func FuzzParseScenario(f *testing.F) {
	for _, name := range PresetNames() {
		s, _ := Preset(name)
		b, _ := json.Marshal(s)
		small := fuzzinput.ShrinkJSON(b, func(b []byte) bool {
			// Kept: an application of each kind the preset has, and the
			// policy, so that the checks on them are reached.
			p, err := ParseScenario(b)
			return err == nil && len(p.Apps) > 0 && p.Policy == s.Policy && classes(p) == classes(s)
		})
		for _, in := range fuzzinput.Edits(small, 4) {
			f.Add(in)
		}
	}
	f.Add([]byte(`{"days":1,"osts":2,"apps":[{"user":"u","name":"n","nodes":1,"class":"none","runs":1,"duration_s":[1,2]}]}`))
	f.Add([]byte(`{"days":-1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseScenario(b)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted, then invalid: %v", err)
		}
	})
}

// classes lists the kinds of application a scenario has.
func classes(s *Scenario) string {
	seen := map[string]bool{}
	out := ""
	for _, a := range s.Apps {
		if !seen[a.Class] {
			seen[a.Class] = true
			out += a.Class + ","
		}
	}
	return out
}

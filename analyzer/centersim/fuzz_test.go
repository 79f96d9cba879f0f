package centersim

import (
	"encoding/json"
	"testing"
)

// ParseScenario never panics or hangs on any input, and what it accepts
// validates again unchanged.
func FuzzParseScenario(f *testing.F) {
	for _, name := range PresetNames() {
		s, _ := Preset(name)
		b, _ := json.Marshal(s)
		f.Add(b)
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

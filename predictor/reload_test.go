package predictor

import (
	"bytes"
	"testing"
)

// reload saves m and loads it back: the model a second run of the program
// starts from.
func reload(t testing.TB, m *Model) *Model {
	t.Helper()
	var saved bytes.Buffer
	if err := m.Save(&saved); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(&saved)
	if err != nil {
		t.Fatal(err)
	}
	return loaded
}

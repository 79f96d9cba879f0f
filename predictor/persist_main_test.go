package predictor

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"iopred/tracefmt"
)

// The fixture of TestLoadModelOfMain was written by main's build before
// issue 19 (commit 8f2df1b), with this file copied into that tree:
//
//	go test ./predictor -run TestLoadModelOfMain -write-main-fixture
//
// model.msgpack is the model it saved after a program's first run, and
// predictions.json what that model predicted, once loaded, at each call of
// the program's second run.
var writeMainFixture = flag.Bool("write-main-fixture", false, "write testdata/main-8f2df1b from this build")

const mainFixture = "testdata/main-8f2df1b"

// mainFixtureRuns returns the first run (learned, then saved) and the
// second (predicted by the loaded model).
func mainFixtureRuns() (first, second []*tracefmt.Event) {
	first, _ = hdf5Run(6, 3, 4)
	second, _ = hdf5Run(3, 3, 4)
	return first, second
}

// secondRunPredictions loads a saved model and returns its six-call
// predictions before each call of the second run.
func secondRunPredictions(t *testing.T, saved []byte, second []*tracefmt.Event) [][]Prediction {
	t.Helper()
	m, err := Load(bytes.NewReader(saved))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]Prediction
	for _, e := range second {
		out = append(out, m.Predict(6))
		m.Observe(e)
	}
	return out
}

// TestLoadModelOfMain proves that a model saved by main's build before the
// noise-robust predictor still loads, and predicts at every call of the
// next run the same calls, files, offsets, sizes, delays and
// probabilities as main's build predicted from it.
func TestLoadModelOfMain(t *testing.T) {
	first, second := mainFixtureRuns()
	if *writeMainFixture {
		m := New(Options{})
		for _, e := range first {
			m.Observe(e)
		}
		var saved bytes.Buffer
		if err := m.Save(&saved); err != nil {
			t.Fatal(err)
		}
		preds, err := json.MarshalIndent(secondRunPredictions(t, saved.Bytes(), second), "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(mainFixture, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mainFixture, "model.msgpack"), saved.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mainFixture, "predictions.json"), append(preds, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	saved, err := os.ReadFile(filepath.Join(mainFixture, "model.msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(mainFixture, "predictions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want [][]Prediction
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("%s/predictions.json: %v", mainFixture, err)
	}
	got := secondRunPredictions(t, saved, second)
	if len(got) != len(want) {
		t.Fatalf("%d calls predicted, main's build predicted %d", len(got), len(want))
	}
	for i := range want {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(want[i])
		if !bytes.Equal(g, w) {
			t.Fatalf("call %d of the second run: predicted\n%s\nmain's build predicted\n%s", i, g, w)
		}
	}
}

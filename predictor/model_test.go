package predictor

import (
	"bytes"
	"math/rand"
	"testing"
	"time"

	"iopred/tests/fuzzinput"
	"iopred/tracefmt"
)

// matches reports how a prediction differs from the event that came.
func mismatch(p Prediction, e *tracefmt.Event) string {
	switch {
	case p.Op != e.Op || p.Ctx != e.Ctx:
		return "context"
	case p.Path != e.Path:
		return "path"
	case p.Offset != e.Offset:
		return "offset"
	case p.Size != e.Size:
		return "size"
	}
	return ""
}

// TestNestedLoopExactAfterFirstIteration proves the Omnisc'IO claim on an
// HDF5-like checkpoint loop with an interleaved log file: once the first
// checkpoint has been seen, every next operation is predicted exactly
// (context, file, offset with its backward and forward jumps, size that
// varies per dataset), except the very first call of the second
// checkpoint, which follows a transition never seen before.
func TestNestedLoopExactAfterFirstIteration(t *testing.T) {
	events, starts := hdf5Run(6, 3, 4)
	m := New(Options{})
	for i, e := range events {
		pred := m.Predict(1)
		if i > starts[1] {
			if len(pred) != 1 {
				t.Fatalf("event %d (%s ctx %d): no prediction", i, e.Op, e.Ctx)
			}
			if what := mismatch(pred[0], e); what != "" {
				t.Fatalf("event %d: %s wrong: predicted %+v, got %s ctx %d path %s offset %d size %d",
					i, what, pred[0], e.Op, e.Ctx, e.Path, e.Offset, e.Size)
			}
			if i > starts[2] {
				gap := time.Duration(e.StartNs - events[i-1].EndNs)
				if pred[0].Delay != gap {
					t.Fatalf("event %d: delay %v, want %v", i, pred[0].Delay, gap)
				}
			}
		}
		m.Observe(e)
	}
	if got := m.Summary()["accuracy"].(float64); got < 0.9 {
		t.Errorf("online accuracy %.3f, want at least 0.9", got)
	}
}

// TestPredictWholeCheckpoint proves that Predict(k) carries file positions
// forward: from the end of one checkpoint it predicts the whole next one,
// offsets and sizes included, and the delays add up call after call.
func TestPredictWholeCheckpoint(t *testing.T) {
	events, starts := hdf5Run(5, 3, 4)
	m := New(Options{})
	for _, e := range events[:starts[4]] {
		m.Observe(e)
	}
	want := events[starts[4]:]
	pred := m.Predict(len(want))
	if len(pred) != len(want) {
		t.Fatalf("predicted %d operations, want %d", len(pred), len(want))
	}
	for i, p := range pred {
		if what := mismatch(p, want[i]); what != "" {
			t.Fatalf("step %d: %s wrong: predicted %+v, want %+v", i, what, p, *want[i])
		}
		wantDelay := time.Duration(want[i].StartNs - events[starts[4]-1].EndNs)
		if p.Delay != wantDelay {
			t.Fatalf("step %d: delay %v, want %v", i, p.Delay, wantDelay)
		}
	}
}

// TestPhase proves that Phase counts the operations left before the idle
// time that ends a checkpoint.
func TestPhase(t *testing.T) {
	events, starts := hdf5Run(5, 2, 3)
	m := New(Options{})
	for _, e := range events[:starts[3]] {
		m.Observe(e)
	}
	perCheckpoint := starts[4] - starts[3]
	for j := 0; j < perCheckpoint; j++ {
		m.Observe(events[starts[3]+j])
		left, ok := m.Phase()
		if !ok || left != perCheckpoint-1-j {
			t.Fatalf("after call %d of the checkpoint: Phase() = %d, %v; want %d, true", j, left, ok, perCheckpoint-1-j)
		}
	}
}

// TestSaveLoadPredictsSecondRun proves that a model saved after one run
// predicts the next run of the same program from its first operation.
func TestSaveLoadPredictsSecondRun(t *testing.T) {
	run, _ := hdf5Run(4, 3, 4)
	m := New(Options{})
	for _, e := range run {
		m.Observe(e)
	}
	m2 := reload(t, m)
	second, _ := hdf5Run(3, 3, 4)
	for i, e := range second {
		pred := m2.Predict(1)
		if len(pred) == 0 {
			t.Fatalf("second run, event %d: no prediction", i)
		}
		if what := mismatch(pred[0], e); what != "" {
			t.Fatalf("second run, event %d: %s wrong: predicted %+v, got %+v", i, what, pred[0], *e)
		}
		m2.Observe(e)
	}
	if m2.Contexts() != m.Contexts() {
		t.Errorf("contexts after the second run %d, want %d (the same calls)", m2.Contexts(), m.Contexts())
	}
}

// TestLoadRejectsGarbage proves that Load reports malformed input as an
// error: empty input, foreign msgpack, a truncated model, random bytes.
func TestLoadRejectsGarbage(t *testing.T) {
	m := New(Options{})
	run, _ := hdf5Run(2, 2, 2)
	for _, e := range run {
		m.Observe(e)
	}
	var good bytes.Buffer
	if err := m.Save(&good); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":      nil,
		"text":       []byte("hello, world"),
		"msgpack 42": {0x2a},
		"other map":  {0x81, 0xa1, 'a', 0x01},
		"truncated":  good.Bytes()[:good.Len()/2],
		"no tail":    good.Bytes()[:good.Len()-1],
	}
	for name, in := range cases {
		if _, err := Load(bytes.NewReader(in)); err == nil {
			t.Errorf("%s: Load succeeded, want an error", name)
		}
	}
	if _, err := Load(bytes.NewReader(good.Bytes())); err != nil {
		t.Errorf("the intact model: %v", err)
	}
}

// FuzzLoad proves that no input makes Load panic, and that what it accepts
// is usable. The seeds are small models (an empty one and one of a few
// calls, with what Load can do without left out) and small edits of them:
// see tests/fuzzinput for why small.
func FuzzLoad(f *testing.F) {
	run := periodicStream(12)
	for _, n := range []int{0, 6} {
		m := New(Options{})
		for _, e := range run[:n] {
			m.Observe(e)
		}
		var good bytes.Buffer
		if err := m.Save(&good); err != nil {
			f.Fatal(err)
		}
		small := fuzzinput.ShrinkMsgpack(good.Bytes(), func(b []byte) bool {
			m, err := Load(bytes.NewReader(b))
			return err == nil && m.Contexts() == n/2
		})
		for _, in := range fuzzinput.Edits(small, 10) {
			f.Add(in)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0x81, 0xa1, 'a', 0x01})
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Load(bytes.NewReader(in))
		if err != nil {
			return
		}
		m.Predict(4)
		m.Phase()
		for _, e := range run {
			m.Observe(e)
			m.Predict(2)
		}
		m.Summary()
	})
}

// TestIgnoresEventsWithoutOp proves that unnamed events are counted, not
// modelled.
func TestIgnoresEventsWithoutOp(t *testing.T) {
	m := New(Options{})
	m.Observe(&tracefmt.Event{})
	m.Observe(nil)
	s := m.Summary()
	if s["ignored"].(uint64) != 2 || s["events"].(uint64) != 0 || m.Contexts() != 0 {
		t.Errorf("summary %v, want 2 ignored and no events", s)
	}
	if p := m.Predict(1); p != nil {
		t.Errorf("empty model predicted %v", p)
	}
}

// TestSameContextDifferentOpsAreDistinct proves that the operation is part
// of the symbol: one call site issuing reads and writes gives two symbols.
func TestSameContextDifferentOpsAreDistinct(t *testing.T) {
	m := New(Options{})
	m.Observe(&tracefmt.Event{Op: "pread", Ctx: 7, Path: "f", Offset: 0, Size: 8, Bytes: 8, Ret: 8})
	m.Observe(&tracefmt.Event{Op: "pwrite", Ctx: 7, Path: "f", Offset: 8, Size: 8, Bytes: 8, Ret: 8})
	if m.Contexts() != 2 {
		t.Errorf("contexts = %d, want 2", m.Contexts())
	}
}

// TestFileStateBounded proves that the per-file state stays within
// Options.MaxOpenFiles, that the least recently used file is the one
// dropped, and that calls which do not position a file (stat) create none.
func TestFileStateBounded(t *testing.T) {
	m := New(Options{MaxOpenFiles: 2})
	for i, p := range []string{"a", "b", "a", "c"} {
		m.Observe(&tracefmt.Event{Op: "pwrite", Ctx: 1, Path: p, Offset: int64(i), Size: 1, Ret: 1, Bytes: 1})
	}
	if len(m.files) != 2 || m.files["a"] == nil || m.files["c"] == nil {
		t.Errorf("tracked files %v, want a and c", keys(m.files))
	}
	for i := 0; i < 10; i++ {
		m.Observe(&tracefmt.Event{Op: "stat", Ctx: 2, Path: string(rune('k' + i)), Offset: tracefmt.NoOffset})
	}
	if len(m.files) != 2 || m.files["a"] == nil {
		t.Errorf("after stat calls, tracked files %v, want a and c", keys(m.files))
	}
}

func keys(m map[string]*fileState) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestNoisyStreamAccuracy proves that the model keeps predicting a nested
// loop when 5% of its calls come from random contexts: the share of next
// calls predicted (first candidate) stays at least 0.85.
func TestNoisyStreamAccuracy(t *testing.T) {
	events := noisyStream(20000, 0.05, 7)
	m := New(Options{})
	for _, e := range events {
		m.Predict(1)
		m.Observe(e)
	}
	if acc := m.Summary()["accuracy"].(float64); acc < 0.85 {
		t.Errorf("accuracy on the 5%%-noise stream %.3f, want at least 0.85", acc)
	}
}

// TestPatternTakesOverUnsureOffsets proves the hand-over of issue 4: a
// context whose offset jumps take more distinct values than the bound
// falls back to sequential in its own table, and the file's pattern
// detector, certain of the (3, 4, 7) stride group, predicts the offsets
// instead.
func TestPatternTakesOverUnsureOffsets(t *testing.T) {
	m := New(Options{OffsetBound: 2})
	deltas := []int64{3, 4, 7}
	off := int64(0)
	wrong := 0
	for i := 0; i < 300; i++ {
		e := &tracefmt.Event{Op: "pwrite", Ctx: 1, Path: "strided", Offset: off, Size: 1, Ret: 1, Bytes: 1,
			StartNs: int64(i) * 1000, EndNs: int64(i)*1000 + 10}
		if p := m.Predict(1); i >= 30 && (len(p) != 1 || p[0].Offset != off) {
			wrong++
		}
		m.Observe(e)
		off += deltas[i%3]
	}
	if wrong > 0 {
		t.Errorf("%d of 270 offsets mispredicted after the warm-up", wrong)
	}
	tr := m.trans[transKey(0, 0)]
	if tr == nil || !tr.Offsets.Seq.Over {
		t.Fatal("the transition's offset table did not pass its bound; the test does not exercise the hand-over")
	}
}

// TestGuessAndNextOffset proves the behaviour where the grammar knows
// nothing yet: the guess repeats the previous call sequentially on its
// file with probability 1/2, and NextOffset answers per file (the end of
// the latest call, or 0 for a file never seen).
func TestGuessAndNextOffset(t *testing.T) {
	m := New(Options{})
	m.Observe(&tracefmt.Event{Op: "open", Ctx: 1, Path: "in", Offset: tracefmt.NoOffset})
	m.Observe(&tracefmt.Event{Op: "read", Ctx: 2, Path: "in", Offset: 0, Size: 4096, Ret: 100, Bytes: 100})
	p := m.Predict(1)
	if len(p) != 1 || p[0].Op != "read" || p[0].Path != "in" || p[0].Offset != 100 || p[0].Size != 4096 || p[0].Probability != 0.5 {
		t.Fatalf("guess %+v, want read of in at 100, size 4096, probability 0.5", p)
	}
	if off := m.NextOffset("in"); off != 100 {
		t.Errorf("NextOffset(in) = %d, want 100", off)
	}
	if off := m.NextOffset("never"); off != 0 {
		t.Errorf("NextOffset(never) = %d, want 0", off)
	}
}

// threadedRun interleaves, at random, a worker thread writing records
// (contexts 1 and 2 alternating, sequentially in "data") with a main
// thread polling a status file (context 3).
func threadedRun(n int, seed int64) []*tracefmt.Event {
	rng := rand.New(rand.NewSource(seed))
	var events []*tracefmt.Event
	now, off, k := int64(0), int64(0), 0
	for i := 0; i < n; i++ {
		now += 1000
		if rng.Intn(3) == 0 {
			events = append(events, &tracefmt.Event{Op: "lstat", Tid: 1, Ctx: 3, Path: "status",
				Offset: tracefmt.NoOffset, StartNs: now, EndNs: now + 100})
			continue
		}
		ctx, size := uint64(1+k%2), int64(64+k%2*4032)
		events = append(events, &tracefmt.Event{Op: "pwrite", Tid: 2, Ctx: ctx, Path: "data", Offset: off,
			Size: size, Ret: size, Bytes: size, StartNs: now, EndNs: now + 100})
		off += size
		k++
	}
	return events
}

// TestThreadsHaveTheirOwnGrammar proves that the random interleaving of
// two threads does not disturb the prediction of either: after a warm-up,
// the next call is always among the candidates, with its exact offset and
// size, and a saved model keeps both threads' grammars.
func TestThreadsHaveTheirOwnGrammar(t *testing.T) {
	check := func(m *Model, events []*tracefmt.Event, warm int) {
		t.Helper()
		missed := 0
		for i, e := range events {
			cands := m.Candidates()
			found := false
			for _, c := range cands {
				if c.Ctx == e.Ctx && c.Op == e.Op && c.Offset == e.Offset && c.Size == e.Size {
					found = true
				}
			}
			if i >= warm && !found {
				missed++
			}
			m.Observe(e)
		}
		if missed > 0 {
			t.Errorf("%d of %d calls not among the candidates", missed, len(events)-warm)
		}
	}
	m := New(Options{})
	check(m, threadedRun(3000, 1), 50)
	if len(m.lanes) != 2 {
		t.Fatalf("%d lanes, want 2", len(m.lanes))
	}
	check(reload(t, m), threadedRun(1000, 2), 2)
}

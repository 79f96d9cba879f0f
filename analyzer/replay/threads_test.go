package replay

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"iopred/predictor"
	"iopred/tracefmt"
)

// twoReadersStart is fio's random read and write mix beside a sequential
// reader, as threads: thread 1 lays the files out; then thread 2 opens
// "mix" and thread 3 "input" through one open call, each reading through
// one read call, thread 2 at random blocks, thread 3 block after block.
// randomFirst tells whether thread 2's first read comes before thread 3's
// open, or else after thread 3's first read (the scheduler's choice, which
// differs from run to run).
func twoReadersStart(randomFirst bool, reads int) []*tracefmt.Event {
	var s stream
	for _, f := range []string{"mix", "input"} {
		s.addOn(1, 1, "open", f, tracefmt.NoOffset, 0, 1000)
		s.addOn(1, 8, "close", f, tracefmt.NoOffset, 0, 1000)
	}
	r := rand.New(rand.NewPCG(3, 1)) // the same blocks in every run, as fio's
	random := func() { s.addOn(2, 7, "pread", "mix", r.Int64N(256)<<16, 1<<16, 1000) }
	s.addOn(2, 2, "open", "mix", tracefmt.NoOffset, 0, 1000)
	if randomFirst {
		random()
	}
	s.addOn(3, 2, "open", "input", tracefmt.NoOffset, 0, 1000)
	var seq int64
	for range reads {
		s.addOn(3, 7, "pread", "input", seq, 1<<20, 1000)
		seq += 1 << 20
		random()
	}
	return s.events
}

// TestLoadedOnceSeenOffsetYields proves that a loaded model does not
// carry the order two threads first reached a shared call in an earlier
// run into the next one: after the first run, the open-to-read
// transition knows the random reader's first block and the sequential
// reader's read at 0, once each, in that order; in the second run the
// sequential reader reads first, and its newly opened file's first read
// is at 0, which NextOffset must say. Over the second run, offsets are
// not one call below contiguous access.
func TestLoadedOnceSeenOffsetYields(t *testing.T) {
	_, m := Events(twoReadersStart(true, 40), Options{})
	var saved bytes.Buffer
	if err := m.Save(&saved); err != nil {
		t.Fatal(err)
	}
	loaded, err := predictor.Load(&saved)
	if err != nil {
		t.Fatal(err)
	}
	ev := NewEvaluator(Options{Model: loaded})
	first := true
	for i, e := range twoReadersStart(false, 40) {
		if e.Path == "input" && e.Op == "pread" && first {
			first = false
			if got := ev.Model().NextOffset("input"); got != 0 {
				t.Errorf("call %d: the first read of the newly opened file predicted at %d, want 0", i, got)
			}
		}
		ev.Event(e)
	}
	if f := ev.Report().Fields[2]; !f.AtLeastBaseline() {
		t.Errorf("second run: offsets %.4f below contiguous %.4f (only model:baseline %d:%d)", f.Model, f.BaselineValue, f.ModelOnly, f.BaselineOnly)
	}
}

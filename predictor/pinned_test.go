package predictor

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"testing"

	"iopred/tracefmt"
)

// predictionDigest feeds events to a new model and hashes everything its
// callers can see after each one: Predict(1) and Predict(6), the
// candidates, the phase end and NextOffset of the event's file, then
// the summary, and what the model predicts once saved and loaded.
func predictionDigest(t *testing.T, events []*tracefmt.Event, opt Options) uint64 {
	t.Helper()
	m := New(opt)
	h := fnv.New64a()
	var buf []byte
	num := func(x uint64) { buf = binary.LittleEndian.AppendUint64(buf, x) }
	str := func(s string) { num(uint64(len(s))); buf = append(buf, s...) }
	preds := func(ps []Prediction) {
		num(uint64(len(ps)))
		for _, p := range ps {
			str(p.Op)
			str(p.Path)
			num(uint64(p.FileID))
			num(uint64(p.Offset))
			num(uint64(p.Size))
			num(uint64(p.Delay))
			num(math.Float64bits(p.Probability))
			num(p.Ctx)
			if p.Fallback != 0 {
				num(uint64(p.Fallback))
			}
		}
	}
	for i, e := range events {
		m.Observe(e)
		buf = buf[:0]
		// The predictions count towards the model's accuracy, so each
		// kind is asked at its own events, as callers would.
		switch i % 4 {
		case 0:
			preds(m.Predict(1))
		case 1:
			preds(m.Predict(6))
		case 2:
			preds(m.Candidates())
		case 3:
			r, ok := m.Phase()
			num(uint64(r))
			if ok {
				num(1)
			}
			num(uint64(m.NextOffset(e.Path)))
		}
		h.Write(buf)
	}
	buf = buf[:0]
	for _, k := range []string{"events", "ignored", "data_events", "contexts", "transitions", "grammar_size", "scored", "guesses", "accuracy", "context_score"} {
		switch v := m.Summary()[k].(type) {
		case uint64:
			num(v)
		case int:
			num(uint64(v))
		case float64:
			num(math.Float64bits(v))
		}
	}
	h.Write(buf)
	// A saved model's bytes follow map order; what it predicts once
	// loaded does not.
	loaded := reload(t, m)
	buf = buf[:0]
	preds(loaded.Predict(6))
	preds(loaded.Candidates())
	h.Write(buf)
	return h.Sum64()
}

func pointers(evs []tracefmt.Event) []*tracefmt.Event {
	out := make([]*tracefmt.Event, len(evs))
	for i := range evs {
		out[i] = &evs[i]
	}
	return out
}

// TestPredictionsPinned pins what the model predicts on several streams,
// with its baselines (want) and without (pure): a change of the model's
// internals for speed must leave every digest as it is. A change of what
// the model predicts must update them, on purpose. The pure digests are
// those of the model before the baselines were added: NoFallback gives
// exactly the earlier model's predictions.
func TestPredictionsPinned(t *testing.T) {
	hdf5, _ := hdf5Run(150, 3, 8)
	for _, c := range []struct {
		name       string
		events     []*tracefmt.Event
		want, pure uint64
	}{
		{"periodic", periodicStream(6000), 0x8b9ed9dfbda564f2, 0x62dd0c095e4646a1},
		{"noisy", noisyStream(6000, 0.05, 1), 0xd658f6ac705e30cc, 0x89a8eef0fc9b62d7},
		{"hdf5", hdf5, 0xae4a8733b0d0d0fd, 0xcf30b17ad00d1fc9},
		{"threads", threadedRun(6000, 3), 0x75d47821ddbabf14, 0x4476154dd68d17d2},
		{"write1", pointers(callStream("write1", 6000)), 0xd2fc41d85028cd9d, 0xe194b39563d7e04},
		{"pwrite4k", pointers(callStream("pwrite4k", 6000)), 0x84a482dc3c74300b, 0x4eb948f6ba6b0a4},
	} {
		if got := predictionDigest(t, c.events, Options{}); got != c.want {
			t.Errorf("%s: digest %#x, want %#x", c.name, got, c.want)
		}
		if got := predictionDigest(t, c.events, Options{NoFallback: true}); got != c.pure {
			t.Errorf("%s without fallback: digest %#x, want %#x", c.name, got, c.pure)
		}
	}
}

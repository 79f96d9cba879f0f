package predictor

import (
	"testing"

	"iopred/tracefmt"
)

// predcheckRun is tests/predict's predcheck program: on one file, 20
// iterations of 8 pwrite of 4 KiB appended, an fsync, and a pread of
// 8 KiB at the start of the iteration's data. The first pread, at 0, is
// both "absolute 0" and "relative -32 KiB".
func predcheckRun() []*tracefmt.Event {
	s := newSynth()
	s.meta(1, "open", "data", 0)
	for iter := 0; iter < 20; iter++ {
		for i := 0; i < 8; i++ {
			s.write(2, "data", int64(iter*8+i)*4096, 4096, gapInPhase)
		}
		s.meta(3, "fsync", "data", gapInPhase)
		s.now += gapInPhase
		s.events = append(s.events, &tracefmt.Event{
			Op: "pread", Path: "data", FileID: s.id("data"), Offset: int64(iter) * 8 * 4096, Size: 8192,
			Ret: 8192, Bytes: 8192, StartNs: s.now, EndNs: s.now + callNs, Ctx: 4,
		})
		s.now += callNs
	}
	s.meta(5, "close", "data", gapInPhase)
	return s.events
}

// h5ChunkRun is the offsets of tests/predict's HDF5 writer: per
// checkpoint file, a superblock, five 128 KiB chunks appended with a
// 2 KiB hole before the fourth (where the library later writes
// metadata), then the metadata writes back at 96 and into the hole. The
// file's stride pattern says "sequential" at the hole; the chunk->chunk
// transition's local grammar knows better.
func h5ChunkRun(checkpoints int) []*tracefmt.Event {
	s := newSynth()
	const ctxMeta = 20
	for c := 0; c < checkpoints; c++ {
		s.meta(ctxOpen, "open", "ckpt.h5", gapCompute)
		s.write(ctxSuper, "ckpt.h5", 0, 96, gapInPhase)
		for _, off := range []int64{2048, 133120, 264192, 397312, 528384} {
			s.write(ctxChunk, "ckpt.h5", off, 131072, gapInPhase)
		}
		s.write(ctxMeta, "ckpt.h5", 96, 1848, gapInPhase)
		s.write(ctxMeta+1, "ckpt.h5", 395264, 544, gapInPhase)
		s.meta(ctxClose, "close", "ckpt.h5", gapInPhase)
	}
	return s.events
}

// TestLocalGrammarTrustedOverStream proves that an offset table's local
// grammar, once its first candidate is the one its longest-confirmed
// mark names, wins over the file's stride pattern, also when other marks
// of the noise-robust predictor add minority candidates: every chunk of
// the HDF5-like checkpoints after the third, and every call of a second
// run predicted by the model saved after the first, gets its offset.
func TestLocalGrammarTrustedOverStream(t *testing.T) {
	t.Run("hdf5 chunks", func(t *testing.T) {
		m := New(Options{})
		for i, e := range h5ChunkRun(20) {
			if i >= 3*10 && e.Ctx == ctxChunk {
				if got := m.NextOffset(e.Path); got != e.Offset {
					t.Errorf("event %d: chunk offset %d predicted, want %d", i, got, e.Offset)
				}
			}
			m.Observe(e)
		}
	})
	t.Run("saved model", func(t *testing.T) {
		run := predcheckRun()
		m := New(Options{})
		for _, e := range run {
			m.Observe(e)
		}
		loaded := reload(t, m)
		for i, e := range run {
			if p := loaded.Predict(1); len(p) == 0 || p[0].Op != e.Op || p[0].Offset != e.Offset {
				t.Errorf("second run, event %d (%s at %d): predicted %+v", i, e.Op, e.Offset, p)
			}
			loaded.Observe(e)
		}
	})
}

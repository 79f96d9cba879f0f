package predictor

import (
	"math/rand"

	"iopred/tracefmt"
)

// synth builds event streams for the tests: it keeps a clock and the end of
// each file so that offsets and times are consistent.
type synth struct {
	now    int64
	ids    map[string]uint32
	ends   map[string]int64
	events []*tracefmt.Event
}

func newSynth() *synth {
	return &synth{ids: map[string]uint32{}, ends: map[string]int64{}}
}

const callNs = 2000 // every synthetic call takes 2 us

func (s *synth) id(path string) uint32 {
	if s.ids[path] == 0 {
		s.ids[path] = uint32(len(s.ids) + 1)
	}
	return s.ids[path]
}

// meta appends a call without offset (open, close) gapNs after the previous.
func (s *synth) meta(ctx uint64, op, path string, gapNs int64) {
	s.now += gapNs
	s.events = append(s.events, &tracefmt.Event{
		Op: op, Path: path, FileID: s.id(path), Offset: tracefmt.NoOffset,
		Ret: 3, StartNs: s.now, EndNs: s.now + callNs, Ctx: ctx,
	})
	s.now += callNs
	if op == "open" {
		s.ends[path] = 0
	}
}

// write appends a pwrite of size bytes at off (off < 0: at the file's end).
func (s *synth) write(ctx uint64, path string, off, size, gapNs int64) {
	if off < 0 {
		off = s.ends[path]
	}
	s.now += gapNs
	s.events = append(s.events, &tracefmt.Event{
		Op: "pwrite", Path: path, FileID: s.id(path), Offset: off, Size: size,
		Ret: size, Bytes: size, StartNs: s.now, EndNs: s.now + callNs, Ctx: ctx,
	})
	s.now += callNs
	s.ends[path] = max(s.ends[path], off+size)
}

// Contexts of the HDF5-like checkpoint loop.
const (
	ctxOpen = iota + 1
	ctxSuper
	ctxHeader
	ctxChunk
	ctxLog
	ctxBtree
	ctxSuperAgain
	ctxClose
	ctxLogOpen
)

const (
	gapInPhase = 5_000         // 5 us between calls of a checkpoint
	gapCompute = 1_000_000_000 // 1 s of computation between checkpoints
)

// hdf5Iteration appends one checkpoint written the way HDF5 lays a file
// out: a superblock at 0, metadata space reserved up to 512, then for each
// dataset an object header and its chunks at the end of the file, with a
// line in a log file (another file, interleaved) after each dataset, and
// finally metadata written back at 96 and the superblock rewritten at 0.
// The checkpoint is events [first, len) with first the returned index.
func (s *synth) hdf5Iteration(datasets, chunks int) int {
	first := len(s.events)
	const ck, log = "ckpt.h5", "run.log"
	s.meta(ctxOpen, "open", ck, gapCompute)
	s.write(ctxSuper, ck, 0, 96, gapInPhase)
	s.ends[ck] = 512
	for d := 0; d < datasets; d++ {
		s.write(ctxHeader, ck, -1, 272, gapInPhase)
		for c := 0; c < chunks; c++ {
			s.write(ctxChunk, ck, -1, 8192, gapInPhase)
		}
		s.write(ctxLog, log, -1, int64(40+d), gapInPhase)
	}
	s.write(ctxBtree, ck, 96, 200, gapInPhase)
	s.write(ctxSuperAgain, ck, 0, 96, gapInPhase)
	s.meta(ctxClose, "close", ck, gapInPhase)
	return first
}

// hdf5Run is a program that opens its log and writes n checkpoints; it
// returns the events and the index where each checkpoint starts.
func hdf5Run(n, datasets, chunks int) ([]*tracefmt.Event, []int) {
	s := newSynth()
	s.meta(ctxLogOpen, "open", "run.log", 0)
	var starts []int
	for i := 0; i < n; i++ {
		starts = append(starts, s.hdf5Iteration(datasets, chunks))
	}
	return s.events, starts
}

// periodicStream is n events of a nested loop: an outer loop of phases,
// each writing `inner` records with two contexts, sequentially, in one
// file.
func periodicStream(n int) []*tracefmt.Event {
	s := newSynth()
	for len(s.events) < n {
		s.meta(100, "open", "p.dat", gapCompute)
		for i := 0; i < 8 && len(s.events) < n; i++ {
			s.write(101, "p.dat", -1, 4096, gapInPhase)
			s.write(102, "p.dat", -1, 64, gapInPhase)
		}
		s.meta(103, "close", "p.dat", gapInPhase)
	}
	return s.events[:n]
}

// noisyStream is periodicStream with a share of the events replaced by
// calls from random contexts (among 50).
func noisyStream(n int, noise float64, seed int64) []*tracefmt.Event {
	rng := rand.New(rand.NewSource(seed))
	ev := periodicStream(n)
	for i, e := range ev {
		if rng.Float64() < noise {
			c := *e
			c.Ctx = uint64(200 + rng.Intn(50))
			ev[i] = &c
		}
	}
	return ev
}

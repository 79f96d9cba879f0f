package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"unsafe"

	"iopred/predictor"
	"iopred/tracefmt"
)

// stageRecord is an event as the consumer drains it from a ring: plain
// numbers, its strings named by index. The records of a stage's trace
// live outside the Go heap (stageStream), as the rings do, so that the
// collector neither scans them nor paces itself by them: a stage's
// collection work is what its own heap costs, as in the library.
type stageRecord struct {
	op, path                                               int32
	file                                                   uint32
	tid, errno                                             int32
	ctx                                                    uint64
	offset, size, ret, bytes, start, end, aux, seq, parent int64
}

// stageStream is a recorded trace ready for a stage: its header,
// definitions, and event records with their string tables.
type stageStream struct {
	header  tracefmt.Header
	ctxs    []tracefmt.Context
	files   []tracefmt.File
	records []stageRecord // in memory mapped apart from the Go heap
	ops     []string
	layers  []tracefmt.Layer
	paths   []string
}

// event fills e with record i as session.write fills its one event.
func (s *stageStream) event(e *tracefmt.Event, i int) {
	r := &s.records[i]
	*e = tracefmt.Event{
		Op: s.ops[r.op], FileID: r.file, Offset: r.offset, Size: r.size, Ret: r.ret, Bytes: r.bytes,
		StartNs: r.start, EndNs: r.end, Tid: r.tid, Ctx: r.ctx, Errno: r.errno, Aux: r.aux,
		Seq: r.seq, Parent: r.parent,
	}
	e.Layer = s.layers[r.op]
}

// readStageStream reads a trace the library recorded into the events its
// consumer thread built (session.write): the fields the C record
// carries, the layer, and the path; the reader's own additions (rank,
// pid) left out.
func readStageStream(tb testing.TB, path string) *stageStream {
	s := &stageStream{}
	opIndex, pathIndex := map[string]int32{}, map[string]int32{}
	var recs []stageRecord
	h, err := tracefmt.ReadAll(path, func(r tracefmt.Record) error {
		switch {
		case r.Context != nil:
			s.ctxs = append(s.ctxs, *r.Context)
		case r.File != nil:
			s.files = append(s.files, *r.File)
		case r.Event != nil:
			d := r.Event
			op, ok := opIndex[d.Op]
			if !ok {
				op = int32(len(s.ops))
				opIndex[d.Op] = op
				s.ops = append(s.ops, d.Op)
				s.layers = append(s.layers, d.Layer)
			}
			p, ok := pathIndex[d.Path]
			if !ok {
				p = int32(len(s.paths))
				pathIndex[d.Path] = p
				s.paths = append(s.paths, d.Path)
			}
			recs = append(recs, stageRecord{op: op, path: p, file: d.FileID, tid: d.Tid, errno: d.Errno, ctx: d.Ctx,
				offset: d.Offset, size: d.Size, ret: d.Ret, bytes: d.Bytes, start: d.StartNs, end: d.EndNs,
				aux: d.Aux, seq: d.Seq, parent: d.Parent})
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	s.header = h
	if len(recs) == 0 {
		tb.Fatalf("%s: no events", path)
	}
	size := len(recs) * int(unsafe.Sizeof(recs[0]))
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		tb.Fatalf("mapping %d bytes: %v", size, err)
	}
	s.records = unsafe.Slice((*stageRecord)(unsafe.Pointer(&mem[0])), len(recs))
	copy(s.records, recs)
	// The reading's garbage is collected before a stage starts, the
	// same in every stage, none included.
	recs = nil
	runtime.GC()
	return s
}

// TestConsumerStage is the worker that preload/bench's BenchmarkEventCost
// runs under callgrind, once per stage of the consumer thread's Go work,
// on the events a traced run recorded (IOPRED_STAGE_TRACE): each stage
// alone, so that its instructions are a whole process's count and not a
// share of call edges, which callgrind misattributes across Go's stack
// switches. IOPRED_STAGE names the stage:
//
//   - none: the trace read, and each event filled as session.write
//     fills it, nothing else (what the others subtract);
//   - model: the functions session.write calls after the trace writer
//     (observe, observePeriod, observeJob), the job started as at open;
//   - encode: tracefmt.Writer.Event with frames too large to close
//     (32 MiB), so nothing is compressed;
//   - write: Writer.Event with the library's frame size (1 MiB, or
//     IOPRED_FLUSH_BYTES), every frame compressed, as in the library.
//
// Compression is write minus encode. Without IOPRED_STAGE it checks
// that every stage runs on a trace recorded by this repository's tests.
func TestConsumerStage(t *testing.T) {
	stage, trace := os.Getenv("IOPRED_STAGE"), os.Getenv("IOPRED_STAGE_TRACE")
	if stage == "" {
		m, _ := filepath.Glob("../analyzer/centersim/traces/fio/*.iopred.zst")
		if len(m) == 0 {
			t.Fatal("no committed fio trace under analyzer/centersim/traces/fio")
		}
		trace = m[0]
		for _, s := range []string{"none", "model", "encode", "write"} {
			if err := runStage(t, s, trace); err != nil {
				t.Fatalf("stage %s: %v", s, err)
			}
		}
		if model == nil || model.Summary() == nil {
			t.Fatal("the model stage did not run the model")
		}
		return
	}
	if err := runStage(t, stage, trace); err != nil {
		t.Fatalf("stage %s: %v", stage, err)
	}
}

// stageSink keeps the none stage's loop from being optimised away.
var stageSink int64

func runStage(tb testing.TB, stage, trace string) error {
	s := readStageStream(tb, trace)
	frame := 1 << 20
	if v := os.Getenv("IOPRED_FLUSH_BYTES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		frame = n
	}
	var e tracefmt.Event
	switch stage {
	case "none":
		// The events filled as the other stages fill them, which
		// session.write does in the library: hand-over, not a stage.
		var sum int64
		for i := range s.records {
			s.event(&e, i)
			e.Path = s.paths[s.records[i].path]
			sum += e.Offset + int64(len(e.Path))
		}
		stageSink = sum
		return nil
	case "model":
		startJob(s.header)
		for i := range s.records {
			s.event(&e, i)
			e.Path = s.paths[s.records[i].path]
			observe(&e)
			observePeriod(&e)
			observeJob(&e)
		}
		return nil
	case "encode":
		frame = tracefmt.MaxFrameData / 2
	case "write":
	default:
		tb.Fatalf("IOPRED_STAGE=%s: not none, model, encode or write", stage)
	}
	w, err := tracefmt.NewWriter(io.Discard, s.header, tracefmt.WriterOptions{FrameBytes: frame})
	if err != nil {
		return err
	}
	for _, c := range s.ctxs {
		if err := w.Context(c); err != nil {
			return err
		}
	}
	for _, f := range s.files {
		if err := w.File(f); err != nil {
			return err
		}
	}
	for i := range s.records {
		s.event(&e, i)
		if err := w.Event(&e); err != nil {
			return err
		}
	}
	if stage == "write" {
		return w.Flush()
	}
	return nil
}

// A model that panics turns predictions off and the panic goes no
// further: the trace goes on without the model.
func TestObserveSurvivesModelPanic(t *testing.T) {
	savedModel, savedBroken := model, modelBroken
	defer func() { model, modelBroken = savedModel, savedBroken }()
	e := tracefmt.Event{Op: "write", FileID: 1, Size: 1, Ret: 1, Bytes: 1, Layer: tracefmt.LayerPOSIX, Path: "/tmp/x"}
	model, modelBroken = predictor.New(predictor.Options{}), false
	observe(&e)
	if modelBroken {
		t.Fatal("a working model was taken for broken")
	}
	model = &predictor.Model{} // no maps: Observe panics
	observe(&e)
	if !modelBroken {
		t.Fatal("the model's panic did not turn predictions off")
	}
	observe(&e) // off: Observe is not called again
}

package tracefmt

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// siteRecords is a varied stream in records: call sites (contexts) that
// keep their operation, file and size, as a program's loops do, mixed
// with randomEvents's changes of every field; contexts and files defined
// when first used (so definitions fall in later frames), files given new
// paths, fork and exec records, frames closed at random, and a footer
// followed by more events (an exec that failed).
func siteRecords(rng *rand.Rand, n int) []record {
	type site struct {
		op     string
		file   uint32
		size   int64
		ctx    uint64
		stride int64 // 0: sequential on its own; -1: at the file's position
	}
	sites := []site{
		{"pwrite", 1, 4096, 11, 4096},
		{"write", 1, 1, 12, 0},
		{"write", 2, 100, 13, -1},
		{"write", 2, 28, 14, -1},
		{"read", 3, 65536, 15, 2 * 65536},
		{"fwrite", 3, 8, 0, 0},
		{"lseek", 1, 0, 16, 0},
		{"MPI_File_write_at", 4, 1 << 20, 17, 4 << 20},
		{"stat", 0, 0, 18, 0},
	}
	var recs []record
	ctxDefined := map[uint64]bool{}
	fileDefined := map[uint32]bool{}
	define := func(e *Event) {
		if e.Ctx != 0 && !ctxDefined[e.Ctx] {
			ctxDefined[e.Ctx] = true
			recs = append(recs, record{ctx: &Context{ID: e.Ctx, Frames: []Frame{{Module: "/bin/app", Offset: e.Ctx * 16}}}})
		}
		if e.FileID != 0 && (!fileDefined[e.FileID] || rng.Intn(2000) == 0) {
			fileDefined[e.FileID] = true
			recs = append(recs, record{file: &File{ID: e.FileID, Path: "/scratch/f" + strconv.Itoa(int(e.FileID)) + "." + strconv.Itoa(len(recs))}})
		}
	}
	offsets := map[uint64]int64{}
	filePos := map[uint32]int64{}
	start := int64(1000)
	random := randomEvents(rng, n)
	for i := 0; i < n; i++ {
		var e Event
		if rng.Intn(4) == 0 {
			e = random[i]
			e.StartNs = start + e.StartNs
			e.EndNs = start + e.EndNs
		} else {
			s := sites[rng.Intn(len(sites))]
			if rng.Intn(50) == 0 {
				s.size = int64(rng.Intn(3)) * 512 // a site whose size changes
			}
			e = Event{Op: s.op, FileID: s.file, Size: s.size, Ctx: s.ctx, Tid: int32(rng.Intn(2)) + 100, Offset: NoOffset}
			if IsData(s.op) {
				e.Ret, e.Bytes = s.size, s.size
				if rng.Intn(40) == 0 {
					e.Ret, e.Bytes, e.Errno = -1, 0, 5
				}
			}
			switch {
			case s.op == "lseek":
				e.Offset, e.Aux = rng.Int63n(1<<20), int64(rng.Intn(3))
				filePos[s.file] = e.Offset
			case s.op == "stat":
			case s.stride < 0:
				e.Offset = filePos[s.file]
				filePos[s.file] += e.Bytes
			case s.stride == 0:
				e.Offset = offsets[s.ctx]
				offsets[s.ctx] += e.Bytes
			default:
				e.Offset = offsets[s.ctx]
				offsets[s.ctx] += s.stride
			}
			if s.op == "MPI_File_write_at" {
				e.Seq = int64(i)
			}
			e.StartNs = start
			e.EndNs = start + int64(rng.Intn(2000))
		}
		start += int64(rng.Intn(5000))
		define(&e)
		recs = append(recs, record{event: &e})
		switch rng.Intn(300) {
		case 0:
			recs = append(recs, record{flush: true})
		case 1:
			recs = append(recs, record{proc: &Proc{Op: "fork", TimeNs: start, Child: 1000 + i}})
		case 2:
			recs = append(recs, record{proc: &Proc{Op: "exec", TimeNs: start, Path: "/bin/true"}},
				record{footer: &Footer{Reason: "exec", EndNs: start}})
		}
	}
	return append(recs, record{footer: &Footer{Reason: "exit", EndNs: start}})
}

// Version 2's per-context fields restore the same events: a varied
// stream read back equals what was written, record for record, with
// small frames so that contexts come back in frame after frame.
func TestVersion2RoundTrip(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		h := testHeader()
		recs := siteRecords(rand.New(rand.NewSource(seed)), 20000)
		data := writeTrace(t, h, WriterOptions{FrameBytes: 8 << 10}, recs)
		_, got, err := readTrace(t, data)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want := expected(h, recs)
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d records, want %d", seed, len(got), len(want))
		}
		for i := range want {
			if !sameRecord(got[i], want[i]) {
				t.Fatalf("seed %d record %d: got %+v want %+v", seed, i, got[i].Event, want[i].Event)
			}
		}
		if len(frameEnds(t, data)) < 50 {
			t.Fatalf("seed %d: too few frames to test frame boundaries", seed)
		}
	}
}

// Every frame decodes on its own: a trace with any frame that holds no
// definition taken out still yields every other frame's records, the
// same as in the whole trace. A cut trace yields every record of its
// complete frames.
func TestVersion2FramesStandAlone(t *testing.T) {
	h := testHeader()
	recs := siteRecords(rand.New(rand.NewSource(99)), 6000)
	data := writeTrace(t, h, WriterOptions{FrameBytes: 4 << 10}, recs)
	_, all, err := readTrace(t, data)
	if err != nil {
		t.Fatal(err)
	}
	ends := frameEnds(t, data)
	// The records of each frame, by reading frame after frame.
	var perFrame [][]Record
	{
		r, err := NewReader(bytes.NewReader(data), "x")
		if err != nil {
			t.Fatal(err)
		}
		var cur []Record
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			cur = append(cur, rec)
			if r.pos == len(r.data) {
				perFrame = append(perFrame, cur)
				cur = nil
			}
		}
	}
	if len(perFrame) != len(ends)-1 {
		t.Fatalf("%d frames of records, %d frames after the header", len(perFrame), len(ends)-1)
	}
	dropped := 0
	for k := 1; k < len(ends)-1; k++ {
		defines := false
		for _, rec := range perFrame[k-1] {
			defines = defines || rec.Kind == KindContext || rec.Kind == KindFile
		}
		if defines {
			continue
		}
		dropped++
		cut := append(append([]byte{}, data[:ends[k-1]]...), data[ends[k]:]...)
		_, got, err := readTrace(t, cut)
		var te *TruncatedError
		if err != nil && !errors.As(err, &te) {
			t.Fatalf("without frame %d: %v", k, err)
		}
		var want []Record
		for j, fr := range perFrame {
			if j != k-1 {
				want = append(want, fr...)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("without frame %d: %d records, want %d", k, len(got), len(want))
		}
		for i := range want {
			if !sameRecord(got[i], want[i]) {
				t.Fatalf("without frame %d, record %d: got %+v want %+v", k, i, got[i].Event, want[i].Event)
			}
		}
	}
	if dropped < 20 {
		t.Fatalf("only %d frames without definitions", dropped)
	}
	for _, cut := range []int64{ends[len(ends)/2] - 1, ends[len(ends)/2], ends[len(ends)/2] + 7, int64(len(data)) - 1} {
		_, got, err := readTrace(t, data[:cut])
		var te *TruncatedError
		if !errors.As(err, &te) {
			t.Fatalf("cut at %d: err %v, want TruncatedError", cut, err)
		}
		n := 0
		for k, e := range ends[1:] {
			if e <= cut {
				n += len(perFrame[k])
			}
		}
		if len(got) != n {
			t.Fatalf("cut at %d: %d records, want %d", cut, len(got), n)
		}
		for i := range got {
			if !sameRecord(got[i], all[i]) {
				t.Fatalf("cut at %d: record %d differs", cut, i)
			}
		}
	}
}

// referenceLinesV1 encodes events as format version 1 did (every event
// names its operation; size and aux omitted when 0; the file omitted when
// the frame's previous event had it; offsets from the file's expected
// offset alone).
type referenceLinesV1 struct {
	prevFile  uint32
	prevTid   int32
	prevStart int64
	ends      map[uint32]int64
}

func (r *referenceLinesV1) line(b []byte, e *Event, ctx uint32) []byte {
	data, posix := IsData(e.Op), LayerOf(e.Op) == LayerPOSIX
	b = append(b, `{"k":"e","o":`...)
	b = appendJSONString(b, e.Op)
	if e.FileID != r.prevFile {
		b = strconv.AppendUint(append(b, `,"f":`...), uint64(e.FileID), 10)
		r.prevFile = e.FileID
	}
	if ctx != 0 {
		b = strconv.AppendUint(append(b, `,"c":`...), uint64(ctx), 10)
	}
	if e.Tid != r.prevTid {
		b = strconv.AppendInt(append(b, `,"i":`...), int64(e.Tid), 10)
		r.prevTid = e.Tid
	}
	if e.Size != 0 {
		b = strconv.AppendInt(append(b, `,"s":`...), e.Size, 10)
	}
	if e.Ret != expectedRet(data, e.Size) {
		b = strconv.AppendInt(append(b, `,"r":`...), e.Ret, 10)
	}
	if e.Bytes != expectedBytesIn(data, posix, e.Ret, e.Size) {
		b = strconv.AppendInt(append(b, `,"b":`...), e.Bytes, 10)
	}
	for _, f := range []struct {
		key string
		v   int64
	}{{"e", int64(e.Errno)}, {"a", e.Aux}, {"q", e.Seq}, {"p", e.Parent}} {
		if f.v != 0 {
			b = strconv.AppendInt(append(b, `,"`+f.key+`":`...), f.v, 10)
		}
	}
	if e.Offset == NoOffset {
		if data {
			b = append(b, `,"nx":1`...)
		}
	} else {
		want := r.ends[e.FileID]
		if !data || e.Offset != want {
			b = strconv.AppendInt(append(b, `,"x":`...), e.Offset-want, 10)
		}
		r.ends[e.FileID] = nextOffset(data, e.Offset, e.Bytes)
	}
	b = strconv.AppendInt(append(b, `,"t":`...), e.StartNs-r.prevStart, 10)
	r.prevStart = e.StartNs
	b = strconv.AppendInt(append(b, `,"d":`...), e.EndNs-e.StartNs, 10)
	return append(b, '}', '\n')
}

// A version 1 trace (the committed traces, and every trace written
// before version 2) still reads with version 1's rules: the same varied
// stream written the old way decodes to the same records, on the fast
// scanner and on the general path.
func TestVersion1StillReads(t *testing.T) {
	h := testHeader()
	recs := siteRecords(rand.New(rand.NewSource(7)), 6000)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The header as version 1 wrote it, then the records in frames of
	// version 1's lines.
	h1 := h
	h1.Version = 1
	body, _ := appendBody(nil, h1)
	frame := func(lines []byte) []byte { return appendRawFrame(nil, lines) }
	var out []byte
	out = append(out, frame(append(append([]byte(`{"k":"h",`), body[1:]...), '\n'))...)
	ref := referenceLinesV1{ends: map[uint32]int64{}}
	var lines []byte
	flush := func() {
		for len(lines) > 0 {
			// Raw frames hold up to 128 KiB; cut at a line's end.
			n := min(len(lines), 100<<10)
			if n < len(lines) {
				n = bytes.LastIndexByte(lines[:n], '\n') + 1
			}
			out = append(out, frame(lines[:n])...)
			lines = lines[n:]
			ref = referenceLinesV1{ends: map[uint32]int64{}}
		}
	}
	for i, r := range recs {
		switch {
		case r.event != nil:
			idx := uint32(0)
			if r.event.Ctx != 0 {
				idx = w.ctxIndex[r.event.Ctx]
			}
			lines = ref.line(lines, r.event, idx)
		case r.ctx != nil, r.file != nil, r.proc != nil, r.footer != nil:
			// The writer encodes the other records as version 1 did.
			w.buf = w.buf[:0]
			var err error
			switch {
			case r.ctx != nil:
				err = w.Context(*r.ctx)
			case r.file != nil:
				err = w.File(*r.file)
			case r.proc != nil:
				err = w.Proc(*r.proc)
			default:
				err = w.record(KindFooter, *r.footer)
			}
			if err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			lines = append(lines, w.buf...)
			w.buf = w.buf[:0]
		case r.flush:
			flush()
		}
	}
	flush()
	for _, general := range []bool{false, true} {
		r, err := NewReader(bytes.NewReader(out), "v1.iopred.zst")
		if err != nil {
			t.Fatal(err)
		}
		r.generalOnly = general
		want := expected(h, recs)
		for i := range want {
			rec, err := r.Next()
			if err != nil {
				t.Fatalf("general %v record %d: %v", general, i, err)
			}
			if rec.Kind == KindHeader {
				t.Fatal("header returned as a record")
			}
			if !sameRecord(rec, want[i]) {
				t.Fatalf("general %v record %d: got %+v want %+v", general, i, rec.Event, want[i].Event)
			}
		}
		if r.Header().Version != 1 {
			t.Fatalf("header version %d", r.Header().Version)
		}
	}
}

// reencode writes the records of the trace data again with this
// package's Writer, closing a frame where the original closed one, and
// returns the new trace with the original's records.
func reencode(t *testing.T, data []byte, name string) (out []byte, recs []Record, hdr Header) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer r.Close()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, r.Header(), WriterOptions{FrameBytes: MaxFrameData / 2, FrameAge: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if err != nil {
			var te *TruncatedError
			if err != io.EOF && !errors.As(err, &te) {
				t.Fatalf("%s: %v", name, err)
			}
			break
		}
		recs = append(recs, rec)
		switch {
		case rec.Context != nil:
			err = w.Context(*rec.Context)
		case rec.File != nil:
			err = w.File(*rec.File)
		case rec.Event != nil:
			err = w.Event(rec.Event)
		case rec.Proc != nil:
			err = w.Proc(*rec.Proc)
		case rec.Counters != nil:
			err = w.Counters(rec.Counters)
		case rec.Region != nil:
			err = w.Region(rec.Region)
		case rec.Footer != nil:
			err = w.Close(*rec.Footer)
		}
		if err != nil {
			t.Fatalf("%s: writing %s record: %v", name, kindName(rec.Kind), err)
		}
		if r.pos == len(r.data) {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), recs, r.Header()
}

// Every trace kept in the repository (all of format version 1: real
// programs' streams, MPI jobs, forked children, imported Darshan and
// DFTracer data), written again as version 2 in the same frames, reads
// back as the same header (but its version), records and tables. It
// reports the bytes per event of both. With IOPRED_REENCODE_OUT set, the
// version 2 traces are left in that directory (named by their paths in the repository, / as __)
// for comparing `iopred events` of the two builds.
func TestCommittedTracesReencoded(t *testing.T) {
	traces := committedTraces(t)
	outDir := os.Getenv("IOPRED_REENCODE_OUT")
	var oldBytes, newBytes, oldLines, newLines, events, wholeEvents int
	dec, err := newDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	plain := func(data []byte) int {
		b, err := dec.DecodeAll(data, nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	for _, p := range traces {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		v2, want, hdr := reencode(t, data, p)
		if hdr.Version != 1 {
			continue // written since version 2: nothing to compare with
		}
		r, err := NewReader(bytes.NewReader(v2), p)
		if err != nil {
			t.Fatalf("%s again: %v", p, err)
		}
		got := r.Header()
		got.Version = hdr.Version
		if !reflect.DeepEqual(got, hdr) {
			t.Fatalf("%s: header %+v, want %+v", p, got, hdr)
		}
		n, traceEvents := 0, 0
		for {
			rec, err := r.Next()
			if err != nil {
				var te *TruncatedError
				if err != io.EOF && !errors.As(err, &te) {
					t.Fatalf("%s again, record %d: %v", p, n, err)
				}
				break
			}
			if n >= len(want) || !reflect.DeepEqual(rec, want[n]) {
				t.Fatalf("%s again, record %d: %+v", p, n, recordString(rec))
			}
			if rec.Event != nil {
				traceEvents++
			}
			n++
		}
		if n != len(want) {
			t.Fatalf("%s again: %d records, want %d", p, n, len(want))
		}
		r.Close()
		oldBytes += len(data)
		newBytes += len(v2)
		events += traceEvents
		if ends := frameEnds(t, data); len(data) == int(ends[len(ends)-1]) {
			oldLines += plain(data)
			newLines += plain(v2)
			wholeEvents += traceEvents
		}
		if outDir != "" {
			rel, _ := filepath.Rel(repoRoot(t), p)
			name := filepath.Join(outDir, strings.ReplaceAll(rel, "/", "__"))
			if err := os.WriteFile(name, v2, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if events == 0 {
		t.Fatal("no events in the committed traces")
	}
	t.Logf("%d traces, %d events: version 1 %.2f bytes/event, version 2 %.2f; before compression (whole traces only) %.1f and %.1f",
		len(traces), events, float64(oldBytes)/float64(events), float64(newBytes)/float64(events),
		float64(oldLines)/float64(wholeEvents), float64(newLines)/float64(wholeEvents))
}

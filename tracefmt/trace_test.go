package tracefmt

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// record is what a test writes and expects back.
type record struct {
	ctx    *Context
	file   *File
	event  *Event
	proc   *Proc
	footer *Footer
	tick   time.Duration // when set: call Tick this long after the frame opened
	flush  bool
}

func testHeader() Header {
	rank := 3
	return Header{Program: "/bin/app", Args: []string{"app", "-x"}, Host: "n1", PID: 42, PPID: 1,
		Rank: &rank, StartUnixNs: 1700000000000000000, StartMonoNs: 123456789, ContextDepth: 16, Library: "iopred test"}
}

// writeTrace writes recs and returns the trace bytes.
func writeTrace(t testing.TB, h Header, opt WriterOptions, recs []record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		var err error
		switch {
		case r.ctx != nil:
			err = w.Context(*r.ctx)
		case r.file != nil:
			err = w.File(*r.file)
		case r.event != nil:
			err = w.Event(r.event)
		case r.proc != nil:
			err = w.Proc(*r.proc)
		case r.footer != nil:
			err = w.Close(*r.footer)
		case r.tick != 0:
			err = w.Tick(w.opened.Add(r.tick))
		case r.flush:
			err = w.Flush()
		}
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// expected fills in what the reader derives (Layer, Path, PID, Rank).
func expected(h Header, recs []record) []Record {
	paths := map[uint32]string{}
	var out []Record
	for _, r := range recs {
		switch {
		case r.ctx != nil:
			c := *r.ctx
			if c.Frames == nil {
				c.Frames = []Frame{}
			}
			out = append(out, Record{Kind: KindContext, Context: &c})
		case r.file != nil:
			f := *r.file
			paths[f.ID] = f.Path
			out = append(out, Record{Kind: KindFile, File: &f})
		case r.event != nil:
			e := *r.event
			e.Layer, e.Path, e.PID, e.Rank = LayerOf(e.Op), paths[e.FileID], h.PID, h.Rank
			out = append(out, Record{Kind: KindEvent, Event: &e})
		case r.proc != nil:
			p := *r.proc
			out = append(out, Record{Kind: KindProc, Proc: &p})
		case r.footer != nil:
			f := *r.footer
			out = append(out, Record{Kind: KindFooter, Footer: &f})
		}
	}
	return out
}

// readTrace reads every record and the final error (nil at a clean end).
func readTrace(t testing.TB, data []byte) (*Reader, []Record, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), "test.iopred.zst")
	if err != nil {
		return nil, nil, err
	}
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return r, out, nil
		}
		if err != nil {
			return r, out, err
		}
		out = append(out, rec)
	}
}

func sameRecord(a, b Record) bool {
	if a.Kind != b.Kind {
		return false
	}
	if a.Event != nil && b.Event != nil {
		ea, eb := *a.Event, *b.Event
		ra, rb := ea.Rank, eb.Rank
		ea.Rank, eb.Rank = nil, nil
		if (ra == nil) != (rb == nil) || (ra != nil && *ra != *rb) {
			return false
		}
		return ea == eb
	}
	return reflect.DeepEqual(a, b)
}

func ev(op string, file uint32, off, size, start, dur int64) *Event {
	e := &Event{Op: op, FileID: file, Offset: off, Size: size, StartNs: start, EndNs: start + dur, Tid: 7, Ctx: 1001}
	if IsData(op) {
		e.Ret = size
		e.Bytes = size
	}
	return e
}

func TestRoundTrip(t *testing.T) {
	// Each case proves that writer -> reader gives back every record with
	// all its fields, whatever the delta encoding had to omit or not.
	ctxs := []record{
		{ctx: &Context{ID: 1001, Frames: []Frame{{Module: "/bin/app", Offset: 0x1234, Function: "main"}}}},
		{ctx: &Context{ID: 1<<53 - 1, Frames: []Frame{{Module: "/lib/libc.so.6", Offset: 99}, {Module: "/bin/app", Offset: 7}}}},
		{file: &File{ID: 1, Path: "/tmp/a"}},
		{file: &File{ID: 2, Path: "/tmp/b \"quoted\" \u00e9\n"}},
		{file: &File{ID: 70000, Path: "/tmp/sparse"}},
	}
	with := func(recs ...record) []record { return append(append([]record{}, ctxs...), recs...) }
	huge := &Event{Op: "pwrite", FileID: 1, Offset: math.MaxInt64 - 5, Size: math.MaxInt64, Ret: math.MinInt64,
		Bytes: math.MaxInt64, StartNs: math.MaxInt64, EndNs: math.MinInt64, Tid: math.MaxInt32, Ctx: 1<<53 - 1,
		Errno: math.MaxInt32, Aux: math.MinInt64}
	cases := []struct {
		name string
		opt  WriterOptions
		recs []record
	}{
		{"empty", WriterOptions{}, []record{{footer: &Footer{Reason: "exit"}}}},
		{"sequential writes", WriterOptions{}, with(
			record{event: ev("write", 1, 0, 4096, 100, 50)},
			record{event: ev("write", 1, 4096, 4096, 200, 51)},
			record{event: ev("write", 1, 8192, 100, 300, 52)},
			record{footer: &Footer{Reason: "exit", EndNs: 400, Events: 3, Bytes: 8292}})},
		{"backwards offsets and negative deltas", WriterOptions{}, with(
			record{event: ev("pwrite", 1, 1<<40, 10, 1000, 5)},
			record{event: ev("pread", 1, 0, 10, 900, 5)},
			record{event: ev("lseek", 1, 5, 0, 800, 1)},
			record{event: ev("read", 1, 5, 10, 1200, 1)},
			record{event: ev("read", 1, 3, 10, 1300, 1)},
			record{footer: &Footer{Reason: "exit"}})},
		{"NoOffset on data and metadata calls", WriterOptions{}, with(
			record{event: ev("write", 2, NoOffset, 3, 1, 1)},
			record{event: ev("close", 2, NoOffset, 0, 2, 1)},
			record{event: ev("stat", 0, NoOffset, 0, 3, 1)},
			record{event: ev("lseek", 2, 0, 0, 4, 1)},
			record{footer: &Footer{Reason: "exit"}})},
		{"errno, short returns, stdio items", WriterOptions{}, with(
			record{event: &Event{Op: "write", FileID: 1, Offset: 0, Size: 10, Ret: -1, Errno: 28, StartNs: 5, EndNs: 6}},
			record{event: &Event{Op: "read", FileID: 1, Offset: 0, Size: 10, Ret: 4, Bytes: 4, StartNs: 7, EndNs: 8}},
			record{event: &Event{Op: "fwrite", FileID: 1, Offset: 4, Size: 100, Ret: 1, Bytes: 100, StartNs: 9, EndNs: 10}},
			record{event: &Event{Op: "fwrite", FileID: 1, Offset: 104, Size: 100, Ret: 0, Bytes: 50, Errno: 5, StartNs: 11, EndNs: 12}},
			record{event: &Event{Op: "fgets", FileID: 1, Offset: 154, Size: 80, Ret: 1, Bytes: 12, StartNs: 13, EndNs: 14}},
			record{event: &Event{Op: "open", FileID: 1, Offset: NoOffset, Ret: 3, Aux: 0o101, StartNs: 15, EndNs: 16, Tid: 9}},
			record{event: &Event{Op: "dup", FileID: 1, Offset: NoOffset, Ret: 4, Aux: 1, StartNs: 17, EndNs: 18, Tid: 9}},
			record{event: &Event{Op: "MPI_File_write_at", FileID: 2, Offset: 0, Size: 8, Ret: 0, Bytes: 8, StartNs: 19, EndNs: 20}},
			record{event: &Event{Op: "weird \"op\"\t", Offset: NoOffset, StartNs: 21, EndNs: 22}},
			record{footer: &Footer{Reason: "exit"}})},
		{"MPI-IO sequence numbers and parents", WriterOptions{}, with(
			record{event: &Event{Op: "MPI_File_iwrite_at", FileID: 2, Offset: 64, Size: 8, Bytes: 0, StartNs: 1, EndNs: 2, Seq: 1}},
			record{event: &Event{Op: "pwrite", FileID: 2, Offset: 64, Size: 8, Ret: 8, Bytes: 8, StartNs: 3, EndNs: 4, Parent: 2}},
			record{event: &Event{Op: "MPI_Wait", FileID: 2, Offset: 64, Size: 8, Bytes: 8, StartNs: 3, EndNs: 5, Seq: 2, Parent: 1}},
			record{event: &Event{Op: "MPI_File_write_all", FileID: 2, Offset: 72, Size: 8, Bytes: 8, StartNs: 6, EndNs: 7, Seq: math.MaxInt64, Parent: math.MinInt64}},
			record{footer: &Footer{Reason: "exit"}})},
		{"huge values", WriterOptions{}, with(record{event: huge}, record{event: &Event{Op: "read", FileID: 70000, Offset: math.MinInt64, StartNs: math.MinInt64}}, record{footer: &Footer{Reason: "exit"}})},
		{"many files interleaved", WriterOptions{FrameBytes: 700}, func() []record {
			recs := append([]record{}, ctxs[:2]...)
			for f := uint32(1); f <= 50; f++ {
				recs = append(recs, record{file: &File{ID: f, Path: "/d/f" + string(rune('A'+f%26))}})
			}
			for i := int64(0); i < 500; i++ {
				f := uint32(i*7%50) + 1
				recs = append(recs, record{event: ev("pwrite", f, (i/50)*512, 512, i*10, 3)})
			}
			return append(recs, record{footer: &Footer{Reason: "exit", Events: 500}})
		}()},
		{"frame boundaries by age", WriterOptions{FrameAge: time.Second}, with(
			record{event: ev("write", 1, 0, 1, 10, 1)},
			record{tick: 500 * time.Millisecond}, // too young: stays open
			record{event: ev("write", 1, 1, 1, 20, 1)},
			record{tick: 2 * time.Second}, // closes
			record{event: ev("write", 1, 2, 1, 30, 1)},
			record{tick: time.Second},
			record{event: ev("write", 1, 3, 1, 40, 1)},
			record{footer: &Footer{Reason: "exit"}})},
		{"explicit flushes between every event", WriterOptions{}, with(
			record{event: ev("write", 1, 10, 1, 10, 1)}, record{flush: true},
			record{event: ev("write", 1, 11, 1, 20, 1)}, record{flush: true},
			record{event: ev("read", 2, 11, 1, 20, 1)}, record{flush: true},
			record{footer: &Footer{Reason: "exit"}})},
		{"several footers after a failed exec", WriterOptions{}, with(
			record{event: ev("write", 1, 0, 1, 10, 1)},
			record{proc: &Proc{Op: "exec", TimeNs: 11, Path: "/bin/missing"}},
			record{footer: &Footer{Reason: "exec", EndNs: 12, Events: 1, Bytes: 1, Model: map[string]any{"contexts": 2.0}}},
			record{event: ev("write", 1, 1, 1, 20, 1)},
			record{proc: &Proc{Op: "fork", TimeNs: 21, Child: 43}},
			record{proc: &Proc{Op: "exit", TimeNs: 22, Status: 1}},
			record{footer: &Footer{Reason: "exit", EndNs: 23, Events: 2, Bytes: 2, Dropped: 5}})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := testHeader()
			data := writeTrace(t, h, tc.opt, tc.recs)
			r, got, err := readTrace(t, data)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			want := expected(h, tc.recs)
			if len(got) != len(want) {
				t.Fatalf("got %d records, want %d", len(got), len(want))
			}
			for i := range want {
				if !sameRecord(got[i], want[i]) {
					t.Fatalf("record %d:\n got  %+v %+v\n want %+v %+v", i, got[i], got[i].Event, want[i], want[i].Event)
				}
			}
			gh := r.Header()
			h.Version = FormatVersion
			if !reflect.DeepEqual(gh, h) {
				t.Errorf("header %+v, want %+v", gh, h)
			}
			var lastFooter *Footer
			for _, w := range want {
				if w.Footer != nil {
					lastFooter = w.Footer
				}
				if w.Context != nil && !reflect.DeepEqual(r.Contexts()[w.Context.ID], *w.Context) {
					t.Errorf("Contexts()[%d] = %+v", w.Context.ID, r.Contexts()[w.Context.ID])
				}
			}
			if !reflect.DeepEqual(r.Footer(), lastFooter) {
				t.Errorf("Footer() = %+v, want %+v", r.Footer(), lastFooter)
			}
		})
	}
}

func TestFrameBoundaries(t *testing.T) {
	// FrameBytes closes frames by size; Tick closes them by age only once
	// FrameAge has passed.
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), WriterOptions{FrameBytes: 1000, FrameAge: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	frames := func() int { return countFrames(t, buf.Bytes()) }
	if frames() != 1 || w.FrameOpen() {
		t.Fatalf("after NewWriter: %d frames, open %v; want the header frame alone", frames(), w.FrameOpen())
	}
	w.File(File{ID: 1, Path: "/x"})
	for i := int64(0); w.FrameOpen(); i++ {
		if err := w.Event(&Event{Op: "write", FileID: 1, Offset: i, Size: 1, Ret: 1, Bytes: 1, StartNs: i, EndNs: i + 1}); err != nil {
			t.Fatal(err)
		}
		if i > 100 {
			t.Fatal("frame never closed by size")
		}
	}
	if frames() != 2 {
		t.Fatalf("%d frames after a size bound, want 2", frames())
	}
	w.Event(&Event{Op: "close", FileID: 1, Offset: NoOffset})
	w.Tick(w.opened.Add(999 * time.Millisecond))
	if !w.FrameOpen() {
		t.Fatal("Tick closed a frame younger than FrameAge")
	}
	w.Tick(w.opened.Add(time.Second))
	if w.FrameOpen() || frames() != 3 {
		t.Fatalf("Tick after FrameAge: open %v, %d frames", w.FrameOpen(), frames())
	}
}

// countFrames counts zstd frames by reading them as the reader does.
func countFrames(t testing.TB, data []byte) int {
	r := &Reader{name: "count", br: newBufReader(data)}
	var err error
	r.dec, err = newDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer r.dec.Close()
	n := 0
	for {
		err := r.readFrame()
		if err == errEndOfInput {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// frameEnds returns the byte offsets where frames end.
func frameEnds(t testing.TB, data []byte) []int64 {
	r := &Reader{name: "count", br: newBufReader(data)}
	var err error
	r.dec, err = newDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer r.dec.Close()
	var ends []int64
	for {
		err := r.readFrame()
		if err == errEndOfInput {
			return ends
		}
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, r.off)
	}
}

func TestTruncation(t *testing.T) {
	// Cutting a trace anywhere yields exactly the records of the frames
	// that end before the cut, then a *TruncatedError naming the offset of
	// the first incomplete frame.
	h := testHeader()
	recs := loopRecords(400, 1)
	data := writeTrace(t, h, WriterOptions{FrameBytes: 2000}, recs)
	ends := frameEnds(t, data)
	if len(ends) < 5 {
		t.Fatalf("only %d frames; the test needs several", len(ends))
	}
	// Records per complete-frame prefix: read the whole trace frame by frame.
	_, all, err := readTrace(t, data)
	if err != nil {
		t.Fatal(err)
	}
	countAt := map[int64]int{} // frame end -> records in frames up to it (header excluded)
	{
		r, _ := NewReader(bytes.NewReader(data), "x")
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			n++
			if r.pos == len(r.data) {
				countAt[r.off] = n
			}
		}
	}
	for cut := int64(0); cut < int64(len(data)); cut++ {
		r, got, err := readTrace(t, data[:cut])
		if cut < ends[0] {
			var te *TruncatedError
			if !errors.As(err, &te) || r != nil {
				t.Fatalf("cut %d inside the header frame: err %v, want TruncatedError from NewReader", cut, err)
			}
			continue
		}
		complete := ends[0]
		for _, e := range ends {
			if e <= cut {
				complete = e
			}
		}
		want := countAt[complete]
		var te *TruncatedError
		if !errors.As(err, &te) {
			t.Fatalf("cut %d: err %v, want TruncatedError", cut, err)
		}
		if te.Offset != complete || te.File != "test.iopred.zst" {
			t.Fatalf("cut %d: TruncatedError %+v, want offset %d", cut, te, complete)
		}
		if len(got) != want {
			t.Fatalf("cut %d: %d records, want %d", cut, len(got), want)
		}
		for i := range got {
			if !sameRecord(got[i], all[i]) {
				t.Fatalf("cut %d: record %d differs", cut, i)
			}
		}
	}
}

func TestFormatErrors(t *testing.T) {
	// Foreign or corrupt input gives a *FormatError naming the frame offset,
	// line and field; a newer format version is refused.
	h := testHeader()
	good := writeTrace(t, h, WriterOptions{}, loopRecords(10, 1))
	ends := frameEnds(t, good)
	frame := func(lines ...string) []byte {
		enc, _ := newTestEncoder()
		return enc.EncodeAll([]byte(strings.Join(lines, "")), nil)
	}
	hdr := `{"k":"h","v":1,"prog":"p","host":"h","pid":1,"ppid":0,"rank":null,"t0_unix_ns":0,"t0_mono_ns":0,"ctx_depth":0,"lib":""}` + "\n"
	hdr2 := strings.Replace(hdr, `"v":1`, `"v":2`, 1)
	corrupt := append([]byte{}, good...)
	corrupt[ends[0]+20] ^= 0xff
	cases := []struct {
		name   string
		data   []byte
		offset int64
		line   int
		field  string
		text   string
	}{
		{"plain text", []byte("hello world, not a trace\n"), 0, 0, "", "not an iopred trace"},
		{"zstd of something else", frame("just text\n"), 0, 1, "k", "not an iopred trace"},
		{"newer version", frame(strings.Replace(hdr, `"v":1`, `"v":`+strconv.Itoa(FormatVersion+1), 1)), 0, 1, "v", "newer"},
		// Version 2 omits the operation a context's earlier event in the
		// frame fixed; a context's first event in a frame must name it,
		// even when an earlier frame did.
		{"version 2 event without an operation", append(frame(hdr2), frame(`{"k":"e","t":1,"d":1}`+"\n")...), int64(len(frame(hdr2))), 1, "o", "without an operation"},
		{"version 2 operation from an earlier frame", append(append(frame(hdr2), frame(`{"k":"e","o":"close","t":1,"d":1}`+"\n")...), frame(`{"k":"e","t":1,"d":1}`+"\n")...),
			int64(len(frame(hdr2)) + len(frame(`{"k":"e","o":"close","t":1,"d":1}`+"\n"))), 1, "o", "without an operation"},
		{"bad byte in the second frame", corrupt, ends[0], 0, "", "zstd"},
		{"event without time", append(frame(hdr), frame(`{"k":"e","o":"close","d":1}`+"\n")...), int64(len(frame(hdr))), 1, "t", "start time"},
		{"event with a float", append(frame(hdr), frame(`{"k":"z","reason":"x"}`+"\n", `{"k":"e","o":"close","t":1.5,"d":1}`+"\n")...), int64(len(frame(hdr))), 2, "t", "bad integer"},
		{"undefined file", append(frame(hdr), frame(`{"k":"e","o":"close","f":3,"t":1,"d":1}`+"\n")...), int64(len(frame(hdr))), 1, "f", "before its definition"},
		{"undefined context", append(frame(hdr), frame(`{"k":"e","o":"close","c":3,"t":1,"d":1}`+"\n")...), int64(len(frame(hdr))), 1, "c", "before its definition"},
		// Version 1 names the file first, as it always did; version 2
		// the context, whose state the other fields may come from.
		{"undefined file and context", append(frame(hdr), frame(`{"k":"e","o":"close","f":3,"c":4,"t":1,"d":1}`+"\n")...), int64(len(frame(hdr))), 1, "f", "before its definition"},
		{"version 2 undefined file and context", append(frame(hdr2), frame(`{"k":"e","o":"close","f":3,"c":4,"t":1,"d":1}`+"\n")...), int64(len(frame(hdr2))), 1, "c", "before its definition"},
		{"version 1 event without operation nor time", append(frame(hdr), frame(`{"k":"e","d":1}`+"\n")...), int64(len(frame(hdr))), 1, "o", "operation"},
		{"bad footer field", append(frame(hdr), frame(`{"k":"z","events":"many"}`+"\n")...), int64(len(frame(hdr))), 1, "events", "footer"},
		{"missing newline", append(frame(hdr), frame(`{"k":"z"}`)...), int64(len(frame(hdr))), 1, "", "newline"},
		{"garbage after frames", append(append([]byte{}, good...), "trailing junk"...), int64(len(good)), 0, "", "not a zstd frame"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readTrace(t, tc.data)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err %v (%T), want FormatError", err, err)
			}
			if fe.Offset != tc.offset || fe.Line != tc.line || fe.Field != tc.field || !strings.Contains(fe.Error(), tc.text) || fe.File != "test.iopred.zst" {
				t.Fatalf("got %+v (%v); want offset %d line %d field %q text %q", fe, fe, tc.offset, tc.line, tc.field, tc.text)
			}
		})
	}
}

func TestUnknownKindsSkipped(t *testing.T) {
	// Records of a kind this reader does not know (a newer minor version)
	// are skipped; the known ones around them still arrive.
	enc, _ := newTestEncoder()
	hdr := `{"k":"h","v":1,"prog":"p","host":"h","pid":1,"ppid":0,"rank":null,"t0_unix_ns":0,"t0_mono_ns":0,"ctx_depth":0,"lib":"","future":{"a":[1]}}` + "\n"
	body := `{"k":"q","stuff":[1,2,{"x":"y"}]}` + "\n" + `{"k":"e","o":"close","t":5,"d":1,"new":"field"}` + "\n" + `{"k":"z","reason":"exit"}` + "\n"
	data := append(enc.EncodeAll([]byte(hdr), nil), enc.EncodeAll([]byte(body), nil)...)
	_, got, err := readTrace(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Event == nil || got[0].Event.StartNs != 5 || got[1].Footer == nil {
		t.Fatalf("got %+v", got)
	}
}

func TestWriterRejectsUndefinedIDs(t *testing.T) {
	// An event naming an undefined context or file is refused, since the
	// reader could not resolve it.
	w, _ := NewWriter(io.Discard, testHeader(), WriterOptions{})
	if err := w.Event(&Event{Op: "read", Ctx: 5}); err == nil {
		t.Error("undefined context accepted")
	}
	if err := w.Event(&Event{Op: "read", FileID: 5}); err == nil {
		t.Error("undefined file accepted")
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

func TestWriterErrorSticks(t *testing.T) {
	// A failed write is reported, and every later call reports it too.
	w, err := NewWriter(&failWriter{n: 1}, testHeader(), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Proc(Proc{Op: "exit"})
	if err := w.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Flush: %v", err)
	}
	if err := w.Proc(Proc{Op: "exit"}); err == nil {
		t.Fatal("error not sticky")
	}
}

// loopRecords is a loop-like synthetic workload: nested loops of
// write/pwrite/lseek/read on a few files with jittered timings.
func loopRecords(n int, seed uint64) []record {
	rng := rand.New(rand.NewPCG(seed, 7))
	recs := []record{
		{ctx: &Context{ID: 11, Frames: []Frame{{Module: "/bin/app", Offset: 0x400, Function: "step"}}}},
		{ctx: &Context{ID: 12, Frames: []Frame{{Module: "/bin/app", Offset: 0x480, Function: "step"}}}},
		{ctx: &Context{ID: 13, Frames: []Frame{{Module: "/bin/app", Offset: 0x500, Function: "check"}}}},
		{ctx: &Context{ID: 14, Frames: []Frame{{Module: "/bin/app", Offset: 0x580, Function: "check"}}}},
		{file: &File{ID: 1, Path: "/scratch/out.dat"}},
		{file: &File{ID: 2, Path: "/scratch/ckpt.dat"}},
	}
	now := int64(1_000_000)
	jit := func(base int64) int64 { return base + rng.Int64N(base/4+1) - base/8 }
	var off1, off2 int64
	for len(recs) < n {
		for j := 0; j < 8 && len(recs) < n; j++ {
			now += jit(2000)
			d := jit(1200)
			recs = append(recs, record{event: &Event{Op: "write", FileID: 1, Offset: off1, Size: 4096, Ret: 4096, Bytes: 4096, StartNs: now, EndNs: now + d, Tid: 100, Ctx: 11}})
			off1 += 4096
			now += d + jit(300)
			d = jit(1500)
			recs = append(recs, record{event: &Event{Op: "pwrite", FileID: 2, Offset: off2, Size: 65536, Ret: 65536, Bytes: 65536, StartNs: now, EndNs: now + d, Tid: 100, Ctx: 12}})
			off2 += 65536 + 4096
			now += d
		}
		now += jit(5000)
		recs = append(recs, record{event: &Event{Op: "lseek", FileID: 1, Offset: 0, StartNs: now, EndNs: now + jit(80), Tid: 100, Ctx: 13, Aux: 0}})
		for j := 0; j < 4 && len(recs) < n; j++ {
			now += jit(900)
			d := jit(700)
			recs = append(recs, record{event: &Event{Op: "read", FileID: 1, Offset: int64(j) * 4096, Size: 4096, Ret: 4096, Bytes: 4096, StartNs: now, EndNs: now + d, Tid: 100, Ctx: 14}})
			now += d
		}
		off1 = 8 * 4096 * int64(len(recs)/44)
		now += jit(20000)
		recs = append(recs, record{event: &Event{Op: "lseek", FileID: 1, Offset: off1, StartNs: now, EndNs: now + jit(80), Tid: 100, Ctx: 13}})
	}
	return append(recs[:n:n], record{footer: &Footer{Reason: "exit"}})
}

func TestLoopWorkloadRoundTrip(t *testing.T) {
	// The synthetic loop used by the benchmarks survives a round trip.
	h := testHeader()
	recs := loopRecords(20000, 3)
	data := writeTrace(t, h, WriterOptions{FrameBytes: 64 << 10}, recs)
	_, got, err := readTrace(t, data)
	if err != nil {
		t.Fatal(err)
	}
	want := expected(h, recs)
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !sameRecord(got[i], want[i]) {
			t.Fatalf("record %d: got %+v want %+v", i, got[i].Event, want[i].Event)
		}
	}
}

func TestHugeFrameBytesStaysReadable(t *testing.T) {
	// A FrameBytes beyond what the reader accepts is capped, so that the
	// writer never produces frames its own reader refuses.
	w, err := NewWriter(io.Discard, testHeader(), WriterOptions{FrameBytes: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	if w.opt.FrameBytes > MaxFrameData/2 {
		t.Fatalf("FrameBytes %d not capped", w.opt.FrameBytes)
	}
}

package spill

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"iopred/tracefmt"
)

// builder writes spill files the way preload/spill.c does, for tests.
type builder struct {
	data    []byte
	streams map[uint32]*bstream
}

type bstream struct {
	chunks []int // offsets of the stream's chunks
	slot   int
	seq    uint64
	tid    int32
}

func newBuilder(pid, ppid int) *builder {
	b := &builder{data: make([]byte, headerSize), streams: map[uint32]*bstream{}}
	le := binary.LittleEndian
	copy(b.data, "IOPSPILL")
	le.PutUint32(b.data[8:], 1)
	le.PutUint32(b.data[12:], chunkSize)
	le.PutUint32(b.data[16:], uint32(pid))
	le.PutUint32(b.data[20:], uint32(ppid))
	le.PutUint32(b.data[24:], uint32(ppid))
	le.PutUint32(b.data[28:], 16)
	le.PutUint64(b.data[32:], 1000)
	le.PutUint64(b.data[40:], 1_700_000_000_000_000_000)
	le.PutUint32(b.data[60:], headerSize)
	copy(b.data[72:], "node1")
	copy(b.data[136:], "/usr/bin/worker")
	ops := []byte("\x00pwrite\x00read\x00open\x00")
	copy(b.data[opsAt:], ops)
	return b
}

func (b *builder) chunk(s *bstream, id uint32) {
	off := len(b.data)
	b.data = append(b.data, make([]byte, chunkSize)...)
	le := binary.LittleEndian
	c := b.data[off:]
	le.PutUint32(c, chunkMagic)
	le.PutUint32(c[4:], uint32(s.tid))
	le.PutUint32(c[8:], id)
	le.PutUint32(c[12:], uint32(len(s.chunks)))
	le.PutUint64(c[16:], s.seq+1)
	s.chunks = append(s.chunks, off)
	s.slot = 1
}

func (b *builder) record(id uint32, typ uint16, body []byte) {
	s := b.streams[id]
	if s == nil {
		s = &bstream{tid: int32(100 + id)}
		b.streams[id] = s
	}
	n := (16 + len(body) + slotSize - 1) / slotSize
	le := binary.LittleEndian
	if len(s.chunks) == 0 || s.slot+n > slots {
		if len(s.chunks) > 0 && s.slot < slots {
			r := b.data[s.chunks[len(s.chunks)-1]+s.slot*slotSize:]
			s.seq++
			le.PutUint64(r, s.seq)
			le.PutUint16(r[8:], recNext)
			le.PutUint16(r[10:], uint16(slots-s.slot))
		}
		b.chunk(s, id)
	}
	r := b.data[s.chunks[len(s.chunks)-1]+s.slot*slotSize:]
	s.seq++
	le.PutUint64(r, s.seq)
	le.PutUint16(r[8:], typ)
	le.PutUint16(r[10:], uint16(n))
	le.PutUint32(r[12:], uint32(len(body)))
	copy(r[16:], body)
	s.slot += n
}

func (b *builder) event(stream uint32, op uint16, file uint32, start, off, size int64) {
	ev := make([]byte, eventSize)
	le := binary.LittleEndian
	le.PutUint64(ev[0:], uint64(start))
	le.PutUint64(ev[8:], uint64(start+50))
	le.PutUint64(ev[16:], uint64(off))
	le.PutUint64(ev[24:], uint64(size))
	le.PutUint64(ev[32:], uint64(size))
	le.PutUint64(ev[40:], uint64(size))
	le.PutUint32(ev[56:], file)
	le.PutUint32(ev[68:], uint32(100+stream))
	le.PutUint16(ev[72:], op)
	b.record(stream, recEvent, ev)
}

func (b *builder) file(stream, id uint32, path string) {
	body := binary.LittleEndian.AppendUint32(nil, id)
	b.record(stream, recFile, append(body, path...))
}

// sample is a spill of two threads: thread 0 writes n pwrites of 100
// bytes to file 1 (enough to fill several chunks), thread 1 reads file 2.
func sample(n int) []byte {
	b := newBuilder(42, 7)
	b.file(0, 1, "/data/out")
	b.file(1, 2, "/data/in")
	for i := 0; i < n; i++ {
		b.event(0, 1, 1, int64(2000+10*i), int64(100*i), 100)
		if i%4 == 0 {
			b.event(1, 2, 2, int64(2005+10*i), int64(25*i), 25)
		}
	}
	return b.data
}

func TestParseWhole(t *testing.T) {
	data := sample(2000)
	sp, err := Parse(data, "s")
	if err != nil {
		t.Fatal(err)
	}
	h := sp.Header
	if h.PID != 42 || h.PPID != 7 || h.Host != "node1" || h.Program != "/usr/bin/worker" || len(h.Ops) != 4 || h.Ops[1] != "pwrite" {
		t.Fatalf("header %+v", h)
	}
	if len(sp.Events) != 2500 || sp.Files[1] != "/data/out" || sp.Files[2] != "/data/in" {
		t.Fatalf("%d events, files %v", len(sp.Events), sp.Files)
	}
	for i := 1; i < len(sp.Events); i++ {
		if sp.Events[i].StartNs < sp.Events[i-1].StartNs {
			t.Fatal("events not in start order")
		}
	}
}

// Every way a file goes wrong: the records before the fault are kept,
// and the error says where and what.
func TestParseDamaged(t *testing.T) {
	whole := sample(2000)
	chunk2 := headerSize + chunkSize   // the second chunk allocated: stream 1's first
	chunk3 := headerSize + 2*chunkSize // stream 0's second
	cases := []struct {
		name      string
		edit      func([]byte) []byte
		minEvents int
		truncated bool
		wantErr   bool
	}{
		{"cut mid-chunk", func(d []byte) []byte { return d[:len(d)-chunkSize/2] }, 1500, true, true},
		{"cut inside the header", func(d []byte) []byte { return d[:100] }, 0, true, true},
		{"killed while a new chunk's zeros were written", func(d []byte) []byte {
			return append(d, make([]byte, chunkSize/3)...)
		}, 2500, false, false},
		{"torn last record (seq not stored)", func(d []byte) []byte {
			// The last chunk's last record loses its sequence number: as if
			// SIGKILL came while it was written. Not a fault.
			last := len(d) - chunkSize
			for s := slots - 1; s > 0; s-- {
				if binary.LittleEndian.Uint64(d[last+s*slotSize:]) != 0 {
					binary.LittleEndian.PutUint64(d[last+s*slotSize:], 0)
					break
				}
			}
			return d
		}, 2498, false, false},
		{"wrong sequence number", func(d []byte) []byte {
			binary.LittleEndian.PutUint64(d[chunk2+5*slotSize:], 999999)
			return d
		}, 600, false, true},
		{"chunk of a stream lost", func(d []byte) []byte {
			binary.LittleEndian.PutUint32(d[chunk3:], 0)
			return d
		}, 400, false, true},
		{"record too big for its chunk", func(d []byte) []byte {
			binary.LittleEndian.PutUint16(d[chunk2+3*slotSize+10:], 9999)
			return d
		}, 400, false, true},
		{"unknown record type", func(d []byte) []byte {
			binary.LittleEndian.PutUint16(d[chunk2+3*slotSize+8:], 77)
			return d
		}, 400, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.edit(append([]byte(nil), whole...))
			sp, err := Parse(d, "bad.iopspill")
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want one: %v", err, c.wantErr)
			}
			var e *Error
			if err != nil && (!errors.As(err, &e) || e.File != "bad.iopspill" || e.Truncated != c.truncated) {
				t.Fatalf("error %#v", err)
			}
			n := 0
			if sp != nil {
				n = len(sp.Events)
			}
			if n < c.minEvents {
				t.Fatalf("%d events kept, want at least %d", n, c.minEvents)
			}
		})
	}
}

// Not a spill at all: a clear error and no records.
func TestParseForeign(t *testing.T) {
	for _, d := range [][]byte{nil, []byte("hello"), bytes.Repeat([]byte{1}, headerSize+10)} {
		if sp, err := Parse(d, "x"); err == nil || sp != nil {
			t.Errorf("%q: %v, %v", d[:min(len(d), 8)], sp, err)
		}
	}
}

// convertAndRead converts a parsed spill and opens the trace it gives.
func convertAndRead(t *testing.T, sp *Spill) *tracefmt.Reader {
	t.Helper()
	var buf bytes.Buffer
	if err := Convert(sp, &buf, Options{}); err != nil {
		t.Fatal(err)
	}
	r, err := tracefmt.NewReader(&buf, "t")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Convert gives a trace that tracefmt reads: the header's identity and
// fork time, every event with its path and bytes, and a footer.
func TestConvert(t *testing.T) {
	sp, err := Parse(sample(100), "s")
	if err != nil {
		t.Fatal(err)
	}
	r := convertAndRead(t, sp)
	h := r.Header()
	if h.PID != 42 || h.PPID != 7 || h.ForkUnixNs != h.StartUnixNs || h.StartMonoNs != 1000 {
		t.Fatalf("header %+v", h)
	}
	var written, read int64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e := rec.Event; e != nil {
			switch {
			case e.Op == "pwrite" && e.Path == "/data/out":
				written += e.Bytes
			case e.Op == "read" && e.Path == "/data/in":
				read += e.Bytes
			default:
				t.Fatalf("event %+v", e)
			}
		}
	}
	if written != 100*100 || read != 25*25 || r.Footer() == nil || r.Footer().Reason != "ended" {
		t.Fatalf("written %d, read %d, footer %+v", written, read, r.Footer())
	}
}

func FuzzSpill(f *testing.F) {
	small := sample(600) // two chunks in stream 0
	f.Add(small[:headerSize+2048])
	f.Add(small[headerSize+chunkSize-1024 : headerSize+chunkSize+1024])
	f.Add([]byte("IOPSPILL"))
	f.Fuzz(func(t *testing.T, tail []byte) {
		// The fuzzer's bytes replace the start of the first chunk (or
		// follow a valid header when short), so every input gets past the
		// header checks.
		d := append([]byte(nil), small[:headerSize]...)
		d = append(d, tail...)
		sp, err := Parse(d, "f")
		if sp == nil {
			if err == nil {
				t.Fatal("no spill and no error")
			}
			return
		}
		var buf bytes.Buffer
		if err := Convert(sp, &buf, Options{}); err != nil {
			t.Fatalf("convert: %v", err)
		}
		r, err := tracefmt.NewReader(&buf, "t")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("converted trace: %v", err)
			}
			if rec.Event != nil {
				n++
			}
		}
		if n > len(sp.Events) {
			t.Fatalf("%d events read back from %d", n, len(sp.Events))
		}
	})
}

// TestPrefetchCounters: a child's prefetch counters come from the header
// into the converted trace's footer, its wasted bytes being what no read
// used by its end; a header without the flag has none (spills of older
// libraries, children that did not prefetch); counters that cannot be
// (more bytes used than prefetched) are an error naming the field.
func TestPrefetchCounters(t *testing.T) {
	le := binary.LittleEndian
	withCounters := func(flag uint32, c [8]uint64) []byte {
		d := sample(10)
		le.PutUint32(d[1160:], flag)
		for i, v := range c {
			le.PutUint64(d[1168+8*i:], v)
		}
		return d
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		want    *tracefmt.Prefetch
		wantErr bool
	}{
		{"prefetching child", withCounters(1, [8]uint64{120, 110, 8 << 20, 7 << 20, 1 << 20, 119, 2, 0}),
			&tracefmt.Prefetch{Reads: 120, Covered: 110, PrefetchedBytes: 8 << 20, UsedBytes: 7 << 20, WastedBytes: 1 << 20, Calls: 119, Misses: 2}, false},
		// Written off at no close (the child ended with _exit): the rest is
		// wasted all the same.
		{"ended by _exit", withCounters(1, [8]uint64{10, 5, 4096, 1024, 0, 1, 0, 3}),
			&tracefmt.Prefetch{Reads: 10, Covered: 5, PrefetchedBytes: 4096, UsedBytes: 1024, WastedBytes: 3072, Calls: 1, Capped: 3}, false},
		{"not prefetching", withCounters(0, [8]uint64{}), nil, false},
		{"used above prefetched", withCounters(1, [8]uint64{10, 5, 1024, 4096}), nil, true},
		{"covered above reads", withCounters(1, [8]uint64{10, 11, 4096, 4096}), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := Parse(tc.data, "s")
			if tc.wantErr {
				var e *Error
				if !errors.As(err, &e) || e.Offset != 1168 {
					t.Fatalf("want an error at byte 1168, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := sp.Header.Prefetch
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("prefetch %+v, want %+v", got, tc.want)
			}
			r := convertAndRead(t, sp)
			for {
				if _, err := r.Next(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
			}
			f := r.Footer()
			if f == nil || (f.Prefetch == nil) != (tc.want == nil) || f.Prefetch != nil && *f.Prefetch != *tc.want {
				t.Fatalf("footer %+v, want prefetch %+v", f, tc.want)
			}
		})
	}
}

package tracefmt

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// referenceLines encodes events in format version 2 the plain way
// (strconv for every number, maps for the per-frame state, every rule
// spelled out as the format's README states it): the writer's cached
// encoder must write the same bytes.
type referenceLines struct {
	prevTid   int32
	prevStart int64
	ends      map[uint32]int64 // per file: the expected offset
	ctxs      map[uint32]*referenceCtx
}

// referenceCtx is what a context's latest event in the frame fixed.
type referenceCtx struct {
	op        string
	file      uint32
	size, aux int64
	hasEnd    bool
	byFile    bool
	endFile   uint32
	end       int64
	gap       int64 // offset minus the end of the context's event before (same file)
	stride    int64 // gap when the event before had the same gap
}

func newReferenceLines() referenceLines {
	return referenceLines{ends: map[uint32]int64{}, ctxs: map[uint32]*referenceCtx{}}
}

func (r *referenceLines) line(b []byte, e *Event, ctx uint32) []byte {
	data, posix := IsData(e.Op), LayerOf(e.Op) == LayerPOSIX
	c, seen := r.ctxs[ctx]
	if !seen {
		c = &referenceCtx{}
		r.ctxs[ctx] = c
	}
	b = append(b, `{"k":"e"`...)
	if !seen || e.Op != c.op {
		b = append(b, `,"o":`...)
		b = appendJSONString(b, e.Op)
	}
	if e.FileID != c.file {
		b = strconv.AppendUint(append(b, `,"f":`...), uint64(e.FileID), 10)
	}
	if ctx != 0 {
		b = strconv.AppendUint(append(b, `,"c":`...), uint64(ctx), 10)
	}
	if e.Tid != r.prevTid {
		b = strconv.AppendInt(append(b, `,"i":`...), int64(e.Tid), 10)
		r.prevTid = e.Tid
	}
	if e.Size != c.size {
		b = strconv.AppendInt(append(b, `,"s":`...), e.Size, 10)
	}
	if e.Ret != expectedRet(data, e.Size) {
		b = strconv.AppendInt(append(b, `,"r":`...), e.Ret, 10)
	}
	if e.Bytes != expectedBytesIn(data, posix, e.Ret, e.Size) {
		b = strconv.AppendInt(append(b, `,"b":`...), e.Bytes, 10)
	}
	if e.Errno != 0 {
		b = strconv.AppendInt(append(b, `,"e":`...), int64(e.Errno), 10)
	}
	if e.Aux != c.aux {
		b = strconv.AppendInt(append(b, `,"a":`...), e.Aux, 10)
	}
	for _, f := range []struct {
		key string
		v   int64
	}{{"q", e.Seq}, {"p", e.Parent}} {
		if f.v != 0 {
			b = strconv.AppendInt(append(b, `,"`+f.key+`":`...), f.v, 10)
		}
	}
	c.op, c.file, c.size, c.aux = e.Op, e.FileID, e.Size, e.Aux
	if e.Offset == NoOffset {
		if data {
			b = append(b, `,"nx":1`...)
		}
		c.hasEnd = false
	} else {
		atFile := r.ends[e.FileID]
		want := atFile
		if c.hasEnd && !c.byFile && c.endFile == e.FileID {
			want = c.end + c.stride
		}
		if !data || e.Offset != want {
			b = strconv.AppendInt(append(b, `,"x":`...), e.Offset-want, 10)
		}
		next := nextOffset(data, e.Offset, e.Bytes)
		r.ends[e.FileID] = next
		gap := int64(0)
		if c.hasEnd && c.endFile == e.FileID {
			gap = e.Offset - c.end
		}
		if gap == c.gap {
			c.stride = gap
		} else {
			c.stride = 0
		}
		c.gap = gap
		c.hasEnd, c.byFile, c.endFile, c.end = true, e.Offset == atFile, e.FileID, next
	}
	b = strconv.AppendInt(append(b, `,"t":`...), e.StartNs-r.prevStart, 10)
	r.prevStart = e.StartNs
	b = strconv.AppendInt(append(b, `,"d":`...), e.EndNs-e.StartNs, 10)
	return append(b, '}', '\n')
}

var edgeInts = []int64{0, 1, -1, 9, 10, 11, 99, 100, 101, 999, 1000, 4096, -4096, 1 << 31, math.MaxInt32, math.MinInt32,
	math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1e18, 1e19 / 10, -1e18}

// appendInt and appendUint write what strconv writes.
func TestAppendIntMatchesStrconv(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	vals := append([]int64(nil), edgeInts...)
	// Every number of digits, at its ends: decimalDigits's estimate from
	// the bit length is one short just below each power of ten.
	for p := uint64(10); p <= 1e18; p *= 10 {
		vals = append(vals, int64(p-1), int64(p), int64(p+1), -int64(p))
	}
	// 10^19 - 1, 10^19, 10^19 + 1 and 2^64 - 1 as uint64.
	vals = append(vals, -8446744073709551617, -8446744073709551616, -8446744073709551615, -1)
	for i := 0; i < 100000; i++ {
		vals = append(vals, rng.Int63()>>uint(rng.Intn(63))*int64(1-2*rng.Intn(2)))
	}
	for _, v := range vals {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendInt(%d) = %q, want %q", v, got, want)
		}
		if got, want := string(appendUint(nil, uint64(v))), strconv.FormatUint(uint64(v), 10); got != want {
			t.Fatalf("appendUint(%d) = %q, want %q", uint64(v), got, want)
		}
	}
}

// randomEvents mixes loops (the same call repeated, as the cache expects)
// with changes of every field, including the ones that change rarely.
func randomEvents(rng *rand.Rand, n int) []Event {
	ops := []string{"pwrite", "write", "read", "lseek", "open", "close", "fwrite", "MPI_File_write_at", "stat", ""}
	pick := func() int64 {
		if rng.Intn(4) == 0 {
			return edgeInts[rng.Intn(len(edgeInts))]
		}
		return int64(rng.Intn(3)) * 4096
	}
	evs := make([]Event, n)
	var e Event
	start := int64(0)
	for i := range evs {
		if rng.Intn(8) == 0 {
			e.Op = ops[rng.Intn(len(ops))]
		}
		if rng.Intn(16) == 0 {
			e.FileID = uint32(rng.Intn(4))
		}
		if rng.Intn(16) == 0 {
			e.Ctx = uint64(rng.Intn(4))
		}
		if rng.Intn(16) == 0 {
			e.Tid = int32(rng.Intn(3))
		}
		if rng.Intn(8) == 0 {
			e.Size = pick()
			e.Ret, e.Bytes = e.Size, e.Size
		}
		if rng.Intn(16) == 0 {
			e.Ret = pick()
		}
		if rng.Intn(16) == 0 {
			e.Bytes = pick()
		}
		if rng.Intn(32) == 0 {
			e.Errno = int32(rng.Intn(3))
		}
		if rng.Intn(32) == 0 {
			e.Aux = pick()
		}
		if rng.Intn(32) == 0 {
			e.Seq = pick()
		}
		if rng.Intn(32) == 0 {
			e.Parent = pick()
		}
		switch rng.Intn(8) {
		case 0:
			e.Offset = NoOffset
		case 1:
			e.Offset = pick()
		default:
			e.Offset += e.Bytes
		}
		start += int64(rng.Intn(3000)) - 100
		e.StartNs = start
		e.EndNs = start + pick()
		evs[i] = e
	}
	return evs
}

// Writer.Event writes, byte for byte, the lines of the reference encoder,
// across frames (whose delta state restarts) and changes of every field.
func TestEventLinesMatchReference(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		evs := randomEvents(rng, 5000)
		var sink countingDiscard
		w, err := NewWriter(&sink, Header{}, WriterOptions{FrameBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		for id := uint32(1); id < 4; id++ {
			if err := w.File(File{ID: id, Path: "/f" + strconv.Itoa(int(id))}); err != nil {
				t.Fatal(err)
			}
			if err := w.Context(Context{ID: uint64(id)}); err != nil {
				t.Fatal(err)
			}
		}
		ref := newReferenceLines()
		for i := range evs {
			if rng.Intn(500) == 0 {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				ref = newReferenceLines()
			}
			before := len(w.buf)
			if err := w.Event(&evs[i]); err != nil {
				t.Fatal(err)
			}
			got := string(w.buf[before:])
			want := string(ref.line(nil, &evs[i], w.ctxIndex[evs[i].Ctx]))
			if got != want {
				t.Fatalf("seed %d event %d %+v:\n got %s\nwant %s", seed, i, evs[i], got, want)
			}
		}
	}
}

type countingDiscard struct{ n int }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

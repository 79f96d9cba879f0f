package tracefmt

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestXXH64(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0xEF46DB3751D8E999},
		{"a", 0xD24EC4F1A98C6E5B},
		{"abc", 0x44BC2CF5AD770999},
	} {
		if got := xxh64([]byte(c.in)); got != c.want {
			t.Errorf("xxh64(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
	// Every length class against the checksum the zstd encoder writes.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for n := 1; n < 300; n++ {
		p := make([]byte, n)
		rng.Read(p)
		frame := enc.EncodeAll(p, nil)
		want := binary.LittleEndian.Uint32(frame[len(frame)-4:])
		if got := uint32(xxh64(p)); got != want {
			t.Fatalf("xxh64 of %d bytes: %#x, zstd says %#x", n, got, want)
		}
	}
}

func TestRawFrameDecodes(t *testing.T) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	rng := rand.New(rand.NewSource(2))
	for _, n := range []int{0, 1, 255, 256, 257, 4095, 65535, 65536 + 255, 65536 + 256, 100000, 128 << 10} {
		p := make([]byte, n)
		rng.Read(p)
		frame := appendRawFrame(nil, p)
		got, err := dec.DecodeAll(frame, nil)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(got, p) {
			t.Fatalf("%d bytes: decoded %d different bytes", n, len(got))
		}
		// A corrupted byte must fail the checksum.
		if n > 0 {
			frame[len(frame)-5] ^= 1
			if _, err := dec.DecodeAll(frame, nil); err == nil {
				t.Fatalf("%d bytes: corrupted frame decoded without error", n)
			}
		}
	}
}

// blockTypes lists the type of the first block of each frame of a trace.
func blockTypes(t *testing.T, data []byte) []int {
	t.Helper()
	var types []int
	for len(data) > 0 {
		if binary.LittleEndian.Uint32(data) != 0xFD2FB528 {
			t.Fatalf("not a zstd frame")
		}
		fhd := data[4]
		n := 5 + [4]int{0, 1, 2, 4}[fhd&3]
		single := fhd&0x20 != 0
		if !single {
			n++
		}
		n += [4]int{0, 2, 4, 8}[fhd>>6]
		if fhd>>6 == 0 && single {
			n++
		}
		first := true
		for {
			h := uint32(data[n]) | uint32(data[n+1])<<8 | uint32(data[n+2])<<16
			last, typ, size := h&1 != 0, int(h>>1)&3, int(h>>3)
			if first {
				types = append(types, typ)
				first = false
			}
			if typ == 1 {
				size = 1
			}
			n += 3 + size
			if last {
				break
			}
		}
		if fhd&4 != 0 {
			n += 4
		}
		data = data[n:]
	}
	return types
}

// Small frames are stored raw, large ones compressed, and both read back.
func TestSmallFramesRawLargeCompressed(t *testing.T) {
	recs := []record{{file: &File{ID: 1, Path: "/data/out"}}, {flush: true}}
	var jsonBytes int
	for i := 0; i < 20000; i++ {
		e := ev("write", 1, int64(i)*4096, 4096, int64(i)*1000, 500)
		e.Ctx = 0
		recs = append(recs, record{event: e})
		jsonBytes += 40
	}
	recs = append(recs, record{footer: &Footer{Reason: "exit", Events: 20000}})
	h := testHeader()
	data := writeTrace(t, h, WriterOptions{FrameBytes: 256 << 10}, recs)
	types := blockTypes(t, data)
	if len(types) < 3 || types[0] != 0 || types[1] != 0 {
		t.Fatalf("header and small frames should be raw blocks; first block types %v", types)
	}
	compressed := 0
	for _, typ := range types[2:] {
		if typ == 2 {
			compressed++
		}
	}
	if compressed == 0 {
		t.Fatalf("no compressed frame among %v", types)
	}
	if len(data) > jsonBytes/4 {
		t.Errorf("trace of %d bytes for about %d bytes of JSON: large frames not compressed?", len(data), jsonBytes)
	}
	_, got, err := readTrace(t, data)
	if err != nil {
		t.Fatal(err)
	}
	want := expected(h, recs)
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !sameRecord(got[i], want[i]) {
			t.Fatalf("record %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

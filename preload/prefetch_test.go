package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// The read sequences saved beside a model are written and read without
// reflection. A model's .reads file written by the reflective encoder of
// earlier libraries still loads, what is written loads there too, the
// bytes are the reflective encoder's but for the order of the paths
// (sorted now: it left them in Go's map order), and the same log always
// gives the same bytes.
func TestReadLogCodec(t *testing.T) {
	cases := []struct {
		name string
		log  *readLog
	}{
		{"empty", &readLog{Files: map[string]*fileReads{}}},
		{"one file", &readLog{Files: map[string]*fileReads{
			"/data/a": {Off: []int64{0, 1 << 20, 2 << 20}, Size: []int64{65536, 65536, 65536}},
		}}},
		{"several files, large and negative numbers", &readLog{Files: map[string]*fileReads{
			"/z":      {Off: []int64{1 << 40, 5, 127, 128, -1}, Size: []int64{1, 2, 3, 4, 5}},
			"/a/b":    {Off: []int64{}, Size: []int64{}},
			"/é ü":    {Off: []int64{7}, Size: nil},
			"/m/none": nil,
		}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := encodeReadLog(c.log)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			enc := msgpack.NewEncoder(&want)
			enc.SetSortMapKeys(true)
			if err := enc.Encode(c.log); err != nil {
				t.Fatal(err)
			}
			if len(c.log.Files) <= 1 && !bytes.Equal(got, want.Bytes()) {
				t.Errorf("bytes differ from the reflective encoder's:\n got %x\nwant %x", got, want.Bytes())
			}
			if len(got) != want.Len() {
				t.Errorf("%d bytes, the reflective encoder %d", len(got), want.Len())
			}
			for k := 0; k < 5; k++ {
				if again, _ := encodeReadLog(c.log); !bytes.Equal(again, got) {
					t.Fatalf("the same log encoded differently:\n%x\n%x", got, again)
				}
			}
			old, err := decodeReadLog(want.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(old.Files, c.log.Files) && len(c.log.Files) > 0 {
				t.Errorf("the reflective encoder's bytes decoded to %+v, want %+v", old.Files, c.log.Files)
			}
			back, err := decodeReadLog(got)
			if err != nil {
				t.Fatal(err)
			}
			var ref readLog
			if err := msgpack.Unmarshal(got, &ref); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Files, ref.Files) {
				t.Errorf("decoded %+v, the reflective decoder %+v", back.Files, ref.Files)
			}
		})
	}
}

// Numbers in any msgpack integer encoding are read, keys the decoder does
// not know are skipped, and bytes that stop making sense give an error
// that says where, never a panic or a huge allocation.
func TestDecodeReadLogInput(t *testing.T) {
	compact := func(v any) []byte {
		var b bytes.Buffer
		enc := msgpack.NewEncoder(&b)
		enc.UseCompactInts(true)
		enc.SetSortMapKeys(true)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	good := compact(map[string]any{
		"version": 3,
		"files": map[string]any{
			"/f": map[string]any{"off": []int64{0, 300, 70000}, "size": []int64{1, 2, 3}, "note": "x"},
		},
	})
	l, err := decodeReadLog(good)
	if err != nil {
		t.Fatal(err)
	}
	if f := l.Files["/f"]; f == nil || !reflect.DeepEqual(f.Off, []int64{0, 300, 70000}) || !reflect.DeepEqual(f.Size, []int64{1, 2, 3}) {
		t.Errorf("decoded %+v", l.Files["/f"])
	}
	one, err := encodeReadLog(&readLog{Files: map[string]*fileReads{"/f": {Off: []int64{0, 1, 2}, Size: []int64{4, 5, 6}}}})
	if err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name, input, wantErr string
	}{
		{"empty", "", "reads file"},
		{"not a map", "\x93\x01\x02\x03", "reads file"},
		{"truncated numbers", string(one[:len(one)-3]), "/f: size[2]"},
		// files: {"/f": {"off": array of 2^32-1 numbers, then nothing}}
		{"a length beyond the bytes", "\x81\xa5files\x81\xa2/f\x81\xa3off\xdd\xff\xff\xff\xff\x01", "off[1]"},
		{"a string for a number", "\x81\xa5files\x81\xa2/f\x81\xa3off\x91\xa1x", "off[0]"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeReadLog([]byte(c.input))
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error %v, want one naming %q", err, c.wantErr)
			}
		})
	}
}

// BenchmarkReadLogDecode decodes a run's read sequences (512 strided reads
// of one file) with the element calls and, for comparison, with msgpack's
// reflection, which the library used before:
//
//	go test -run '^$' -bench ReadLogDecode -benchmem ./preload
func BenchmarkReadLogDecode(b *testing.B) {
	f := &fileReads{}
	for i := int64(0); i < 512; i++ {
		f.Off = append(f.Off, i<<20)
		f.Size = append(f.Size, 65536)
	}
	data, err := encodeReadLog(&readLog{Files: map[string]*fileReads{"/var/tmp/data": f}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("elements", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := decodeReadLog(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reflection", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var l readLog
			if err := msgpack.Unmarshal(data, &l); err != nil {
				b.Fatal(err)
			}
		}
	})
}

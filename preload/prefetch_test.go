package main

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// The read sequences saved beside a model are written without
// reflection: the bytes are the reflective encoder's but for the order of
// the paths (sorted now: it left them in Go's map order), so files of
// either kind are one format (the C reader, prefetch.c, is tested on them
// in tests/prefetch); msgpack's reflective decoder reads them back; the
// same log always gives the same bytes.
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
			var back readLog
			if err := msgpack.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Files, c.log.Files) && len(c.log.Files) > 0 {
				t.Errorf("the reflective decoder read %+v, want %+v", back.Files, c.log.Files)
			}
		})
	}
}

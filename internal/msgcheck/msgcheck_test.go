package msgcheck

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// Every document the encoder writes passes, alone and back to back.
func TestEncodedPasses(t *testing.T) {
	docs := []any{
		nil, true, 1, -1, 300, -40000, 1 << 40, 1.5, float32(2.5), "", "short",
		strings.Repeat("x", 300), strings.Repeat("y", 70000), []byte{1, 2, 3},
		bytes.Repeat([]byte{9}, 70000), []any{}, []any{1, "a", []any{nil}},
		make([]int, 20), make([]int, 70000), map[string]any{"a": map[string]any{"b": []any{1.0}}},
		map[int]string{1: "x", 2: "y", 3: "z", 4: "", 5: "", 6: "", 7: "", 8: "", 9: "", 10: "", 11: "", 12: "", 13: "", 14: "", 15: "", 16: "", 17: ""},
	}
	var all []byte
	for _, d := range docs {
		b, err := msgpack.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(b); err != nil {
			t.Errorf("%T %.20v: %v", d, d, err)
		}
		all = append(all, b...)
	}
	if err := Check(all); err != nil {
		t.Errorf("all back to back: %v", err)
	}
	// Extensions: a time is a fixext 8 or an ext 8 of 12 bytes.
	for _, ext := range [][]byte{{0xd7, 0xff, 1, 2, 3, 4, 5, 6, 7, 8}, append([]byte{0xc7, 12, 0xff}, make([]byte, 12)...)} {
		if err := Check(ext); err != nil {
			t.Errorf("%x: %v", ext, err)
		}
	}
}

// Lengths past the end, cut values, 0xc1 and deep nesting are refused with
// the offset of the value at fault.
func TestRefused(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"array 32 of 0xdddddddd", []byte{0x81, 0xa1, 'a', 0xdd, 0xdd, 0xdd, 0xdd, 0xdd, 0x01}, "offset 3: 3722304989 elements declared, 1 bytes left"},
		{"map 16 past the end", []byte{0xde, 0x00, 0x02, 0x01, 0x02}, "offset 0: 2 elements declared, 2 bytes left"},
		{"fixarray short", []byte{0x93, 0x01}, "offset 0: 3 elements declared, 1 bytes left"},
		{"str 32 past the end", []byte{0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'}, "offset 0: 2147483647 bytes declared, 1 left"},
		{"str 8 cut in its length", []byte{0xd9}, "offset 1: value cut short"},
		{"float64 cut", []byte{0xcb, 0, 0}, "offset 0: 8 bytes declared, 2 left"},
		{"ext 8 past the end", []byte{0xc7, 0x09, 0x01, 0x00}, "offset 0: 10 bytes declared, 2 left"},
		{"never used", []byte{0x91, 0xc1}, "offset 1: type byte 0xc1"},
		{"deep", bytes.Repeat([]byte{0x91}, MaxDepth+1), "nested deeper than 256"},
	}
	for _, c := range cases {
		err := Check(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// FuzzCheck: no input makes Check panic, and what it accepts the decoder
// reads into an interface without asking for more than the input's size
// in elements.
func FuzzCheck(f *testing.F) {
	for _, d := range []any{map[string]any{"a": []any{1, "x", 2.5, nil}}, []any{true, []byte{1}}, "s"} {
		b, _ := msgpack.Marshal(d)
		f.Add(b)
	}
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		if Check(in) != nil {
			return
		}
		dec := msgpack.NewDecoder(bytes.NewReader(in))
		for {
			var v any
			if dec.Decode(&v) != nil {
				return
			}
		}
	})
}

package fuzzinput

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// Edits keeps the document first, returns the number of edits asked,
// stays within a few bytes of the document's length, changes it, and
// returns the same edits every time.
func TestEdits(t *testing.T) {
	doc := []byte(`{"format":"iopred","version":1,"events":[1,2,3]}`)
	got := Edits(doc, 20)
	if len(got) != 21 || !bytes.Equal(got[0], doc) {
		t.Fatalf("%d inputs, first %q", len(got), got[0])
	}
	changed := 0
	for _, e := range got[1:] {
		if len(e) > len(doc)+8 {
			t.Errorf("edit %q grew by %d bytes", e, len(e)-len(doc))
		}
		if !bytes.Equal(e, doc) {
			changed++
		}
	}
	if changed < 15 {
		t.Errorf("only %d of 20 edits differ from the document", changed)
	}
	if fmt.Sprint(Edits(doc, 20)) != fmt.Sprint(got) {
		t.Error("a second call gave other edits")
	}
	if e := Edits(nil, 5); len(e) != 1 || len(e[0]) != 0 {
		t.Errorf("edits of an empty document: %q", e)
	}
}

// Edits does not write into the caller's document.
func TestEditsLeaveDocument(t *testing.T) {
	doc := []byte("abcdefghijklmnopqrstuvwxyz")
	keep := bytes.Clone(doc)
	for _, e := range Edits(doc, 50) {
		if len(e) > 0 {
			e[0] = '!'
		}
	}
	if !bytes.Equal(doc, keep) {
		t.Errorf("document changed to %q", doc)
	}
}

func TestLines(t *testing.T) {
	doc := []byte("a\nbb\nccc\n")
	cases := []struct {
		n    int
		want string
	}{{0, ""}, {1, "a\n"}, {2, "a\nbb\n"}, {3, "a\nbb\nccc\n"}, {9, "a\nbb\nccc\n"}}
	for _, c := range cases {
		if got := string(Lines(doc, c.n)); got != c.want {
			t.Errorf("Lines(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := string(Lines([]byte("a\nno newline"), 5)); got != "a\nno newline" {
		t.Errorf("last line without newline: %q", got)
	}
}

func ExampleEdits() {
	for _, e := range Edits([]byte("hello"), 3) {
		fmt.Println(len(e))
	}
	// Output:
	// 5
	// 2
	// 5
	// 4
}

// ShrinkMsgpack drops what valid does not need and keeps what it does,
// inside maps and arrays.
func TestShrinkMsgpack(t *testing.T) {
	doc, err := msgpack.Marshal(map[string]any{
		"format": "x", "noise": []any{1, 2, 3},
		"list": []any{map[string]any{"keep": 1, "drop": "long string of no use"}, map[string]any{"keep": 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	valid := func(b []byte) bool {
		var v struct {
			Format string `msgpack:"format"`
			List   []struct {
				Keep int `msgpack:"keep"`
			} `msgpack:"list"`
		}
		return msgpack.Unmarshal(b, &v) == nil && v.Format == "x" && len(v.List) >= 1 && v.List[0].Keep == 1
	}
	got := ShrinkMsgpack(doc, valid)
	var v any
	if err := msgpack.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"format": "x", "list": []any{map[string]any{"keep": int8(1)}}}
	if fmt.Sprint(v) != fmt.Sprint(want) {
		t.Errorf("shrunk to %v, want %v", v, want)
	}
	if len(got) >= len(doc) || !valid(got) {
		t.Errorf("%d bytes from %d, valid %v", len(got), len(doc), valid(got))
	}
	if got := ShrinkMsgpack([]byte{0xc1}, valid); string(got) != "\xc1" {
		t.Errorf("a byte that is no msgpack came back as %q", got)
	}
}

// ShrinkJSON keeps numbers as written and drops what valid does not need.
func TestShrinkJSON(t *testing.T) {
	doc := []byte(`{"days":1,"big":12345678901234567890,"apps":[{"name":"a","runs":3},{"name":"b"}],"noise":"x"}`)
	valid := func(b []byte) bool {
		var v struct {
			Days int
			Big  json.Number
			Apps []struct{ Runs int }
		}
		return json.Unmarshal(b, &v) == nil && v.Days == 1 && v.Big == "12345678901234567890" && len(v.Apps) > 0 && v.Apps[0].Runs == 3
	}
	got := string(ShrinkJSON(doc, valid))
	if want := `{"apps":[{"runs":3}],"big":12345678901234567890,"days":1}`; got != want {
		t.Errorf("shrunk to %s, want %s", got, want)
	}
}

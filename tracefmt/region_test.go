package tracefmt

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestRegionRoundTrip proves that regions (the application's own work
// another tool recorded) come back from a trace as written, between the
// events around them, that a region without a name is refused by the
// writer and reported by the reader with its field, and that the writer
// keeps working after refusing one.
func TestRegionRoundTrip(t *testing.T) {
	regions := []Region{
		{Name: "epoch", Category: "PyTorch", StartNs: 10, EndNs: 5000, Tid: 7, Args: map[string]string{"epoch": "1"}},
		{Name: "step", StartNs: 20, EndNs: 20},
		{Name: "fn \"q\"\n", Category: "C_APP", StartNs: -5, EndNs: 3, Args: map[string]string{"a b": "[1,2]", "": ""}},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range regions {
		if err := w.Event(&Event{Op: "close", StartNs: int64(i), EndNs: int64(i) + 1}); err != nil {
			t.Fatal(err)
		}
		if err := w.Region(&regions[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Region(&Region{StartNs: 1}); err == nil || !strings.Contains(err.Error(), "without a name") {
		t.Errorf("nameless region: %v", err)
	}
	if err := w.Close(Footer{Reason: "exit"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	_, got, err := readTrace(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var back []Region
	for i, r := range got {
		if r.Region != nil {
			if got[i-1].Event == nil || r.Kind != KindRegion {
				t.Errorf("record %d: %+v after %+v", i, r, got[i-1])
			}
			back = append(back, *r.Region)
		}
	}
	if !reflect.DeepEqual(back, regions) {
		t.Errorf("regions\n got %+v\nwant %+v", back, regions)
	}

	enc, _ := newTestEncoder()
	hdr := `{"k":"h","v":1,"prog":"p","host":"h","pid":1,"ppid":0,"rank":null,"t0_unix_ns":0,"t0_mono_ns":0,"ctx_depth":0,"lib":""}` + "\n"
	for _, c := range []struct{ line, field string }{
		{`{"k":"g","t":1,"end":2}`, "name"},
		{`{"k":"g","name":"x","t":"soon","end":2}`, "t"},
	} {
		data := append(enc.EncodeAll([]byte(hdr), nil), enc.EncodeAll([]byte(c.line+"\n"), nil)...)
		_, _, err := readTrace(t, data)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Field != c.field || fe.Line != 1 {
			t.Errorf("%s: %v, want a FormatError on field %q", c.line, err, c.field)
		}
	}
}

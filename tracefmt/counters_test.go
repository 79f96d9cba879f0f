package tracefmt

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sampleCounters is a POSIX file's totals as a Darshan import writes them.
func sampleCounters(file uint32) *Counters {
	return &Counters{FileID: file, Layer: LayerPOSIX, Procs: 4, Calls: map[string]uint64{"open": 4, "write": 16},
		BytesWritten: 1 << 26, WriteNs: 2_500_000_000, MetaNs: 1_000_000, Source: "darshan POSIX v4",
		Ints: map[string]int64{"POSIX_OPENS": 4, "POSIX_WRITES": 16}, Floats: map[string]float64{"POSIX_F_WRITE_TIME": 2.5}}
}

// TestCountersRoundTrip proves that a Counters record written by the
// Writer comes back from the Reader field for field, with its path taken
// from the file table, between events that keep their delta encoding.
func TestCountersRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Program: "app", Source: "darshan 3.4.7, log format 3.41", JobID: "42", Procs: 4}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.File(File{ID: 7, Path: "/scratch/out.dat"}))
	must(w.Event(&Event{Op: "write", FileID: 7, Offset: 0, Size: 10, Ret: 10, Bytes: 10, StartNs: 5, EndNs: 9}))
	want := sampleCounters(7)
	must(w.Counters(want))
	must(w.Event(&Event{Op: "write", FileID: 7, Offset: 10, Size: 10, Ret: 10, Bytes: 10, StartNs: 12, EndNs: 20}))
	must(w.Close(Footer{Reason: "exit", Events: 2}))

	r, err := NewReader(bytes.NewReader(buf.Bytes()), "test")
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header(); h.Source != "darshan 3.4.7, log format 3.41" || h.JobID != "42" || h.Procs != 4 {
		t.Errorf("header %+v lost the source fields", h)
	}
	var got []Record
	if err := r.Each(func(rec Record) error { got = append(got, rec); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[2].Counters == nil {
		t.Fatalf("records %+v", got)
	}
	c := *got[2].Counters
	want.Path = "/scratch/out.dat"
	if !reflect.DeepEqual(&c, want) {
		t.Errorf("counters\n got %+v\nwant %+v", c, *want)
	}
	if e := got[3].Event; e == nil || e.Offset != 10 || e.StartNs != 12 {
		t.Errorf("the event after the counters: %+v", e)
	}
}

// TestCountersBadInput proves that the writer refuses counters of an
// undefined file and the reader a counters line naming no file or an
// undefined one, with the field at fault.
func TestCountersBadInput(t *testing.T) {
	w, err := NewWriter(io.Discard, Header{}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Counters(sampleCounters(3)); err == nil {
		t.Error("the writer took counters of an undefined file")
	}
	for _, line := range []string{`{"k":"a","layer":"posix"}`, `{"k":"a","f":9,"layer":"posix"}`, `{"k":"a","f":"x"}`} {
		data := rawTrace(t, `{"k":"h","v":1,"prog":"p","host":"h","pid":1,"ppid":0,"rank":null,"t0_unix_ns":0,"t0_mono_ns":0,"ctx_depth":0,"lib":""}`, line)
		r, err := NewReader(bytes.NewReader(data), "bad")
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Next()
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Field != "f" {
			t.Errorf("%s: got %v, want a format error on field f", line, err)
		}
	}
}

// rawTrace frames lines as one raw zstd frame each, the first a header.
func rawTrace(t *testing.T, lines ...string) []byte {
	t.Helper()
	var out []byte
	for _, l := range lines {
		out = appendRawFrame(out, []byte(l+"\n"))
	}
	return out
}

// TestCheckTimeResolved proves that the time-resolved analyses are told
// when every trace holds counters and no event, and not when one trace
// holds an event, when none holds counters, or for inputs that are not
// traces.
func TestCheckTimeResolved(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, events bool) string {
		t.Helper()
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w, err := NewWriter(f, Header{Program: "app", Source: "darshan 3.2.1, log format 3.21"}, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.File(File{ID: 1, Path: "/out"}); err != nil {
			t.Fatal(err)
		}
		if err := w.Counters(sampleCounters(1)); err != nil {
			t.Fatal(err)
		}
		if events {
			if err := w.Event(&Event{Op: "write", FileID: 1, Size: 1, Ret: 1, Bytes: 1, EndNs: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(Footer{Reason: "exit"}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.iopred.zst", false)
	b := write("b.iopred.zst", false)
	err := CheckTimeResolved(a, b)
	var ne *NoEventsError
	if !errors.As(err, &ne) || len(ne.Traces) != 2 || !strings.Contains(err.Error(), "DXT") || !strings.Contains(err.Error(), "darshan 3.2.1") {
		t.Errorf("counters only: %v", err)
	}
	c := write("c.iopred.zst", true)
	if err := CheckTimeResolved(a, c); err != nil {
		t.Errorf("with an event in one trace: %v", err)
	}
	if err := CheckTimeResolved(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("a missing input is the analysis's to report: %v", err)
	}
	empty := filepath.Join(dir, "empty.iopred.zst")
	f, _ := os.Create(empty)
	w, _ := NewWriter(f, Header{}, WriterOptions{})
	w.Close(Footer{Reason: "exit"})
	f.Close()
	if err := CheckTimeResolved(empty); err != nil {
		t.Errorf("a trace without counters or events: %v", err)
	}
}

// TestTruncatedErrorWithoutOffset proves the message of a trace whose
// source lost records without the file being cut.
func TestTruncatedErrorWithoutOffset(t *testing.T) {
	e := &TruncatedError{File: "x.darshan", Offset: -1, Reason: "Darshan ran out of memory for POSIX"}
	if got := e.Error(); got != "x.darshan: incomplete trace: Darshan ran out of memory for POSIX" {
		t.Errorf("got %q", got)
	}
}

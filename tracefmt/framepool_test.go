package tracefmt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
)

// Closed Readers hand their frame buffers to the next (frameBufs): the
// records a Reader returned must not point into them, and a Reader must
// not see another trace's bytes left in a reused buffer. Traces of tiny,
// default and oversized frames (past maxPooledFrameBuf) are read in
// turn, closed half-read, interleaved with FinalFooter and read on
// several goroutines at once; every record kept to the end must still be
// what was written.
func TestFrameBuffersReused(t *testing.T) {
	dir := t.TempDir()
	type trace struct {
		path   string
		events []Event
		footer Footer
	}
	write := func(name string, frameBytes, events int, opName string) trace {
		tr := trace{path: filepath.Join(dir, name+FileSuffix), footer: Footer{Events: uint64(events)}}
		f, err := os.Create(tr.path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w, err := NewWriter(f, Header{Program: "/bin/" + name, PID: 7}, WriterOptions{FrameBytes: frameBytes})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.File(File{ID: 1, Path: "/d/" + name}); err != nil {
			t.Fatal(err)
		}
		for i := range events {
			e := Event{Op: opName, FileID: 1, Offset: int64(i) * 10, Size: 10, Ret: 10, Bytes: 10,
				StartNs: int64(i) * 3, EndNs: int64(i)*3 + 2, Tid: int32(i % 3)}
			if err := w.Event(&e); err != nil {
				t.Fatal(err)
			}
			tr.events = append(tr.events, e)
		}
		if err := w.Close(tr.footer); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	traces := []trace{
		write("tiny", 512, 3000, "write"),
		write("default", 0, 60000, "read"),
		// Frames of about 6 MiB: their buffers are too big to be pooled.
		write("huge", 6*DefaultFrameBytes, 120000, "pwrite"),
		write("short", 0, 5, "pread"),
	}
	// read returns the trace's events (kept as returned) and its footer,
	// or stops after stopAfter events, closing the Reader half-read.
	read := func(tr trace, stopAfter int) ([]Event, *Footer, error) {
		r, err := Open(tr.path)
		if err != nil {
			return nil, nil, err
		}
		defer r.Close()
		var got []Event
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return got, r.(*Reader).Footer(), nil
			}
			if err != nil {
				return got, nil, err
			}
			if rec.Event != nil {
				got = append(got, *rec.Event)
				if len(got) == stopAfter {
					return got, nil, nil
				}
			}
		}
	}
	check := func(tr trace, got []Event, footer *Footer, whole bool) error {
		want := tr.events
		if !whole {
			want = want[:len(got)]
		}
		if len(got) != len(want) {
			return fmt.Errorf("%s: %d events, want %d", tr.path, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Op != w.Op || g.Offset != w.Offset || g.StartNs != w.StartNs || g.EndNs != w.EndNs || g.Tid != w.Tid || g.Path != "/d/"+filepath.Base(tr.path[:len(tr.path)-len(FileSuffix)]) {
				return fmt.Errorf("%s: event %d is %+v, want %+v", tr.path, i, g, w)
			}
		}
		if whole && (footer == nil || footer.Events != tr.footer.Events) {
			return fmt.Errorf("%s: footer %+v, want %+v", tr.path, footer, tr.footer)
		}
		return nil
	}
	type reading struct {
		tr     trace
		events []Event
		footer *Footer
		whole  bool
	}
	var kept []reading
	for round := range 3 {
		for i, tr := range traces {
			if f, ok := FinalFooter(tr.path); !ok || !reflect.DeepEqual(*f, tr.footer) {
				t.Fatalf("round %d: FinalFooter(%s) = %+v, %v", round, tr.path, f, ok)
			}
			stop := 0
			if (round+i)%2 == 1 {
				stop = len(tr.events) / 3 // closed half-read: its buffers go back mid-trace
			}
			evs, footer, err := read(tr, stop)
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, tr.path, err)
			}
			kept = append(kept, reading{tr, evs, footer, stop == 0})
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 2 * len(traces) {
				tr := traces[(g+k)%len(traces)]
				evs, footer, err := read(tr, 0)
				mu.Lock()
				if err != nil {
					t.Errorf("goroutine %d: %s: %v", g, tr.path, err)
				}
				kept = append(kept, reading{tr, evs, footer, true})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, k := range kept {
		if err := check(k.tr, k.events, k.footer, k.whole); err != nil {
			t.Error(err)
		}
	}
}

// A Reader closed before its end returns an error, not a record read from
// buffers another Reader now holds.
func TestNextAfterCloseReturnsError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t"+FileSuffix)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(f, Header{Program: "/bin/x", PID: 1}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.File(File{ID: 1, Path: "/d/f"}); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := w.Event(&Event{Op: "write", FileID: 1, Size: 1, Ret: 1, Bytes: 1, StartNs: int64(i), EndNs: int64(i) + 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(Footer{Events: 100}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	other, err := Open(path) // takes the closed Reader's buffers
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	rec, err := r.Next()
	if err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("Next after Close: %+v, %v; want an error", rec, err)
	}
}

package tracefmt

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FinalFooter finds the footer a Reader returns last when it reads the
// trace to io.EOF, and reports none for every trace that does not end
// cleanly with a footer.
func TestFinalFooter(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, frameBytes int, events int, footer *Footer) string {
		path := filepath.Join(dir, name+FileSuffix)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w, err := NewWriter(f, Header{Program: "/bin/x", PID: 7}, WriterOptions{FrameBytes: frameBytes})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.File(File{ID: 1, Path: "/d/f"}); err != nil {
			t.Fatal(err)
		}
		for i := range events {
			if err := w.Event(&Event{Op: "write", FileID: 1, Offset: int64(i) * 10, Size: 10, Ret: 10, Bytes: 10, StartNs: int64(i), EndNs: int64(i) + 1}); err != nil {
				t.Fatal(err)
			}
		}
		if footer != nil {
			err = w.Close(*footer)
		} else {
			err = w.Flush()
		}
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	withModel := write("model", 1<<20, 5000, &Footer{Reason: "exit", EndNs: 9, Events: 5000, Model: map[string]any{"contexts": 3.0}})
	noModel := write("nomodel", 2000, 5000, &Footer{Reason: "exit", EndNs: 9, Events: 5000})
	empty := write("empty", 0, 0, &Footer{Reason: "exec", EndNs: 1})
	killed := write("killed", 2000, 500, nil)
	cut := write("cut", 2000, 5000, &Footer{Reason: "exit"})
	data, _ := os.ReadFile(cut)
	os.WriteFile(cut, data[:len(data)-3], 0o644)
	foreign := filepath.Join(dir, "foreign"+FileSuffix)
	os.WriteFile(foreign, []byte("no trace"), 0o644)
	for _, c := range []struct {
		path string
		ok   bool
	}{{withModel, true}, {noModel, true}, {empty, true}, {killed, false}, {cut, false}, {foreign, false},
		{filepath.Join(dir, "missing"), false}} {
		f, ok := FinalFooter(c.path)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v", filepath.Base(c.path), ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		r, err := Open(c.path)
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = r.Next()
		}
		if !errors.Is(err, io.EOF) || !reflect.DeepEqual(r.Footer(), f) {
			t.Errorf("%s: FinalFooter %+v, the reader ends with %v and footer %+v", filepath.Base(c.path), f, err, r.Footer())
		}
		r.Close()
	}
}

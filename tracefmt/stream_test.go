package tracefmt

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// lineFormat is a test format: each line of a ".lines" file is
// "<proc> <op> <offset> <size>"; a file holds the processes its lines name.
func init() {
	RegisterFormat(Format{
		Name:     "lines-test",
		Suffixes: []string{".lines"},
		Sniff:    func(head []byte) bool { return strings.HasPrefix(string(head), "#lines\n") },
		Processes: func(path string) ([]string, error) {
			rows, err := readLines(path)
			if err != nil {
				return nil, err
			}
			var procs []string
			seen := map[string]bool{}
			for _, r := range rows {
				if !seen[r[0]] {
					seen[r[0]] = true
					procs = append(procs, r[0])
				}
			}
			return procs, nil
		},
		Open: func(path, proc string) (Stream, error) {
			rows, err := readLines(path)
			if err != nil {
				return nil, err
			}
			var pid int
			if _, err := fmt.Sscanf(proc, "p%d", &pid); err != nil && proc != "" {
				return nil, fmt.Errorf("%s: no process %q", path, proc)
			}
			recs := []Record{{Kind: KindFile, File: &File{ID: 1, Path: "/data/" + filepath.Base(path)}}}
			for _, r := range rows {
				if proc != "" && r[0] != proc {
					continue
				}
				var off, size int64
				fmt.Sscan(r[2], &off)
				fmt.Sscan(r[3], &size)
				recs = append(recs, Record{Kind: KindEvent, Event: &Event{Op: r[1], FileID: 1, Offset: off, Size: size, Ret: size, Bytes: size}})
			}
			return SliceStream(Header{Version: FormatVersion, Program: "lines", PID: pid}, recs), nil
		},
	})
}

func readLines(path string) ([][]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 fields", path, i+1)
		}
		rows = append(rows, f)
	}
	return rows, nil
}

// TestRegisteredFormat proves that Discover lists a registered format's
// files beside iopred traces, splits a file of several processes into one
// name each, and that Open reads each as a Stream whose events carry the
// path and pid as the iopred reader's do.
func TestRegisteredFormat(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	multi := write("b.lines", "p1 pwrite 0 10\np2 pwrite 10 10\np1 pread 0 10\n")
	single := write("a.lines", "p7 write 0 4\n")
	sniffed := write("c.dat", "#lines\np9 read 0 3\n")
	write("ignored.txt", "not a trace")

	names, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{single, multi + "#p1", multi + "#p2"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("Discover(dir) = %q, want %q", names, want)
	}
	names, err = Discover(sniffed, multi+"#p2")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{sniffed, multi + "#p2"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("Discover(files) = %q, want %q", names, want)
	}

	cases := []struct {
		name string
		pid  int
		ops  []string
	}{
		{multi + "#p1", 1, []string{"pwrite", "pread"}},
		{multi + "#p2", 2, []string{"pwrite"}},
		{single, 0, []string{"write"}},
		{sniffed, 0, []string{"read"}},
	}
	for _, c := range cases {
		s, err := Open(c.name)
		if err != nil {
			t.Fatalf("Open(%s): %v", c.name, err)
		}
		var ops []string
		err = s.Each(func(r Record) error {
			if e := r.Event; e != nil {
				ops = append(ops, e.Op)
				if e.PID != c.pid || e.Path != "/data/"+filepath.Base(strings.Split(c.name, "#")[0]) || e.Layer != LayerOf(e.Op) {
					t.Errorf("%s: event %+v: pid, path or layer not filled in", c.name, *e)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(ops, c.ops) {
			t.Errorf("%s: ops %q, want %q", c.name, ops, c.ops)
		}
		if _, err := s.Next(); err != io.EOF {
			t.Errorf("%s: Next after the end = %v, want io.EOF", c.name, err)
		}
		s.Close()
	}
	if _, err := Open(filepath.Join(dir, "ignored.txt") + "#p1"); err == nil {
		t.Error("Open of a process inside a plain file succeeded")
	}
}

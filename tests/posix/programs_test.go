package posix

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/analyzer/summary"
	"iopred/tracefmt"
)

// input writes a file of numbered lines for the programs to work on.
func input(t *testing.T, dir string) string {
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "%d line %d\n", (i*7919)%20000, i)
	}
	p := filepath.Join(dir, "input.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sameFiles fails unless two directories hold the same files with the
// same bytes.
func sameFiles(t *testing.T, a, b string) {
	t.Helper()
	names := func(d string) []string {
		var out []string
		filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				rel, _ := filepath.Rel(d, p)
				out = append(out, rel)
			}
			return nil
		})
		return out
	}
	na, nb := names(a), names(b)
	if strings.Join(na, ",") != strings.Join(nb, ",") {
		t.Fatalf("files differ: %v vs %v", na, nb)
	}
	for _, n := range na {
		x, _ := os.ReadFile(filepath.Join(a, n))
		y, _ := os.ReadFile(filepath.Join(b, n))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs with the library", n)
		}
	}
}

// Real programs produce byte-identical outputs, files and exit status with
// and without the library, and their traces show the files they touched.
func TestRealProgramsUnchanged(t *testing.T) {
	type prog struct {
		name  string
		tool  string
		args  func(in string) []string
		files []string // base names the trace must mention
		skip  func(a, b result) bool
		// base names of files the program reads whole, and of files it
		// writes whole: the summary's bytes must be their sizes
		read, written []string
	}
	progs := []prog{
		{"cp", "cp", func(in string) []string { return []string{in, "copy.txt"} }, []string{"input.txt", "copy.txt"}, nil,
			[]string{"input.txt"}, []string{"copy.txt"}},
		{"cat", "cat", func(in string) []string { return []string{in} }, []string{"input.txt"}, nil, []string{"input.txt"}, nil},
		{"dd", "dd", func(in string) []string { return []string{"if=" + in, "of=dd.out", "bs=4096", "status=none"} }, []string{"input.txt", "dd.out"}, nil,
			[]string{"input.txt"}, []string{"dd.out"}},
		// sort reads and writes through fread_unlocked and fwrite_unlocked
		{"sort", "sort", func(in string) []string { return []string{"-n", "-o", "sorted.txt", in} }, []string{"input.txt", "sorted.txt"}, nil,
			[]string{"input.txt"}, []string{"sorted.txt"}},
		{"tar", "tar", func(in string) []string {
			return []string{"cf", "a.tar", "--mtime=2020-01-01", "--owner=0", "--group=0", "input.txt"}
		}, []string{"a.tar"}, nil, []string{"input.txt"}, []string{"a.tar"}},
		{"bash", "bash", func(in string) []string {
			return []string{"-c", "exec 3>fd3.txt; while read -r a b c; do echo \"$c $a\" >&3; done < input.txt; cat fd3.txt | head -5 > head.txt; echo done >> head.txt; wc -l < fd3.txt"}
		}, []string{"input.txt", "fd3.txt"}, nil, nil, nil},
		{"python3", "python3", func(in string) []string {
			return []string{"-c", "import json\nrows=[l.split() for l in open('input.txt')]\nopen('out.json','w').write(json.dumps(rows[:100]))\nwith open('out.bin','wb') as f:\n  for r in rows: f.write(r[0].encode()+b'\\n')\nprint(len(rows))"}
		}, []string{"input.txt", "out.json", "out.bin"}, nil, []string{"input.txt"}, []string{"out.json", "out.bin"}},
		{"sqlite3", "sqlite3", func(in string) []string {
			return []string{"db.sqlite", "create table t(a integer, b text); insert into t select value, 'x' || value from generate_series(1, 5000); select count(*), sum(a) from t;"}
		}, []string{"db.sqlite"}, nil, nil, nil},
		{"fio-psync", "fio", func(in string) []string {
			return []string{"--name=j", "--filename=fio.dat", "--size=2m", "--bs=4k", "--rw=write", "--ioengine=psync", "--buffer_pattern=0x5a", "--thread", "--minimal", "--output=/dev/null"}
		}, []string{"fio.dat"}, nil, nil, []string{"fio.dat"}},
		{"fio-sync", "fio", func(in string) []string {
			return []string{"--name=j", "--filename=fio.dat", "--size=2m", "--bs=4k", "--rw=write", "--ioengine=sync", "--buffer_pattern=0x5a", "--thread", "--minimal", "--output=/dev/null"}
		}, []string{"fio.dat"}, nil, nil, []string{"fio.dat"}},
	}
	for _, p := range progs {
		p := p
		t.Run(p.name, func(t *testing.T) {
			bin := tool(t, p.tool)
			bare, withLib := t.TempDir(), t.TempDir()
			a := run(t, nil, bare, bin, p.args(input(t, bare))...)
			b, dir := traced(t, nil, withLib, bin, p.args(input(t, withLib))...)
			if a.code != 0 {
				t.Fatalf("%s failed without the library: %+v", p.name, a)
			}
			if a.code != b.code || a.stdout != b.stdout || a.stderr != b.stderr {
				t.Fatalf("%s behaves differently under the library:\nwithout: %+v\nwith:    %+v", p.name, a, b)
			}
			sameFiles(t, bare, withLib)
			touched := map[string]bool{}
			for _, tr := range traces(t, dir) {
				// A process killed by a signal (cat by SIGPIPE in a bash
				// pipeline) leaves a trace without a footer: readable, but
				// truncated. Anything else is an error.
				var trunc *tracefmt.TruncatedError
				if tr.err != nil && !errors.As(tr.err, &trunc) {
					t.Errorf("%s: %v", tr.path, tr.err)
				}
				for _, e := range tr.events {
					touched[filepath.Base(e.Path)] = true
				}
			}
			if len(p.read)+len(p.written) > 0 {
				movedWhole(t, dir, withLib, p.read, p.written)
			}
			for _, f := range p.files {
				if !touched[f] {
					t.Errorf("no trace mentions %s", f)
				}
			}
		})
	}
}

// movedWhole checks that the summary of the traces in dir counts the
// files under work named in read as read whole, and those in written as
// written whole: their sizes.
func movedWhole(t *testing.T, dir, work string, read, written []string) {
	t.Helper()
	paths, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := summary.Summarize(paths, summary.Options{})
	if err != nil {
		t.Fatal(err)
	}
	byBase := map[string]summary.FileStats{}
	for _, f := range rep.Files {
		if filepath.Dir(f.Path) == work {
			byBase[filepath.Base(f.Path)] = f
		}
	}
	size := func(base string) int64 {
		info, err := os.Stat(filepath.Join(work, base))
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	for _, base := range read {
		if got, want := byBase[base].BytesRead, size(base); got != want {
			t.Errorf("%s: %d bytes read in the summary, the file holds %d", base, got, want)
		}
	}
	for _, base := range written {
		if got, want := byBase[base].BytesWritten, size(base); got != want {
			t.Errorf("%s: %d bytes written in the summary, the file holds %d", base, got, want)
		}
	}
}

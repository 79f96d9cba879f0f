package fork

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"iopred/tests/interop"
	"iopred/tests/testenv"
	"iopred/tracefmt"
	_ "iopred/tracefmt/dftracer"
)

// poolDir holds pool.py and the DFTracer traces recorded of it (see its
// record.sh).
var poolDir = filepath.Join(interop.Dir(), "dftracer")

// fileCalls are a run's reads and writes by file base name, each as
// "r@offset/bytes" or "w@offset/bytes" in the order of the trace, with
// the pid of the process that made them.
type fileCalls struct {
	calls map[string][]string
	pid   map[string]int
	procs []tracefmt.Header
	notes []string
}

// dataCalls reads the traces of dir (or of one trace file).
func dataCalls(t *testing.T, dir string) fileCalls {
	t.Helper()
	names, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	fc := fileCalls{calls: map[string][]string{}, pid: map[string]int{}}
	var flow tracefmt.DataFlow
	for _, name := range names {
		s, err := tracefmt.Open(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h := s.Header()
		fc.procs = append(fc.procs, h)
		fc.notes = append(fc.notes, h.Notes...)
		err = s.Each(func(r tracefmt.Record) error {
			e := r.Event
			if e == nil || !strings.HasPrefix(filepath.Base(e.Path), "part_") {
				return nil
			}
			var dir string
			switch flow.Of(e) {
			case tracefmt.Read:
				dir = "r"
			case tracefmt.Write:
				dir = "w"
			default:
				return nil
			}
			base := filepath.Base(e.Path)
			off := "?"
			if e.Offset != tracefmt.NoOffset {
				off = fmt.Sprint(e.Offset)
			}
			fc.calls[base] = append(fc.calls[base], fmt.Sprintf("%s@%s/%d", dir, off, e.Bytes))
			if p, ok := fc.pid[base]; ok && p != h.PID {
				t.Errorf("%s: %s is used by pids %d and %d", dir, base, p, h.PID)
			}
			fc.pid[base] = h.PID
			return nil
		})
		s.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return fc
}

// wrongOffsets counts the calls of got whose offset differs from want's
// call at the same place, and the calls compared.
func wrongOffsets(got, want fileCalls) (wrong, compared int) {
	for base, w := range want.calls {
		g := got.calls[base]
		for i := range w {
			compared++
			if i >= len(g) || g[i] != w[i] {
				wrong++
			}
		}
	}
	return wrong, compared
}

// TestDFTracerForkPool reads what DFTracer 1.0.8 recorded of a Python
// pool of 4 forked workers (pool.py: 8 tasks, each writing its own file
// in 64 KiB writes through one descriptor and reading it back) and
// compares every read's and write's offset with iopred's own trace of
// pool.py: each file's calls, in order, with their offsets and bytes, are
// the same, and each file is one worker's. The workers are processes of
// their own (DFTracer wrote them under the parent's pid), children of
// the pool's process, named after the executable DFTracer's metadata
// names. Read as one process, as DFTracer's pid says (the thread ids
// removed), the workers' offsets mix and some are wrong: the defect the
// process tree fixes. A trace made with DFTracer's default settings has
// no sizes: its notes say so, and its workers are still apart.
//
// The traces kept here were recorded by DFTracer alone, so the
// comparison is between two runs of the same program: pool.py's offsets
// do not depend on the run. (The two libraries can also trace one run
// together: see TestStackedWithDlsymInterposer in tests/posix.)
func TestDFTracerForkPool(t *testing.T) {
	py := testenv.Tool(t, "python3")
	dft := dataCalls(t, filepath.Join(poolDir, "metadata"))
	if len(dft.procs) != 5 {
		t.Fatalf("%d processes in DFTracer's trace, want the pool's and 4 workers", len(dft.procs))
	}
	parent := dft.procs[0]
	for i, h := range dft.procs {
		if h.Program != "pool.py" || len(h.Args) != 3 || filepath.Base(h.Args[1]) != "pool.py" {
			t.Errorf("process %d: program %q, args %q", h.PID, h.Program, h.Args)
		}
		if i > 0 && (h.PPID != parent.PID || h.ForkUnixNs == 0 || h.ForkUnixNs < parent.StartUnixNs) {
			t.Errorf("worker %d: parent %d (want %d), forked at %d", h.PID, h.PPID, parent.PID, h.ForkUnixNs)
		}
	}
	data, traces := t.TempDir(), t.TempDir()
	res := testenv.Traced(t, traces, nil, "", py, filepath.Join(poolDir, "pool.py"), data)
	if res.Code != 0 || !strings.HasPrefix(res.Stdout, "ok ") {
		t.Fatalf("pool.py: status %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	own := dataCalls(t, traces)
	if len(own.calls) != 8 || len(dft.calls) != 8 {
		t.Fatalf("files: iopred %d, DFTracer %d, want 8", len(own.calls), len(dft.calls))
	}
	var bases []string
	for b := range own.calls {
		bases = append(bases, b)
	}
	sort.Strings(bases)
	for _, b := range bases {
		if strings.Join(dft.calls[b], " ") != strings.Join(own.calls[b], " ") {
			t.Errorf("%s:\n DFTracer %v\n iopred   %v", b, dft.calls[b], own.calls[b])
		}
	}
	wrong, compared := wrongOffsets(dft, own)
	t.Logf("DFTracer trace, processes rebuilt: %d of %d offsets differ from iopred's own trace", wrong, compared)
	if compared != 8*(16+17) || wrong != 0 {
		t.Errorf("%d of %d offsets wrong, want 0 of %d", wrong, compared, 8*(16+17))
	}

	// The same trace without thread ids: one process, offsets mixed.
	merged := filepath.Join(t.TempDir(), "merged.pfw")
	raw := gunzip(t, filepath.Join(poolDir, "metadata"))
	raw = regexp.MustCompile(`"tid":[0-9]+`).ReplaceAll(raw, []byte(`"tid":0`))
	if err := os.WriteFile(merged, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	mixed := dataCalls(t, merged)
	wrong, compared = wrongOffsets(mixed, own)
	t.Logf("DFTracer trace read as one process: %d of %d offsets wrong (%.0f%%)", wrong, compared, 100*float64(wrong)/float64(compared))
	if len(mixed.procs) != 1 || wrong == 0 || !strings.Contains(strings.Join(mixed.notes, " "), "without thread ids") {
		t.Errorf("merged: %d processes, %d offsets wrong, notes %q", len(mixed.procs), wrong, mixed.notes)
	}

	// DFTracer's default settings: no sizes, no paths, no return values.
	bare := dataCalls(t, filepath.Join(poolDir, "default"))
	if len(bare.procs) != 5 || !strings.Contains(strings.Join(bare.notes, " "), "DFTRACER_INC_METADATA=1") {
		t.Errorf("default settings: %d processes, notes %q", len(bare.procs), bare.notes)
	}
	for _, h := range bare.procs {
		if h.Program != "pool.py" {
			t.Errorf("default settings: process %d named %q", h.PID, h.Program)
		}
	}
}

// gunzip returns the content of the one gzipped trace in dir.
func gunzip(t *testing.T, dir string) []byte {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.pfw.gz"))
	if err != nil || len(m) != 1 {
		t.Fatalf("%s: %v %v", dir, m, err)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

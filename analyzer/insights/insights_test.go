package insights

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"iopred/analyzer/summary"
	"iopred/tracefmt"
)

// proc is a synthetic process: its rank (-1 for none) and events, whose
// paths become the trace's file table.
type proc struct {
	rank   int
	events []tracefmt.Event
}

// clock hands out consecutive call times.
type clock struct{ now int64 }

// call returns an event of op on path lasting dur ns, after the previous.
func (c *clock) call(op, path string, off, size, dur int64) tracefmt.Event {
	e := tracefmt.Event{Op: op, Path: path, Offset: off, Size: size, StartNs: c.now, EndNs: c.now + dur}
	if tracefmt.IsData(op) {
		e.Ret, e.Bytes = size, size
	} else {
		e.Offset = tracefmt.NoOffset
	}
	c.now += dur + 1000
	return e
}

// write writes the processes' traces into a new directory and returns
// their paths.
func write(t *testing.T, procs []proc) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, p := range procs {
		path := filepath.Join(dir, fmt.Sprintf("app.h.%d%s", 100+i, tracefmt.FileSuffix))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		h := tracefmt.Header{Program: "/home/u/app", Host: "h", PID: 100 + i, StartUnixNs: 1.7e18}
		if p.rank >= 0 {
			r := p.rank
			h.Rank = &r
		}
		w, err := tracefmt.NewWriter(f, h, tracefmt.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]uint32{}
		var end int64
		for _, e := range p.events {
			if e.Path != "" && ids[e.Path] == 0 {
				ids[e.Path] = uint32(len(ids) + 1)
				if err := w.File(tracefmt.File{ID: ids[e.Path], Path: e.Path}); err != nil {
					t.Fatal(err)
				}
			}
			e.FileID = ids[e.Path]
			e.Path = ""
			if err := w.Event(&e); err != nil {
				t.Fatal(err)
			}
			end = max(end, e.EndNs)
		}
		if err := w.Close(tracefmt.Footer{Reason: "exit", EndNs: end + 1000}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		paths = append(paths, path)
	}
	return paths
}

// findings runs the summary's pass with a collector over the processes.
func findings(t *testing.T, th Thresholds, procs ...proc) (map[string]Finding, *Collector) {
	t.Helper()
	c := NewCollector(th)
	if _, err := summary.Summarize(write(t, procs), summary.Options{Top: 5, Observer: c}); err != nil {
		t.Fatal(err)
	}
	out := map[string]Finding{}
	for _, f := range c.Findings() {
		if _, dup := out[f.ID]; dup {
			t.Fatalf("two findings %s", f.ID)
		}
		if f.Threshold == "" || len(f.Evidence) == 0 {
			t.Errorf("%s: no threshold or evidence: %+v", f.ID, f)
		}
		out[f.ID] = f
	}
	return out, c
}

// writes is n writes of size bytes on path, at offsets that step by
// stride (negative: backwards from the end), each lasting dur.
func writes(c *clock, path string, n int, size, stride, dur int64) []tracefmt.Event {
	var out []tracefmt.Event
	for i := range n {
		off := int64(i) * stride
		if stride < 0 {
			off = int64(n-1-i) * -stride
		}
		out = append(out, c.call("pwrite", path, off, size, dur))
	}
	return out
}

// Each check fires on a workload made to cross its threshold, with the
// severity, evidence and advice a person needs, and passes on the same
// workload kept below it.
func TestChecks(t *testing.T) {
	const ms = int64(1e6)
	open := func(c *clock, path string) tracefmt.Event { return c.call("open", path, 0, 0, 10000) }
	cases := []struct {
		name     string
		th       Thresholds
		procs    func() []proc
		id       string
		severity Severity
		evidence string // a piece of the evidence
	}{
		{"small writes", Thresholds{}, func() []proc {
			var c clock
			return []proc{{-1, append([]tracefmt.Event{open(&c, "/d/f")}, writes(&c, "/d/f", 1500, 100, 100, 1000)...)}}
		}, "small-writes", High, "1,500 of 1,500 write requests (100%) moved less than 1 MiB"},
		{"few small writes", Thresholds{}, func() []proc {
			var c clock
			return []proc{{-1, append([]tracefmt.Event{open(&c, "/d/f")}, writes(&c, "/d/f", 900, 100, 100, 1000)...)}}
		}, "small-writes", OK, "900 of 900"},
		{"large writes", Thresholds{}, func() []proc {
			var c clock
			return []proc{{-1, append([]tracefmt.Event{open(&c, "/d/f")}, writes(&c, "/d/f", 1500, 1<<20, 1<<20, 1000)...)}}
		}, "small-writes", OK, "0 of 1,500"},
		{"random writes", Thresholds{}, func() []proc {
			var c clock
			return []proc{{-1, append([]tracefmt.Event{open(&c, "/d/f")}, writes(&c, "/d/f", 1500, 4096, -8192, 1000)...)}}
		}, "random-writes", High, "1,499 go back"},
		{"strided writes", Thresholds{}, func() []proc {
			var c clock
			return []proc{{-1, append([]tracefmt.Event{open(&c, "/d/f")}, writes(&c, "/d/f", 1500, 4096, 8192, 1000)...)}}
		}, "random-writes", OK, "1,499 skip forward"},
		{"misaligned", Thresholds{}, func() []proc {
			var c clock
			return []proc{{-1, writes(&c, "/d/f", 200, 1000, 1000, 1000)}}
		}, "misaligned", High, "off a 4 KiB boundary"},
		{"aligned to a stripe", Thresholds{Align: 1 << 20}, func() []proc {
			var c clock
			return []proc{{-1, writes(&c, "/d/f", 200, 4096, 4096, 1000)}}
		}, "misaligned", High, "off a 1 MiB boundary"},
		{"aligned", Thresholds{}, func() []proc {
			var c clock
			return []proc{{-1, writes(&c, "/d/f", 200, 4096, 4096, 1000)}}
		}, "misaligned", OK, "0 of 200"},
		{"metadata share", Thresholds{}, func() []proc {
			var c clock
			ev := writes(&c, "/d/f", 10, 1<<20, 1<<20, ms)
			for range 150 {
				ev = append(ev, c.call("stat", "/d/f", 0, 0, ms))
			}
			return []proc{{-1, ev}}
		}, "metadata-heavy", Warning, "150 metadata calls (94% of its I/O time)"},
		{"metadata seconds", Thresholds{}, func() []proc {
			var c clock
			ev := writes(&c, "/d/f", 10, 1<<20, 1<<20, 100e9)
			ev = append(ev, c.call("stat", "/d/f", 0, 0, 31e9))
			return []proc{{-1, ev}}
		}, "metadata-heavy", High, "31.00 s in 1 metadata calls"},
		{"rank imbalance", Thresholds{}, func() []proc {
			var a, b clock
			return []proc{{0, writes(&a, "/d/a", 10, 1<<20, 1<<20, 100*ms)}, {1, writes(&b, "/d/b", 10, 1<<20, 1<<20, 50*ms)}}
		}, "rank-imbalance", High, "slowest rank 0: 1.00 s in I/O"},
		{"balanced ranks", Thresholds{}, func() []proc {
			var a, b clock
			return []proc{{0, writes(&a, "/d/a", 10, 1<<20, 1<<20, 100*ms)}, {1, writes(&b, "/d/b", 10, 1<<20, 1<<20, 95*ms)}}
		}, "rank-imbalance", OK, "fastest rank 1"},
		{"small imbalance in time", Thresholds{}, func() []proc {
			var a, b clock
			return []proc{{0, writes(&a, "/d/a", 10, 1<<20, 1<<20, ms)}, {1, writes(&b, "/d/b", 10, 1<<20, 1<<20, ms/2)}}
		}, "rank-imbalance", OK, "50% less"},
		{"shared file data imbalance", Thresholds{}, func() []proc {
			var a, b clock
			return []proc{{0, writes(&a, "/d/s", 4, 1<<20, 1<<20, ms)}, {1, writes(&b, "/d/s", 1, 1<<20, 1<<20, ms)}}
		}, "shared-file-imbalance", Warning, "/d/s: rank 0 moved 4 MiB, another process 1 MiB"},
		{"repeated opens", Thresholds{}, func() []proc {
			var c clock
			var ev []tracefmt.Event
			for range 11 {
				ev = append(ev, open(&c, "/d/f"), c.call("write", "/d/f", 0, 100, 1000), c.call("close", "/d/f", 0, 0, 1000))
			}
			return []proc{{-1, ev}}
		}, "repeated-opens", Warning, "/d/f opened 11 times by pid 100"},
		{"ten opens", Thresholds{}, func() []proc {
			var c clock
			var ev []tracefmt.Event
			for range 10 {
				ev = append(ev, open(&c, "/d/f"), c.call("close", "/d/f", 0, 0, 1000))
			}
			return []proc{{-1, ev}}
		}, "repeated-opens", OK, "at most 10 opens"},
		{"independent MPI-IO only", Thresholds{}, func() []proc {
			var out []proc
			for r := range 2 {
				var c clock
				ev := []tracefmt.Event{c.call("MPI_File_open", "/d/s", 0, 0, 1000)}
				for i := range 600 {
					ev = append(ev, c.call("MPI_File_write_at", "/d/s", int64(i*2+r)*4096, 4096, 1000))
				}
				out = append(out, proc{r, ev})
			}
			return out
		}, "no-collective", High, "1 shared files get only independent MPI-IO data calls"},
		{"collective MPI-IO", Thresholds{}, func() []proc {
			var out []proc
			for r := range 2 {
				var c clock
				ev := []tracefmt.Event{c.call("MPI_File_open", "/d/s", 0, 0, 1000)}
				for i := range 600 {
					ev = append(ev, c.call("MPI_File_write_at_all", "/d/s", int64(i*2+r)*4096, 4096, 1000))
				}
				out = append(out, proc{r, ev})
			}
			return out
		}, "no-collective", OK, "/d/s: 1,200 collective and 0 independent"},
		{"POSIX on shared files", Thresholds{}, func() []proc {
			var a, b clock
			return []proc{{0, writes(&a, "/d/s", 3, 4096, 4096, ms)}, {1, writes(&b, "/d/s", 3, 4096, 4096, ms)}}
		}, "no-mpiio", Warning, "1 files shared by ranks"},
		{"stdio", Thresholds{}, func() []proc {
			var c clock
			ev := writes(&c, "/d/f", 1, 4096, 4096, ms)
			for range 10 {
				ev = append(ev, c.call("fwrite", "/d/g", 0, 4096, ms))
			}
			return []proc{{-1, ev}}
		}, "stdio", Warning, "stdio moved 40 KiB of 44 KiB (91%)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs, _ := findings(t, tc.th, tc.procs()...)
			f, ok := fs[tc.id]
			if !ok {
				t.Fatalf("no finding %s among %v", tc.id, fs)
			}
			if f.Severity != tc.severity {
				t.Errorf("%s: severity %s, want %s: %q", tc.id, f.Severity, tc.severity, f.Evidence)
			}
			if !strings.Contains(strings.Join(f.Evidence, "\n"), tc.evidence) {
				t.Errorf("%s: evidence %q lacks %q", tc.id, f.Evidence, tc.evidence)
			}
			if (f.Severity == High || f.Severity == Warning) && len(f.Advice) == 0 {
				t.Errorf("%s: a problem without advice", tc.id)
			}
		})
	}
}

// The findings come problems first, then information, then passed
// checks; every check appears once.
func TestFindingsOrder(t *testing.T) {
	var c clock
	fs, col := findings(t, Thresholds{}, proc{-1, writes(&c, "/d/f", 1500, 100, -100, 1000)})
	if len(fs) != 12 {
		t.Errorf("%d findings, want 12 checks", len(fs))
	}
	list := col.Findings()
	for i := 1; i < len(list); i++ {
		if list[i].Severity.rank() < list[i-1].Severity.rank() {
			t.Errorf("%s (%s) after %s (%s)", list[i].ID, list[i].Severity, list[i-1].ID, list[i-1].Severity)
		}
	}
}

// The collector splits time as Darshan does (syncs are write time,
// opens and stats metadata, MPI_Init neither), counts a nonblocking
// read once, at its completion, and bins request sizes by Darshan's bins.
func TestCollectorFigures(t *testing.T) {
	var c clock
	ev := []tracefmt.Event{
		c.call("MPI_Init", "", 0, 0, 5e6),
		c.call("open", "/d/f", 0, 0, 100),
		c.call("pwrite", "/d/f", 0, 50, 1000),
		c.call("pwrite", "/d/f", 4096, 2<<20, 2000),
		c.call("fsync", "/d/f", 0, 0, 300),
	}
	st := c.call("MPI_File_iread_at", "/d/f", 0, 50, 400)
	st.Layer, st.Seq, st.Ret, st.Bytes = tracefmt.LayerMPIIO, 7, 0, 0
	wait := c.call("MPI_Wait", "/d/f", 0, 0, 500)
	wait.Parent, wait.Bytes, wait.Offset = 7, 50, 0
	ev = append(ev, st, wait, c.call("MPI_Finalize", "", 0, 0, 3e6))
	_, col := findings(t, Thresholds{}, proc{0, ev})
	p := col.Procs[0]
	if p.MetaNs != 100 || p.WriteNs != 3300 || p.ReadNs != 900 || p.MPIStartNs != 5e6 || p.MPIEndNs != 3e6 {
		t.Errorf("times %+v, MPI %d %d", p.Times, p.MPIStartNs, p.MPIEndNs)
	}
	if p.Reads != 1 || p.Writes != 2 || p.BytesRead != 50 || p.BytesWritten != 50+2<<20 || p.Opens != 1 {
		t.Errorf("counts %+v", p)
	}
	f := col.Files["/d/f"]
	if f.Write.Sizes[0] != 1 || f.Write.Sizes[5] != 1 || f.Write.Forward != 1 || f.MPIRead.Nonblocking != 1 {
		t.Errorf("file %+v", f)
	}
	if sizes := col.CommonSizes(true, 5); len(sizes) != 2 {
		t.Errorf("common sizes %v", sizes)
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Count(1234567), "1,234,567"}, {Count(12), "12"}, {Pct(1, 3), "33%"}, {Pct(1, 300), "0.33%"}, {Pct(1, 0), "-"},
		{Size(1 << 20), "1 MiB"}, {Size(1536), "1.5 KiB"}, {Size(16), "16 B"},
		{Dur(1500), "1.5 µs"}, {Dur(2_500_000), "2.50 ms"}, {Dur(3e9), "3.00 s"}, {Dur(125e9), "2m5s"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// addHeatmap puts each rank's heatmap on the job's grid: bins of one log
// add up; a log that started two bins later lands two bins later; one
// that started earlier moves the grid's start back; a coarser width
// merges the finer bins; a width that is no whole multiple is refused
// and leaves the signal as it was.
func TestAddHeatmap(t *testing.T) {
	const w, t0 = int64(100), int64(1_000_000)
	type add struct {
		t0, w         int64
		writes, reads []int64
		ok            bool
	}
	for _, c := range []struct {
		name          string
		adds          []add
		start, width  int64
		writes, reads []int64
	}{
		{"ranks of one log", []add{{t0, w, []int64{1, 2}, []int64{0, 5}, true}, {t0, w, []int64{3, 0, 4}, []int64{1, 1, 1}, true}},
			t0, w, []int64{4, 2, 4}, []int64{1, 6, 1}},
		{"a later log", []add{{t0, w, []int64{1}, []int64{0}, true}, {t0 + 2*w, w, []int64{7}, []int64{0}, true}},
			t0, w, []int64{1, 0, 7}, []int64{0, 0, 0}},
		{"an earlier log", []add{{t0, w, []int64{1}, []int64{0}, true}, {t0 - w, w, []int64{7}, []int64{2}, true}},
			t0 - w, w, []int64{7, 1}, []int64{2, 0}},
		{"a coarser width", []add{{t0, w, []int64{1, 2, 3}, []int64{0, 0, 0}, true}, {t0, 2 * w, []int64{5}, []int64{1}, true}},
			t0, 2 * w, []int64{8, 3}, []int64{1, 0}},
		{"a finer width", []add{{t0, 2 * w, []int64{5}, []int64{1}, true}, {t0, w, []int64{1, 2, 3}, nil, true}},
			t0, 2 * w, []int64{8, 3}, []int64{1, 0}},
		{"no whole multiple", []add{{t0, 2 * w, []int64{5}, []int64{1}, true}, {t0, 3 * w, []int64{9}, []int64{9}, false}},
			t0, 2 * w, []int64{5}, []int64{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := NewCollector(Thresholds{})
			for i, a := range c.adds {
				if ok := col.addHeatmap(a.t0, a.w, a.writes, a.reads); ok != a.ok {
					t.Errorf("add %d: %v, want %v", i, ok, a.ok)
				}
			}
			h := col.Heatmap
			if h.StartUnixNs != c.start || h.WidthNs != c.width || !slices.Equal(h.Write, c.writes) || !slices.Equal(h.Read, c.reads) {
				t.Errorf("signal from %d in bins of %d: writes %v reads %v; want from %d in %d: %v %v",
					h.StartUnixNs, h.WidthNs, h.Write, h.Read, c.start, c.width, c.writes, c.reads)
			}
		})
	}
}

// A copy_file_range reads its event's file and writes the file in Aux:
// the process's and the output file's written bytes, the write signal and
// the output file's requests count its bytes, as the summary's do.
func TestCopyFileRangeWritesItsTarget(t *testing.T) {
	var c clock
	out := c.call("openat", "/d/out", 0, 0, 100)
	copied := c.call("copy_file_range", "/d/in", 0, 700, 400)
	copied.Aux = 1 // /d/out, the first path the trace defines
	_, col := findings(t, Thresholds{}, proc{-1, []tracefmt.Event{out, copied}})
	p := col.Procs[0]
	if p.BytesRead != 700 || p.BytesWritten != 700 {
		t.Errorf("process read %d, wrote %d; want 700 and 700", p.BytesRead, p.BytesWritten)
	}
	f := col.Files["/d/out"]
	if f == nil || f.Write.Requests != 1 || f.Write.Bytes != 700 || f.Procs[0] == nil || f.Procs[0].BytesWritten != 700 {
		t.Fatalf("output file %+v", f)
	}
	if in := col.Files["/d/in"]; in.Read.Bytes != 700 || in.Write.Bytes != 0 {
		t.Errorf("input file read %d, written %d", in.Read.Bytes, in.Write.Bytes)
	}
	if sizes := col.CommonSizes(true, 5); len(sizes) != 1 || sizes[0].Size != 700 {
		t.Errorf("common write sizes %v", sizes)
	}
}

package dftracer

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"iopred/tests/fuzzinput"
	"iopred/tracefmt"
)

// read reads a trace to its end through tracefmt: header, events, the
// footer and the error it ends with (nil at a clean end).
func read(t *testing.T, name string) (tracefmt.Header, []*tracefmt.Event, *tracefmt.Footer, error) {
	t.Helper()
	s, err := tracefmt.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var events []*tracefmt.Event
	var footer *tracefmt.Footer
	err = s.Each(func(r tracefmt.Record) error {
		if r.Event != nil {
			events = append(events, r.Event)
		}
		if r.Footer != nil {
			footer = r.Footer
		}
		return nil
	})
	return s.Header(), events, footer, err
}

// brief prints events as "op@offset/bytes", offset "-" when unknown.
func brief(events []*tracefmt.Event) string {
	var b strings.Builder
	for i, e := range events {
		if i > 0 {
			b.WriteByte(' ')
		}
		off := "-"
		if e.Offset != tracefmt.NoOffset {
			off = fmt.Sprint(e.Offset)
		}
		fmt.Fprintf(&b, "%s@%s/%d", e.Op, off, e.Bytes)
	}
	return b.String()
}

// TestCurrentShape proves, on a trace in DFTracer 1.0's shape, plain and
// gzipped in two members, that the header comes from the metadata events
// (host, command line, rank, parent, version) and the first event's time,
// that only the POSIX and STDIO calls become events, in file order, with
// their file names from the hashes, the sizes and bytes of their
// arguments (fwrite: items times item size), the offsets they give and
// those that the opens, seeks and earlier transfers imply, times in
// nanoseconds from the first event, and a footer at the last call's end.
func TestCurrentShape(t *testing.T) {
	for _, name := range []string{"testdata/app-1234.pfw", "testdata/app-1234.pfw.gz"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			h, events, footer, err := read(t, name)
			if err != nil {
				t.Fatal(err)
			}
			if h.PID != 1234 || h.PPID != 1200 || h.Rank == nil || *h.Rank != 2 || h.Host != "node07" || h.Program != "python3" ||
				strings.Join(h.Args, " ") != "python3 train.py --epochs 2" || h.Source != "dftracer 100005" || h.StartUnixNs != 1727387300000000000 {
				t.Errorf("header %+v", h)
			}
			want := "opendir@-/0 __xstat64@-/0 open64@-/0 read@0/4096 read@4096/4096 read@8192/4096 lseek64@0/0 read@0/4096 " +
				"pread64@65536/1024 read@4096/0 close@-/0 open@-/0 write@0/8192 write@8192/8192 pwrite64@0/100 fsync@-/0 close@-/0 " +
				"fopen@-/0 fwrite@0/120 fwrite@120/80 fseek@0/0 fwrite@0/5 fclose@-/0"
			if got := brief(events); got != want {
				t.Errorf("events\n got %s\nwant %s", got, want)
			}
			var read, written int64
			var flow tracefmt.DataFlow
			for _, e := range events {
				switch flow.Of(e) {
				case tracefmt.Read:
					read += e.Bytes
				case tracefmt.Write:
					written += e.Bytes
				}
			}
			if read != 4*4096+1024 || written != 2*8192+100+120+80+5 {
				t.Errorf("%d bytes read, %d written", read, written)
			}
			first, fw := events[0], events[19]
			if first.Path != "/data/train" || first.StartNs != 100_000 || first.EndNs != 120_000 || first.Tid != 1234 || first.Layer != tracefmt.LayerPOSIX {
				t.Errorf("first event %+v", first)
			}
			if fw.Path != "/data/log.txt" || fw.Size != 80 || fw.Ret != 10 || fw.Layer != tracefmt.LayerStdio {
				t.Errorf("second fwrite %+v", fw)
			}
			if events[11].Aux != 65 || events[6].Aux != 0 {
				t.Errorf("open flags %d, lseek whence %d", events[11].Aux, events[6].Aux)
			}
			if footer == nil || footer.EndNs != 4_530_000 || footer.Events != 23 {
				t.Errorf("footer %+v", footer)
			}
		})
	}
}

// TestOlderShape proves the older shape: numbers written as strings, file
// and host names in each event's arguments, lines ending with a comma, no
// closing "]"; a descriptor opened before the trace started has no known
// position.
func TestOlderShape(t *testing.T) {
	h, events, footer, err := read(t, "testdata/old-5678.pfw")
	if err != nil {
		t.Fatal(err)
	}
	if h.PID != 5678 || h.Host != "corona12" || h.Rank != nil || h.StartUnixNs != 1698080323775554000 {
		t.Errorf("header %+v", h)
	}
	want := "__lxstat@-/0 open@-/0 write@0/3276800 write@3276800/3276800 close@-/0 read@-/65536 remove@-/0"
	if got := brief(events); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if events[5].Tid != 5680 || events[2].Path != "/p/lustre1/run/data/file_0.bat" || footer == nil {
		t.Errorf("read %+v, footer %v", events[5], footer)
	}
}

// TestSeveralProcesses proves that a file holding the calls of two
// processes lists one trace per process, each with its own calls, and
// that a child reading through a descriptor it inherited has no known
// offset.
func TestSeveralProcesses(t *testing.T) {
	path := "testdata/forked-9000.pfw"
	names, err := tracefmt.Discover(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, " ") != path+"#pid9000 "+path+"#pid9001" {
		t.Fatalf("names %v", names)
	}
	h, events, _, err := read(t, names[0])
	if err != nil || h.PID != 9000 || h.Host != "gpu03" || brief(events) != "open64@-/0 read@0/512 read@512/512" {
		t.Errorf("parent: %v, %+v, %s", err, h, brief(events))
	}
	h, events, _, err = read(t, names[1])
	if err != nil || h.PID != 9001 || brief(events) != "read@-/512 close@-/0" {
		t.Errorf("child: %v, %+v, %s", err, h, brief(events))
	}
	if _, err := tracefmt.Open(path); err == nil || !strings.Contains(err.Error(), "2 processes") {
		t.Errorf("opened without a process: %v", err)
	}
	if _, err := tracefmt.Open(path + "#pid1"); err == nil || !strings.Contains(err.Error(), `no process "pid1"`) {
		t.Errorf("a process the file lacks: %v", err)
	}
}

// TestCutAndCorrupt proves that a trace cut inside a line (plain or
// gzipped) yields every complete call and then a *tracefmt.TruncatedError
// naming the line, that a line that is not an event gives a *LineError
// with its line number after the calls before it, and that an empty file
// is a trace without calls.
func TestCutAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/app-1234.pfw")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cutAt := bytes.Index(data, []byte(`{"id":25,`)) + 40 // inside line 26
	_, events, footer, err := read(t, write("cut.pfw", data[:cutAt]))
	var te *tracefmt.TruncatedError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "line 26") || len(events) != 13 || footer != nil {
		t.Errorf("cut: %v after %d events, footer %v", err, len(events), footer)
	}
	gz, err := os.ReadFile("testdata/app-1234.pfw.gz")
	if err != nil {
		t.Fatal(err)
	}
	_, events, _, err = read(t, write("cut.pfw.gz", gz[:len(gz)-200]))
	if !errors.As(err, &te) || len(events) == 0 {
		t.Errorf("cut gzip: %v after %d events", err, len(events))
	}
	bad := bytes.Replace(data, []byte(`{"id":25,`), []byte(`{"id":25 oops`), 1)
	_, events, _, err = read(t, write("bad.pfw", bad))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 26 || !strings.HasSuffix(le.File, "bad.pfw") || len(events) != 13 {
		t.Errorf("corrupt line: %v after %d events", err, len(events))
	}
	long := append([]byte(`{"name":"`), bytes.Repeat([]byte("x"), MaxLine+10)...)
	if _, _, _, err = read(t, write("long.pfw", long)); !errors.As(err, &le) || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a line without end: %v", err)
	}
	h, events, footer, err := read(t, write("empty.pfw", nil))
	if err != nil || len(events) != 0 || footer == nil || h.Source != "dftracer" {
		t.Errorf("empty trace: %v, %d events, footer %v", err, len(events), footer)
	}
}

// TestSniff proves that a DFTracer trace is recognised by its content
// whatever its name, and that other JSON is not taken for one.
func TestSniff(t *testing.T) {
	data, err := os.ReadFile("testdata/app-1234.pfw")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "trace.txt")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, events, _, err := read(t, p); err != nil || len(events) != 23 {
		t.Errorf("renamed trace: %v, %d events", err, len(events))
	}
	for _, head := range []string{`{"k":"h","v":1}`, `[1,2,3]`, `{"bandwidth":{"b_rank_avr":[1]}}`, ""} {
		if Sniff([]byte(head)) {
			t.Errorf("Sniff(%q) = true", head)
		}
	}
}

// FuzzLines feeds the reader arbitrary bytes, from the fixtures: it must
// never panic or hang, and every trace it lists must read to an end with
// io.EOF, a truncation or a *LineError.
func FuzzLines(f *testing.F) {
	// Small seeds: Go's fuzzer minimises each input that finds new code at
	// a cost quadratic in its length (tests/fuzzinput), and the whole
	// fixtures kept it minimising for minutes. Each seed is a few lines:
	// a file's hash, its open and a read; the start of the older, the
	// forked, the fork pool's and DFTracer 2's fixtures; the first seed
	// gzipped. testdata/fuzz/FuzzLines keeps a fork pool's records with
	// and without return values.
	app, err := os.ReadFile(filepath.Join("testdata", "app-1234.pfw"))
	if err != nil {
		f.Fatal(err)
	}
	appLines := bytes.SplitAfter(app, []byte("\n"))
	openRead := bytes.Join([][]byte{appLines[0], appLines[10], appLines[12], appLines[13]}, nil)
	f.Add(openRead)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(openRead)
	zw.Close()
	f.Add(gz.Bytes())
	for _, name := range []string{"old-5678.pfw", "forked-9000.pfw", "pool-1.0-7000.pfw", "v2-8100.pfw"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(fuzzinput.Lines(data, 5))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lr, err := newLines(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		m, _ := scanLines(lr)
		pids := append([]int64{-1}, m.pids...)
		for _, pid := range pids {
			lr, err := newLines(bytes.NewReader(data), "fuzz")
			if err != nil {
				t.Fatal(err)
			}
			s := newStream(m, lr, pid)
			for {
				_, err := s.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					var te *tracefmt.TruncatedError
					var le *LineError
					if !errors.As(err, &te) && !errors.As(err, &le) {
						t.Fatalf("ends with %v", err)
					}
					break
				}
			}
		}
	})
}

// TestProgramFromExecHash proves that a process is named after the
// executable DFTracer's metadata names (exec_hash), not after a word of
// its command line, which stays the arguments.
func TestProgramFromExecHash(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "app-1234.pfw"))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"name":"python3","value":14683`), []byte(`"name":"/usr/bin/python3.11","value":14683`), 1)
	path := filepath.Join(t.TempDir(), "app.pfw")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := tracefmt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if h := s.Header(); h.Program != "/usr/bin/python3.11" || strings.Join(h.Args, " ") != "python3 train.py --epochs 2" {
		t.Errorf("program %q, args %q", h.Program, h.Args)
	}
}

// records reads a trace to its end and returns its header, events,
// regions and process records.
func records(t *testing.T, name string) (tracefmt.Header, []*tracefmt.Event, []*tracefmt.Region, []*tracefmt.Proc) {
	t.Helper()
	s, err := tracefmt.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var events []*tracefmt.Event
	var regions []*tracefmt.Region
	var procs []*tracefmt.Proc
	err = s.Each(func(r tracefmt.Record) error {
		switch {
		case r.Event != nil:
			events = append(events, r.Event)
		case r.Region != nil:
			regions = append(regions, r.Region)
		case r.Proc != nil:
			procs = append(procs, r.Proc)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s.Header(), events, regions, procs
}

// TestForkedWithoutExec proves that the workers a process forks without
// exec, which DFTracer 1.x records under the parent's pid with their own
// thread ids, are processes of their own: each with its parent, fork
// time, program and command line, its descriptors apart from the
// others' (two workers writing through descriptor 5 at once each write
// 0, 64 KiB, 128 KiB), and the parent with a fork record per child. With
// the thread ids left out (DFTRACER_DISABLE_TIDS) nothing tells the
// workers apart: one process, and a note that says so.
func TestForkedWithoutExec(t *testing.T) {
	data, err := os.ReadFile("testdata/pool-1.0-7000.pfw")
	if err != nil {
		t.Fatal(err)
	}
	noTids := bytes.ReplaceAll(bytes.ReplaceAll(data, []byte(`"tid":7001`), []byte(`"tid":0`)), []byte(`"tid":7002`), []byte(`"tid":0`))
	noTids = bytes.ReplaceAll(noTids, []byte(`"tid":7000`), []byte(`"tid":0`))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notids.pfw"), noTids, 0o644); err != nil {
		t.Fatal(err)
	}
	worker := "open64@-/0 write@0/65536 write@65536/65536 write@131072/65536 close@-/0"
	for _, c := range []struct {
		name     string
		path     string
		procs    []string // the trace names' process parts
		events   []string // brief(events) per process
		forks    []int    // the parent's fork records' children
		forkedAt []int64  // each process's ForkUnixNs
		note     string   // a note every process's header has
	}{
		{"thread ids kept", "testdata/pool-1.0-7000.pfw", []string{"pid7000", "pid7001", "pid7002"},
			[]string{"", worker, worker}, []int{7001, 7002}, []int64{0, 1728000000000100000, 1728000000000200000}, ""},
		{"thread ids left out", filepath.Join(dir, "notids.pfw"), nil,
			[]string{"open64@-/0 open64@-/0 write@0/65536 write@65536/65536 write@131072/65536 write@196608/65536 write@262144/65536 write@327680/65536 close@-/0 close@-/0"},
			[]int{7001, 7002}, []int64{0}, "without thread ids"},
	} {
		t.Run(c.name, func(t *testing.T) {
			names, err := tracefmt.Discover(c.path)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{c.path}
			if c.procs != nil {
				want = nil
				for _, p := range c.procs {
					want = append(want, c.path+"#"+p)
				}
			}
			if strings.Join(names, " ") != strings.Join(want, " ") {
				t.Fatalf("traces %v, want %v", names, want)
			}
			for i, name := range names {
				h, events, regions, procs := records(t, name)
				if got := brief(events); got != c.events[i] {
					t.Errorf("%s: events\n got %s\nwant %s", name, got, c.events[i])
				}
				if h.ForkUnixNs != c.forkedAt[i] || h.Program != "python3" || strings.Join(h.Args, " ") != "/usr/bin/python3 pool.py /scratch/out" || h.Host != "node3" {
					t.Errorf("%s: header %+v", name, h)
				}
				if i == 0 {
					var children []int
					for _, p := range procs {
						children = append(children, p.Child)
					}
					if fmt.Sprint(children) != fmt.Sprint(c.forks) || len(regions) != 1 || regions[0].Name != "pool.map" || h.PPID != 6999 {
						t.Errorf("parent: forks %v, regions %d, ppid %d", children, len(regions), h.PPID)
					}
				} else if h.PPID != 7000 || h.PID != 7000+i || len(procs) != 0 {
					t.Errorf("%s: pid %d, ppid %d, %d process records", name, h.PID, h.PPID, len(procs))
				}
				if c.note != "" && !strings.Contains(strings.Join(h.Notes, " "), c.note) {
					t.Errorf("%s: notes %q", name, h.Notes)
				}
			}
		})
	}
}

// TestVersion2Shape proves that DFTracer 2's shape reads as 1.0's does:
// phases as numbers (1 complete, 2 counter, 3 aggregated, 4 metadata),
// hashes as hexadecimal strings, the "type" column; a child forked from
// the traced process writes its own file, with its parent in its start
// event. Counter and aggregated records are not calls: left out, with a
// note. The application's events are regions with their arguments.
func TestVersion2Shape(t *testing.T) {
	h, events, regions, procs := records(t, "testdata/v2-8100.pfw")
	if h.PID != 8100 || h.PPID != 8000 || h.Host != "lassen12" || h.Program != "train.py" || h.Source != "dftracer v2.0.2" ||
		strings.Join(h.Args, " ") != "/usr/bin/python3 train.py --epochs 2" || h.StartUnixNs != 1760000000000000000 {
		t.Errorf("header %+v", h)
	}
	if got, want := brief(events), "open64@-/0 read@0/4096 read@4096/4096 read@8192/100 close@-/0"; got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if events[1].Path != "/data/shard_0.npz" {
		t.Errorf("path %q", events[1].Path)
	}
	if len(procs) != 1 || procs[0].Op != "fork" || procs[0].Child != 8101 || procs[0].TimeNs != 2_300_000 {
		t.Errorf("process records %+v", procs)
	}
	if len(regions) != 2 || regions[1].Name != "step" || regions[1].Category != "PyTorch" || regions[1].StartNs != 1_300_000 ||
		regions[1].EndNs != 2_200_000 || fmt.Sprint(regions[1].Args) != "map[epoch:1 image_idx:[3,9] step:1]" {
		t.Errorf("regions %+v", regions)
	}
	if !strings.Contains(strings.Join(h.Notes, " "), "counter and aggregated records") {
		t.Errorf("notes %q", h.Notes)
	}
	h, events, _, _ = records(t, "testdata/v2-8101-fork.pfw")
	if h.PID != 8101 || h.PPID != 8100 || brief(events) != "open64@-/0 write@0/65536 write@65536/65536" {
		t.Errorf("child: %+v %s", h, brief(events))
	}
}

// TestWithoutMetadata proves that a trace made with DFTracer's default
// settings (DFTRACER_INC_METADATA unset: no arguments, so no sizes, no
// paths, no command line, no fork's return value) says so in its
// headers' notes, names its processes after the executable in DFTracer
// 1.x's file name, and still tells the forked workers apart: parent and
// child record the fork with one start time, and the child's record is
// the first call of its thread.
func TestWithoutMetadata(t *testing.T) {
	data, err := os.ReadFile("testdata/pool-1.0-7000.pfw")
	if err != nil {
		t.Fatal(err)
	}
	bare := regexp.MustCompile(`,"args":\{[^}]*\}`).ReplaceAll(data, nil)
	bare = regexp.MustCompile(`(?m)^.*"ph":"M".*\n`).ReplaceAll(bare, nil)
	path := filepath.Join(t.TempDir(), "trace-pool.py-7000-preload.pfw")
	if err := os.WriteFile(path, bare, 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := tracefmt.Discover(path)
	if err != nil || len(names) != 3 {
		t.Fatalf("traces %v, %v", names, err)
	}
	for i, name := range names {
		h, events, _, _ := records(t, name)
		want := 5 // open, 3 writes, close
		if i == 0 {
			want = 0
		}
		if len(events) != want || h.PID != 7000+i || h.Program != "pool.py" || len(h.Notes) != 1 ||
			!strings.Contains(h.Notes[0], "no sizes and file paths") || !strings.Contains(h.Notes[0], "DFTRACER_INC_METADATA=1") {
			t.Errorf("%s: %d events, pid %d, program %q, notes %q", name, len(events), h.PID, h.Program, h.Notes)
		}
	}
}

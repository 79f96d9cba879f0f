package darshan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// readStream reads a trace to its end: its records and the error it ends
// with (nil at a clean end).
func readStream(t *testing.T, name string) (tracefmt.Header, []tracefmt.Record, error) {
	t.Helper()
	s, err := tracefmt.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var recs []tracefmt.Record
	err = s.Each(func(r tracefmt.Record) error { recs = append(recs, r); return nil })
	return s.Header(), recs, err
}

// TestStreamsOfADXTLog proves that a DXT log of 32 ranks reads as 32
// traces, one per rank, whose header carries the rank, host, job and
// source; that each holds an event per DXT segment of its rank in order
// of start and a counters record per counter record of its rank; that
// every POSIX call of the test file lies inside an MPI-IO call and names
// it as parent, so that the bytes each rank moved are counted once: its 4
// writes and 4 reads of 16 MiB.
func TestStreamsOfADXTLog(t *testing.T) {
	path := fixture(t, "treddy_mpi-io-test_*.darshan")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	names, err := tracefmt.Discover(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 32 || names[0] != path+"#r0" || names[31] != path+"#r31" {
		t.Fatalf("Discover: %d names, %v ...", len(names), names[:2])
	}
	for r, name := range names {
		h, recs, err := readStream(t, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.Rank == nil || *h.Rank != r || h.JobID != "4373053" || h.Procs != 32 || h.Host == "" ||
			h.Source != "darshan 3.2.1, log format 3.21" || h.Program != "mpi-io-test" || h.StartUnixNs != l.Job.Start.UnixNano() {
			t.Errorf("%s: header %+v", name, h)
		}
		var segs, counters, events int
		for _, d := range l.DXT {
			if d.Rank == int64(r) {
				segs += len(d.Writes) + len(d.Reads)
			}
		}
		for _, rec := range l.Records {
			if rec.Rank == int64(r) {
				counters++
			}
		}
		var flow tracefmt.DataFlow
		var read, written, last int64
		seqs := map[int64]bool{}
		for _, rec := range recs {
			switch {
			case rec.Counters != nil:
				counters--
			case rec.Event != nil:
				e := rec.Event
				events++
				if e.StartNs < last {
					t.Fatalf("%s: events out of order", name)
				}
				last = e.StartNs
				if e.Seq != 0 {
					seqs[e.Seq] = true
				}
				if e.Layer == tracefmt.LayerPOSIX && strings.HasSuffix(e.Path, "/test.out") && !seqs[e.Parent] {
					t.Errorf("%s: POSIX %s at %d without its MPI-IO parent", name, e.Op, e.Offset)
				}
				switch flow.Of(e) {
				case tracefmt.Read:
					read += e.Bytes
				case tracefmt.Write:
					if strings.HasSuffix(e.Path, "/test.out") {
						written += e.Bytes
					}
				}
			}
		}
		if events != segs || counters != 0 {
			t.Errorf("%s: %d events for %d segments, %d counter records left", name, events, segs, counters)
		}
		if read != 64<<20 || written != 64<<20 {
			t.Errorf("%s: %d bytes read and %d written once, want 64 MiB each", name, read, written)
		}
		if f := recs[len(recs)-1].Footer; f == nil || f.EndNs != int64(l.Runtime()) || int(f.Events) != events {
			t.Errorf("%s: last record %+v", name, recs[len(recs)-1])
		}
	}
}

// TestStreamsSharedAndSingle proves that the files Darshan reduced over
// all ranks make a trace of their own ("#shared", rank unknown) whose
// counters say how many processes they cover, after one trace per rank
// with records of its own in rank order, that a one-process log is
// one trace named by its path, and that a log is recognised by its
// content whatever its name.
func TestStreamsSharedAndSingle(t *testing.T) {
	path := fixture(t, "sample.darshan")
	names, err := tracefmt.Discover(path)
	if err != nil {
		t.Fatal(err)
	}
	// The ranks that wrote to stdout (every 16th) have a STDIO record each.
	if len(names) != 129 || names[0] != path+"#r0" || names[1] != path+"#r16" || names[128] != path+"#shared" {
		t.Fatalf("%d names: %v ...", len(names), names[:3])
	}
	h, recs, err := readStream(t, names[128])
	if err != nil || h.Rank != nil {
		t.Fatalf("shared: %v, rank %v", err, h.Rank)
	}
	var layers []string
	for _, r := range recs {
		if c := r.Counters; c != nil {
			layers = append(layers, string(c.Layer))
			if c.Procs != 2048 || c.Path != "/scratch2/scratchdirs/glock/tokioabc-s.4478544/vpicio/vpicio.hdf5" {
				t.Errorf("shared counters %+v", c)
			}
		}
		if r.Event != nil {
			t.Errorf("an event in a log without DXT: %+v", r.Event)
		}
	}
	if strings.Join(layers, " ") != "posix mpiio lustre" {
		t.Errorf("shared counters of layers %v", layers)
	}
	_, recs, err = readStream(t, names[0])
	if err != nil {
		t.Fatal(err)
	}
	var calls uint64
	for _, r := range recs {
		if c := r.Counters; c != nil {
			if c.Layer != tracefmt.LayerStdio || c.Procs != 0 {
				t.Errorf("rank 0 counters %+v", c)
			}
			calls += c.Calls["fwrite"]
		}
	}
	if calls == 0 {
		t.Error("rank 0's STDIO counters count no fwrite")
	}

	single := fixture(t, "nonmpi_dxt_anonymized.darshan")
	names, err = tracefmt.Discover(single)
	if err != nil || len(names) != 1 || names[0] != single {
		t.Errorf("one-process log: %v, %v", names, err)
	}
	data, err := os.ReadFile(single)
	if err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(t.TempDir(), "log.bin")
	if err := os.WriteFile(renamed, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h, recs, err = readStream(t, renamed)
	if err != nil || h.Source == "" || len(recs) < 17652 {
		t.Errorf("a log named log.bin: %v, header %+v, %d records", err, h, len(recs))
	}
}

// TestStreamOpenErrors proves the messages for a process the log does not
// hold and for a log of several processes opened without naming one.
func TestStreamOpenErrors(t *testing.T) {
	path := fixture(t, "treddy_mpi-io-test_*.darshan")
	if _, err := tracefmt.Open(path + "#r99"); err == nil || !strings.Contains(err.Error(), `no process "r99"`) || !strings.Contains(err.Error(), "r0, r1") {
		t.Errorf("r99: %v", err)
	}
	if _, err := openStream(path, ""); err == nil || !strings.Contains(err.Error(), "32 processes") {
		t.Errorf("no process named: %v", err)
	}
}

// TestStreamEnds proves how a trace of a damaged log ends: after every
// record read, with a *tracefmt.TruncatedError when the log is cut short
// or a module ran out of memory (Offset -1), with the *Error of a corrupt
// region.
func TestStreamEnds(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	spec, _ := synthetic("3.41", binary.LittleEndian, 0, 1)
	whole := spec.Bytes()
	cut := write("cut.darshan", whole[:len(whole)-40])
	var te *tracefmt.TruncatedError
	if _, recs, err := readStream(t, cut+"#r0"); !errors.As(err, &te) || te.Offset <= 0 || !strings.Contains(te.Reason, "DXT_MPIIO module region") || len(recs) == 0 {
		t.Errorf("cut log: %v after %d records", err, len(recs))
	}
	if h, _, _ := readStream(t, cut+"#r1"); !strings.Contains(h.Partial, "DXT_MPIIO module region") {
		t.Errorf("cut log's header: partial %q", h.Partial)
	}
	spec.Partial = 1 << 10 // DXT_POSIX
	partial := write("partial.darshan", spec.Bytes())
	if h, _, err := readStream(t, partial+"#r1"); !errors.As(err, &te) || te.Offset != -1 || !strings.Contains(err.Error(), "ran out of memory for DXT_POSIX") ||
		!strings.Contains(h.Partial, "ran out of memory for DXT_POSIX") || !slices.Contains(h.Job.Modules, "DXT_POSIX (partial)") {
		t.Errorf("partial log: %v, header %+v", err, h)
	}
	if h, _, _ := readStream(t, write("whole.darshan", whole)+"#r0"); h.Partial != "" {
		t.Errorf("whole log marked partial: %q", h.Partial)
	}
	spec.Partial = 0
	spec.Modules[0].Version = 99
	corrupt := write("corrupt.darshan", spec.Bytes())
	var e *Error
	if _, _, err := readStream(t, corrupt+"#r1"); !errors.As(err, &e) || e.Region != "POSIX module" {
		t.Errorf("corrupt log: %v", err)
	}
}

// TestStreamJobHeader proves that every trace of a log carries the job as
// Darshan recorded it (uid, command line, start, end, run time by
// Darshan's convention, format, library version, modules), and that only
// the trace of the records all ranks shared is marked shared.
func TestStreamJobHeader(t *testing.T) {
	path := fixture(t, "mpi-io-test-x86_64-3.4.7.darshan")
	names, err := tracefmt.Discover(path)
	if err != nil || len(names) != 2 {
		t.Fatalf("%v %v", names, err)
	}
	for _, n := range names {
		h, _, err := readStream(t, n)
		if err != nil {
			t.Fatal(err)
		}
		j := h.Job
		if j == nil || j.UID != 31074 || j.StartUnixNs/1e9 != 1746769033 || j.RunNs/1e5 != 721 || j.FormatVersion != "3.41" || j.Library != "3.4.7" ||
			strings.Join(j.Modules, ",") != "POSIX,MPI-IO,LUSTRE,STDIO,APMPI,HEATMAP" || !strings.HasSuffix(j.CommandLine, "mpi-io-test.tmp.dat") {
			t.Errorf("%s: job %+v", n, j)
		}
		if h.Shared != strings.HasSuffix(n, "#shared") || h.Procs != 4 || h.JobID != "4708475" {
			t.Errorf("%s: shared %v, procs %d, job %s", n, h.Shared, h.Procs, h.JobID)
		}
	}
}

// TestStreamThreadsAndParents proves, on a 3.41 log with pthread ids,
// that threads become small ids in order of appearance and that a POSIX
// call takes as parent only an MPI-IO call of its own thread that spans
// it.
func TestStreamThreadsAndParents(t *testing.T) {
	spec, _ := synthetic("3.41", binary.LittleEndian, 0, 1)
	p := filepath.Join(t.TempDir(), "threads.darshan")
	if err := os.WriteFile(p, spec.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, recs, err := readStream(t, p+"#r0")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		if e := r.Event; e != nil {
			got = append(got, e.Op+"/"+string(rune('0'+e.Tid))+"/"+string(rune('0'+e.Seq))+"/"+string(rune('0'+e.Parent)))
		}
	}
	// The MPI-IO write spans 0.9-2.6 s in thread 7; the POSIX writes of
	// thread 7 lie inside it, the read (5.0 s, thread 8) does not.
	want := "MPI_File_write_at/1/1/0 write/1/0/1 write/1/0/1 read/2/0/0"
	if strings.Join(got, " ") != want {
		t.Errorf("events (op/tid/seq/parent) %v, want %s", got, want)
	}
}

// TestTimeKeyOrders proves that the integer keys segments are sorted by
// keep the order of their times, NaN last.
func TestTimeKeyOrders(t *testing.T) {
	times := []float64{math.Inf(-1), -1e300, -1, -1e-300, 0, 1e-300, 0.5, 1, 2, 1e300, math.Inf(1), math.NaN()}
	for i := 1; i < len(times); i++ {
		if timeKey(times[i-1]) >= timeKey(times[i]) {
			t.Errorf("key(%v) = %#x not below key(%v) = %#x", times[i-1], timeKey(times[i-1]), times[i], timeKey(times[i]))
		}
	}
}

// TestSegmentOrder proves that merging the files' runs of segments gives
// the order of one sort of all segments by start (MPI-IO first among
// equal starts, then the log's order), also when runs are out of order,
// hold equal times or NaN.
func TestSegmentOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for trial := range 200 {
		p := &proc{}
		for f := rng.Intn(9); f >= 0; f-- {
			d := &DXTFile{Module: []ModuleID{ModDXTPOSIX, ModDXTMPIIO}[rng.Intn(2)]}
			t0 := 0.0
			for n := rng.Intn(40); n > 0; n-- {
				t0 += float64(rng.Intn(3)) // equal starts are common
				at := t0
				switch rng.Intn(20) {
				case 0:
					at = math.NaN()
				case 1:
					at = float64(rng.Intn(30)) // out of order
				}
				s := Segment{Start: at}
				if rng.Intn(2) == 0 {
					d.Writes = append(d.Writes, s)
				} else {
					d.Reads = append(d.Reads, s)
				}
			}
			p.dxt = append(p.dxt, d)
		}
		p.sortSegments()
		want := append([]segRef(nil), p.order...)
		slices.SortFunc(want, compareRefs)
		seen := map[[2]int32]bool{}
		total := 0
		for _, d := range p.dxt {
			total += len(d.Writes) + len(d.Reads)
		}
		for _, r := range p.order {
			seen[[2]int32{r.file, r.idx}] = true
			if s := p.segment(r); timeKey(s.Start) != r.key {
				t.Fatalf("trial %d: a reference's key is not its segment's start", trial)
			}
		}
		if !slices.Equal(p.order, want) || len(seen) != total || len(p.order) != total || len(p.parent) != total {
			t.Fatalf("trial %d: merged order differs from the sorted one, or misses segments", trial)
		}
	}
}

// TestTimeResolvedOnCutDXT proves that a log recorded with DXT but cut
// before any segment could be read is reported as cut, not as a log to
// record again with DXT.
func TestTimeResolvedOnCutDXT(t *testing.T) {
	spec, _ := synthetic("3.41", binary.LittleEndian, 0, 1)
	whole := spec.Bytes()
	l, err := Read(bytes.NewReader(whole), int64(len(whole)), "synthetic")
	if err != nil {
		t.Fatal(err)
	}
	m := l.Module(ModDXTPOSIX)
	p := filepath.Join(t.TempDir(), "cut.darshan")
	if err := os.WriteFile(p, whole[:m.Offset+4], 0o644); err != nil {
		t.Fatal(err)
	}
	err = tracefmt.CheckTimeResolved(p)
	var ne *tracefmt.NoEventsError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "holds DXT_POSIX and DXT_MPIIO, recorded with DXT, but the log is partial") ||
		strings.Contains(err.Error(), "record the run with DXT") {
		t.Errorf("cut DXT log: %v", err)
	}
}

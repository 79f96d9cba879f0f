package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"iopred/tests/interop"
	"iopred/tracefmt"
	_ "iopred/tracefmt/darshan"
	_ "iopred/tracefmt/dftracer"
)

// job writes the traces of an MPI job of n ranks: each opens a shared
// file, writes 1,200 records of 2 KiB with MPI_File_write_at (the POSIX
// pwrite beneath each), reads /proc/cpuinfo, and calls MPI_Init and
// MPI_Finalize; the last rank's trace is cut short when truncate.
func mpiJob(t *testing.T, n int, truncate bool) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for r := range n {
		path := filepath.Join(dir, fmt.Sprintf("app.h.%d.r%d%s", 100+r, r, tracefmt.FileSuffix))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		rank := r
		w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/home/u/app", Args: []string{"app", "-n", "3"}, Host: "node1",
			PID: 100 + r, Rank: &rank, StartUnixNs: 1.7e18 + int64(r)*1e6, Library: "iopred test"}, tracefmt.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(w.Context(tracefmt.Context{ID: 5, Frames: []tracefmt.Frame{{Module: "/home/u/app", Offset: 0x42, Function: "dump"}}}))
		must(w.File(tracefmt.File{ID: 1, Path: "/scratch/out.dat"}))
		must(w.File(tracefmt.File{ID: 2, Path: "/proc/cpuinfo"}))
		now := int64(0)
		ev := func(e tracefmt.Event, dur int64) {
			e.StartNs, e.EndNs = now, now+dur
			now += dur + 500
			must(w.Event(&e))
		}
		ev(tracefmt.Event{Op: "read", FileID: 2, Offset: 0, Size: 4096, Ret: 900, Bytes: 900, Parent: 1}, 1000)
		ev(tracefmt.Event{Op: "MPI_Init", Offset: tracefmt.NoOffset, Seq: 1}, 2e8)
		ev(tracefmt.Event{Op: "MPI_File_open", FileID: 1, Offset: tracefmt.NoOffset, Seq: 2, Ctx: 5}, 1e6)
		seq := int64(3)
		for i := range 1200 {
			if i%100 == 0 {
				now += 5e7 // a compute phase: ten checkpoints of 100 records
			}
			off := int64(i*n+r) * 2048
			ev(tracefmt.Event{Op: "pwrite", FileID: 1, Offset: off, Size: 2048, Ret: 2048, Bytes: 2048, Parent: seq}, 20000)
			ev(tracefmt.Event{Op: "MPI_File_write_at", FileID: 1, Offset: off, Size: 2048, Bytes: 2048, Seq: seq, Ctx: 5}, 30000+int64(r)*1000)
			seq++
		}
		if truncate && r == n-1 {
			must(w.Flush())
			f.Close()
			paths = append(paths, path)
			continue
		}
		ev(tracefmt.Event{Op: "MPI_File_close", FileID: 1, Offset: tracefmt.NoOffset, Seq: seq}, 1e5)
		ev(tracefmt.Event{Op: "MPI_Finalize", Offset: tracefmt.NoOffset, Seq: seq + 1}, 5e7)
		must(w.Close(tracefmt.Footer{Reason: "exit", EndNs: now, Model: map[string]any{"events": 1}}))
		f.Close()
		paths = append(paths, path)
	}
	return paths
}

func render(t *testing.T, rep *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The report of an MPI job holds every section, states the job's start
// once as a date, finds the small and misaligned writes and the missing
// collective calls with their figures, lists the ranks and the shared
// file but not the excluded /proc file, and needs nothing outside itself
// (no URL to fetch, no external script, style or image).
func TestReportJob(t *testing.T) {
	rep, err := Build(mpiJob(t, 4, false), Options{Command: "iopred report /x", Version: "9.9"})
	if err != nil {
		t.Fatal(err)
	}
	sev := map[string]string{}
	for _, f := range rep.Findings {
		sev[f.ID] = string(f.Severity)
	}
	for id, want := range map[string]string{"small-writes": "high", "misaligned": "high", "no-collective": "high", "repeated-opens": "ok", "io-time": "info"} {
		if sev[id] != want {
			t.Errorf("finding %s: %q, want %q", id, sev[id], want)
		}
	}
	if rep.Job == nil || rep.Job.Ranks != 4 || rep.Job.Period.Write == nil || rep.Job.Period.Write.PeriodS == nil {
		t.Fatalf("job view %+v", rep.Job)
	}
	page := html.UnescapeString(render(t, rep))
	for _, want := range []string{`id="facts"`, `id="findings"`, `id="time"`, `id="bandwidth"`, `id="period"`, `id="patterns"`,
		`id="prediction"`, `id="files"`, `id="contexts"`, `id="about"`, `id="table-ranks"`, `id="table-files"`,
		"an MPI job of 4 ranks", "/scratch/out.dat", "app+0x42 (dump)", "app -n 3", "excluded: 1 files",
		"4,800 of 4,800 write requests", "<svg width=\"100%\"", "Made by iopred 9.9 with: iopred report /x",
		"period of the writes", "context score"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "2023-11-14"); n != 2 { // the subtitle and the facts
		t.Errorf("the job's date appears %d times, want in the title and the facts only", n)
	}
	if strings.Contains(page, "/proc/cpuinfo\"") || strings.Contains(page, ">/proc/cpuinfo<") {
		t.Error("the excluded /proc/cpuinfo is listed")
	}
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`(?i)\b(src|href)="(https?:|//)`), regexp.MustCompile(`(?i)<link\b`),
		regexp.MustCompile(`(?i)<script[^>]+src=`), regexp.MustCompile(`(?i)url\((['"]?)(https?:|//)`), regexp.MustCompile(`(?i)@import`)} {
		if m := bad.FindString(page); m != "" {
			t.Errorf("the page refers to something outside itself: %q", m)
		}
	}
	// Every process row's times count from the job's start: rank 3
	// started 3 ms after rank 0.
	if !strings.Contains(page, `data-v="3000000" class="num">0.003</td>`) {
		t.Error("rank 3's start is not 0.003 s after the job's")
	}
}

// A job whose last trace is cut short still gets its report, which says
// so; the error is nil (a truncation is not corrupt input).
func TestReportTruncated(t *testing.T) {
	rep, err := Build(mpiJob(t, 2, true), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "without a footer") {
		t.Fatalf("problems %q", rep.Problems)
	}
	page := render(t, rep)
	if !strings.Contains(page, "Trace not read to its end") || !strings.Contains(page, "(incomplete)") {
		t.Error("the page does not say that a trace was cut short")
	}
}

// AllPaths keeps the system file, and the page says nothing was excluded.
func TestReportAllPaths(t *testing.T) {
	rep, err := Build(mpiJob(t, 2, false), Options{AllPaths: true})
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, rep)
	if !strings.Contains(page, ">/proc/cpuinfo<") || !strings.Contains(page, "excluded: nothing (--all-paths") {
		t.Error("--all-paths: /proc/cpuinfo not listed, or exclusions claimed")
	}
}

// fakeFormat registers once a trace format of this test (".fakeio"
// files whose first line names a program), to show that the report
// reads whatever tracefmt.Open reads: each file is one process writing
// 10 records.
var fakeFormat sync.Once

func registerFake() {
	fakeFormat.Do(func() {
		tracefmt.RegisterFormat(tracefmt.Format{Name: "report-test", Suffixes: []string{".fakeio"},
			Open: func(path, proc string) (tracefmt.Stream, error) {
				b, err := os.ReadFile(path)
				if err != nil {
					return nil, err
				}
				prog := strings.TrimSpace(string(b))
				recs := []tracefmt.Record{{Kind: tracefmt.KindFile, File: &tracefmt.File{ID: 1, Path: "/data/" + prog + ".out"}}}
				for i := range int64(10) {
					recs = append(recs, tracefmt.Record{Kind: tracefmt.KindEvent, Event: &tracefmt.Event{Op: "write", FileID: 1,
						Offset: i * 1 << 20, Size: 1 << 20, Ret: 1 << 20, Bytes: 1 << 20, StartNs: i * 1e7, EndNs: i*1e7 + 1e6}})
				}
				return tracefmt.SliceStream(tracefmt.Header{Program: prog, PID: 7, StartUnixNs: 1.7e18}, recs), nil
			}})
	})
}

// A trace of another format registered with tracefmt gets a report like
// an iopred trace: the single process, its file, its bandwidth.
func TestReportOtherFormat(t *testing.T) {
	registerFake()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.fakeio"), []byte("solver\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	traces, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(traces, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, rep)
	for _, want := range []string{"I/O report: solver", "1 process,", "/data/solver.out", "10 MiB written", "Bandwidth of the job"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// No trace is an error, not an empty page.
func TestReportNoTrace(t *testing.T) {
	if _, err := Build(nil, Options{}); err == nil {
		t.Error("a report of nothing")
	}
}

func ExampleReport_WriteHTML() {
	dir, _ := os.MkdirTemp("", "report")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.h.1"+tracefmt.FileSuffix)
	f, _ := os.Create(path)
	w, _ := tracefmt.NewWriter(f, tracefmt.Header{Program: "app", PID: 1, StartUnixNs: 1.7e18}, tracefmt.WriterOptions{})
	w.File(tracefmt.File{ID: 1, Path: "/scratch/out"})
	for i := range int64(100) {
		w.Event(&tracefmt.Event{Op: "write", FileID: 1, Offset: i << 20, Size: 1 << 20, Ret: 1 << 20, Bytes: 1 << 20, StartNs: i * 1e6, EndNs: i*1e6 + 5e5})
	}
	w.Close(tracefmt.Footer{Reason: "exit", EndNs: 1e8})
	f.Close()

	rep, err := Build([]string{path}, Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var page bytes.Buffer
	rep.WriteHTML(&page)
	fmt.Println(strings.Contains(page.String(), "100 MiB written"), len(rep.Findings) > 0)
	// Output: true true
}

// TestReportOfADarshanLog proves that the report of a Darshan log states
// the job as the log records it (job id, uid, executable, run time in
// Darshan's convention, modules, partial or not), the application's bytes
// counted once beside each layer's view, and the files' Lustre layouts
// with the job's OSTs.
func TestReportOfADarshanLog(t *testing.T) {
	log := filepath.Join(interop.Dir(), "darshan", "pytokio", "sample.darshan")
	traces, err := tracefmt.Discover(log)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(traces, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{"job id", "4478544", "uid", "run time (log)", "117.0000 s", "partial", "LUSTRE",
		"application (each byte once)", "2.0 TiB", "Lustre layouts: the job's files lie on 24 OSTs", "vpicio.hdf5"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestReportDFTracerRegions proves that the report of a DFTracer trace
// lists the application's own work (its regions) by name and category,
// with their counts and times, and names the processes the reader
// rebuilt from the trace's forks.
func TestReportDFTracerRegions(t *testing.T) {
	traces, err := tracefmt.Discover(filepath.Join("..", "..", "tracefmt", "dftracer", "testdata", "v2-8100.pfw"),
		filepath.Join("..", "..", "tracefmt", "dftracer", "testdata", "pool-1.0-7000.pfw"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(traces, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(render(t, rep))
	for _, want := range []string{"The application's own work", "<td>epoch</td>", "<td>PyTorch</td>", "<td>step</td>",
		"<td>pool.map</td>", "<td>PYTHON_APP</td>", "900.0 µs", "4 processes"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestReportHeatmapSignal proves that the report of a Darshan log with
// counters and HEATMAP records but no DXT draws each rank's bandwidth
// from the heatmaps (MPI-IO's, else POSIX's, plus stdio's: each byte
// once) and says their time resolution: on the Python job's log the
// signals hold the bytes darshan-parser counts in its POSIX and STDIO
// heatmaps (tests/interop/darshan/reference), in bins of 0.8 s. A log
// without heatmaps has no such note.
func TestReportHeatmapSignal(t *testing.T) {
	for _, c := range []struct {
		log           string
		binNs         int64
		read, written float64 // darshan-parser's heatmap totals
	}{
		{"snyder_python3_id3116902-2110365_12-19-66957-188958432683465822_1", 800_000_000, 13096 + 246, 523926517 + 440},
		{"mpi-io-test-x86_64-3.2.1", 0, 0, 0},
	} {
		t.Run(c.log, func(t *testing.T) {
			traces, err := tracefmt.Discover(interop.Path(t, "darshan/darshan-logs/"+c.log+".darshan"))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Build(traces, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var read, written float64
			for _, p := range rep.Stats.Procs {
				for _, b := range p.ReadSignal.Bins {
					read += b
				}
				for _, b := range p.WriteSignal.Bins {
					written += b
				}
			}
			if rep.Stats.HeatmapBinNs != c.binNs || math.Abs(read-c.read) > 0.5 || math.Abs(written-c.written) > 0.5 {
				t.Errorf("bins of %d ns, %.0f bytes read and %.0f written; want %d ns, %.0f and %.0f",
					rep.Stats.HeatmapBinNs, read, written, c.binNs, c.read, c.written)
			}
			page := html.UnescapeString(render(t, rep))
			if note := strings.Contains(page, "from Darshan's HEATMAP records (no DXT): time resolution"); note != (c.binNs > 0) {
				t.Errorf("resolution note shown: %v", note)
			}
		})
	}
}

// TestReportDFTracerDefaultSettings proves that the report of a trace
// DFTracer made with its default settings (no sizes, paths or return
// values) says what is missing and why, and still shows the pool's
// processes apart: the parent and its 4 workers.
func TestReportDFTracerDefaultSettings(t *testing.T) {
	traces, err := tracefmt.Discover(interop.Path(t, "dftracer/default"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(traces, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(render(t, rep))
	for _, want := range []string{"I/O report: pool.py", "5 processes", "DFTracer recorded no sizes and file paths for the I/O calls (traced without DFTRACER_INC_METADATA=1)"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

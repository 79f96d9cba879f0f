package report

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"iopred/analyzer/insights"
	"iopred/analyzer/plotkit"
	"iopred/tests/interop"
	"iopred/tracefmt"
	"iopred/tracefmt/darshan"
	"iopred/tracefmt/darshan/darshantest"
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

// TestReportPeriodFromHeatmap proves that the report's period section
// works from Darshan's HEATMAP records when a log has no DXT and states
// their time resolution: on the Python job's log (0.8 s bins) the signal
// it analyses holds every byte darshan-parser counts in the POSIX and
// STDIO heatmaps (tests/interop/darshan/reference), in the log's bins.
// On the checkpoint log (4 MiB every 0.5 s, DXT and 0.2 s heatmap bins)
// the period stays DXT's, and the heatmap's, shown beside it, is the
// program's 0.5 s within 2% and DXT's within a bin. A log with neither
// has no heatmap period.
func TestReportPeriodFromHeatmap(t *testing.T) {
	for _, c := range []struct {
		log           string
		binNs         int64
		read, written int64 // darshan-parser's heatmap totals
		dxt           bool
	}{
		{"darshan-logs/snyder_python3_id3116902-2110365_12-19-66957-188958432683465822_1", 800_000_000, 13096 + 246, 523926517 + 440, false},
		{"iopred/ckpt-dxt-heatmap", 200_000_000, -1, -1, true}, // from reference/ckpt-dxt-heatmap.json
		{"darshan-logs/mpi-io-test-x86_64-3.2.1", 0, 0, 0, false},
	} {
		t.Run(filepath.Base(c.log), func(t *testing.T) {
			traces, err := tracefmt.Discover(interop.Path(t, "darshan/"+c.log+".darshan"))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Build(traces, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c.binNs == 0 {
				if rep.HeatmapPeriod != nil || rep.Stats.Heatmap != nil {
					t.Errorf("a heatmap period on a log without heatmaps")
				}
				return
			}
			if c.read < 0 {
				c.read, c.written = referenceHeatmapTotals(t, "darshan/reference/"+filepath.Base(c.log)+".json")
			}
			sig := rep.Stats.Heatmap
			if sig == nil || rep.HeatmapPeriod == nil {
				t.Fatal("no heatmap signal")
			}
			var read, written int64
			for i := range sig.Write {
				read, written = read+sig.Read[i], written+sig.Write[i]
			}
			if sig.WidthNs != c.binNs || read != c.read || written != c.written || sig.StartUnixNs != rep.start() {
				t.Errorf("heatmap signal: bins of %d ns from %d, %d bytes read and %d written; want %d ns from %d, %d and %d",
					sig.WidthNs, sig.StartUnixNs, read, written, c.binNs, rep.start(), c.read, c.written)
			}
			p, what, fromHeatmap := rep.period()
			if p == nil || fromHeatmap == c.dxt {
				t.Fatalf("period %v of the %s, from the heatmap %v", p, what, fromHeatmap)
			}
			page := html.UnescapeString(render(t, rep))
			res := fmt.Sprintf("the heatmap's bins of %s (the log has no DXT)", insights.Dur(c.binNs))
			if strings.Contains(page, res) == c.dxt {
				t.Errorf("time resolution %q shown: %v", res, !c.dxt)
			}
			if !c.dxt {
				if len(p.Resolutions) == 0 || p.Resolutions[0].Fs != 1e9/float64(c.binNs) || p.Resolutions[0].NSamples != len(sig.Write) {
					t.Errorf("analysed at %+v, not first at the heatmap's %d bins", p.Resolutions, len(sig.Write))
				}
				return
			}
			hp, _ := pickPeriod(*rep.HeatmapPeriod)
			if p.PeriodS == nil || hp == nil || hp.PeriodS == nil {
				t.Fatalf("no period: DXT %v, heatmap %v", p, hp)
			}
			dxt, heat := *p.PeriodS, *hp.PeriodS
			t.Logf("period from DXT %.4f s (%s), from the heatmap (0.2 s bins) %.4f s (%s)", dxt, p.Verdict, heat, hp.Verdict)
			for _, got := range []float64{dxt, heat} {
				if math.Abs(got-0.5)/0.5 > 0.02 {
					t.Errorf("period %.4f s, want 0.5 s within 2%%", got)
				}
			}
			if math.Abs(dxt-heat) > 0.2 {
				t.Errorf("DXT's period %.4f s and the heatmap's %.4f s differ by more than a bin", dxt, heat)
			}
			if want := fmt.Sprintf("writes: %s s, verdict %s, from Darshan's HEATMAP in bins of 200.00 ms", plotkit.Num(heat), hp.Verdict); !strings.Contains(page, want) {
				t.Errorf("page lacks %q", want)
			}
		})
	}
}

// referenceHeatmapTotals sums the bytes read and written of every layer's
// heatmap in a reference file regen.py wrote from darshan-parser.
func referenceHeatmapTotals(t *testing.T, ref string) (read, written int64) {
	t.Helper()
	b, err := os.ReadFile(interop.Path(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Heatmap map[string]struct {
			Read    int64 `json:"bytes_read"`
			Written int64 `json:"bytes_written"`
		} `json:"heatmap"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Heatmap) == 0 {
		t.Fatalf("%s: no heatmap totals (%v)", ref, err)
	}
	for _, h := range r.Heatmap {
		read, written = read+h.Read, written+h.Written
	}
	return read, written
}

// TestReportPeriodFromHeatmapWithoutDXT proves the period section on a
// log with a real heatmap and no DXT: the checkpoint log's heatmap bins
// (Darshan 3.5.0's, 0.2 s wide) written into a log without its DXT
// module. The report's period comes from them, is the program's 0.5 s
// within 2% and within a bin of the period DXT gives on the original log,
// and the page states the resolution.
func TestReportPeriodFromHeatmapWithoutDXT(t *testing.T) {
	orig := interop.Path(t, "darshan/iopred/ckpt-dxt-heatmap.darshan")
	l, err := darshan.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	var recs []byte
	names := map[uint64]string{}
	for _, h := range l.Heatmaps {
		recs = append(recs, heatmapRecord(le, h.ID, h.Rank, h.BinWidth, h.Writes, h.Reads)...)
		names[h.ID] = "heatmap:" + h.Layer
	}
	// The file's POSIX counters, as every log with a heatmap has them.
	ints, floats, err := darshan.CounterNames(darshan.ModPOSIX, 4)
	if err != nil {
		t.Fatal(err)
	}
	names[1] = "/scratch/ckpt.dat"
	posix := darshantest.Counters(le, ints, floats, 1, 0, map[string]int64{"POSIX_OPENS": 1, "POSIX_WRITES": 40, "POSIX_BYTES_WRITTEN": 40 << 22}, nil)
	spec := darshantest.Log{Order: le, UID: 1, JobID: 9, NProcs: 1, StartSec: l.Job.Start.Unix(), EndSec: l.Job.End.Unix(),
		StartNsec: int64(l.Job.Start.Nanosecond()), EndNsec: int64(l.Job.End.Nanosecond()), Exe: "/bin/ckpt", Names: names,
		Modules: []darshantest.Module{{Slot: int(darshan.ModPOSIX), Version: 4, Data: posix}, {Slot: 15, Version: 1, Data: recs}}}
	log := filepath.Join(t.TempDir(), "ckpt-heatmap-only.darshan")
	if err := os.WriteFile(log, spec.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	periodOf := func(path string) (*Report, float64, bool) {
		traces, err := tracefmt.Discover(path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Build(traces, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, what, fromHeatmap := rep.period()
		if p == nil || p.PeriodS == nil || what != "writes" {
			t.Fatalf("%s: traces %v heat %+v period %+v of the %s", path, traces, rep.Stats.Heatmap, p, what)
		}
		return rep, *p.PeriodS, fromHeatmap
	}
	_, dxt, fromHeatmap := periodOf(orig)
	if fromHeatmap {
		t.Fatal("the log with DXT: period from the heatmap")
	}
	rep, heat, fromHeatmap := periodOf(log)
	if !fromHeatmap {
		t.Fatal("the log without DXT: period not from the heatmap")
	}
	t.Logf("report's period from DXT %.4f s, from the heatmap alone %.4f s", dxt, heat)
	if math.Abs(heat-0.5)/0.5 > 0.02 || math.Abs(heat-dxt) > 0.2 {
		t.Errorf("period from the heatmap %.4f s; want 0.5 s within 2%% and DXT's %.4f s within a bin", heat, dxt)
	}
	page := html.UnescapeString(render(t, rep))
	for _, want := range []string{"period of the writes</dt><dd>" + plotkit.Num(heat) + " s", "the heatmap's bins of 200.00 ms (the log has no DXT)",
		"by Darshan's HEATMAP records"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// heatmapRecord lays out one of Darshan's HEATMAP records: base record,
// bin width, bin count, two pointer slots, the write bins, the read bins.
func heatmapRecord(bo binary.AppendByteOrder, id uint64, rank int64, width float64, writes, reads []int64) []byte {
	var b []byte
	b = bo.AppendUint64(b, id)
	b = bo.AppendUint64(b, uint64(rank))
	b = bo.AppendUint64(b, math.Float64bits(width))
	b = bo.AppendUint64(b, uint64(len(writes)))
	b = append(b, make([]byte, 16)...)
	for _, v := range append(append([]int64(nil), writes...), reads...) {
		b = bo.AppendUint64(b, uint64(v))
	}
	return b
}

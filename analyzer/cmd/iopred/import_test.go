package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"iopred/analyzer/summary"
	"iopred/tests/interop"
	"iopred/tracefmt"
	"iopred/tracefmt/darshan"
	"iopred/tracefmt/darshan/darshantest"
)

const dxtLog = "darshan/darshan-logs/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"

// run runs an iopred command and returns its exit status, stdout and
// stderr.
func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(args, &out, &errb)
	return code, out.String(), errb.String()
}

// records reads a trace's records, and the error it ends with.
func records(t *testing.T, name string) ([]tracefmt.Record, error) {
	t.Helper()
	s, err := tracefmt.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var recs []tracefmt.Record
	err = s.Each(func(r tracefmt.Record) error { recs = append(recs, r); return nil })
	return recs, err
}

// summaryJSON runs iopred summary --json.
func summaryJSON(t *testing.T, paths ...string) *summary.Report {
	t.Helper()
	code, out, errOut := run(append([]string{"summary", "--json"}, paths...)...)
	if code != 0 {
		t.Fatalf("summary %v: exit %d: %s", paths, code, errOut)
	}
	var rep summary.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// TestImportDarshanDXT proves that `iopred import darshan` writes one
// iopred trace per rank whose records are the log's, event for event and
// counter for counter, and that the summary of the imported traces is the
// summary of the log.
func TestImportDarshanDXT(t *testing.T) {
	log := interop.Path(t, dxtLog)
	dir := t.TempDir()
	code, out, errOut := run("import", "darshan", log, "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	traces, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(filepath.Base(log), ".darshan")
	if len(traces) != 32 || len(strings.Split(strings.TrimSpace(out), "\n")) != 32 ||
		!strings.Contains(out, base+".r17"+tracefmt.FileSuffix+": 18 events, 5 counter records") {
		t.Fatalf("%d traces; output:\n%s", len(traces), out)
	}
	for r := range 32 {
		name := filepath.Join(dir, base+".r"+strconv.Itoa(r)+tracefmt.FileSuffix)
		got, err := records(t, name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := records(t, log+"#r"+strconv.Itoa(r))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("rank %d: the imported trace differs from the log's", r)
		}
	}
	a, b := summaryJSON(t, log), summaryJSON(t, dir)
	for _, rep := range []*summary.Report{a, b} {
		for i := range rep.Processes {
			rep.Processes[i].Trace = ""
		}
		// The directory lists r10 before r2.
		sort.Slice(rep.Processes, func(i, j int) bool { return *rep.Processes[i].Rank < *rep.Processes[j].Rank })
	}
	if !reflect.DeepEqual(a.Processes, b.Processes) || !reflect.DeepEqual(a.Files, b.Files) || !reflect.DeepEqual(a.Modules, b.Modules) ||
		!reflect.DeepEqual(a.Notes, b.Notes) || (a.Job == nil) != (b.Job == nil) {
		t.Errorf("the summaries of the log and of its import differ")
	}
}

// TestPeriodOfADXTLog proves FTIO's period on a real DXT log: mpi-io-test
// writing 4 iterations on 32 ranks. The expected period is the median
// interval between the starts of successive iterations, each the earliest
// MPI-IO write of the iteration in the log's own segments (the iteration
// of a write is its offset over the 32 ranks' 16 MiB blocks); FTIO's
// answer lies on a grid of frequencies 1/(13.6 s) apart, whose step is 10%
// of this one, hence the tolerance. The imported traces give the same
// period.
func TestPeriodOfADXTLog(t *testing.T) {
	log := interop.Path(t, dxtLog)
	l, err := darshan.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	first := map[int64]float64{}
	for _, d := range l.DXT {
		if d.Module != darshan.ModDXTMPIIO {
			continue
		}
		for _, s := range d.Writes {
			it := s.Offset / (32 << 24)
			if v, ok := first[it]; !ok || s.Start < v {
				first[it] = s.Start
			}
		}
	}
	if len(first) != 4 {
		t.Fatalf("%d iterations, want 4", len(first))
	}
	var starts, gaps []float64
	for _, v := range first {
		starts = append(starts, v)
	}
	sort.Float64s(starts)
	for i := 1; i < len(starts); i++ {
		gaps = append(gaps, starts[i]-starts[i-1])
	}
	sort.Float64s(gaps)
	want := gaps[1]
	dir := t.TempDir()
	if code, _, errOut := run("import", "darshan", log, "-o", dir); code != 0 {
		t.Fatal(errOut)
	}
	for _, in := range []string{log, dir} {
		code, out, errOut := run("period", "--json", in)
		if code != 0 {
			t.Fatalf("period %s: exit %d: %s", in, code, errOut)
		}
		var res struct {
			PeriodS    *float64 `json:"period_s"`
			Confidence float64  `json:"confidence"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res.PeriodS == nil || math.Abs(*res.PeriodS-want)/want > 0.10 {
			t.Fatalf("%s: period %v, want %.3f s within 10%%: %s", filepath.Base(in), res.PeriodS, want, out)
		}
		t.Logf("%s: period %.3f s, confidence %.3f; iterations every %.3f s (median)", filepath.Base(in), *res.PeriodS, res.Confidence, want)
	}
}

// TestCountersOnlyLog proves what a user gets from a Darshan log without
// DXT: a summary from the counters (per module: the bytes, calls and time
// of each layer; per file and process: the application's bytes, the
// MPI-IO layer's and not again the POSIX calls under it), notes saying
// what the time-resolved analyses need, and those analyses failing with
// that message instead of an empty result, on the log and on its import.
func TestCountersOnlyLog(t *testing.T) {
	log := interop.Path(t, "darshan/darshan-logs/mpi-io-test-x86_64-3.2.1.darshan")
	dir := t.TempDir()
	if code, _, errOut := run("import", "darshan", log, "-o", dir); code != 0 {
		t.Fatal(errOut)
	}
	for _, in := range []string{log, dir} {
		rep := summaryJSON(t, in)
		mods := map[string]summary.ModuleStats{}
		for _, m := range rep.Modules {
			mods[m.Layer] = m
		}
		const mib = 1 << 20
		if m := mods["mpiio"]; m.BytesWritten != 64*mib || m.BytesRead != 64*mib || m.Calls["MPI_File_write"] != 4 || m.Files != 1 {
			t.Errorf("%s: MPI-IO module %+v", in, m)
		}
		if m := mods["posix"]; m.BytesWritten != 64*mib || m.Calls["write"] == 0 {
			t.Errorf("%s: POSIX module %+v", in, m)
		}
		var test *summary.FileStats
		for i := range rep.Files {
			if strings.HasSuffix(rep.Files[i].Path, "mpi-io-test.tmp.dat") {
				test = &rep.Files[i]
			}
		}
		if test == nil || test.BytesWritten != 64*mib || test.BytesRead != 64*mib || test.Processes != 4 || test.IONs <= 0 {
			t.Errorf("%s: the test file %+v", in, test)
		}
		if rep.Job != nil || len(rep.Notes) != 2 || !strings.Contains(rep.Notes[0], "job 27071, 4 processes (darshan 3.2.1") ||
			!strings.Contains(rep.Notes[1], "DXT_ENABLE_IO_TRACE=1") {
			t.Errorf("%s: job %v, notes %q", in, rep.Job, rep.Notes)
		}
		code, text, _ := run("summary", in)
		if code != 0 || !strings.Contains(text, "MODULE") || !strings.Contains(text, "note: per-file counters only") {
			t.Errorf("%s: text summary (exit %d):\n%s", in, code, text)
		}
		for _, cmd := range [][]string{{"period"}, {"period", "--job"}, {"patterns"}, {"replay"}, {"events"}, {"replay", "--prefetch"}} {
			code, out, errOut := run(append(cmd, in)...)
			if code != 1 || out != "" || !strings.Contains(errOut, "per-file counters only") || !strings.Contains(errOut, "DXT") {
				t.Errorf("%s %v: exit %d, stdout %q, stderr %q", in, cmd, code, out, errOut)
			}
		}
	}
}

// TestImportDFTracer proves that `iopred import dftracer` converts every
// process of DFTracer's files, plain and gzipped, and that the summary
// reads the imported calls as it reads the files themselves.
func TestImportDFTracer(t *testing.T) {
	fixtures := filepath.Join("..", "..", "..", "tracefmt", "dftracer", "testdata")
	dir := t.TempDir()
	code, out, errOut := run("import", "dftracer", filepath.Join(fixtures, "app-1234.pfw.gz"), filepath.Join(fixtures, "forked-9000.pfw"), "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"app-1234.iopred.zst: 23 events", "forked-9000.pid9000.iopred.zst: 3 events", "forked-9000.pid9001.iopred.zst: 2 events"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	rep := summaryJSON(t, filepath.Join(dir, "app-1234.iopred.zst"))
	direct := summaryJSON(t, filepath.Join(fixtures, "app-1234.pfw"))
	if len(rep.Processes) != 1 || rep.Processes[0].BytesRead != 4*4096+1024 || rep.Processes[0].BytesWritten != 16384+100+205 ||
		!reflect.DeepEqual(rep.Files, direct.Files) {
		t.Errorf("summary of the import %+v\nof the file %+v", rep.Processes, direct.Processes)
	}
}

// TestImportBadInput proves the messages for an unknown format, an input
// of another format, and a missing output directory.
func TestImportBadInput(t *testing.T) {
	pfw := filepath.Join("..", "..", "..", "tracefmt", "dftracer", "testdata", "old-5678.pfw")
	dir := t.TempDir()
	if code, _, errOut := run("import", "recorder", pfw, "-o", dir); code != 1 || !strings.Contains(errOut, `unknown format "recorder"`) || !strings.Contains(errOut, "darshan") {
		t.Errorf("unknown format: exit %d, %s", code, errOut)
	}
	if code, _, errOut := run("import", "darshan", pfw, "-o", dir); code != 1 || !strings.Contains(errOut, "a dftracer file, not darshan") {
		t.Errorf("another format: exit %d, %s", code, errOut)
	}
	if code, _, _ := run("import", "darshan", pfw); code != 2 {
		t.Errorf("no -o: exit %d, want 2", code)
	}
}

// TestPeriodOfASyntheticDXTLog proves the period found in a big-endian
// 3.41 log with DXT threads, imported: a rank writing 8 MiB in 4 calls
// every 2 s for 40 s, and reading now and then, has a write period of 2 s.
func TestPeriodOfASyntheticDXTLog(t *testing.T) {
	be := binary.BigEndian
	var writes, reads []darshantest.Segment
	for k := range 20 {
		t0 := 1 + 2*float64(k)
		for i := range 4 {
			at := t0 + 0.01*float64(i)
			writes = append(writes, darshantest.Segment{Offset: int64(4*k+i) << 21, Length: 2 << 20, Start: at, End: at + 0.008, Thread: 77})
		}
		if k%3 == 0 {
			reads = append(reads, darshantest.Segment{Offset: 0, Length: 4096, Start: t0 + 0.7, End: t0 + 0.701, Thread: 78})
		}
	}
	spec := darshantest.Log{Order: be, UID: 1, JobID: 9, NProcs: 1, StartSec: 1700000000, EndSec: 1700000042,
		Exe: "/bin/ckpt", Names: map[uint64]string{5: "/scratch/ckpt"},
		Modules: []darshantest.Module{{Slot: 10, Version: 2, Data: darshantest.DXT(be, 5, 0, "n1", writes, reads, true)}}}
	log := filepath.Join(t.TempDir(), "ckpt.darshan")
	if err := os.WriteFile(log, spec.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if code, _, errOut := run("import", "darshan", log, "-o", dir); code != 0 {
		t.Fatal(errOut)
	}
	code, out, errOut := run("period", "--json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		PeriodS *float64 `json:"period_s"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.PeriodS == nil || math.Abs(*res.PeriodS-2)/2 > 0.05 {
		t.Errorf("period %v, want 2 s within 5%%: %s", res.PeriodS, out)
	}
}

// TestImportPartialLog proves that a log cut short stays partial through
// import: one warning for the cut, counted over the ranks' traces rather
// than repeated per rank, and the summary of the imported directory, like
// the log's own, marks the job and its processes partial.
func TestImportPartialLog(t *testing.T) {
	whole, err := os.ReadFile(interop.Path(t, dxtLog))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.darshan")
	if err := os.WriteFile(cut, whole[:len(whole)-200], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "imported")
	code, _, errOut := run("import", "darshan", cut, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(errOut, "warning:"); n != 1 || !strings.Contains(errOut, "in 32 of 32 traces; the imported traces stay marked partial") {
		t.Errorf("%d warnings:\n%s", n, errOut)
	}
	for _, path := range []string{cut, out} {
		rep := summaryJSON(t, path)
		if rep.Source == nil || !strings.Contains(rep.Source.Partial, "region") {
			t.Errorf("%s: source %+v", path, rep.Source)
		}
		for _, p := range rep.Processes {
			if p.Complete || !strings.Contains(p.Problem, "region") {
				t.Errorf("%s: process %s complete %v (%s)", path, p.Trace, p.Complete, p.Problem)
			}
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

// TestPeriodFromHeatmap proves that `iopred period` works on a Darshan log
// that has heatmaps and no DXT, says the time resolution it had, and finds
// the period DXT gives on the same run: a log of checkpoints every 2 s
// (4 writes of 2 MiB each) with both DXT and a heatmap of 0.2 s bins
// binned from the same calls, read once whole (DXT), once without its
// DXT module (heatmap alone), and once whole with --signal heatmap, which
// reads the heatmap beside DXT.
func TestPeriodFromHeatmap(t *testing.T) {
	le := binary.LittleEndian
	var writes []darshantest.Segment
	const width = 0.2
	bins := make([]int64, 220)
	for k := range 20 {
		t0 := 1 + 2*float64(k)
		for i := range 4 {
			at := t0 + 0.01*float64(i)
			writes = append(writes, darshantest.Segment{Offset: int64(4*k+i) << 21, Length: 2 << 20, Start: at, End: at + 0.008, Thread: 77})
			bins[int(at/width)] += 2 << 20
		}
	}
	heat := darshantest.Module{Slot: 15, Version: 1, Data: heatmapRecord(le, 6, 0, width, bins, make([]int64, len(bins)))}
	dxt := darshantest.Module{Slot: 10, Version: 2, Data: darshantest.DXT(le, 5, 0, "n1", writes, nil, true)}
	periods := map[string]float64{}
	for name, mods := range map[string][]darshantest.Module{"dxt": {dxt, heat}, "heatmap": {heat}, "both, --signal heatmap": {dxt, heat}} {
		spec := darshantest.Log{Order: le, UID: 1, JobID: 9, NProcs: 1, StartSec: 1700000000, EndSec: 1700000044,
			Exe: "/bin/ckpt", Names: map[uint64]string{5: "/scratch/ckpt", 6: "heatmap:POSIX"}, Modules: mods}
		log := filepath.Join(t.TempDir(), "ckpt.darshan")
		if err := os.WriteFile(log, spec.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"period", "--json", log}
		if strings.Contains(name, "--signal heatmap") {
			args = append(args, "--signal", "heatmap")
		}
		code, out, errOut := run(args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		var res struct {
			Signal      string   `json:"signal"`
			ResolutionS float64  `json:"time_resolution_s"`
			PeriodS     *float64 `json:"period_s"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res.PeriodS == nil {
			t.Fatalf("%s: no period: %s", name, out)
		}
		periods[name] = *res.PeriodS
		if name != "dxt" && (res.Signal != "heatmap" || res.ResolutionS != width) {
			t.Errorf("heatmap: signal %q at %v s", res.Signal, res.ResolutionS)
		}
		if name == "dxt" && res.Signal == "heatmap" {
			t.Errorf("a log with DXT read through its heatmap")
		}
	}
	t.Logf("period from DXT %.4f s, from the heatmap %.4f s", periods["dxt"], periods["heatmap"])
	if periods["both, --signal heatmap"] != periods["heatmap"] {
		t.Errorf("the heatmap of the log with DXT gives %.4f s, alone %.4f s", periods["both, --signal heatmap"], periods["heatmap"])
	}
	for name, p := range periods {
		if math.Abs(p-2)/2 > 0.05 {
			t.Errorf("%s: period %.4f s, want 2 s within 5%%", name, p)
		}
	}
}

// TestDFTracerWithoutMetadata proves that a DFTracer trace recorded with
// its default settings (no sizes, no paths) is summarised with a note
// saying so, once for the job, not silently as 0 bytes.
func TestDFTracerWithoutMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bare.pfw")
	lines := `[
{"id":1,"name":"open64","cat":"POSIX","pid":7,"tid":7,"ts":1000,"dur":5,"ph":"X"}
{"id":2,"name":"write","cat":"POSIX","pid":7,"tid":7,"ts":2000,"dur":5,"ph":"X"}
{"id":3,"name":"read","cat":"POSIX","pid":7,"tid":7,"ts":3000,"dur":5,"ph":"X"}
]
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run("summary", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "DFTracer recorded no sizes and file paths for the I/O calls (traced without DFTRACER_INC_METADATA=1)") {
		t.Errorf("no note of the missing metadata:\n%s", out)
	}
}

// TestPeriodHeatmapAgainstDXTOnARealLog proves, on a log Darshan 3.5.0's
// runtime wrote (tests/interop/darshan/iopred/ckpt.c: 4 MiB written every
// 0.5 s for 20 s, with DXT and the default heatmap of 0.2 s bins), that
// the period from the heatmap is the one DXT gives, within the heatmap's
// resolution, and both the program's 0.5 s within 2%.
func TestPeriodHeatmapAgainstDXTOnARealLog(t *testing.T) {
	log := interop.Path(t, "darshan/iopred/ckpt-dxt-heatmap.darshan")
	periods := map[string]float64{}
	for _, signal := range []string{"auto", "heatmap"} {
		code, out, errOut := run("period", "--json", "--signal", signal, log)
		if code != 0 {
			t.Fatalf("--signal %s: exit %d: %s", signal, code, errOut)
		}
		var res struct {
			Signal      string   `json:"signal"`
			ResolutionS float64  `json:"time_resolution_s"`
			PeriodS     *float64 `json:"period_s"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res.PeriodS == nil || (signal == "heatmap") != (res.Signal == "heatmap" && res.ResolutionS == 0.2) {
			t.Fatalf("--signal %s: %s", signal, out)
		}
		periods[signal] = *res.PeriodS
	}
	t.Logf("period from DXT %.4f s, from the heatmap (0.2 s bins) %.4f s", periods["auto"], periods["heatmap"])
	for signal, p := range periods {
		if math.Abs(p-0.5)/0.5 > 0.02 {
			t.Errorf("--signal %s: period %.4f s, want 0.5 s within 2%%", signal, p)
		}
	}
	if math.Abs(periods["auto"]-periods["heatmap"]) > 0.2 {
		t.Errorf("DXT's period %.4f s and the heatmap's %.4f s differ by more than a bin", periods["auto"], periods["heatmap"])
	}
}

// TestImportJobsIdentical proves that `import darshan` of many logs prints
// the same lines and warnings and writes the same traces, byte for byte,
// whatever --jobs: logs with DXT, counters only, Lustre layouts, a log cut
// short (its warning counted over its ranks) and one the reader warns
// about.
func TestImportJobsIdentical(t *testing.T) {
	whole, err := os.ReadFile(interop.Path(t, dxtLog))
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	cut := filepath.Join(in, "cut.darshan")
	os.WriteFile(cut, whole[:len(whole)-200], 0o644)
	logs := []string{interop.Path(t, dxtLog), cut}
	for _, rel := range []string{"darshan/darshan-logs/mpi-io-test-x86_64-3.4.7.darshan", "darshan/pytokio/sample.darshan",
		"darshan/darshan-logs/nonmpi_dxt_anonymized.darshan", "darshan/darshan-logs/mpi-io-test-ppc64-3.1.8.darshan"} {
		logs = append(logs, interop.Path(t, rel))
	}
	var want string
	for _, jobs := range []string{"1", "2", "4"} {
		out := filepath.Join(t.TempDir(), "imported")
		code, stdout, stderr := run(append(append([]string{"import", "darshan", "--jobs", jobs}, logs...), "-o", out)...)
		got := fmt.Sprintf("exit %d\n%s\n%s", code, strings.ReplaceAll(stdout, out, "OUT"), stderr)
		files, _ := filepath.Glob(filepath.Join(out, "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got += fmt.Sprintf("%s %x\n", filepath.Base(f), sha256.Sum256(b))
		}
		if jobs == "1" {
			want = got
			if code != 0 || len(files) < 40 || !strings.Contains(stderr, "stay marked partial") {
				t.Fatalf("--jobs 1: %d traces, exit %d:\n%s", len(files), code, got)
			}
			continue
		}
		if got != want {
			t.Errorf("--jobs %s differs from --jobs 1:\n%s\nwant\n%s", jobs, got, want)
		}
	}
}

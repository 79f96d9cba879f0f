package prefetch

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"iopred/tests/testenv"
	"iopred/tracefmt"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
)

// sameEverywhere runs a program cold without the library, under it with
// prefetching off and with it on, fails unless the three print the same
// thing, and returns the prefetch run's summed counters.
func sameEverywhere(t *testing.T, files []string, extra []string, prog string, args ...string) tracefmt.Prefetch {
	t.Helper()
	want, _ := runProgram(t, plain, files, extra, prog, args...)
	off, offTraces := runProgram(t, tracedOff, files, extra, prog, args...)
	on, onTraces := runProgram(t, tracedOn, files, extra, prog, args...)
	if off.Stdout != want.Stdout || on.Stdout != want.Stdout {
		t.Fatalf("%s %v prints differently:\nwithout iopred: %q\nprefetch off:   %q\nprefetch on:    %q", prog, args, want.Stdout, off.Stdout, on.Stdout)
	}
	for _, f := range footers(t, offTraces) {
		if f.Prefetch != nil {
			t.Errorf("prefetching off, yet the footer has prefetch counters: %+v", *f.Prefetch)
		}
	}
	p := sum(footers(t, onTraces))
	balanced(t, p)
	return p
}

// wellCovered fails unless at least min of the reads were covered and at
// most 10% of the prefetched bytes were wasted.
func wellCovered(t *testing.T, p tracefmt.Prefetch, reads uint64, min float64) {
	t.Helper()
	if float64(p.Covered) < min*float64(reads) {
		t.Errorf("%d of %d reads covered, want %.0f%% at least: %+v", p.Covered, reads, 100*min, p)
	}
	if p.PrefetchedBytes == 0 || float64(p.WastedBytes) > 0.10*float64(p.PrefetchedBytes) {
		t.Errorf("wasted %d of %d prefetched bytes, want 10%% at most: %+v", p.WastedBytes, p.PrefetchedBytes, p)
	}
}

// TestStridedReaders: a C program reading 64 KiB at a 1 MiB stride (pread,
// lseek+read, fseeko+fread), and tiles (runs of 16 reads at the stride,
// each run 256 KiB after the last: the nested detector), gets
// the same checksum with prefetching, and prefetching covers nearly every
// read with little waste.
func TestStridedReaders(t *testing.T) {
	dir := diskDir(t)
	data := randomFile(t, dir, "data", 128*mib)
	prog := testenv.CompileC(t, "strided.c")
	for _, tc := range []struct {
		mode          string
		reads, stride int64
	}{
		{"pread", 120, mib},
		{"read", 120, mib},
		{"fread", 120, mib},
		{"tiles", 256, 4 * mib}, // 16 runs of 16 reads, the runs 256 KiB apart
	} {
		t.Run(tc.mode, func(t *testing.T) {
			p := sameEverywhere(t, []string{data}, nil, prog, data, fmt.Sprint(tc.reads), fmt.Sprint(64*kib), fmt.Sprint(tc.stride), "50", tc.mode)
			wellCovered(t, p, uint64(tc.reads), 0.85)
		})
	}
}

// fadviseThread tells whether the library's fadvise thread was among the
// threads strided.c or pystride.py names at its end ("tasks ..." on
// stderr).
func fadviseThread(t *testing.T, stderr string) bool {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if names, ok := strings.CutPrefix(line, "tasks "); ok {
			return slices.Contains(strings.Fields(names), "iopred-fadvise")
		}
	}
	t.Fatalf("strided printed no tasks line:\n%s", stderr)
	return false
}

// TestRandomReadsAreLeftAlone: reads at random offsets never reach the
// confidence the detector needs, so nothing is prefetched at all (no
// fadvise, no waste), for a C program and for fio's random reads; the
// process does not even get the fadvise thread, which a strided reader
// of the same file does.
func TestRandomReadsAreLeftAlone(t *testing.T) {
	dir := diskDir(t)
	data := randomFile(t, dir, "data", 128*mib)
	prog := testenv.CompileC(t, "strided.c")
	randomArgs := []string{data, "400", fmt.Sprint(64 * kib), "0", "0", "random", "11"}
	p := sameEverywhere(t, []string{data}, nil, prog, randomArgs...)
	if p.Reads < 400 || p.PrefetchedBytes != 0 || p.Calls != 0 {
		t.Errorf("random reads: want 400 reads seen and nothing prefetched, got %+v", p)
	}
	if res, _ := runProgram(t, tracedOn, []string{data}, nil, prog, randomArgs...); fadviseThread(t, res.Stderr) {
		t.Errorf("random reads: the process started the fadvise thread, with nothing to prefetch")
	}
	if res, _ := runProgram(t, tracedOn, []string{data}, nil, prog, data, "120", fmt.Sprint(64*kib), fmt.Sprint(mib), "0", "pread"); !fadviseThread(t, res.Stderr) {
		t.Errorf("strided reads: no fadvise thread among the process's threads:\n%s", res.Stderr)
	}

	fio := testenv.Tool(t, "fio")
	args := []string{"--name=rand", "--filename=" + data, "--rw=randread", "--bs=64k", "--size=128m", "--io_size=16m",
		"--ioengine=psync", "--thread", "--randrepeat=1", "--output-format=terse"}
	_, traces := runProgram(t, tracedOn, []string{data}, nil, fio, args...)
	p = sum(footers(t, traces))
	balanced(t, p)
	if p.Reads < 256 || p.PrefetchedBytes > 0 {
		t.Errorf("fio randread: want at least 256 reads seen and nothing prefetched, got %+v", p)
	}
}

// TestRepeatedRunFollowsEarlierReads: a program whose reads look random
// but are the same each run. The first run with IOPRED_MODEL prefetches
// nothing (no stride) and saves its reads beside the model; the second
// follows them and covers nearly every read; a run with other random
// offsets finds no match and prefetches nothing.
func TestRepeatedRunFollowsEarlierReads(t *testing.T) {
	dir := diskDir(t)
	data := randomFile(t, dir, "data", 128*mib)
	prog := testenv.CompileC(t, "strided.c")
	model := filepath.Join(t.TempDir(), "model")
	env := []string{"IOPRED_MODEL=" + model}
	args := []string{data, "300", fmt.Sprint(64 * kib), "0", "50", "random", "7"}
	want, _ := runProgram(t, plain, []string{data}, nil, prog, args...)

	first, traces := runProgram(t, tracedOn, []string{data}, env, prog, args...)
	p1 := onlyFooter(t, traces).Prefetch
	if first.Stdout != want.Stdout || p1 == nil || p1.PrefetchedBytes != 0 {
		t.Fatalf("first run: output %q (want %q), counters %+v: want nothing prefetched", first.Stdout, want.Stdout, p1)
	}
	if _, err := os.Stat(model + ".reads"); err != nil {
		t.Fatalf("the first run saved no read sequence: %v", err)
	}
	second, traces := runProgram(t, tracedOn, []string{data}, env, prog, args...)
	p2 := onlyFooter(t, traces).Prefetch
	if second.Stdout != want.Stdout {
		t.Fatalf("second run prints %q, want %q", second.Stdout, want.Stdout)
	}
	balanced(t, *p2)
	if p2.TableFiles != 1 {
		t.Errorf("second run: %d files with an earlier sequence, want 1", p2.TableFiles)
	}
	wellCovered(t, *p2, 300, 0.9)

	other := []string{data, "300", fmt.Sprint(64 * kib), "0", "50", "random", "8"}
	_, traces = runProgram(t, tracedOn, []string{data}, env, prog, other...)
	if p := onlyFooter(t, traces).Prefetch; p.PrefetchedBytes > 4*64*uint64(kib) {
		t.Errorf("a run with other offsets prefetched %d bytes following the earlier run: %+v", p.PrefetchedBytes, *p)
	}
}

// TestReadTablesAtStart: the library's constructor reads the model's
// .reads file (in C, before the program's main). A file from a newer
// writer (compact integers, keys it does not know) is followed; a file
// that does not parse (garbage, or cut short) changes nothing the
// program sees, installs no table, and says so on stderr.
func TestReadTablesAtStart(t *testing.T) {
	dir := diskDir(t)
	data := randomFile(t, dir, "data", 64*mib)
	prog := testenv.CompileC(t, "strided.c")
	args := []string{data, "200", fmt.Sprint(64 * kib), "0", "50", "random", "7"}
	want, _ := runProgram(t, plain, []string{data}, nil, prog, args...)
	model := filepath.Join(t.TempDir(), "model")
	env := []string{"IOPRED_MODEL=" + model}
	if res, _ := runProgram(t, tracedOn, []string{data}, env, prog, args...); res.Stdout != want.Stdout {
		t.Fatalf("first run prints %q, want %q", res.Stdout, want.Stdout)
	}
	saved, err := os.ReadFile(model + ".reads")
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Files map[string]struct {
			Off  []int64 `msgpack:"off"`
			Size []int64 `msgpack:"size"`
		} `msgpack:"files"`
	}
	if err := msgpack.Unmarshal(saved, &log); err != nil || len(log.Files[data].Off) != 200 {
		t.Fatalf("the first run saved %d reads of %s (%v), want 200", len(log.Files[data].Off), data, err)
	}
	var newer strings.Builder
	enc := msgpack.NewEncoder(&newer)
	enc.UseCompactInts(true)
	if err := enc.Encode(map[string]any{
		"version": 2,
		"files": map[string]any{data: map[string]any{
			"size": log.Files[data].Size, "when": []float64{1.5}, "off": log.Files[data].Off,
			"a key longer than any of ours": map[string]any{"x": nil, "y": true},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	// A link planted at the table's name, even to a good table, is not
	// followed: the library reads back only files it wrote itself.
	good := filepath.Join(t.TempDir(), "good.reads")
	if err := os.WriteFile(good, saved, 0o600); err != nil {
		t.Fatal(err)
	}
	const notTable, linked = "not a read table", "is a symbolic link, not followed"
	cases := []struct {
		name    string
		reads   []byte
		link    bool
		tables  int
		warning string
	}{
		{"a newer writer's file", []byte(newer.String()), false, 1, ""},
		{"garbage", []byte("not msgpack at all"), false, 0, notTable},
		{"cut short", saved[:len(saved)/2], false, 0, notTable},
		{"a link to a good table", nil, true, 0, linked},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := filepath.Join(t.TempDir(), "model")
			var err error
			if c.link {
				err = os.Symlink(good, m+".reads")
			} else {
				err = os.WriteFile(m+".reads", c.reads, 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			res, traces := runProgram(t, tracedOn, []string{data}, []string{"IOPRED_MODEL=" + m}, prog, args...)
			if res.Stdout != want.Stdout {
				t.Errorf("prints %q, want %q", res.Stdout, want.Stdout)
			}
			p := onlyFooter(t, traces).Prefetch
			if p == nil || p.TableFiles != c.tables {
				t.Fatalf("counters %+v, want %d files with an earlier sequence", p, c.tables)
			}
			if c.tables > 0 {
				wellCovered(t, *p, 200, 0.9)
			}
			for _, w := range []string{notTable, linked} {
				if warned := strings.Contains(res.Stderr, w); warned != (w == c.warning) {
					t.Errorf("warned %q: %v, want %v; stderr:\n%s", w, warned, w == c.warning, res.Stderr)
				}
			}
		})
	}
}

// TestHDF5Hyperslabs: hyperslab reads of a column stripe of a dataset that
// the test's HDF5 program wrote (Debian's libhdf5, sec2 driver: one pread
// per row of a tile). Same values read with prefetching; the row reads are
// covered.
func TestHDF5Hyperslabs(t *testing.T) {
	dir := diskDir(t)
	prog := compileH5(t, "h5slab.c")
	field := filepath.Join(dir, "field.h5")
	if res := testenv.Run(t, nil, "", prog, "write", field, "128", "131072"); res.Code != 0 {
		t.Fatalf("h5slab write: %+v", res)
	}
	p := sameEverywhere(t, []string{field}, nil, prog, "read", field, "8192", "4", "100")
	// 128 row reads of 64 KiB, and HDF5's few small metadata reads.
	wellCovered(t, p, 128, 0.85)
}

// TestPythonStridedLoops: a Python loop reading a file at a stride through
// readinto (read(2) underneath) is covered like the C reader. The same loop
// over a numpy.memmap makes no read calls at all (its pages come by page
// faults, which an LD_PRELOAD library cannot see): prefetching must leave
// it alone (no fadvise call, no fadvise thread), and it prints the same
// values.
func TestPythonStridedLoops(t *testing.T) {
	dir := diskDir(t)
	data := randomFile(t, dir, "data", 128*mib)
	py := python3(t)
	script, _ := filepath.Abs(filepath.Join("testdata", "pystride.py"))
	p := sameEverywhere(t, []string{data}, nil, py, script, "readinto", data, "120", fmt.Sprint(64*kib), fmt.Sprint(mib), "100")
	wellCovered(t, p, 120, 0.85)
	p = sameEverywhere(t, []string{data}, nil, py, script, "memmap", data, "120", fmt.Sprint(64*kib), fmt.Sprint(mib), "100")
	if p.PrefetchedBytes != 0 || p.Calls != 0 {
		t.Errorf("memmap loop: prefetched %d bytes in %d calls, but its reads are page faults the library cannot see", p.PrefetchedBytes, p.Calls)
	}
	if res, _ := runProgram(t, tracedOn, []string{data}, nil, py, script, "memmap", data, "120", fmt.Sprint(64*kib), fmt.Sprint(mib), "100"); fadviseThread(t, res.Stderr) {
		t.Errorf("memmap loop: the process started the fadvise thread, with nothing to prefetch")
	}
	if res, _ := runProgram(t, tracedOn, []string{data}, nil, py, script, "readinto", data, "120", fmt.Sprint(64*kib), fmt.Sprint(mib), "100"); !fadviseThread(t, res.Stderr) {
		t.Errorf("readinto loop: no fadvise thread among the process's threads:\n%s", res.Stderr)
	}
}

// mpiEnv is what mpirun needs as root in a container.
var mpiEnv = []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1"}

// runMPI runs the collective read job on 2 ranks of Open MPI with the io
// component given, cold, in mode m.
func runMPI(t testing.TB, m mode, io, prog, data string, args ...string) (string, string) {
	t.Helper()
	coldCache(t, data)
	traces := t.TempDir()
	a := []string{"--oversubscribe", "-np", "2", "-x", "OMPI_MCA_io=" + io}
	switch m {
	case tracedOff:
		a = append(a, "-x", "LD_PRELOAD="+testenv.Library(t), "-x", "IOPRED_DIR="+traces)
	case tracedOn:
		a = append(a, "-x", "LD_PRELOAD="+testenv.Library(t), "-x", "IOPRED_DIR="+traces, "-x", "IOPRED_PREFETCH=1")
	}
	a = append(append(a, prog, data), args...)
	cmd := exec.Command(testenv.Tool(t, "mpirun.openmpi"), a...)
	cmd.Env = append(os.Environ(), mpiEnv...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("mpirun %v: %v\n%s", a, err, errb.String())
	}
	return out.String(), traces
}

// TestMPIIOCollectiveReads: MPI_File_read_at_all on 2 ranks, both of Open
// MPI's io components (ompio, ROMIO): the reads reach the file through
// pread underneath, each rank's stream is strided (blocks of 512 KiB, a
// 4 MiB stride), prefetching covers it, and the job's checksum is the same.
func TestMPIIOCollectiveReads(t *testing.T) {
	dir := diskDir(t)
	data := randomFile(t, dir, "data", 128*mib)
	mpicc := testenv.Tool(t, "mpicc.openmpi")
	prog := filepath.Join(t.TempDir(), "mpiread")
	if b, err := exec.Command(mpicc, "-O2", "-o", prog, filepath.Join("testdata", "mpiread.c")).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, b)
	}
	args := []string{fmt.Sprint(512 * kib), fmt.Sprint(4 * mib), "30", "200"}
	for _, io := range []string{"ompio", "romio321"} {
		t.Run(io, func(t *testing.T) {
			want, _ := runMPI(t, plain, io, prog, data, args...)
			got, traces := runMPI(t, tracedOn, io, prog, data, args...)
			if got != want {
				t.Fatalf("checksum %q with prefetching, %q without", got, want)
			}
			fs := footers(t, traces)
			if len(fs) != 2 {
				t.Fatalf("%d traces, want one per rank", len(fs))
			}
			for _, f := range fs {
				p := *f.Prefetch
				balanced(t, p)
				// 30 reads per rank; the last 8 predictions run past the
				// job's end, which is waste on so short a stream, so only
				// coverage is held to a bound here.
				if p.Covered < 25 {
					t.Errorf("%d of %d reads covered, want 25: %+v", p.Covered, p.Reads, p)
				}
			}
		})
	}
}

// TestForkedChildren: a process that forks without exec after its own
// prefetching started (its fadvise thread does not survive the fork, and
// the thread's queue lock may have been taken) gets the same output, and
// each child of fork prefetches its own strided reads with a thread of its
// own, its counters in its trace (converted from its spill), whether it
// ends with exit or _exit; the child of _Fork, which may make only
// async-signal-safe calls, does not prefetch.
func TestForkedChildren(t *testing.T) {
	dir := diskDir(t)
	data := randomFile(t, dir, "data", 512*mib)
	prog := testenv.CompileC(t, "forkread.c")
	const reads = 120
	sameEverywhere(t, []string{data}, nil, prog, data, fmt.Sprint(reads), fmt.Sprint(64*kib), fmt.Sprint(mib), "50")
	_, traces := runProgram(t, tracedOn, []string{data}, nil, prog, data, fmt.Sprint(reads), fmt.Sprint(64*kib), fmt.Sprint(mib), "50")
	fs := footers(t, traces)
	if len(fs) != 4 {
		t.Fatalf("want 4 traces (the parent and 3 children), found %d", len(fs))
	}
	var prefetching, without int
	for _, f := range fs {
		if f.Prefetch == nil {
			without++
			continue
		}
		prefetching++
		balanced(t, *f.Prefetch)
		// A child's first read comes before its spill has a header for the
		// counters: it is not counted.
		wellCovered(t, *f.Prefetch, reads-1, 0.85)
	}
	if prefetching != 3 || without != 1 {
		t.Errorf("%d traces with prefetch counters and %d without; want 3 (the parent, the children of fork) and 1 (the child of _Fork)", prefetching, without)
	}
}

// TestResultsAndErrnoUnchanged: return values and errno of reads that
// succeed, come up short, hit the end of the file or fail (negative
// offset, a closed descriptor, a directory), and of close with prefetches
// pending, are byte for byte those of the run without iopred; successful
// reads leave errno as the program set it.
func TestResultsAndErrnoUnchanged(t *testing.T) {
	dir := diskDir(t)
	data := randomFile(t, dir, "data", 64*mib)
	prog := testenv.CompileC(t, "pferrno.c")
	sameEverywhere(t, []string{data}, nil, prog, data)
	res, _ := runProgram(t, tracedOn, []string{data}, nil, prog, data)
	if !strings.Contains(res.Stdout, "successful reads that kept errno: 44\n") {
		t.Errorf("want 44 successful reads that kept errno:\n%s", res.Stdout)
	}
}

// replayResult runs `iopred replay --prefetch --json` and returns the named
// predictor's result.
func replayResult(t *testing.T, predictor string, runs ...string) (reads, predicted int64) {
	t.Helper()
	cmd := filepath.Join(testenv.RepoRoot(), "build", "iopred")
	testenv.Library(t) // builds the command too
	res := testenv.Run(t, nil, "", cmd, append([]string{"replay", "--prefetch", "--json", "--depth", "8"}, runs...)...)
	if res.Code != 0 {
		t.Fatalf("iopred replay --prefetch: %+v", res)
	}
	var rep struct {
		Results []struct {
			Predictor string `json:"predictor"`
			Reads     int64  `json:"reads"`
			Predicted int64  `json:"predicted_reads"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Predictor == predictor {
			return r.Reads, r.Predicted
		}
	}
	t.Fatalf("no %s result in %s", predictor, res.Stdout)
	return 0, 0
}

// TestReplayAgreesWithLiveCounters: the offline evaluation and the live
// counters tell the same share of reads covered, within 5 points: the
// strided run against the pattern predictor (one run, scored on its second
// half), the repeated run against the Markov model trained on the first
// run. The data file's reads are the only reads of these programs.
func TestReplayAgreesWithLiveCounters(t *testing.T) {
	dir := diskDir(t)
	data := randomFile(t, dir, "data", 128*mib)
	prog := testenv.CompileC(t, "strided.c")
	const tolerance = 0.05

	_, traces := runProgram(t, tracedOn, []string{data}, nil, prog, data, "120", fmt.Sprint(64*kib), fmt.Sprint(mib), "0", "pread")
	live := onlyFooter(t, traces).Prefetch
	reads, predicted := replayResult(t, "pattern", traces)
	liveShare, offline := float64(live.Covered)/float64(live.Reads), float64(predicted)/float64(reads)
	if d := liveShare - offline; d > tolerance || d < -tolerance {
		t.Errorf("strided: live %.3f of reads covered, replay --prefetch (pattern) %.3f", liveShare, offline)
	}

	model := filepath.Join(t.TempDir(), "model")
	env := []string{"IOPRED_MODEL=" + model}
	args := []string{data, "200", fmt.Sprint(64 * kib), "0", "0", "random", "5"}
	_, first := runProgram(t, tracedOn, []string{data}, env, prog, args...)
	_, second := runProgram(t, tracedOn, []string{data}, env, prog, args...)
	live = onlyFooter(t, second).Prefetch
	reads, predicted = replayResult(t, "markov", first, second)
	liveShare, offline = float64(live.Covered)/float64(live.Reads), float64(predicted)/float64(reads)
	if d := liveShare - offline; d > tolerance || d < -tolerance {
		t.Errorf("repeated: live %.3f of reads covered, replay --prefetch (markov, trained on the first run) %.3f", liveShare, offline)
	}
}

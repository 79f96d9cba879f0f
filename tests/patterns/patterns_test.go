// Package patterns tests the PLFS-style pattern detector on traces that
// libiopred.so records from real programs: a C workload with a 2-D strided
// pattern of small records run as several processes, and fio's strided and
// zoned jobs. It also scores next-read prefetching on such a trace.
package patterns

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"iopred/analyzer/patterns"
	"iopred/analyzer/prefetch"
	"iopred/predictor/pattern"
	"iopred/tests/testenv"
	"iopred/tracefmt"
)

// stridedRun runs strided2d as nproc processes (each with its IOPRED_RANK)
// on one shared file, under the library, and returns the trace directory.
// Each process writes then reads back rows*cols records of rec bytes.
func stridedRun(t *testing.T, prog, data string, nproc, rows, cols, rec int) (traces string) {
	t.Helper()
	traces = t.TempDir()
	bareData := filepath.Join(t.TempDir(), "shared.dat")
	for r := 0; r < nproc; r++ {
		args := []string{fmt.Sprint(r), fmt.Sprint(nproc), fmt.Sprint(rows), fmt.Sprint(cols), fmt.Sprint(rec)}
		bare := testenv.Run(t, nil, "", prog, append([]string{bareData}, args...)...)
		res := testenv.Traced(t, traces, []string{"IOPRED_RANK=" + fmt.Sprint(r)}, "", prog, append([]string{data}, args...)...)
		if res != bare || res.Code != 0 {
			t.Fatalf("rank %d with the library %+v, without %+v", r, res, bare)
		}
	}
	return traces
}

func discover(t *testing.T, dir string) []string {
	t.Helper()
	files, err := tracefmt.Discover(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("traces in %s: %v %v", dir, files, err)
	}
	return files
}

// The paper's LANL App 3 / MILC case: 100,000 small records in a 2-D
// strided pattern, written and read by 4 processes. Each process's reads
// and writes are one pattern entry, the index compresses at least 1000
// times, a lookup inside the pattern finds the request's physical offset,
// and the pattern tree shows both loops.
func TestStrided2D(t *testing.T) {
	const nproc, rows, cols, rec = 4, 250, 100, 64
	prog := testenv.CompileC(t, "strided2d.c")
	data := filepath.Join(t.TempDir(), "shared.dat")
	traces := stridedRun(t, prog, data, nproc, rows, cols, rec)
	rep, err := patterns.Analyze(discover(t, traces), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 1 || rep.Files[0].Path != data {
		t.Fatalf("files %+v, want only %s", rep.Files, data)
	}
	f := rep.Files[0]
	if want := int64(2 * nproc * rows * cols); f.Requests != want {
		t.Fatalf("%d requests, want %d", f.Requests, want)
	}
	if f.CompressionRatio < 1000 || f.Coverage != 1 {
		t.Errorf("compression ratio %.1f (want >= 1000), coverage %.3f (want 1)", f.CompressionRatio, f.Coverage)
	}
	if len(f.Local) != 2*nproc {
		t.Fatalf("%d local indexes, want reads and writes of %d processes", len(f.Local), nproc)
	}
	rowBytes := int64(nproc * cols * rec * 2)
	for _, l := range f.Local {
		if l.Rank == nil || len(l.Entries) != 1 {
			t.Errorf("rank %v %s: %d pattern entries, want 1: %v", l.Rank, l.Kind, len(l.Entries), l.Patterns)
			continue
		}
		first := int64(*l.Rank) * cols * rec * 2
		wantTree := fmt.Sprintf("%d: {(%d)^%d (%d)^1}^%d (%d)^%d", first, rec, cols-1, rowBytes-int64(cols-1)*rec, rows-1, rec, cols-1)
		if l.Tree != wantTree {
			t.Errorf("rank %d %s: tree %q, want %q", *l.Rank, l.Kind, l.Tree, wantTree)
		}
		// Record j of row i: logical offset first + i*rowBytes + j*rec, and
		// the process moved (i*cols+j)*rec bytes before it.
		i, j := int64(rows/2), int64(cols/3)
		hit, ok := pattern.LookupIndex(l.Entries, first+i*rowBytes+j*rec+5)
		if !ok || hit.Physical != (i*cols+j)*rec+5 {
			t.Errorf("rank %d %s: lookup = %+v %v, want physical %d", *l.Rank, l.Kind, hit, ok, (i*cols+j)*rec+5)
		}
		if _, ok := pattern.LookupIndex(l.Entries, first+i*rowBytes+cols*rec+1); ok {
			t.Errorf("rank %d %s: an offset in the gap after a row was found", *l.Rank, l.Kind)
		}
	}
}

// fio's strided write (a 4 KiB hole after every 4 KiB block) and a zoned
// read (64 KiB out of every 256 KiB): the patterns found are the strides
// the jobs configure.
func TestFioStrides(t *testing.T) {
	fio := testenv.Tool(t, "fio")
	dir := t.TempDir()
	const bs, hole, zoneSize, zoneRange = 4096, 4096, 64 << 10, 256 << 10
	jobs := []struct {
		name, kind string
		args       []string
		unit       []int64 // the repeating deltas of the logical offsets
	}{
		{"stride", "write", []string{fmt.Sprintf("--rw=write:%d", hole)}, []int64{bs + hole}},
		{"zoned", "read", []string{"--rw=read", "--zonemode=strided", fmt.Sprintf("--zonesize=%d", zoneSize), fmt.Sprintf("--zonerange=%d", zoneRange)},
			append(repeat(bs, zoneSize/bs-1), zoneRange-zoneSize+bs)},
	}
	for _, job := range jobs {
		t.Run(job.name, func(t *testing.T) {
			traces := t.TempDir()
			file := filepath.Join(dir, job.name+".dat")
			// fio forks its jobs by default; a forked child never enters
			// Go and is not traced, so the jobs run as threads.
			args := append([]string{"--thread", "--name=" + job.name, "--filename=" + file, fmt.Sprintf("--bs=%d", bs),
				"--size=4m", "--ioengine=psync", "--output-format=terse"}, job.args...)
			if res := testenv.Traced(t, traces, nil, "", fio, args...); res.Code != 0 {
				t.Fatalf("fio: %+v", res)
			}
			rep, err := patterns.Analyze(discover(t, traces), 0)
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, f := range rep.Files {
				if f.Path != file {
					continue
				}
				for _, l := range f.Local {
					if l.Kind != job.kind {
						continue
					}
					found = true
					u := l.Entries[0].Logical
					if u.Init != 0 || !prefix(u.Deltas, job.unit) || u.Reps < 2 {
						t.Errorf("%s pattern %s, want a repeated unit starting %v", job.kind, u, job.unit)
					}
				}
			}
			if !found {
				t.Fatalf("no %s pattern of %s in %+v", job.kind, file, rep.Files)
			}
		})
	}
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// prefix reports whether d is unit repeated, but for its last delta when
// that one goes back to the start of the file (fio wraps around when its
// zones cover less than the job's size).
func prefix(d, unit []int64) bool {
	if len(d) > 1 && d[len(d)-1] < 0 {
		d = d[:len(d)-1]
	}
	if len(d) == 0 {
		return false
	}
	for i, x := range d {
		if x != unit[i%len(unit)] {
			return false
		}
	}
	return true
}

// Section 4.3's point, on strided reads of 16 KiB records: the pattern
// predictor, learning as it goes, predicts at least 95% of the reads of a
// first run, which a Markov model over 8 KiB blocks cannot do before it
// was trained on a previous run; trained, it catches up.
func TestPrefetchStridedReads(t *testing.T) {
	prog := testenv.CompileC(t, "strided2d.c")
	// The same file in both runs: the Markov model knows blocks by file.
	data := filepath.Join(t.TempDir(), "shared.dat")
	first := stridedRun(t, prog, data, 2, 400, 4, 16384)
	second := stridedRun(t, prog, data, 2, 400, 4, 16384)
	rep, err := prefetch.Evaluate(discover(t, first), discover(t, second), prefetch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]prefetch.Result{}
	var lines []string
	for _, r := range rep.Results {
		got[r.Predictor] = r
		lines = append(lines, fmt.Sprintf("%s %.3f", r.Predictor, r.PredictedFraction))
	}
	t.Log(strings.Join(lines, ", "))
	if p := got[prefetch.Pattern]; p.Reads != 2*400*4 || p.PredictedFraction < 0.95 {
		t.Errorf("pattern predictor: %+v, want >= 95%% of %d reads", p, 2*400*4)
	}
	if m := got[prefetch.MarkovInitial]; m.PredictedFraction >= got[prefetch.Pattern].PredictedFraction {
		t.Errorf("untrained Markov %.3f is not below the pattern predictor", m.PredictedFraction)
	}
	if m := got[prefetch.Markov]; m.PredictedFraction < 0.9 {
		t.Errorf("Markov trained on the first run predicts %.3f of the second", m.PredictedFraction)
	}
}

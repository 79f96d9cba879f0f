// Package mpi checks iopred's MPI-IO interposition in real MPI jobs, under
// Debian's Open MPI and Debian's MPICH with one libiopred.so: an IOR-like C
// workload (N-1 strided independent and collective, N-N file per process,
// nonblocking reads), a Fortran MPI-IO program, a job that calls
// MPI_Abort, and programs without MPI. The expected offsets and sizes are
// computed here from the workloads' parameters.
//
// Needs the Debian packages openmpi-bin, libopenmpi-dev, mpich,
// libmpich-dev and gfortran; the library must be built (make lib).
package mpi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"iopred/analyzer/patterns"
	"iopred/tests/testenv"
	"iopred/tracefmt"
)

func library(t testing.TB) string { return testenv.Library(t) }

// impl is one MPI implementation, named by Debian's explicit tool names
// (the unsuffixed names follow the alternatives system, which picks one).
type impl struct {
	name, cc, fc, run string
	// launch returns mpirun's arguments for np ranks with env set in the
	// ranks only (mpirun itself is not traced).
	launch func(np int, env []string, prog string, args ...string) []string
}

var impls = []impl{
	{
		name: "openmpi", cc: "mpicc.openmpi", fc: "mpif90.openmpi", run: "mpirun.openmpi",
		launch: func(np int, env []string, prog string, args ...string) []string {
			a := []string{"--oversubscribe", "-np", fmt.Sprint(np)}
			for _, e := range env {
				a = append(a, "-x", e)
			}
			return append(append(a, prog), args...)
		},
	},
	{
		name: "mpich", cc: "mpicc.mpich", fc: "mpif90.mpich", run: "mpirun.mpich",
		launch: func(np int, env []string, prog string, args ...string) []string {
			a := []string{"-np", fmt.Sprint(np)}
			for _, e := range env {
				k, v, _ := strings.Cut(e, "=")
				a = append(a, "-genv", k, v)
			}
			return append(append(a, prog), args...)
		},
	},
}

func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: install openmpi-bin libopenmpi-dev mpich libmpich-dev gfortran", tool)
		}
	}
}

// compile builds a test program from testdata with an MPI compiler wrapper.
func compile(t testing.TB, compiler, src string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(src, filepath.Ext(src)))
	args := []string{"-O2", "-o", out, filepath.Join("testdata", src)}
	if strings.HasSuffix(src, ".c") {
		args = append(args, "-Wno-stringop-overflow") // MPICH's header declares MPI_STATUSES_IGNORE arrays oddly
	}
	if b, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, src, err, b)
	}
	return out
}

// mpirun runs a job with a deadline, so that a hang fails the test rather
// than the CI run. It returns the combined output and the exit error.
func mpirun(t testing.TB, m impl, np int, timeout time.Duration, env []string, prog string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.run, m.launch(np, env, prog, args...)...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %v:\n%s", m.run, timeout, out)
	}
	return out, err
}

// trace is one process's trace as read back.
type trace struct {
	path   string
	hdr    tracefmt.Header
	events []*tracefmt.Event
	clean  bool // ended with a footer
}

// readTraces reads every trace in dir written by a program whose base
// name is prog (any program when prog is empty). A truncated tail is accepted (clean false); a corrupt
// trace fails the test.
func readTraces(t testing.TB, dir, prog string) []*trace {
	t.Helper()
	var out []*trace
	if m, _ := filepath.Glob(filepath.Join(dir, "*"+tracefmt.FileSuffix)); len(m) == 0 {
		return nil
	}
	paths, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		r, err := tracefmt.Open(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		tr := &trace{path: p, hdr: r.Header()}
		for {
			rec, err := r.Next()
			if err == io.EOF {
				tr.clean = true
				break
			}
			var trunc *tracefmt.TruncatedError
			if errors.As(err, &trunc) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if rec.Event != nil {
				tr.events = append(tr.events, rec.Event)
			}
		}
		r.Close()
		if prog == "" || filepath.Base(tr.hdr.Program) == prog {
			out = append(out, tr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

func rank(tr *trace) int {
	if tr.hdr.Rank == nil {
		return -1
	}
	return *tr.hdr.Rank
}

// byRank checks that the job left one trace per rank 0..np-1, each with
// its rank in the header and in the file name.
func byRank(t *testing.T, traces []*trace, np int) {
	t.Helper()
	if len(traces) != np {
		t.Fatalf("%d traces, want one per rank (%d)", len(traces), np)
	}
	for i, tr := range traces {
		if rank(tr) != i {
			t.Fatalf("trace %s has rank %d, want %d", tr.path, rank(tr), i)
		}
		if !strings.Contains(filepath.Base(tr.path), fmt.Sprintf(".r%d.", i)) {
			t.Errorf("trace name %s does not carry rank %d", tr.path, i)
		}
	}
}

func (tr *trace) ops(op, pathSuffix string) []*tracefmt.Event {
	var out []*tracefmt.Event
	for _, e := range tr.events {
		if e.Op == op && strings.HasSuffix(e.Path, pathSuffix) {
			out = append(out, e)
		}
	}
	return out
}

func offsets(evs []*tracefmt.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Offset
	}
	return out
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkData checks the data events of one kind: their byte offsets in
// order, their size and bytes, the layer and the collective flag.
func checkData(t *testing.T, tr *trace, op, pathSuffix string, want []int64, size int64, collective bool) []*tracefmt.Event {
	t.Helper()
	evs := tr.ops(op, pathSuffix)
	if got := offsets(evs); !equalInts(got, want) {
		t.Errorf("rank %d %s on *%s: offsets %v, want %v", rank(tr), op, pathSuffix, got, want)
		return evs
	}
	for _, e := range evs {
		if e.Layer != tracefmt.LayerMPIIO || e.Size != size || e.Ret != 0 || tracefmt.IsCollective(e.Op) != collective || e.Seq == 0 {
			t.Errorf("rank %d: %s event %+v: want layer mpiio, size %d, ret 0, collective %v, a seq", rank(tr), op, *e, size, collective)
			break
		}
	}
	return evs
}

// The IOR-like workload's parameters.
const (
	iorRanks    = 4
	iorSegments = 3
	iorBlock    = 8192
	iorTransfer = 2048
	iorPauseMs  = 150
	// iorCheckpoints repeats the N-1 strided writes after the four phases,
	// a pause before each, so that the job's writes are periodic. A DFT
	// over the run resolves a period to within half a bin, 1/(2k) for k
	// periods: 50 checkpoints (53 write phases) make that 1%, which leaves
	// room for the jitter of oversubscribed ranks.
	iorCheckpoints = 50
)

// Under each implementation, every rank of the IOR-like job is traced
// once per call: the N-1 strided independent writes at s*N*B + r*B + j*T,
// the collective writes through a strided file view translated to the same
// byte offsets, the file-per-process writes at the individual file pointer,
// and the nonblocking reads with their MPI_Waitall completions (bytes from
// the status, parent = the read). The pwrites underneath point to their
// MPI-IO call, I/O before MPI_Init is recorded, and the compute pauses
// between phases show in the event times. Across the job, the N-1 strided
// file is one global pattern and the checkpoints' period is found, both
// offline from the traces and in the job summary rank 0 wrote at
// MPI_Finalize, which the traces reproduce exactly.
func TestIORLike(t *testing.T) {
	lib := library(t)
	for _, m := range impls {
		t.Run(m.name, func(t *testing.T) {
			need(t, m.cc, m.run)
			// MPICH's ranks busy-poll: four of them on two cores stretch
			// each checkpoint by 40 to 70 ms, unevenly, and the job then
			// has no single period to find (measured over a dozen runs).
			// Two ranks keep a core each.
			np := iorRanks
			if m.name == "mpich" {
				np = 2
			}
			prog := compile(t, m.cc, "ior.c")
			data, traces := t.TempDir(), t.TempDir()
			out, err := mpirun(t, m, np, 3*time.Minute, []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + traces},
				prog, data, fmt.Sprint(iorSegments), fmt.Sprint(iorBlock), fmt.Sprint(iorTransfer), fmt.Sprint(iorPauseMs),
				fmt.Sprintf("ckpt=%d", iorCheckpoints))
			if err != nil {
				t.Fatalf("job failed: %v\n%s", err, out)
			}
			trs := readTraces(t, traces, "ior")
			byRank(t, trs, np)
			for _, tr := range trs {
				checkIORRank(t, tr, int64(np))
			}
			file := filepath.Join(data, "n1_ind.dat")
			checkIORGlobalPattern(t, trs, file, np)
			interval := checkIORPeriod(t, trs)
			checkJobSummary(t, trs, traces, np, file, interval)
			// What `iopred period` prints by default: the same.
			testenv.CheckPeriod(t, traces, interval)
		})
	}
}

// checkIORGlobalPattern: the ranks' N-1 strided writes abut segment after
// segment, so the PLFS index of the whole job's writes is one global
// pattern that lists the ranks in order once per segment, and so is that
// of the reads that check them.
func checkIORGlobalPattern(t *testing.T, trs []*trace, file string, np int) {
	t.Helper()
	paths := make([]string, len(trs))
	for i, tr := range trs {
		paths[i] = tr.path
	}
	rep, err := patterns.Analyze(paths, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Files {
		if f.Path != file {
			continue
		}
		// The writes of phase 1 and their nonblocking read-back in phase 4
		// (counted at their MPI_Waitall completions) have the same layout.
		if len(f.Global) != 2 {
			t.Fatalf("%s: global patterns %+v, want one of writes and one of reads", file, f.Global)
		}
		for _, g := range f.Global {
			if g.Entry == nil {
				t.Fatalf("%s: %s global pattern without an entry", file, g.Kind)
			}
			ids := g.Entry.IDs
			if len(ids) != np*iorSegments {
				t.Fatalf("%s global pattern ids %v, want the %d ranks once per segment", g.Kind, ids, np)
			}
			for i, id := range ids {
				if want := int64(i % np); rank(trs[id]) != int(want) {
					t.Fatalf("%s global pattern ids %v are not the ranks in order", g.Kind, ids)
				}
			}
		}
		return
	}
	t.Fatalf("no patterns for %s", file)
}

// checkIORPeriod measures the checkpoints' interval from rank 0's trace
// (the starts of its checkpoint writes) and checks that it is the
// configured pause plus the write phase; checkJobSummary then checks the
// job's period against it. Plain FTIO is not asked here: the checkpoints
// are a train of short, evenly spaced bursts, whose spectrum has the
// harmonics as high as the fundamental, and at 100 Hz FTIO reports half
// the period in some runs (it did in one of five, on a quiet machine); the
// job summary checks the period against its multiples in the time domain.
func checkIORPeriod(t *testing.T, trs []*trace) testenv.Intervals {
	t.Helper()
	// Each checkpoint rewrites the file from its start, rank 0 at offset
	// 0: a checkpoint starts there, however a loaded machine stalls the
	// writes inside it (a gap of more than half the pause once split one
	// in two).
	var starts []float64
	for _, e := range trs[0].ops("MPI_File_write_at", "/ckpt.dat") {
		if e.Offset == 0 {
			starts = append(starts, float64(e.StartNs)/1e9)
		}
	}
	if len(starts) != iorCheckpoints {
		t.Fatalf("%d checkpoints seen in rank 0's trace, want %d", len(starts), iorCheckpoints)
	}
	iv := testenv.MeasureIntervals(t, starts)
	if iv.Median < iorPauseMs/1e3 || iv.Median > 2*iorPauseMs/1e3 {
		t.Errorf("checkpoints every %.4f s, configured pause %d ms", iv.Median, iorPauseMs)
	}
	return iv
}

func checkIORRank(t *testing.T, tr *trace, np int64) {
	t.Helper()
	r := int64(rank(tr))
	if !tr.clean {
		t.Errorf("rank %d: trace %s has no footer", r, tr.path)
	}
	per := int64(iorBlock / iorTransfer)
	var strided, viewed, own []int64
	for s := int64(0); s < iorSegments; s++ {
		for j := int64(0); j < per; j++ {
			strided = append(strided, s*np*iorBlock+r*iorBlock+j*iorTransfer)
		}
	}
	for k := int64(0); k < iorSegments*per; k++ {
		// etype offset k*T through the view (disp r*B, blocks of B every N*B)
		viewed = append(viewed, r*iorBlock+(k*iorTransfer/iorBlock)*np*iorBlock+(k*iorTransfer)%iorBlock)
		own = append(own, k*iorTransfer)
	}

	// Before MPI_Init: the POSIX write of preinit.<pid>, with the rank
	// the launcher gave.
	inits := tr.ops("MPI_Init", "")
	if len(inits) != 1 {
		t.Fatalf("rank %d: %d MPI_Init events, want 1", r, len(inits))
	}
	pre := tr.ops("write", fmt.Sprintf("preinit.%d", tr.hdr.PID))
	if len(pre) != 1 || pre[0].EndNs > inits[0].StartNs || pre[0].Bytes != 16 {
		t.Errorf("rank %d: the write before MPI_Init is missing or late: %v", r, pre)
	}

	ind := checkData(t, tr, "MPI_File_write_at", "/n1_ind.dat", strided, iorTransfer, false)
	coll := checkData(t, tr, "MPI_File_write_all", "/n1_coll.dat", viewed, iorTransfer, true)
	checkData(t, tr, "MPI_File_write", fmt.Sprintf("/nn.%d.dat", r), own, iorTransfer, false)
	reads := checkData(t, tr, "MPI_File_iread_at", "/n1_ind.dat", strided, iorTransfer, false)
	for _, e := range append(append([]*tracefmt.Event{}, ind...), coll...) {
		if e.Bytes != iorTransfer {
			t.Errorf("rank %d: %s at %d moved %d bytes, want %d", r, e.Op, e.Offset, e.Bytes, iorTransfer)
		}
	}

	// Every independent write has the pwrite it caused pointing to it.
	children := map[int64][]*tracefmt.Event{}
	for _, e := range tr.events {
		if e.Parent != 0 && e.Layer == tracefmt.LayerPOSIX {
			children[e.Parent] = append(children[e.Parent], e)
		}
	}
	for _, w := range ind {
		var moved int64
		for _, c := range children[w.Seq] {
			if tracefmt.IsWrite(c.Op) && c.Path == w.Path {
				if c.Offset < w.Offset || c.Offset+c.Bytes > w.Offset+w.Size {
					t.Errorf("rank %d: %s at %d has a child %s at %d+%d outside it", r, w.Op, w.Offset, c.Op, c.Offset, c.Bytes)
				}
				moved += c.Bytes
			}
		}
		if moved != w.Size {
			t.Errorf("rank %d: the POSIX writes under %s at %d (seq %d) moved %d bytes, want %d", r, w.Op, w.Offset, w.Seq, moved, w.Size)
		}
	}

	// Each nonblocking read is completed once, by MPI_Waitall.
	done := map[int64]*tracefmt.Event{}
	for _, e := range tr.ops("MPI_Waitall", "/n1_ind.dat") {
		if done[e.Parent] != nil {
			t.Errorf("rank %d: request of seq %d completed twice", r, e.Parent)
		}
		done[e.Parent] = e
	}
	for _, rd := range reads {
		c := done[rd.Seq]
		switch {
		case c == nil:
			t.Errorf("rank %d: iread_at at %d (seq %d) never completed", r, rd.Offset, rd.Seq)
		case c.Offset != rd.Offset || c.Bytes != iorTransfer || c.StartNs < rd.StartNs:
			t.Errorf("rank %d: completion %+v does not match its read %+v", r, *c, *rd)
		}
	}
	if len(done) != len(reads) {
		t.Errorf("rank %d: %d completions for %d reads", r, len(done), len(reads))
	}

	// The compute pause separates the phases.
	if len(ind) > 0 && len(coll) > 0 {
		if gap := coll[0].StartNs - ind[len(ind)-1].EndNs; gap < iorPauseMs*1e6 {
			t.Errorf("rank %d: %d ns between phases 1 and 2, want at least the %d ms pause", r, gap, iorPauseMs)
		}
	}
	// Sequence numbers are unique.
	seen := map[int64]bool{}
	for _, e := range tr.events {
		if e.Seq != 0 {
			if seen[e.Seq] {
				t.Errorf("rank %d: seq %d used twice", r, e.Seq)
			}
			seen[e.Seq] = true
		}
	}
}

// A Fortran MPI-IO program (use mpi) is traced once per call under both
// implementations: Open MPI's Fortran bindings go to PMPI_ and are caught
// at their Fortran entry points, MPICH's go through the C wrappers; byte
// offsets, the view, the seek and the nonblocking write's completion are
// right.
func TestFortran(t *testing.T) {
	lib := library(t)
	const np, count, rec = 2, 3, 64
	for _, m := range impls {
		t.Run(m.name, func(t *testing.T) {
			need(t, m.fc, m.run)
			prog := compile(t, m.fc, "fio.f90")
			data, traces := t.TempDir(), t.TempDir()
			out, err := mpirun(t, m, np, 2*time.Minute, []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + traces},
				prog, filepath.Join(data, "f.dat"), fmt.Sprint(count))
			if err != nil {
				t.Fatalf("job failed: %v\n%s", err, out)
			}
			trs := readTraces(t, traces, "fio")
			byRank(t, trs, np)
			// The Fortran MPI_Finalize (Open MPI's wrapped entry point,
			// MPICH's reaching the C one) wrote the job summary once.
			checkJobCounts(t, traces, np, np*(2*count+1), np)
			for _, tr := range trs {
				r := int64(rank(tr))
				wantCounts := map[string]int{
					"MPI_Init": 1, "MPI_File_open": 1, "MPI_File_write_at": count, "MPI_File_set_view": 2,
					"MPI_File_seek": 1, "MPI_File_write_all": count, "MPI_File_read_at": 1,
					"MPI_File_iwrite_at": 1, "MPI_Wait": 1, "MPI_File_close": 1, "MPI_Finalize": 1,
				}
				got := map[string]int{}
				for _, e := range tr.events {
					if e.Layer == tracefmt.LayerMPIIO {
						got[e.Op]++
					}
				}
				for op, n := range wantCounts {
					if got[op] != n {
						t.Errorf("rank %d: %d %s events, want %d", r, got[op], op, n)
					}
				}
				if len(got) != len(wantCounts) {
					t.Errorf("rank %d: MPI events %v, want only %v", r, got, wantCounts)
				}
				var at, all []int64
				disp := (np*count + r*count) * rec
				for k := int64(0); k < count; k++ {
					at = append(at, (k*np+r)*rec)
					all = append(all, disp+k*rec)
				}
				checkData(t, tr, "MPI_File_write_at", "/f.dat", at, rec, false)
				checkData(t, tr, "MPI_File_write_all", "/f.dat", all, rec, true)
				checkData(t, tr, "MPI_File_read_at", "/f.dat", []int64{r * rec}, rec, false)
				iw := checkData(t, tr, "MPI_File_iwrite_at", "/f.dat", []int64{(2*np*count + r) * rec}, rec, false)
				waits := tr.ops("MPI_Wait", "/f.dat")
				if len(iw) == 1 && (len(waits) != 1 || waits[0].Parent != iw[0].Seq || waits[0].Bytes != rec || waits[0].Offset != iw[0].Offset) {
					t.Errorf("rank %d: MPI_Wait does not complete the iwrite_at: %v", r, waits)
				}
				if seek := tr.ops("MPI_File_seek", "/f.dat"); len(seek) == 1 && seek[0].Offset != disp {
					t.Errorf("rank %d: seek recorded at %d, want the view's start %d", r, seek[0].Offset, disp)
				}
			}
		})
	}
}

// A job whose rank 0 calls MPI_Abort leaves a readable trace per rank
// holding every event up to the last frame closed before the abort: with
// IOPRED_FLUSH_MS=20 and a pause of 300 ms after phase 1, all of phase 1.
func TestAbort(t *testing.T) {
	lib := library(t)
	for _, m := range impls {
		t.Run(m.name, func(t *testing.T) {
			need(t, m.cc, m.run)
			prog := compile(t, m.cc, "ior.c")
			data, traces := t.TempDir(), t.TempDir()
			out, err := mpirun(t, m, iorRanks, 2*time.Minute,
				[]string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + traces, "IOPRED_FLUSH_MS=20"},
				prog, data, fmt.Sprint(iorSegments), fmt.Sprint(iorBlock), fmt.Sprint(iorTransfer), "300", "abort")
			if err == nil {
				t.Fatalf("the job exited 0 despite MPI_Abort:\n%s", out)
			}
			trs := readTraces(t, traces, "ior")
			byRank(t, trs, iorRanks)
			per := int64(iorBlock / iorTransfer)
			for _, tr := range trs {
				if n := len(tr.ops("MPI_File_write_at", "/n1_ind.dat")); n != int(iorSegments*per) {
					t.Errorf("rank %d: %d of the %d phase-1 writes survived the abort", rank(tr), n, iorSegments*per)
				}
				if len(tr.ops("MPI_File_close", "/n1_ind.dat")) != 1 {
					t.Errorf("rank %d: the close before the abort is missing", rank(tr))
				}
			}
		})
	}
}

// Programs without MPI load the library and run as before: ls and python3
// exit 0 with their usual output and nothing on stderr, and their traces
// (ls opens no regular file, so it may leave none) hold no MPI event.
func TestNonMPIUnaffected(t *testing.T) {
	lib := library(t)
	// /usr/bin/python3 itself, not a version manager's shell-script shim.
	for _, argv := range [][]string{{"ls", "/"}, {"/usr/bin/python3", "-c", "import os; print(sorted(os.listdir('/'))[0])"}} {
		bare, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		dir := t.TempDir()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib, "IOPRED_DIR="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		traced, err := cmd.Output()
		if err != nil || !bytes.Equal(bare, traced) || stderr.Len() != 0 {
			t.Fatalf("%v under iopred: err %v, output %q (want %q), stderr %q", argv, err, traced, bare, stderr.String())
		}
		trs := readTraces(t, dir, "") // python3 runs as python3.N
		if len(trs) == 0 && argv[0] != "ls" {
			t.Fatalf("%v left no trace (it reads its .py files)", argv)
		}
		for _, tr := range trs {
			for _, e := range tr.events {
				if e.Layer == tracefmt.LayerMPIIO {
					t.Errorf("%v: MPI event %s in a program without MPI", argv, e.Op)
				}
			}
		}
	}
}

// The mpi_f08 bindings are traced once per call too: Open MPI's go
// through ompi_*_f (wrapped), MPICH's send their data calls to the C
// MPI_ names and the rest (open, close, wait, init, finalize) to PMPI_,
// so iopred wraps MPICH's mpi_*_f08_ entry points for those.
func TestFortranF08(t *testing.T) {
	lib := library(t)
	const np, count, rec = 2, 3, 64
	for _, m := range impls {
		t.Run(m.name, func(t *testing.T) {
			need(t, m.fc, m.run)
			prog := compile(t, m.fc, "fio08.f90")
			data, traces := t.TempDir(), t.TempDir()
			out, err := mpirun(t, m, np, 2*time.Minute, []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + traces},
				prog, filepath.Join(data, "f.dat"), fmt.Sprint(count))
			if err != nil {
				t.Fatalf("job failed: %v\n%s", err, out)
			}
			trs := readTraces(t, traces, "fio08")
			byRank(t, trs, np)
			checkJobCounts(t, traces, np, np*(count+1), 0)
			for _, tr := range trs {
				r := int64(rank(tr))
				var ops []string
				for _, e := range tr.events {
					if e.Layer == tracefmt.LayerMPIIO {
						ops = append(ops, e.Op)
					}
				}
				want := []string{"MPI_Init", "MPI_File_open", "MPI_File_write_at", "MPI_File_write_at", "MPI_File_write_at",
					"MPI_File_iwrite_at", "MPI_Wait", "MPI_File_close", "MPI_Finalize"}
				if strings.Join(ops, " ") != strings.Join(want, " ") {
					t.Errorf("rank %d: MPI events %v, want %v", r, ops, want)
					continue
				}
				var at []int64
				for k := int64(0); k < count; k++ {
					at = append(at, (k*np+r)*rec)
				}
				checkData(t, tr, "MPI_File_write_at", "/f.dat", at, rec, false)
				iw := checkData(t, tr, "MPI_File_iwrite_at", "/f.dat", []int64{(count*np + r) * rec}, rec, false)
				if w := tr.ops("MPI_Wait", "/f.dat"); len(iw) != 1 || len(w) != 1 || w[0].Parent != iw[0].Seq || w[0].Bytes != rec {
					t.Errorf("rank %d: MPI_Wait %v does not complete the iwrite_at %v", r, w, iw)
				}
			}
		})
	}
}

// An MPI library outside the global symbol scope (a plugin linked with MPI
// and loaded with dlopen(RTLD_LOCAL), as Python loads an extension
// module) still works under iopred and is traced: the wrappers find the
// real functions through the loaded objects when RTLD_NEXT cannot.
func TestMPIInLocalScope(t *testing.T) {
	lib := library(t)
	dir := t.TempDir()
	main := filepath.Join(dir, "dlmain")
	if b, err := exec.Command("gcc", "-O2", "-o", main, filepath.Join("testdata", "dlmain.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("gcc dlmain.c: %v\n%s", err, b)
	}
	for _, m := range impls {
		t.Run(m.name, func(t *testing.T) {
			need(t, m.cc)
			plugin := filepath.Join(t.TempDir(), "plugin.so")
			if b, err := exec.Command(m.cc, "-shared", "-fPIC", "-O2", "-o", plugin, filepath.Join("testdata", "dlplugin.c")).CombinedOutput(); err != nil {
				t.Fatalf("%s dlplugin.c: %v\n%s", m.cc, err, b)
			}
			traces, data := t.TempDir(), filepath.Join(t.TempDir(), "local.dat")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, main, plugin, data, "3")
			cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib, "IOPRED_DIR="+traces,
				"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("dlmain under iopred: %v\n%s", err, out)
			}
			trs := readTraces(t, traces, "dlmain")
			if len(trs) != 1 {
				t.Fatalf("%d traces of dlmain, want 1", len(trs))
			}
			tr := trs[0]
			checkData(t, tr, "MPI_File_write_at", "/local.dat", []int64{0, 100, 200}, 100, false)
			for _, op := range []string{"MPI_Init", "MPI_File_open", "MPI_File_close", "MPI_Finalize"} {
				if n := len(tr.ops(op, "")); n != 1 {
					t.Errorf("%d %s events, want 1", n, op)
				}
			}
		})
	}
}

// A parallel HDF5 program (Debian's libhdf5-openmpi) writes three fields
// per checkpoint collectively through the MPI-IO driver and reads its rows
// back: it computes what it computes without the library, every rank is
// traced, each rank's collective writes carry exactly its own rows, and
// the POSIX calls underneath point to the MPI-IO call that made them.
func TestParallelHDF5(t *testing.T) {
	const np, ckpts, rowBytes = 4, 4, 64 * 256 * 8 // ROWS, COLS in h5par.c
	m := impls[0]
	need(t, m.run, "h5pcc.openmpi")
	prog := filepath.Join(t.TempDir(), "h5par")
	src, err := filepath.Abs(filepath.Join("testdata", "h5par.c"))
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("h5pcc.openmpi", "-O2", "-o", prog, src)
	build.Dir = t.TempDir() // h5pcc leaves its object file in the working directory
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("h5pcc.openmpi: %v\n%s", err, out)
	}
	bare, err := mpirun(t, m, np, 3*time.Minute, nil, prog, t.TempDir(), fmt.Sprint(ckpts))
	if err != nil {
		t.Fatalf("job without the library failed: %v\n%s", err, bare)
	}
	data, traces := t.TempDir(), t.TempDir()
	out, err := mpirun(t, m, np, 3*time.Minute, []string{"LD_PRELOAD=" + library(t), "IOPRED_DIR=" + traces}, prog, data, fmt.Sprint(ckpts))
	if err != nil || !bytes.Equal(out, bare) {
		t.Fatalf("with the library: %v\n%s\nwithout:\n%s", err, out, bare)
	}
	trs := readTraces(t, traces, "h5par")
	byRank(t, trs, np)
	// The job summary counts at least each rank's 3 rows of every field
	// of every checkpoint (HDF5 writes its metadata too).
	if js, path := readJobSummary(t, traces); js.Ranks != np || js.Counts.BytesWritten < np*ckpts*3*rowBytes {
		t.Errorf("%s: %d ranks, %d bytes written, want %d ranks and at least %d bytes", path, js.Ranks, js.Counts.BytesWritten, np, np*ckpts*3*rowBytes)
	}
	for _, tr := range trs {
		seqs := map[int64]bool{}
		for _, e := range tr.events {
			if e.Layer == "mpiio" {
				seqs[e.Seq] = true
			}
		}
		for c := 0; c < ckpts; c++ {
			file := fmt.Sprintf("/ckpt_%03d.h5", c)
			var written int64
			for _, e := range tr.ops("MPI_File_write_at_all", file) {
				written += e.Bytes
			}
			if written != 3*rowBytes {
				t.Errorf("rank %d, %s: collective writes moved %d bytes, want its rows of 3 fields (%d)", rank(tr), file, written, 3*rowBytes)
			}
			under := tr.ops("pwrite", file)
			if len(under) == 0 && rank(tr) == 0 {
				t.Errorf("rank 0, %s: no pwrite underneath", file)
			}
			for _, e := range under {
				if e.Parent == 0 || !seqs[e.Parent] {
					t.Errorf("rank %d, %s: pwrite at %d has parent %d, not an MPI-IO call of this rank", rank(tr), file, e.Offset, e.Parent)
					break
				}
			}
		}
	}
}

// LAMMPS from Debian on two ranks (Open MPI) writes a snapshot every 50
// steps from rank 0: both ranks are traced, and FTIO over the job's
// traces finds the snapshots' period. The snapshots come every 35 ms or so
// and gathering them to rank 0 takes a varying share of that, so the
// period is checked within the spread of the intervals measured in this
// run, widened by one frequency bin, by default (the job's signal) and
// in the job summary. On a machine so loaded that the two ranks rarely
// run together, the snapshots keep no interval (0.6 to 5.8 s apart in
// one run), and there is no period to check (testenv.CheckJobPeriod).
func TestLAMMPSTwoRanks(t *testing.T) {
	m := impls[0]
	need(t, m.run, "lmp")
	input := filepath.Join(testenv.RepoRoot(), "tests", "predict", "testdata", "melt.lmp")
	data, traces := t.TempDir(), t.TempDir()
	// 3 s on a quiet machine; a starved one stretched it past 3 minutes.
	out, err := mpirun(t, m, 2, 10*time.Minute, []string{"LD_PRELOAD=" + library(t), "IOPRED_DIR=" + traces},
		"lmp", "-in", input, "-var", "out", data, "-log", "none", "-screen", "none")
	if err != nil {
		t.Fatalf("lmp: %v\n%s", err, out)
	}
	trs := readTraces(t, traces, "lmp")
	byRank(t, trs, 2)
	dump := filepath.Join(data, "snapshots.dump")
	starts := testenv.WriteTimes(t, traces, dump, testenv.MarkerOffsets(t, dump, "ITEM: TIMESTEP"))
	if len(starts) != 81 {
		t.Fatalf("rank 0 wrote %d snapshots, want 81", len(starts))
	}
	iv := testenv.MeasureIntervals(t, starts)
	testenv.CheckPeriod(t, traces, iv)
	// The job summary rank 0 wrote at MPI_Finalize finds it too.
	js, _ := readJobSummary(t, traces)
	testenv.CheckJobPeriod(t, "job summary", js.Period.Write, iv)
}

package posix

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"iopred/tracefmt"
)

// A child that forks without exec records into a trace of its own (from
// its spill, converted by the parent), with the parent's pid and its fork
// time; the parent's trace records the fork and none of the child's
// calls; the program's results are those it has without the library.
func TestForkWithoutExec(t *testing.T) {
	prog := compileC(t, "forks.c")
	data := t.TempDir()
	bare := run(t, nil, "", prog, t.TempDir(), "noexec")
	res, dir := traced(t, nil, "", prog, data, "noexec")
	if res != bare || res.code != 0 {
		t.Fatalf("with the library %+v, without %+v", res, bare)
	}
	all := traces(t, dir)
	if len(all) != 2 {
		t.Fatalf("%d traces, want the parent's and the child's", len(all))
	}
	parent, child := all[0], all[1]
	if parent.header.ForkUnixNs != 0 {
		parent, child = child, parent
	}
	complete(t, parent)
	complete(t, child)
	forks := 0
	for _, p := range parent.procs {
		if p.Op == "fork" && p.Child == child.header.PID {
			forks++
		}
	}
	if forks != 1 || child.header.PPID != parent.header.PID || child.header.ForkUnixNs == 0 {
		t.Errorf("parent trace records %d forks of %d; child's ppid %d, fork time %d", forks, child.header.PID, child.header.PPID, child.header.ForkUnixNs)
	}
	for _, e := range parent.events {
		if strings.HasSuffix(e.Path, "child.txt") && e.Op == "write" {
			t.Fatalf("a write of the child appears in the parent's trace")
		}
	}
	if n := len(eventsOn(child, filepath.Join(data, "child.txt"))); n != 300 {
		t.Errorf("the child's trace has %d events on child.txt, want 300 (100 opens, writes, closes)", n)
	}
}

// A child that execs is a new process with a trace of its own.
func TestForkWithExec(t *testing.T) {
	prog := compileC(t, "forks.c")
	data := t.TempDir()
	res, dir := traced(t, nil, "", prog, data, "exec")
	if res.code != 0 || res.stdout != "child status 0, read 7\n" {
		t.Fatalf("workload: %+v", res)
	}
	all := traces(t, dir)
	if len(all) != 2 {
		t.Fatalf("%d traces, want the parent's and cat's", len(all))
	}
	var cat, parent *trace
	for i := range all {
		complete(t, all[i])
		if filepath.Base(all[i].header.Program) == "cat" {
			cat = &all[i]
		} else {
			parent = &all[i]
		}
	}
	if cat == nil || parent == nil {
		t.Fatal("want one trace of cat and one of the parent")
	}
	if len(eventsOn(*cat, filepath.Join(data, "parent.txt"))) == 0 {
		t.Error("cat's trace does not show it reading parent.txt")
	}
	// The child's calls between fork and exec (its redirection: an open
	// and a dup2, no data) went to a spill that the parent removed rather
	// than convert: the exec'd program's trace is the child's.
	if m, _ := filepath.Glob(filepath.Join(dir, "*.iopspill")); len(m) != 0 {
		t.Errorf("spills left: %v", m)
	}
	if cat.header.PPID != parent.header.PID {
		t.Errorf("cat's parent pid %d, want %d", cat.header.PPID, parent.header.PID)
	}
}

// Python's multiprocessing pool forks workers that do file I/O: the run
// finishes, with the same output as without the library.
func TestPythonMultiprocessing(t *testing.T) {
	py := tool(t, "python3")
	script := `
import multiprocessing as mp, os, sys
d = sys.argv[1]
def work(i):
    p = os.path.join(d, "part%d" % i)
    with open(p, "w") as f: f.write("x" * (i + 1) * 1000)
    with open(p) as f: return len(f.read())
if __name__ == "__main__":
    with mp.Pool(4) as pool: print(sum(pool.map(work, range(40))))
`
	for i := 0; i < 3; i++ {
		bare := run(t, nil, "", py, "-c", script, t.TempDir())
		res, _ := traced(t, nil, "", py, "-c", script, t.TempDir())
		if res != bare || res.code != 0 {
			t.Fatalf("run %d: with the library %+v, without %+v", i, res, bare)
		}
	}
}

// Four threads writing at once: every event is in the trace, each with
// its thread's id, and each thread's events keep their order.
func TestThreads(t *testing.T) {
	prog := compileC(t, "threads.c", "-pthread")
	file := filepath.Join(t.TempDir(), "out")
	const threads, n = 4, 5000
	res, dir := traced(t, nil, "", prog, file, fmt.Sprint(threads), fmt.Sprint(n))
	if res.code != 0 {
		t.Fatalf("%+v", res)
	}
	tr := onlyTrace(t, dir)
	complete(t, tr)
	next := map[int32]int64{} // per thread: the offset its next pwrite must have
	first := map[int32]int64{}
	count := 0
	for _, e := range eventsOn(tr, file) {
		if e.Op != "pwrite" {
			continue
		}
		count++
		if _, ok := first[e.Tid]; !ok {
			first[e.Tid] = e.Offset
			next[e.Tid] = e.Offset
		}
		if e.Offset != next[e.Tid] {
			t.Fatalf("thread %d: pwrite at %d, want %d (order lost)", e.Tid, e.Offset, next[e.Tid])
		}
		next[e.Tid] += 64
	}
	if count != threads*n || len(first) != threads {
		t.Fatalf("%d pwrite events from %d threads, want %d from %d", count, len(first), threads*n, threads)
	}
	for tid, off := range first {
		if off%(n*64) != 0 || next[tid]-off != n*64 {
			t.Errorf("thread %d wrote %d..%d, not its own region", tid, off, next[tid])
		}
	}
}

// A gfortran program's unformatted and formatted I/O is traced through
// libgfortran, and its contexts are the same in two runs.
func TestFortran(t *testing.T) {
	gf := tool(t, "gfortran")
	exe := filepath.Join(t.TempDir(), "fio")
	if out, err := exec.Command(gf, "-O2", "-o", exe, filepath.Join("testdata", "fortran.f90")).CombinedOutput(); err != nil {
		t.Fatalf("gfortran: %v\n%s", err, out)
	}
	contexts := func() (map[string]bool, string) {
		data := t.TempDir()
		res, dir := traced(t, nil, "", exe, data)
		if res.code != 0 {
			t.Fatalf("%+v", res)
		}
		tr := onlyTrace(t, dir)
		complete(t, tr)
		ids := map[string]bool{}
		ops := map[string]int{}
		for _, e := range eventsOn(tr, data) {
			ids[fmt.Sprintf("%s:%d", filepath.Base(e.Path), e.Ctx)] = true
			ops[filepath.Base(e.Path)+":"+e.Op]++
		}
		if ops["unformatted.bin:write"] == 0 || ops["formatted.txt:write"] == 0 || ops["unformatted.bin:read"] == 0 {
			t.Fatalf("Fortran I/O missing from the trace: %v", ops)
		}
		return ids, res.stdout
	}
	a, outA := contexts()
	b, outB := contexts()
	if outA != outB || !strings.HasPrefix(outA, "sum") {
		t.Fatalf("outputs %q and %q", outA, outB)
	}
	if len(a) != len(b) {
		t.Fatalf("contexts differ between runs: %v vs %v", a, b)
	}
	for k := range a {
		if !b[k] {
			t.Errorf("context %s of run 1 missing from run 2", k)
		}
	}
}

// A process killed with SIGKILL leaves a readable trace: every frame
// closed before the kill (the bound is IOPRED_FLUSH_MS) decodes, and the
// reader reports the truncation.
func TestSigkill(t *testing.T) {
	prog := compileC(t, "writer.c")
	traceDir := t.TempDir()
	cmd := exec.Command(prog, filepath.Join(t.TempDir(), "out"))
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+library(t), "IOPRED_DIR="+traceDir, "IOPRED_FLUSH_MS=200")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	tr := onlyTrace(t, traceDir)
	// The kill lands inside an open frame (a TruncatedError) or, rarely,
	// just after one closed (a clean end of frames, but no footer).
	var trunc *tracefmt.TruncatedError
	if !errors.As(tr.err, &trunc) && !(tr.err == nil && tr.footer == nil) {
		t.Fatalf("reading a killed process's trace: error %v, footer %v; want a TruncatedError or no footer", tr.err, tr.footer)
	}
	// About 1.5 s at one write per millisecond (and some): at least the
	// first second must be on disk.
	if len(tr.events) < 500 {
		t.Fatalf("only %d events readable after SIGKILL", len(tr.events))
	}
	var writes []tracefmt.Event
	for _, e := range tr.events {
		if e.Op == "write" {
			writes = append(writes, e)
		}
	}
	for i, e := range writes {
		if e.Offset != int64(i)*4096 {
			t.Fatalf("write %d at offset %d, want %d: records lost inside the readable part", i, e.Offset, int64(i)*4096)
		}
	}
}

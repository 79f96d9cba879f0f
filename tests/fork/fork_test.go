// Package fork tests the tracing of children that fork without exec with
// real programs: each such child gets a trace of its own (from its spill,
// preload/spill.c), with its pid, its parent's pid and its fork time, and
// the bytes it moved.
//
// The tests need the library and the command built (`make`), and the
// tools .ci/run installs (python3, fio, make, gcc).
package fork

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"iopred/tests/testenv"
	"iopred/tracefmt"
	_ "iopred/tracefmt/spill" // spills left over read as traces
)

// proc is one process's trace read whole.
type proc struct {
	path   string
	header tracefmt.Header
	events []tracefmt.Event
	footer *tracefmt.Footer
	err    error
}

// written sums the bytes a process's data calls wrote to files under dir.
func (p proc) written(dir string) (files map[string]int64) {
	files = map[string]int64{}
	for _, e := range p.events {
		if strings.HasPrefix(e.Path, dir+"/") && tracefmt.IsWrite(e.Op) && e.Bytes > 0 {
			files[e.Path] += e.Bytes
		}
	}
	return files
}

func (p proc) read(dir string) (total int64) {
	for _, e := range p.events {
		if strings.HasPrefix(e.Path, dir+"/") && tracefmt.IsRead(e.Op) && e.Bytes > 0 {
			total += e.Bytes
		}
	}
	return total
}

// procs reads every trace in dir (spills too), by pid.
func procs(t *testing.T, dir string) map[int]proc {
	t.Helper()
	names, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]proc{}
	for _, name := range names {
		r, err := tracefmt.Open(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := proc{path: name, header: r.Header()}
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				p.err = err
				break
			}
			if rec.Event != nil {
				p.events = append(p.events, *rec.Event)
			}
		}
		p.footer = r.Footer()
		r.Close()
		if old, dup := out[p.header.PID]; dup {
			// The part of a child before its exec, and the program it
			// exec'd, share the pid: keep both events.
			p.events = append(old.events, p.events...)
		}
		out[p.header.PID] = p
	}
	return out
}

// spills lists the spill files left in dir.
func spills(t *testing.T, dir string) []string {
	m, err := filepath.Glob(filepath.Join(dir, "*.iopspill"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A fork-started multiprocessing pool of 4 workers writing 8 files each:
// all 32 files are in the traces of the worker pids Python reports, with
// exactly the bytes each worker wrote, and each worker's trace names the
// pool's process as its parent. The parent converted every spill.
func TestPythonPool(t *testing.T) {
	py := testenv.Tool(t, "python3")
	data, traces := t.TempDir(), t.TempDir()
	// Each of the 4 tasks waits at a barrier of 4 before it writes its 8
	// files, so each runs in a worker of its own.
	script := `
import multiprocessing as mp, os, sys, json
d = sys.argv[1]
def init(b):
    global barrier
    barrier = b
def work(w):
    barrier.wait()
    out = []
    for k in range(8):
        i = w * 8 + k
        n = 1024 * (i % 5 + 1) + i
        with open(os.path.join(d, "f%02d" % i), "wb") as f:
            f.write(b"p" * n)
        out.append((os.getpid(), i, n))
    return out
if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(4, initializer=init, initargs=(mp.Barrier(4),)) as pool:
        res = [r for rs in pool.map(work, range(4), chunksize=1) for r in rs]
    print(json.dumps({"parent": os.getpid(), "res": res}))
`
	res := testenv.Traced(t, traces, nil, "", py, "-c", script, data)
	if res.Code != 0 {
		t.Fatalf("%+v", res)
	}
	var out struct {
		Parent int
		Res    [][3]int64
	}
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
		t.Fatalf("output %q: %v", res.Stdout, err)
	}
	want := map[int]map[string]int64{}
	for _, r := range out.Res {
		pid := int(r[0])
		if want[pid] == nil {
			want[pid] = map[string]int64{}
		}
		want[pid][filepath.Join(data, fmt.Sprintf("f%02d", r[1]))] = r[2]
	}
	if len(want) != 4 {
		t.Fatalf("the pool ran its tasks in %d workers, want 4", len(want))
	}
	all := procs(t, traces)
	files := 0
	for pid, w := range want {
		p, ok := all[pid]
		if !ok {
			t.Errorf("worker %d has no trace", pid)
			continue
		}
		if got := p.written(data); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("worker %d wrote %v, its trace says %v", pid, w, got)
		}
		files += len(w)
		if p.header.PPID != out.Parent || p.header.ForkUnixNs == 0 {
			t.Errorf("worker %d: ppid %d (want %d), fork time %d", pid, p.header.PPID, out.Parent, p.header.ForkUnixNs)
		}
	}
	if files != 32 {
		t.Errorf("%d files attributed, want 32", files)
	}
	// iopred summary shows the workers under the pool's process.
	sum := testenv.Run(t, nil, "", filepath.Join(testenv.RepoRoot(), "build", "iopred"), "summary", traces)
	tree := sum.Stdout[strings.Index(sum.Stdout, "PROCESS TREE")+1:]
	for pid := range want {
		if !strings.Contains(tree, fmt.Sprintf("\n  %d ", pid)) {
			t.Errorf("worker %d is not under its parent in the summary's process tree:\n%s", pid, sum.Stdout)
		}
	}
	if left := spills(t, traces); len(left) != 0 {
		t.Errorf("spills left unconverted: %v", left)
	}
}

// fio's default process mode: 4 jobs in forked processes, each trace with
// the bytes fio's JSON report gives its job.
func TestFioProcesses(t *testing.T) {
	fio := testenv.Tool(t, "fio")
	data, traces := t.TempDir(), t.TempDir()
	res := testenv.Traced(t, traces, nil, "", fio, "--name=job", "--directory="+data, "--rw=write",
		"--bs=4k", "--size=2m", "--numjobs=4", "--ioengine=psync", "--output-format=json")
	if res.Code != 0 {
		t.Fatalf("%+v", res)
	}
	var rep struct {
		Jobs []struct {
			Name  string `json:"jobname"`
			Write struct {
				Bytes int64 `json:"io_bytes"`
			} `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(res.Stdout[strings.IndexByte(res.Stdout, '{'):]), &rep); err != nil {
		t.Fatalf("fio's report: %v", err)
	}
	var want []int64
	for _, j := range rep.Jobs {
		want = append(want, j.Write.Bytes)
	}
	var got []int64
	for _, p := range procs(t, traces) {
		if p.header.ForkUnixNs == 0 {
			continue // fio's main process
		}
		var sum int64
		for _, b := range p.written(data) {
			sum += b
		}
		if sum > 0 {
			got = append(got, sum)
		}
	}
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	if len(want) != 4 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("per-process bytes written %v, fio reports %v", got, want)
	}
}

// A data loader in the PyTorch way, in plain Python: the parent forks 3
// workers with os.fork; each reads its shards and sends their sizes back
// through a pipe. Each worker's trace reads exactly its shards' bytes.
func TestDataLoader(t *testing.T) {
	py := testenv.Tool(t, "python3")
	data, traces := t.TempDir(), t.TempDir()
	for i := 0; i < 12; i++ {
		if err := os.WriteFile(filepath.Join(data, fmt.Sprintf("shard%02d", i)), make([]byte, 3000+i*517), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := `
import os, sys, json
d = sys.argv[1]
shards = sorted(os.listdir(d))
pids = {}
for w in range(3):
    r, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        n = 0
        for s in shards[w::3]:
            with open(os.path.join(d, s), "rb") as f:
                while True:
                    b = f.read(1000)
                    if not b: break
                    n += len(b)
        os.write(wfd, str(n).encode())
        os._exit(0)
    os.close(wfd)
    pids[pid] = r
out = {}
for pid, r in pids.items():
    out[pid] = int(os.read(r, 100))
    os.waitpid(pid, 0)
print(json.dumps(out))
`
	res := testenv.Traced(t, traces, nil, "", py, "-c", script, data)
	if res.Code != 0 {
		t.Fatalf("%+v", res)
	}
	var want map[string]int64
	if err := json.Unmarshal([]byte(res.Stdout), &want); err != nil {
		t.Fatalf("output %q: %v", res.Stdout, err)
	}
	all := procs(t, traces)
	for pid, n := range want {
		id, _ := strconv.Atoi(pid)
		if got := all[id].read(data); got != n {
			t.Errorf("worker %d read %d bytes, its trace says %d", id, n, got)
		}
	}
}

// Shell subshells fork without exec and write through redirections; make
// -j runs recipes in forked shells. Every subshell's three opens of its
// file (bash's echo writes through stdio internals that are not
// interposed, so the opens are what is certain) are in a trace of its own
// pid, and the output is as without the library.
func TestShellSubshells(t *testing.T) {
	sh := testenv.Tool(t, "bash")
	makeTool := testenv.Tool(t, "make")
	data, traces := t.TempDir(), t.TempDir()
	script := `cd "$1"; for i in 1 2 3 4; do ( for k in 1 2 3; do echo line$k >> sub$i; done; echo $BASHPID > pid$i ) & done; wait; cat sub* | wc -l`
	res := testenv.Traced(t, traces, nil, "", sh, "-c", script, "sh", data)
	if res.Code != 0 || strings.TrimSpace(res.Stdout) != "12" {
		t.Fatalf("%+v", res)
	}
	all := procs(t, traces)
	for i := 1; i <= 4; i++ {
		b, err := os.ReadFile(filepath.Join(data, fmt.Sprintf("pid%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		sub := filepath.Join(data, fmt.Sprintf("sub%d", i))
		opens := 0
		for _, e := range all[pid].events {
			if e.Path == sub && strings.HasPrefix(e.Op, "open") && e.Ret >= 0 {
				opens++
			}
		}
		if opens != 3 || all[pid].header.ForkUnixNs == 0 {
			t.Errorf("subshell %d (pid %d) opened %s 3 times; its trace (fork time %d) says %d", i, pid, sub, all[pid].header.ForkUnixNs, opens)
		}
	}

	mk := t.TempDir()
	mf := "all: a b c\na b c:\n\t@(echo $@ > $@.out)\n"
	if err := os.WriteFile(filepath.Join(mk, "Makefile"), []byte(mf), 0o644); err != nil {
		t.Fatal(err)
	}
	bare := testenv.Run(t, nil, mk, makeTool, "-j3")
	res = testenv.Traced(t, t.TempDir(), nil, mk, makeTool, "-j3")
	if res != bare || res.Code != 0 {
		t.Fatalf("make -j3 with the library %+v, without %+v", res, bare)
	}
}

// A tree of 12 children and 12 grandchildren, forked (some by _Fork) while
// 3 other threads of the parent record: no deadlock, and every child and
// grandchild has a trace with its pid, its parent and all its pwrites.
func TestForkTree(t *testing.T) {
	prog := testenv.CompileC(t, "forktree.c", "-pthread")
	for round := 0; round < 3; round++ {
		data, traces := t.TempDir(), t.TempDir()
		const n = 500
		res := testenv.Traced(t, traces, nil, "", prog, data, "12", "3", strconv.Itoa(n))
		if res.Code != 0 {
			t.Fatalf("round %d: %+v", round, res)
		}
		all := procs(t, traces)
		lines := strings.Fields(res.Stdout)
		if len(lines) != 48 {
			t.Fatalf("round %d: %d processes reported, want 24", round, len(lines)/2)
		}
		for i := 0; i < len(lines); i += 2 {
			pid, _ := strconv.Atoi(lines[i])
			ppid, _ := strconv.Atoi(lines[i+1])
			p, ok := all[pid]
			if !ok {
				t.Errorf("round %d: process %d has no trace", round, pid)
				continue
			}
			if p.header.PPID != ppid {
				t.Errorf("round %d: process %d: ppid %d in its trace, %d in fact", round, pid, p.header.PPID, ppid)
			}
			out := filepath.Join(data, "out."+lines[i])
			if got := p.written(data)[out]; got != n*64 {
				t.Errorf("round %d: process %d wrote %d bytes, its trace says %d", round, pid, n*64, got)
			}
		}
	}
}

// SIGKILL at a random moment loses nothing a forked child recorded: every
// pwrite each of the child's threads reported on its side channel before
// the kill is in the child's trace (read from the spill the killed parent
// left), and at most one call more per thread (it returned but was not
// yet reported). The parent's trace, written by Go in frames, holds every
// call that returned more than its frame bound (IOPRED_FLUSH_MS, here
// 200 ms) before the kill, plus a margin for the consumer's wake-up.
// Rounds alternate a child of one thread and of four.
func TestSigkillRandom(t *testing.T) {
	prog := testenv.CompileC(t, "killme.c", "-pthread")
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for round := 0; round < 6; round++ {
		threads := 1 + 3*(round%2)
		data, traces := t.TempDir(), t.TempDir()
		childR, childW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		parentR, parentW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(prog, data, strconv.Itoa(threads))
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+testenv.Library(t), "IOPRED_DIR="+traces, "IOPRED_FLUSH_MS=200")
		cmd.ExtraFiles = []*os.File{childW, parentW}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		childW.Close()
		parentW.Close()
		type side struct {
			reported map[uint32]int64 // per thread: calls reported
			times    []time.Time      // when each call was reported (the parent's one thread)
		}
		collect := func(r *os.File, s *side, done chan<- struct{}) {
			var b [8]byte
			for {
				if _, err := io.ReadFull(r, b[:]); err != nil {
					close(done)
					return
				}
				s.reported[binary.LittleEndian.Uint32(b[:])] = int64(binary.LittleEndian.Uint32(b[4:])) + 1
				s.times = append(s.times, time.Now())
			}
		}
		cs, ps := &side{reported: map[uint32]int64{}}, &side{reported: map[uint32]int64{}}
		cdone, pdone := make(chan struct{}), make(chan struct{})
		go collect(childR, cs, cdone)
		go collect(parentR, ps, pdone)
		time.Sleep(time.Duration(300+rng.Intn(1200)) * time.Millisecond)
		killed := time.Now()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		<-cdone
		<-pdone
		childR.Close()
		parentR.Close()

		if ents, _ := os.ReadDir(traces); len(ents) == 0 {
			// Killed while the library or its runtime still started (a
			// loaded machine): only right if no call had returned.
			if len(cs.reported) > 0 || len(ps.times) > 0 && ps.times[0].Before(killed.Add(-500*time.Millisecond)) {
				t.Fatalf("round %d: no trace, but the child reported %v and the parent %v", round, cs.reported, ps.reported)
			}
			t.Logf("round %d: killed before any call returned", round)
			continue
		}
		// count counts a process's pwrites to one of its files, checking
		// that they come in the order they were made.
		count := func(p proc, file string) (n int64) {
			for _, e := range p.events {
				if e.Op == "pwrite" && e.Path == filepath.Join(data, file) {
					if e.Offset != n*64 {
						t.Fatalf("round %d: %s: pwrite %d at offset %d", round, file, n, e.Offset)
					}
					n++
				}
			}
			return n
		}
		var child, parent *proc
		for _, p := range procs(t, traces) {
			p := p
			if p.header.ForkUnixNs != 0 {
				child = &p
			} else {
				parent = &p
			}
		}
		// The parent: every call reported more than the bound before the kill.
		bound := killed.Add(-200*time.Millisecond - 300*time.Millisecond)
		due := int64(sort.Search(len(ps.times), func(i int) bool { return ps.times[i].After(bound) }))
		switch {
		case child == nil && len(cs.reported) > 0:
			t.Fatalf("round %d: the child reported %v, and has no trace", round, cs.reported)
		case child == nil:
			t.Logf("round %d: killed before the child's first call returned", round)
			continue
		case parent == nil && due > 0:
			t.Fatalf("round %d: the parent reported %d calls over the bound before the kill, and has no trace", round, due)
		case parent == nil:
			// The parent's trace is made by its Go runtime, which a loaded
			// machine can start later than the parent's first calls.
			t.Logf("round %d: killed before the parent's runtime made its trace; no call was due", round)
			parent = &proc{}
		}
		for i := 0; i < threads; i++ {
			want := cs.reported[uint32(i)]
			got := count(*child, fmt.Sprintf("child.%d.dat", i))
			if got < want || got > want+1 {
				t.Errorf("round %d: child thread %d reported %d pwrites before the kill, its trace holds %d", round, i, want, got)
			} else {
				t.Logf("round %d: child thread %d of %d reported %d, trace %d", round, i, threads, want, got)
			}
		}
		got := count(*parent, "parent.0.dat")
		t.Logf("round %d: parent reported %d, %d of them over the bound before the kill, trace %d", round, ps.reported[0], due, got)
		if got < due || got > ps.reported[0]+1 {
			t.Errorf("round %d: the parent reported %d pwrites, %d of them before the bound; its trace holds %d", round, ps.reported[0], due, got)
		}
		var trunc *tracefmt.TruncatedError
		if parent.err != nil && !errors.As(parent.err, &trunc) {
			t.Errorf("round %d: parent's trace: %v", round, parent.err)
		}
	}
}

// The prediction API in a forked child answers at once: no prediction,
// no period, while the child is recorded; the child's write is traced.
func TestPredictInChild(t *testing.T) {
	prog := testenv.CompileC(t, "predictchild.c", "-ldl")
	data, traces := t.TempDir(), t.TempDir()
	res := testenv.Traced(t, traces, nil, "", prog, data)
	if res.Code != 0 || res.Stdout != "child predict 0 period -1 enabled 1\n" {
		t.Fatalf("%+v", res)
	}
	n := 0
	for _, p := range procs(t, traces) {
		if p.header.ForkUnixNs != 0 {
			n += int(p.written(data)[filepath.Join(data, "c")])
		}
	}
	if n != 100 {
		t.Errorf("the child's trace holds %d bytes written to c, want 100", n)
	}
}

// Forks from a signal handler that often interrupts the library (the
// main thread records in a loop): no deadlock, and every child's pwrites
// are in a trace of its pid.
func TestForkFromSignalHandler(t *testing.T) {
	prog := testenv.CompileC(t, "sigfork.c")
	data, traces := t.TempDir(), t.TempDir()
	res := testenv.Traced(t, traces, nil, "", prog, data, "30")
	if res.Code != 0 {
		t.Fatalf("%+v", res)
	}
	pids := strings.Fields(res.Stdout)
	if len(pids) < 30 {
		t.Fatalf("%d children reported, want 30 or more", len(pids))
	}
	all := procs(t, traces)
	for _, s := range pids {
		pid, _ := strconv.Atoi(s)
		if got := all[pid].written(data)[filepath.Join(data, "sig."+s)]; got != 320 {
			t.Errorf("child %d wrote 320 bytes, its trace says %d", pid, got)
		}
	}
}

// A signal handler that forks while the library is still looking the real
// functions up (its first call does it, under the loader's lock): the
// child's first open must not wait on that lock, which nobody in the child
// would release. The timer's first signal comes 30 to 150 us after it is
// set, just before the program's first open, so it lands inside the
// lookups in many runs; without the lookups' blocked signals about one run
// in three at 50 or 100 us hung here. Each run gets 20 s, its process
// group killed after that.
func TestForkDuringLookups(t *testing.T) {
	prog := testenv.CompileC(t, "sigfork.c")
	lib := testenv.Library(t)
	for i, first := range []string{"30", "50", "70", "100", "150", "50", "100", "50", "100", "50", "100", "70"} {
		data, traces := t.TempDir(), t.TempDir()
		cmd := exec.Command(prog, data, "30", first)
		cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib, "IOPRED_DIR="+traces)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out strings.Builder
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run %d (first signal at %s us): %v", i, first, err)
			}
		case <-time.After(20 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatalf("run %d (first signal at %s us): hung, a child waits on a lock held at the fork (killed after 20 s)", i, first)
		}
		if n := len(strings.Fields(out.String())); n < 30 {
			t.Fatalf("run %d: %d children reported, want 30 or more", i, n)
		}
	}
}

// A trace directory that fills up: the child's chunks get no storage, so
// its records are dropped and counted, never a SIGBUS; the program's
// output and exit are unchanged, and the child does not spin on the full
// disk (it retries a chunk every 100 ms at most). Needs a small tmpfs:
// root only.
func TestTraceDirectoryFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	prog := testenv.CompileC(t, "spillfull.c")
	full := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", full).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", full).Run()
	out := filepath.Join(t.TempDir(), "data")
	const n = 200000
	bare := testenv.Run(t, nil, "", prog, out, strconv.Itoa(n))
	start := time.Now()
	res := testenv.Traced(t, full, nil, "", prog, out, strconv.Itoa(n))
	took := time.Since(start)
	if res.Stdout != bare.Stdout || res.Code != bare.Code {
		t.Fatalf("with the library %+v, without %+v", res, bare)
	}
	t.Logf("traced run took %v; stderr %q", took, res.Stderr)
	var child *proc
	for _, p := range procs(t, full) {
		if p.header.ForkUnixNs != 0 {
			p := p
			child = &p
		}
	}
	if child == nil || child.footer == nil {
		t.Fatal("no trace (or spill) of the child with its footer")
	}
	kept := int64(0)
	for _, e := range child.events {
		if e.Op == "pwrite" {
			kept++
		}
	}
	t.Logf("child: %d pwrites kept, %d records dropped", kept, child.footer.Dropped)
	if kept == 0 || kept+int64(child.footer.Dropped) < n {
		t.Errorf("child: %d pwrites kept and %d dropped, want %d in all", kept, child.footer.Dropped, n)
	}
}

// A parent that goes on running after its child ended converts the
// child's spill within the scan interval (2 s), even while the parent
// itself records nothing: the child's trace is there before the parent
// exits.
func TestConvertWhileRunning(t *testing.T) {
	py := testenv.Tool(t, "python3")
	data, traces := t.TempDir(), t.TempDir()
	script := `
import os, sys, time
d, traces = sys.argv[1], sys.argv[2]
pid = os.fork()
if pid == 0:
    with open(os.path.join(d, "child"), "wb") as f: f.write(b"c" * 5000)
    os._exit(0)
os.waitpid(pid, 0)
deadline = time.time() + 10
while time.time() < deadline:
    names = os.listdir(traces)
    if not any(n.endswith(".iopspill") for n in names) and any(".%d." % pid in n for n in names):
        break
    time.sleep(0.05)
print("converted after %.1f s" % (10 - (deadline - time.time())) if time.time() < deadline else "not converted")
`
	res := testenv.Traced(t, traces, nil, "", py, "-c", script, data, traces)
	if res.Code != 0 || !strings.HasPrefix(res.Stdout, "converted after") {
		t.Fatalf("%+v", res)
	}
	t.Log(strings.TrimSpace(res.Stdout))
}

// A forked child that runs 600 short threads, more than the spill has
// streams at once: a thread that ended hands its stream on, so every
// thread's pwrite is in the child's trace and nothing is dropped.
func TestChildThreads(t *testing.T) {
	prog := testenv.CompileC(t, "childthreads.c", "-pthread")
	file := filepath.Join(t.TempDir(), "out")
	traces := t.TempDir()
	const n = 600
	res := testenv.Traced(t, traces, nil, "", prog, file, strconv.Itoa(n))
	if res.Code != 0 {
		t.Fatalf("%+v", res)
	}
	for _, p := range procs(t, traces) {
		if p.header.ForkUnixNs == 0 {
			continue
		}
		tids := map[int32]bool{}
		writes := 0
		for _, e := range p.events {
			if e.Op == "pwrite" && e.Path == file && e.Bytes == 100 {
				writes++
				tids[e.Tid] = true
			}
		}
		if writes != n || len(tids) < n/2 || p.footer == nil || p.footer.Dropped != 0 {
			t.Errorf("child: %d pwrites from %d threads, footer %+v; want %d, none dropped", writes, len(tids), p.footer, n)
		}
		return
	}
	t.Fatal("no trace of the child")
}

// A program that ends with _exit or _Exit runs no destructor, yet its
// trace is complete (every call, a footer saying it exited) and the spill
// of the child it forked is converted, none left over. A vfork child's
// _exit leaves its parent's trace going on; a _exit from a signal handler
// that interrupts the program's calls ends the program with its status,
// with no hang. dash, which ends every script with _exit, leaves the
// same complete traces.
func TestExitWithoutDestructors(t *testing.T) {
	prog := testenv.CompileC(t, "exitpaths.c")
	for _, how := range []string{"_exit", "_Exit"} {
		t.Run(how, func(t *testing.T) {
			data, traces := t.TempDir(), t.TempDir()
			res := testenv.Traced(t, traces, nil, "", prog, data, how)
			if res.Code != 3 {
				t.Fatalf("%+v", res)
			}
			if left := spills(t, traces); len(left) != 0 {
				t.Errorf("spills left unconverted: %v", left)
			}
			all := procs(t, traces)
			child, _ := strconv.Atoi(strings.TrimSpace(res.Stdout))
			for pid, file := range map[int]string{child: "child", all1(t, traces, prog).header.PID: "parent"} {
				p := all[pid]
				if p.err != nil || p.footer == nil {
					t.Errorf("%s (pid %d): trace not complete: %v", file, pid, p.err)
				}
				if got := p.written(data)[filepath.Join(data, file)]; got != 256 {
					t.Errorf("%s (pid %d): %d bytes written in its trace, want 256", file, pid, got)
				}
			}
		})
	}
	t.Run("vfork", func(t *testing.T) {
		data, traces := t.TempDir(), t.TempDir()
		res := testenv.Traced(t, traces, nil, "", prog, data, "vfork")
		if res.Code != 0 {
			t.Fatalf("%+v", res)
		}
		p := all1(t, traces, prog)
		if p.footer == nil || p.footer.Reason != "exit" || p.written(data)[filepath.Join(data, "parent")] != 256 {
			t.Errorf("the parent's trace after its vfork child's _exit: footer %+v, wrote %v", p.footer, p.written(data))
		}
	})
	t.Run("signal", func(t *testing.T) {
		for i := 0; i < 10; i++ {
			res := testenv.Traced(t, t.TempDir(), nil, "", prog, t.TempDir(), "signal")
			if res.Code != 5 {
				t.Fatalf("round %d: %+v", i, res)
			}
		}
	})
	t.Run("dash", func(t *testing.T) {
		sh := testenv.Tool(t, "dash")
		data, traces := t.TempDir(), t.TempDir()
		for i := 0; i < 10; i++ {
			res := testenv.Traced(t, traces, nil, data, sh, "-c", "(echo child > sub); echo parent > top")
			if res.Code != 0 {
				t.Fatalf("%+v", res)
			}
		}
		if left := spills(t, traces); len(left) != 0 {
			t.Errorf("spills left unconverted: %v", left)
		}
		all := procs(t, traces)
		var subs, tops int
		for pid, p := range all {
			if p.err != nil || p.footer == nil {
				t.Errorf("pid %d: trace not complete: %v", pid, p.err)
			}
			subs += int(p.written(data)[filepath.Join(data, "sub")])
			tops += int(p.written(data)[filepath.Join(data, "top")])
		}
		if len(all) != 20 || subs != 60 || tops != 70 {
			t.Errorf("%d traces, %d bytes to sub, %d to top; want 20, 60, 70", len(all), subs, tops)
		}
	})
}

// all1 is the one trace in dir of a process running prog.
func all1(t *testing.T, dir, prog string) proc {
	t.Helper()
	for _, p := range procs(t, dir) {
		if p.header.Program == prog && p.header.ForkUnixNs == 0 {
			return p
		}
	}
	t.Fatalf("no trace of %s in %s", prog, dir)
	return proc{}
}

package posix

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Shells, Python and programs that never do I/O print the same, exit the
// same and leave no trace when they record nothing.
func TestHostProgramsUnchanged(t *testing.T) {
	noio := compileC(t, "noio.c")
	cases := []struct {
		name string
		prog string
		args []string
	}{
		{"bash", tool(t, "bash"), []string{"-c", "x=$(echo hi); echo $x >&2; printf '%s\\n' a b c | sort -r; exit 7"}},
		{"python3", tool(t, "python3"), []string{"-c", "import sys; print(1); print('e', file=sys.stderr); sys.exit(4)"}},
		{"true", tool(t, "true"), nil},
		{"noio", noio, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bare := run(t, nil, "", c.prog, c.args...)
			res, dir := traced(t, nil, "", c.prog, c.args...)
			if res != bare {
				t.Fatalf("with the library %+v, without %+v", res, bare)
			}
			if c.name == "noio" || c.name == "true" {
				if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
					t.Errorf("a program that records nothing left %v", files)
				}
			}
		})
	}
}

// Failing calls return the same values and errno, and descriptors are
// numbered as without the library (its own trace descriptor stays out of
// the way).
func TestReturnValuesAndErrno(t *testing.T) {
	prog := compileC(t, "errnos.c")
	bare := run(t, nil, "", prog, t.TempDir())
	res, _ := traced(t, nil, "", prog, t.TempDir())
	if res != bare {
		t.Fatalf("with the library:\n%s\nwithout:\n%s", res.stdout, bare.stdout)
	}
}

// Blocking reads interrupted by the program's own timer signal see EINTR
// only from that timer, with or without the library; and the program's
// signal dispositions, flags and mask are the ones it had (the library
// installs no handler for SIGSEGV, SIGBUS, SIGFPE, SIGPIPE, SIGURG, ...).
func TestSignalsUntouched(t *testing.T) {
	state := compileC(t, "sigstate.c", "-ldl")
	// Without arguments the program only starts; with a directory its
	// thread blocks signals of its own, does I/O and enters iopred's Go
	// code through iopred_flush, whose runtime would otherwise unblock
	// SIGCHLD and SIGPROF on it.
	for _, args := range [][]string{nil, {t.TempDir()}} {
		bare := run(t, nil, "", state, args...)
		res, _ := traced(t, nil, "", state, args...)
		if res != bare || res.code != 0 {
			t.Fatalf("signal state (args %v) with the library:\n%+v\nwithout:\n%+v", args, res, bare)
		}
	}
	sig := compileC(t, "signals.c")
	parse := func(r result) (got, eintr, ticks, other int) {
		if r.code != 0 {
			t.Fatalf("signals: %+v", r)
		}
		if _, err := fmt.Sscanf(r.stdout, "read %d eintr %d ticks %d other %d", &got, &eintr, &ticks, &other); err != nil {
			t.Fatalf("signals printed %q: %v", r.stdout, err)
		}
		return
	}
	// Timing varies run to run, so the check is the invariant rather than
	// equal numbers: the reads are interrupted (the timer works), and never
	// more often than the program's own timer ticked.
	for _, c := range []struct {
		name string
		res  result
	}{
		{"without the library", run(t, nil, "", sig)},
		{"with the library", func() result { r, _ := traced(t, nil, "", sig); return r }()},
		{"with the library, pipes recorded", func() result { r, _ := traced(t, []string{"IOPRED_ALL_FDS=1"}, "", sig); return r }()},
	} {
		got, eintr, ticks, other := parse(c.res)
		if got != 100 || other != 0 {
			t.Errorf("%s: read %d bytes with %d other failures, want 100 and 0", c.name, got, other)
		}
		if eintr == 0 {
			t.Errorf("%s: no read was interrupted by the timer (%d ticks)", c.name, ticks)
		}
		if eintr > ticks {
			t.Errorf("%s: %d EINTR from %d ticks of the program's timer: EINTR from a signal it did not send", c.name, eintr, ticks)
		}
	}
}

// A dynamically linked Go program already has a Go runtime: the library
// detects it, stays passive (no trace) and the program runs as usual.
func TestGoProgramPassesThrough(t *testing.T) {
	gobin := tool(t, "go")
	dir := t.TempDir()
	src, _ := os.ReadFile(filepath.Join("testdata", "goprog", "main.go"))
	os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module goprog\n\ngo 1.21\n"), 0o644)
	cmd := exec.Command(gobin, "build", "-o", "goprog", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	prog := filepath.Join(dir, "goprog")
	out := filepath.Join(t.TempDir(), "go.txt")
	bare := run(t, nil, "", prog, out)
	res, traceDir := traced(t, nil, "", prog, out)
	if res != bare || res.code != 0 {
		t.Fatalf("with the library %+v, without %+v", res, bare)
	}
	if files, _ := filepath.Glob(filepath.Join(traceDir, "*")); len(files) != 0 {
		t.Errorf("the Go program was traced: %v", files)
	}
}

// Calls made before the library is initialised (from another preloaded
// library's constructor) pass through: no crash, the right file.
func TestCallsBeforeInit(t *testing.T) {
	early := compileC(t, "earlyio.c", "-shared", "-fPIC")
	file := filepath.Join(t.TempDir(), "early.txt")
	env := []string{"LD_PRELOAD=" + early + ":" + library(t), "IOPRED_DIR=" + t.TempDir(), "EARLY_FILE=" + file}
	res := run(t, env, "", tool(t, "true"))
	if res.code != 0 {
		t.Fatalf("%+v", res)
	}
	b, err := os.ReadFile(file)
	if err != nil || string(b) != "early\nearly stdio\n" {
		t.Fatalf("the early constructor's file holds %q (%v)", b, err)
	}
}

// By default only regular files are recorded; IOPRED_ALL_FDS=1 records
// pipes and terminals too. The trace files the library writes are never
// recorded, not even with IOPRED_ALL_FDS=1.
func TestWhatIsRecorded(t *testing.T) {
	bash := tool(t, "bash")
	script := "echo piped | cat > /dev/null; echo x > f.txt; cat f.txt > /dev/null"
	count := func(env ...string) (pipes, files int) {
		_, dir := traced(t, env, t.TempDir(), bash, "-c", script)
		for _, tr := range traces(t, dir) {
			for _, e := range tr.events {
				switch {
				case strings.HasPrefix(e.Path, "pipe:"):
					pipes++
				case strings.HasSuffix(e.Path, "f.txt"):
					files++
				case strings.HasSuffix(e.Path, ".iopred.zst"):
					t.Errorf("%s records the library's own trace file: %s %s", filepath.Base(tr.path), e.Op, e.Path)
				}
			}
		}
		return
	}
	if p, f := count(); p != 0 || f == 0 {
		t.Errorf("default: %d pipe events, %d file events; want 0 and some", p, f)
	}
	if p, _ := count("IOPRED_ALL_FDS=1"); p == 0 {
		t.Error("IOPRED_ALL_FDS=1 recorded no pipe event")
	}
}

// The trace is named <exe>.<host>.<pid>[.r<rank>].iopred.zst with the
// rank from IOPRED_RANK, and IOPRED_DISABLE=1 turns everything off: same
// output, no trace.
func TestTraceNameAndDisable(t *testing.T) {
	cp := tool(t, "cp")
	src := filepath.Join("testdata", "noio.c")
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	for _, c := range []struct {
		env    []string
		suffix string
	}{
		{nil, ".iopred.zst"},
		{[]string{"IOPRED_RANK=3"}, ".r3.iopred.zst"},
	} {
		res, dir := traced(t, c.env, "", cp, src, filepath.Join(t.TempDir(), "x.c"))
		if res.code != 0 {
			t.Fatalf("%+v", res)
		}
		tr := onlyTrace(t, dir)
		name := filepath.Base(tr.path)
		pid := fmt.Sprint(tr.header.PID)
		if want := "cp." + host + "." + pid + c.suffix; name != want {
			t.Errorf("env %v: trace %s, want %s", c.env, name, want)
		}
	}
	out := filepath.Join(t.TempDir(), "x.c")
	res, dir := traced(t, []string{"IOPRED_DISABLE=1"}, "", cp, src, out)
	if res.code != 0 {
		t.Fatalf("%+v", res)
	}
	if b, err := os.ReadFile(out); err != nil || len(b) == 0 {
		t.Fatalf("cp under IOPRED_DISABLE=1 did not copy: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("IOPRED_DISABLE=1 left %v", files)
	}
}

// A signal handler doing I/O interrupts the library while it records the
// program's own calls (and while it is inside iopred's code): the program
// computes the same result, every handler write succeeds, nothing hangs,
// and the trace, closed by exit(), is complete with the handler's writes
// that did not land inside iopred's own code.
func TestSignalHandlerReentrancy(t *testing.T) {
	prog := compileC(t, "reentrant.c")
	bare := run(t, nil, "", prog, t.TempDir(), "200000")
	data := t.TempDir()
	res, dir := traced(t, nil, "", prog, data, "200000")
	if res != bare || res.code != 0 {
		t.Fatalf("with the library %+v, without %+v", res, bare)
	}
	tr := onlyTrace(t, dir)
	complete(t, tr)
	logs := 0
	for _, e := range eventsOn(tr, filepath.Join(data, "log.txt")) {
		if e.Op == "write" {
			logs++
		}
	}
	ticks, _ := os.ReadFile(filepath.Join(data, "log.txt"))
	handlerWrites := strings.Count(string(ticks), "tick\n")
	if logs == 0 || logs > handlerWrites {
		t.Errorf("%d handler writes recorded of %d made", logs, handlerWrites)
	}
	t.Logf("%d of %d handler writes recorded (the rest interrupted iopred itself and passed through)", logs, handlerWrites)
}

// The descriptor numbers a program gets are those it gets without the
// library, even when it opens files while iopred's Go runtime starts and
// opens files of its own on another thread. The runs repeat because the
// race this guards against depends on timing.
func TestDescriptorNumbers(t *testing.T) {
	prog := compileC(t, "fdnums.c")
	bare := run(t, nil, "", prog, t.TempDir())
	if bare.code != 0 {
		t.Fatalf("without the library: %+v", bare)
	}
	for i := 0; i < 20; i++ {
		if res, _ := traced(t, nil, "", prog, t.TempDir()); res != bare {
			t.Fatalf("run %d with the library: %q, without: %q", i, res.stdout, bare.stdout)
		}
	}
}

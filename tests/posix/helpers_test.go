// Package posix tests libiopred.so against real programs: the events it
// records, and that the programs run exactly as they do without it.
//
// The tests need the library and the command built (`make`), and the tools
// that .ci/run installs. A missing tool fails the test, unless
// IOPRED_SKIP_MISSING_TOOLS=1 (for a quick local loop only).
package posix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"iopred/tracefmt"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var (
	buildOnce sync.Once
	buildErr  error
)

// library returns the path of build/libiopred.so, running make in the
// repository first when the library or the command is missing.
func library(t testing.TB) string {
	root := repoRoot()
	lib := filepath.Join(root, "build", "libiopred.so")
	buildOnce.Do(func() {
		_, errLib := os.Stat(lib)
		_, errCmd := os.Stat(filepath.Join(root, "build", "iopred"))
		if errLib == nil && errCmd == nil {
			return
		}
		cmd := exec.Command("make")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("make: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return lib
}

// tool finds a program that .ci/run installs.
func tool(t testing.TB, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("IOPRED_SKIP_MISSING_TOOLS") == "1" {
			t.Skipf("%s not installed", name)
		}
		t.Fatalf("%s not installed (.ci/run installs it)", name)
	}
	return p
}

// compileC builds a C program (or shared library with -shared) from
// testdata into a temporary directory.
func compileC(t testing.TB, src string, extra ...string) string {
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	args := append([]string{"-O2", "-o", out, filepath.Join("testdata", src)}, extra...)
	if b, err := exec.Command(tool(t, "gcc"), args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, b)
	}
	return out
}

// result is what a program did: its output streams and exit status.
type result struct {
	stdout, stderr string
	code           int
}

// run runs a program with extra environment, failing the test after a
// timeout rather than hanging.
func run(t testing.TB, env []string, dir string, prog string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	// Children that outlive a killed program keep its pipes open: stop
	// waiting for them too, so a hang fails the test instead of stalling it.
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v: hung (killed after 120 s)", prog, args)
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", prog, args, err)
	}
	return result{out.String(), errb.String(), code}
}

// traced runs a program under the library, with its traces in a new
// directory that it returns.
func traced(t testing.TB, env []string, dir, prog string, args ...string) (result, string) {
	t.Helper()
	traces := t.TempDir()
	env = append([]string{"LD_PRELOAD=" + library(t), "IOPRED_DIR=" + traces}, env...)
	return run(t, env, dir, prog, args...), traces
}

// trace is one trace file read whole.
type trace struct {
	path     string
	header   tracefmt.Header
	events   []tracefmt.Event
	procs    []tracefmt.Proc
	contexts map[uint64]tracefmt.Context
	footer   *tracefmt.Footer
	err      error // how reading ended when not at a clean end
}

func readTrace(t testing.TB, path string) trace {
	t.Helper()
	r, err := tracefmt.Open(path)
	var trunc *tracefmt.TruncatedError
	if errors.As(err, &trunc) {
		// A process killed before its first frame closed: nothing to read,
		// which the caller judges like any other truncation.
		return trace{path: path, err: err}
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer r.Close()
	tr := trace{path: path, header: r.Header()}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tr.err = err
			break
		}
		switch {
		case rec.Event != nil:
			tr.events = append(tr.events, *rec.Event)
		case rec.Proc != nil:
			tr.procs = append(tr.procs, *rec.Proc)
		}
	}
	tr.contexts = r.Contexts()
	tr.footer = r.Footer()
	return tr
}

// traces reads every trace in a directory, sorted by file name.
func traces(t testing.TB, dir string) []trace {
	t.Helper()
	files, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []trace
	for _, f := range files {
		out = append(out, readTrace(t, f))
	}
	return out
}

// onlyTrace reads the single trace a run must have left.
func onlyTrace(t testing.TB, dir string) trace {
	t.Helper()
	all := traces(t, dir)
	if len(all) != 1 {
		names := []string{}
		for _, tr := range all {
			names = append(names, filepath.Base(tr.path))
		}
		t.Fatalf("want one trace in %s, found %d: %v", dir, len(all), names)
	}
	return all[0]
}

// complete fails unless the trace ended with its footer.
func complete(t testing.TB, tr trace) {
	t.Helper()
	if tr.err != nil {
		t.Fatalf("%s: %v", tr.path, tr.err)
	}
	if tr.footer == nil {
		t.Fatalf("%s: no footer", tr.path)
	}
}

// eventsOn returns the events on files whose path has the given prefix.
func eventsOn(tr trace, prefix string) []tracefmt.Event {
	var out []tracefmt.Event
	for _, e := range tr.events {
		if strings.HasPrefix(e.Path, prefix) {
			out = append(out, e)
		}
	}
	return out
}

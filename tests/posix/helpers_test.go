// Package posix tests libiopred.so against real programs: the events it
// records, and that the programs run exactly as they do without it.
//
// The tests need the library and the command built (`make`), and the tools
// that .ci/run installs. A missing tool fails the test, unless
// IOPRED_SKIP_MISSING_TOOLS=1 (for a quick local loop only).
package posix

import (
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"iopred/tests/testenv"
	"iopred/tracefmt"
)

func library(t testing.TB) string { return testenv.Library(t) }

func tool(t testing.TB, name string) string { return testenv.Tool(t, name) }

func compileC(t testing.TB, src string, extra ...string) string {
	return testenv.CompileC(t, src, extra...)
}

// result is what a program did: its output streams and exit status.
type result struct {
	stdout, stderr string
	code           int
}

// run runs a program with extra environment, failing the test after a
// two-minute deadline.
func run(t testing.TB, env []string, dir string, prog string, args ...string) result {
	t.Helper()
	r := testenv.Run(t, env, dir, prog, args...)
	return result{r.Stdout, r.Stderr, r.Code}
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

package posix

import (
	"os"
	"path/filepath"
	"testing"

	"iopred/tracefmt"
)

// TestStackedWithDlsymInterposer runs programs with libiopred.so and a
// second tracer preloaded together, in both orders. The second tracer
// (testdata/gotchalike.c) works as GOTCHA, DFTracer's interposition
// library, does: it answers iopred's dlsym(RTLD_NEXT, "write"), "close" and
// "fclose" with its own wrappers, which call the process's first
// definition, iopred's. Taken at its word, the answer makes the two
// wrappers call each other until the stack overflows (cat exits with
// SIGSEGV). The programs must run as they do alone: same output, exit
// status, return values and errno, and iopred still records their calls.
func TestStackedWithDlsymInterposer(t *testing.T) {
	shim := compileC(t, "gotchalike.c", "-fPIC", "-shared", "-ldl")
	prog := compileC(t, "stacked.c")
	cat := tool(t, "cat")
	dir := t.TempDir()
	input := filepath.Join(dir, "input")
	content := "stacked tracers\n"
	if err := os.WriteFile(input, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}

	// The second tracer alone changes nothing: the defect is the pair's.
	if r := run(t, []string{"LD_PRELOAD=" + shim}, "", cat, input); r.code != 0 || r.stdout != content {
		t.Fatalf("cat under the second tracer alone: status %d, output %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	for _, order := range []struct{ name, preload string }{
		{"tracer-first", shim + ":" + library(t)},
		{"iopred-first", library(t) + ":" + shim},
	} {
		t.Run(order.name, func(t *testing.T) {
			env := func(traces string) []string {
				return []string{"LD_PRELOAD=" + order.preload, "IOPRED_DIR=" + traces}
			}
			traces := t.TempDir()
			r := run(t, env(traces), "", cat, input)
			if r.code != 0 || r.stdout != content {
				t.Fatalf("cat: status %d (-1: killed by a signal, SIGSEGV when the wrappers loop), output %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			tr := onlyTrace(t, traces)
			complete(t, tr)
			if !hasOp(eventsOn(tr, input), "close") {
				t.Errorf("cat: no close of %s recorded", input)
			}

			out := filepath.Join(dir, order.name)
			traces = t.TempDir()
			r = run(t, env(traces), "", prog, out)
			if r.code != 0 || r.stdout != "14\n" {
				t.Fatalf("stacked: status %d (3 to 5: a call's result or errno changed; -1: killed by a signal), output %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			if b, err := os.ReadFile(out); err != nil || string(b) != "stream\ndirect\n" {
				t.Fatalf("stacked wrote %q (%v)", b, err)
			}
			tr = onlyTrace(t, traces)
			complete(t, tr)
			for _, op := range []string{"fclose", "write", "close"} {
				if !hasOp(eventsOn(tr, out), op) {
					t.Errorf("stacked: no %s of %s recorded", op, out)
				}
			}
		})
	}
}

// hasOp reports whether one of events is a call of op.
func hasOp(events []tracefmt.Event, op string) bool {
	for _, e := range events {
		if e.Op == op {
			return true
		}
	}
	return false
}

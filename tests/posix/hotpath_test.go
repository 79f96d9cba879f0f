package posix

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"iopred/tests/testenv"
	"iopred/tracefmt"
)

var cacheReport = regexp.MustCompile(`iopred: context cache: (\d+) hits, (\d+) mismatches`)

// contextsByCall maps each event of a trace on path (named by its offset
// and size, which ctxcache.c makes unique) to its context's frames.
func contextsByCall(t *testing.T, tr trace, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range eventsOn(tr, path) {
		if e.Op != "pwrite" {
			continue
		}
		c, ok := tr.contexts[e.Ctx]
		if !ok || len(c.Frames) == 0 {
			t.Fatalf("pwrite at %d: context %d has no frames", e.Offset, e.Ctx)
		}
		var b strings.Builder
		for _, f := range c.Frames {
			// Every frame is named, even one in a library unloaded
			// before the trace named its context: the library keeps the
			// paths of the modules it has seen.
			if f.Module == "" || f.Module == "?" {
				t.Fatalf("pwrite at %d: context %d has an unnamed frame at %#x", e.Offset, e.Ctx, f.Offset)
			}
			fmt.Fprintf(&b, "%s+%#x ", filepath.Base(f.Module), f.Offset)
		}
		out[fmt.Sprintf("%d/%d", e.Offset, e.Size)] = b.String()
	}
	return out
}

// TestContextCacheMatchesStacks proves that the per-thread walk memo of
// the context capture gives every call the context a real stack walk
// gives it: for another caller of the same function, another call site
// in it, recursion to several depths (one beyond the captured depth),
// calls from a library that is unloaded, replaced by another (usually at
// the same address) and loaded again, and threads that reuse the memo
// pages of threads that ended. A call from the second library at the
// first one's addresses must be named after the second, whenever the
// trace names the context (the memo makes the race with the naming more
// likely; CI once saw the first library's calls named after the second). With IOPRED_CONTEXT_CACHE=verify the
// library walks the stack again on every memo hit and counts the hits
// whose walk differs; with the memo on and off, every call must get the
// same frames.
func TestContextCacheMatchesStacks(t *testing.T) {
	dir := t.TempDir()
	lib1, lib2 := filepath.Join(dir, "libctx1.so"), filepath.Join(dir, "libctx2.so")
	gcc := testenv.Tool(t, "gcc")
	for _, b := range [][]string{
		{"-O2", "-fPIC", "-shared", "-o", lib1, "testdata/ctxlib.c"},
		{"-O2", "-fPIC", "-shared", "-DVARIANT", "-o", lib2, "testdata/ctxlib.c"},
	} {
		if out, err := exec.Command(gcc, b...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", b, err, out)
		}
	}
	prog := compileC(t, "ctxcache.c", "-pthread", "-ldl")
	frames := map[string]map[string]string{}
	for _, mode := range []string{"verify", "1", "0"} {
		data := filepath.Join(t.TempDir(), "data")
		res, traces := traced(t, []string{"IOPRED_CONTEXT_CACHE=" + mode}, "", prog, data, lib1, lib2)
		if res.code != 0 {
			t.Fatalf("IOPRED_CONTEXT_CACHE=%s: exit %d\n%s", mode, res.code, res.stderr)
		}
		tr := onlyTrace(t, traces)
		complete(t, tr)
		frames[mode] = contextsByCall(t, tr, data)
		if mode != "verify" {
			continue
		}
		m := cacheReport.FindStringSubmatch(res.stderr)
		if m == nil {
			t.Fatalf("no context cache report on stderr:\n%s", res.stderr)
		}
		hits, _ := strconv.Atoi(m[1])
		mismatches, _ := strconv.Atoi(m[2])
		calls := len(frames[mode])
		t.Logf("%d calls, %d answered by the memo", calls, hits)
		if mismatches != 0 {
			t.Errorf("%d of %d memo hits differ from the stack walk", mismatches, hits)
		}
		// Most call stacks repeat: a memo that never hits proves nothing.
		if hits < calls/2 {
			t.Errorf("only %d memo hits for %d calls", hits, calls)
		}
	}
	on, off := frames["1"], frames["0"]
	if len(on) != len(off) || len(on) == 0 {
		t.Fatalf("%d calls with the memo, %d without", len(on), len(off))
	}
	distinct := map[string]bool{}
	for call, f := range off {
		distinct[f] = true
		if on[call] != f {
			t.Errorf("call %s: with the memo %q, without %q", call, on[call], f)
		}
	}
	if len(distinct) < 16 {
		t.Errorf("only %d distinct contexts: the program should reach at least 16", len(distinct))
	}
}

// TestClockAgreesWithMonotonic checks the events' clock (the TSC scaled
// by a per-thread calibration, preload/core.c) against CLOCK_MONOTONIC
// read by the program around each call, in two threads over a few hundred
// ms: every recorded start and end must lie within the documented bound
// of the program's own readings, and each thread's times must never go
// backwards. IOPRED_TSC=0 (CLOCK_MONOTONIC itself) must pass too.
func TestClockAgreesWithMonotonic(t *testing.T) {
	const bound = 2000 // ns: core.c's bound, 1 us at the very worst, with room
	const calls = 6000
	prog := compileC(t, "clockcheck.c", "-pthread")
	for _, tsc := range []string{"1", "0"} {
		t.Run("IOPRED_TSC="+tsc, func(t *testing.T) {
			data := t.TempDir()
			res, traces := traced(t, []string{"IOPRED_TSC=" + tsc}, "", prog, data, strconv.Itoa(calls))
			if res.code != 0 {
				t.Fatalf("exit %d\n%s", res.code, res.stderr)
			}
			type span struct{ start, end int64 }
			want := map[string]span{}
			for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
				var th, i int
				var a, b int64
				if _, err := fmt.Sscan(line, &th, &i, &a, &b); err != nil {
					t.Fatalf("bad line %q: %v", line, err)
				}
				want[fmt.Sprintf("%s/data.%d@%d", data, th, i*64)] = span{a, b}
			}
			tr := onlyTrace(t, traces)
			complete(t, tr)
			anchor := tr.header.StartMonoNs
			byFile := map[string][]tracefmt.Event{}
			var early, late int64
			checked := 0
			for _, e := range eventsOn(tr, data) {
				if e.Op != "pwrite" {
					continue
				}
				w, ok := want[fmt.Sprintf("%s@%d", e.Path, e.Offset)]
				if !ok {
					t.Fatalf("unexpected pwrite on %s at %d", e.Path, e.Offset)
				}
				start, end := anchor+e.StartNs, anchor+e.EndNs
				if end < start {
					t.Errorf("%s@%d: ends %d ns before it starts", e.Path, e.Offset, start-end)
				}
				early = max(early, w.start-start)
				late = max(late, end-w.end)
				byFile[e.Path] = append(byFile[e.Path], e)
				checked++
			}
			if checked != 2*calls {
				t.Fatalf("%d pwrite events, want %d", checked, 2*calls)
			}
			t.Logf("largest stray from the program's readings (0: none): a start %d ns before, an end %d ns after", early, late)
			if early > bound || late > bound {
				t.Errorf("recorded times stray from CLOCK_MONOTONIC by more than %d ns: %d before, %d after", bound, early, late)
			}
			for path, evs := range byFile {
				sort.Slice(evs, func(i, j int) bool { return evs[i].Offset < evs[j].Offset })
				for i := 1; i < len(evs); i++ {
					if evs[i].StartNs < evs[i-1].EndNs {
						t.Errorf("%s: call %d starts %d ns before call %d ended", path, i, evs[i-1].EndNs-evs[i].StartNs, i-1)
					}
				}
			}
		})
	}
}

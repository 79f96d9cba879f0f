// Package unwind tests the hot-path call-stack unwinder of libiopred.so
// (preload/unwind.c). The tests compile C, C++ and Fortran programs with
// the unwinder linked in and compare every capture with libunwind's
// unw_backtrace; BenchmarkBacktrace measures its cost against
// unw_backtrace and glibc's backtrace().
package unwind

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// cflags are those of the code the interposer meets in HPC applications:
// optimised, without frame pointers.
var cflags = []string{"-O2", "-fomit-frame-pointer", "-Wall", "-Wextra", "-Werror", "-g"}

// The programs' sources live in testdata (Go does not allow C files in a
// package directory without cgo); commands run there.
const (
	srcDir    = "testdata"
	unwindSrc = "../../../preload/unwind.c"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// programs builds every test program once per test binary into a
// temporary directory and returns it.
func programs(tb testing.TB) string {
	tb.Helper()
	for _, tool := range []string{"gcc", "g++", "gfortran"} {
		if _, err := exec.LookPath(tool); err != nil {
			tb.Skipf("%s not installed: %v", tool, err)
		}
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "iopred-unwind-")
		if buildErr != nil {
			return
		}
		buildErr = buildAll(buildDir)
	})
	if buildErr != nil {
		tb.Fatalf("building the unwinder's test programs: %v", buildErr)
	}
	return buildDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = srcDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func buildAll(dir string) error {
	o := func(name string) string { return filepath.Join(dir, name) }
	with := func(extra ...string) []string { return append(append([]string{}, cflags...), extra...) }
	steps := [][]string{
		append([]string{"gcc"}, with("-c", "-o", o("unwind.o"), unwindSrc)...),
		append([]string{"gcc"}, with("-c", "-o", o("extcheck.o"), "extcheck.c")...),
		append([]string{"gcc"}, with("-DWRAP_WRITE", "-c", "-o", o("extwrite.o"), "extcheck.c")...),
		append([]string{"gcc"}, with("-pthread", "-rdynamic", "-o", o("cstack"), "cstack.c", o("unwind.o"), "-lunwind", "-ldl")...),
		append([]string{"gcc"}, with("-fPIC", "-shared", "-o", o("libshlib.so"), "shlib.c")...),
		append([]string{"gcc"}, with("-DVARIANT", "-fPIC", "-shared", "-o", o("libshlib2.so"), "shlib.c")...),
		append([]string{"gcc"}, with("-pthread", "-rdynamic", "-o", o("dlmain"), "dlmain.c", o("unwind.o"), "-lunwind", "-ldl")...),
		append([]string{"gcc"}, with("-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-o", o("nounwind"), "nounwind.c", o("unwind.o"), "-lunwind", "-ldl")...),
		{"gfortran", "-O2", "-Wall", "-J", dir, "-o", o("fortran"), "fortran.f90", o("extwrite.o"), o("unwind.o"), "-lunwind", "-ldl"},
		append([]string{"g++"}, with("-fno-exceptions", "-o", o("cxx"), "cxx.cc", o("extwrite.o"), o("unwind.o"), "-lunwind", "-ldl")...),
		append([]string{"gcc"}, with("-o", o("bench"), "bench.c", o("unwind.o"), "-lunwind", "-ldl")...),
		append([]string{"gcc"}, with("-fPIC", "-shared", "-o", o("libpreload.so"), "preload.c", unwindSrc, "-lunwind", "-ldl")...),
	}
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// summary is the last line a test program prints.
var summaryRE = regexp.MustCompile(`(?m)^(\S+): checks (\d+) failures (\d+) frames (\d+)`)

// TestAgreesWithLibunwind runs each program: every capture, at every
// depth limit, must give the same return addresses as unw_backtrace and
// stop at the same frame.
func TestAgreesWithLibunwind(t *testing.T) {
	dir := programs(t)
	cases := []struct {
		name string
		args []string
		why  string
	}{
		{"preinit", []string{"cstack", "preinit"}, "0 frames before iop_unwind_init; a second init is harmless"},
		{"shapes", []string{"cstack", "shapes"}, "deep and mutual recursion, VLA frames (CFA on rbp), realigned frames (CFA read through rbp), mixed"},
		{"maxes", []string{"cstack", "maxes"}, "every depth limit from 1 to 256 on the same shapes"},
		{"skip", []string{"cstack", "skip"}, "skip = s drops exactly the first s frames"},
		{"signal", []string{"cstack", "signal"}, "captures in a signal handler, through __restore_rt"},
		{"altstack", []string{"cstack", "altstack"}, "the handler runs on an alternate signal stack"},
		{"timer", []string{"cstack", "timer"}, "20,000 profiling signals at arbitrary instructions, in PLT stubs, lazy binding and the unwinders themselves"},
		{"threads", []string{"cstack", "threads"}, "four threads at once under profiling signals"},
		{"coroutine", []string{"cstack", "coroutine"}, "makecontext stacks from malloc and from mmap below a PROT_NONE page"},
		{"seccomp", []string{"cstack", "seccomp"}, "process_vm_readv refused by seccomp: stack probing falls back to mincore, captures still agree and keep errno"},
		{"bogus", []string{"cstack", "bogus"}, "lying CFI (CFA far above the stack, garbage rbp, garbage return address): stop, never fault"},
		{"dlopen", []string{"dlmain", filepath.Join(dir, "libshlib.so"), filepath.Join(dir, "libshlib2.so")}, "frames in dlopen'ed libraries, closed and replaced by other code at the same address"},
		{"dlopen-threads", []string{"dlmain", filepath.Join(dir, "libshlib.so"), filepath.Join(dir, "libshlib2.so"), "threads"}, "three threads capture through one library while another is loaded and unloaded 200 times"},
		{"fortran", []string{"fortran"}, "gfortran -O2: recursion, automatic arrays, internal formatted write; file writes captured in write() under libgfortran's frames"},
		{"cxx", []string{"cxx"}, "g++ -fno-exceptions: virtual calls, templates, std::function, std::sort's frames; std::ofstream captured in write() under libstdc++'s frames"},
		{"nounwind", []string{"nounwind"}, "code without unwind tables: both stop at its first frame"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(dir, c.args[0]), c.args[1:]...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s (%s): %v\n%s", c.name, c.why, err, out)
			}
			m := summaryRE.FindSubmatch(out)
			if m == nil {
				t.Fatalf("%s: no summary line in output:\n%s", c.name, out)
			}
			checks, _ := strconv.Atoi(string(m[2]))
			failures, _ := strconv.Atoi(string(m[3]))
			if checks == 0 || failures != 0 {
				t.Fatalf("%s (%s): %d of %d captures differ from libunwind\n%s", c.name, c.why, failures, checks, out)
			}
			t.Logf("%s", bytes.TrimSpace(out))
		})
	}
}

var preloadRE = regexp.MustCompile(`(?m)^preload \((\d+) writes\): checks (\d+) failures (\d+)`)

// TestPreloadedIntoRealPrograms runs distribution-built programs (no frame
// pointers) under an LD_PRELOAD library that wraps write() and captures
// the stack there with both unwinders, as libiopred.so's interposer does:
// the captures must agree, and each program must have been captured.
func TestPreloadedIntoRealPrograms(t *testing.T) {
	dir := programs(t)
	lib := filepath.Join(dir, "libpreload.so")
	cases := []struct {
		name string
		argv []string
	}{
		{"dd", []string{"dd", "if=/dev/zero", "of=" + filepath.Join(t.TempDir(), "dd.out"), "bs=4096", "count=200"}},
		{"tar", []string{"tar", "cf", filepath.Join(t.TempDir(), "t.tar"), "-C", "testdata", "."}},
		{"python3", []string{"python3", "-c", "import sys\nf = open(sys.argv[1], 'w')\nfor i in range(50):\n    f.write('x' * 10000)\n    f.flush()\n", filepath.Join(t.TempDir(), "py.out")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := exec.LookPath(c.argv[0]); err != nil {
				t.Skipf("%s not installed", c.argv[0])
			}
			report := filepath.Join(t.TempDir(), "report")
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib, "UNWIND_REPORT="+report)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", c.argv, err, out)
			}
			text, err := os.ReadFile(report)
			if err != nil {
				t.Fatalf("no report from %s: %v", c.name, err)
			}
			captured := 0
			for _, m := range preloadRE.FindAllSubmatch(text, -1) {
				writes, _ := strconv.Atoi(string(m[1]))
				failures, _ := strconv.Atoi(string(m[3]))
				if failures != 0 {
					t.Fatalf("%s: captures differ from libunwind:\n%s", c.name, text)
				}
				captured += writes
			}
			if captured == 0 {
				t.Fatalf("%s: no write() was captured:\n%s", c.name, text)
			}
			t.Logf("%s: %d captures in write() agree with libunwind", c.name, captured)
		})
	}
}

// TestBuildsForTheLibrary checks that unwind.c compiles cleanly as part
// of a shared library, as cgo builds it into libiopred.so, and exports
// nothing: its symbols must not clash with the application's.
func TestBuildsForTheLibrary(t *testing.T) {
	dir := programs(t)
	so := filepath.Join(dir, "unwind-only.so")
	if err := run("gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-o", so, unwindSrc); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("nm", "-D", "--defined-only", so).CombinedOutput()
	if err != nil {
		t.Fatalf("nm: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("iop_")) {
		t.Fatalf("unwind.c exports symbols from a shared library:\n%s", out)
	}
}

// benchFigures are one method's costs: median wall time and callgrind
// instructions per warm call, and the frames each call returns.
type benchFigures struct {
	frames       int
	ns, instrs   float64
	haveCallgrnd bool
}

var methods = []string{"iop_backtrace", "unw_backtrace", "glibc_backtrace"}

// loopOf names the bench program's loop function for each method.
var loopOf = map[string]string{
	"iop_backtrace":   "loop_iop",
	"unw_backtrace":   "loop_unw",
	"glibc_backtrace": "loop_glibc",
}

// measure runs the bench program natively for wall time and twice under
// callgrind (N = 2,000 and 22,000 calls); the difference of the loops'
// inclusive costs divided by 20,000 is the cost of one warm call, free of
// start-up and warm-up.
func measure(b *testing.B, dir string, nest int) map[string]*benchFigures {
	bin := filepath.Join(dir, "bench")
	figs := map[string]*benchFigures{}
	depth := strconv.Itoa(nest)
	out, err := exec.Command(bin, "time", "-", depth).CombinedOutput()
	if err != nil {
		b.Fatalf("bench time: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		frames, _ := strconv.Atoi(f[1])
		ns, _ := strconv.ParseFloat(f[2], 64)
		figs[f[0]] = &benchFigures{frames: frames, ns: ns}
	}
	for _, m := range methods {
		if figs[m] == nil {
			b.Fatalf("bench time printed no figure for %s:\n%s", m, out)
		}
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		b.Logf("valgrind not installed: no instruction counts")
		return figs
	}
	counts := map[int]map[string]float64{}
	for _, n := range []int{2000, 22000} {
		cg := filepath.Join(dir, fmt.Sprintf("callgrind.%d.%d", nest, n))
		if out, err := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+cg, bin, "count", strconv.Itoa(n), depth).CombinedOutput(); err != nil {
			b.Fatalf("callgrind: %v\n%s", err, out)
		}
		ann, err := exec.Command("callgrind_annotate", "--inclusive=yes", cg).CombinedOutput()
		if err != nil {
			b.Fatalf("callgrind_annotate: %v\n%s", err, ann)
		}
		counts[n] = loopCosts(ann)
	}
	for _, m := range methods {
		loop := loopOf[m]
		lo, hi := counts[2000][loop], counts[22000][loop]
		if lo == 0 || hi <= lo {
			b.Fatalf("no callgrind cost for %s (%v, %v)", loop, lo, hi)
		}
		figs[m].instrs = (hi - lo) / 20000
		figs[m].haveCallgrnd = true
	}
	return figs
}

var annRE = regexp.MustCompile(`^\s*([\d,]+)\s.*:(loop_\w+) `)

// loopCosts reads the inclusive instruction counts of the loop_*
// functions from callgrind_annotate's output.
func loopCosts(ann []byte) map[string]float64 {
	costs := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(ann))
	for sc.Scan() {
		m := annRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if err == nil {
			costs[m[2]] = v
		}
	}
	return costs
}

// BenchmarkBacktrace reports, per method, the median wall time (ns/call)
// and the callgrind instruction count (instr/call) of one warm capture of
// the same stack, measured side by side in one process: a 9-frame stack
// and a 19-frame one (about the interposer's default depth of 16 plus its
// own frames). The figures come from the external bench program, so
// ns/op is meaningless and set to 0.
func BenchmarkBacktrace(b *testing.B) {
	dir := programs(b)
	for _, nest := range []int{2, 12} {
		b.Run(fmt.Sprintf("nest=%d", nest), func(b *testing.B) { benchMethods(b, dir, nest) })
	}
}

func benchMethods(b *testing.B, dir string, nest int) {
	figs := measure(b, dir, nest)
	for _, m := range methods {
		f := figs[m]
		b.Run(m, func(b *testing.B) {
			for range b.N {
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(f.ns, "ns/call")
			b.ReportMetric(float64(f.frames), "frames")
			if f.haveCallgrnd {
				b.ReportMetric(f.instrs, "instr/call")
				b.ReportMetric(f.instrs/float64(f.frames), "instr/frame")
			}
		})
	}
}

// Package bench measures what libiopred.so costs the programs it traces:
// per-call overhead (time and instructions), start-up time and memory.
// Each benchmark runs the bare program and the traced one side by side in
// the same run and reports ratios, because these machines are shared.
//
// Run with `make bench` (the library must be built first).
package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"iopred/tracefmt"
)

func repoRoot(tb testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func library(tb testing.TB) string {
	lib := filepath.Join(repoRoot(tb), "build", "libiopred.so")
	if _, err := os.Stat(lib); err != nil {
		tb.Fatalf("%s is missing: run make first", lib)
	}
	return lib
}

// compile builds a C program of this directory into a temporary directory.
func compile(tb testing.TB, name string) string {
	out := filepath.Join(tb.TempDir(), strings.TrimSuffix(name, ".c"))
	cmd := exec.Command("gcc", "-O2", "-o", out, filepath.Join("testdata", name))
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("gcc %s: %v\n%s", name, err, b)
	}
	return out
}

type variant struct {
	name string
	env  []string
}

func variants(tb testing.TB) []variant {
	lib := library(tb)
	dir := tb.TempDir()
	vs := []variant{
		{"bare", nil},
		{"capture", []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + dir}},
		{"nocapture", []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + dir, "IOPRED_CONTEXT_DEPTH=0"}},
		{"traceonly", []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + dir, "IOPRED_PREDICT=0"}},
	}
	if old := baseline(tb); old != "" {
		vs = append(vs,
			variant{"old-capture", []string{"LD_PRELOAD=" + old, "IOPRED_DIR=" + dir}},
			variant{"old-traceonly", []string{"LD_PRELOAD=" + old, "IOPRED_DIR=" + dir, "IOPRED_PREDICT=0"}})
	}
	return vs
}

// baseline is IOPRED_BENCH_BASELINE: another build of the library (an
// older commit's, say) that the benchmarks then run side by side with
// build/libiopred.so, rounds interleaved, reporting its figures as old-*.
// On a shared machine only such a comparison within one run is fair.
func baseline(tb testing.TB) string {
	old := os.Getenv("IOPRED_BENCH_BASELINE")
	if old == "" {
		return ""
	}
	if _, err := os.Stat(old); err != nil {
		tb.Fatalf("IOPRED_BENCH_BASELINE: %v", err)
	}
	return old
}

// find returns the variant called name, or nil.
func find(vs []variant, name string) *variant {
	for i := range vs {
		if vs[i].name == name {
			return &vs[i]
		}
	}
	return nil
}

func run(tb testing.TB, env []string, prog string, args ...string) string {
	cmd := exec.Command(prog, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s %v: %v\n%s", prog, args, err, stderr.String())
	}
	return out.String()
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// BenchmarkCallOverhead times 1,000,000 calls of 4 KiB pwrite and of
// 1-byte write to /dev/shm, bare and traced, rounds interleaved.
func BenchmarkCallOverhead(b *testing.B) {
	prog := compile(b, "calls.c")
	vs := variants(b)
	for _, kind := range []string{"pwrite4k", "write1"} {
		b.Run(kind, func(b *testing.B) {
			med := map[string][]float64{}
			for i := 0; i < b.N; i++ {
				for round := 0; round < 3; round++ {
					for _, v := range vs {
						f := filepath.Join("/dev/shm", fmt.Sprintf("iopred-bench-%d", os.Getpid()))
						fields := strings.Fields(run(b, v.env, prog, kind, "1000000", f))
						os.Remove(f)
						x, _ := strconv.ParseFloat(fields[0], 64)
						med[v.name] = append(med[v.name], x)
					}
				}
			}
			bare := median(med["bare"])
			b.ReportMetric(bare, "bare-ns/call")
			b.ReportMetric(median(med["capture"])-bare, "capture-extra-ns/call")
			b.ReportMetric(median(med["nocapture"])-bare, "nocapture-extra-ns/call")
			b.ReportMetric(median(med["traceonly"])-bare, "traceonly-extra-ns/call")
			b.ReportMetric(median(med["capture"])/bare, "capture-ratio")
			b.ReportMetric(median(med["nocapture"])/bare, "nocapture-ratio")
			if find(vs, "old-capture") != nil {
				b.ReportMetric(median(med["old-capture"])-bare, "old-capture-extra-ns/call")
				b.ReportMetric(median(med["old-traceonly"])-bare, "old-traceonly-extra-ns/call")
			}
		})
	}
}

var callgrindTotal = regexp.MustCompile(`(?m)^summary:\s+(\d+)`)

// mainThreadInstructions counts the user-space instructions the main
// thread executes (the consumer and Go threads are not the
// application's), with valgrind's callgrind: a count, not a time, so it
// repeats on a noisy machine.
func mainThreadInstructions(tb testing.TB, env []string, prog string, args ...string) float64 {
	dir := tb.TempDir()
	out := filepath.Join(dir, "cg.out")
	cmdArgs := append([]string{"--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=" + out, prog}, args...)
	cmd := exec.Command("valgrind", cmdArgs...)
	// valgrind 3.19 cannot decode RDTSCP, which the Go runtime's cputicks
	// uses when the CPU has it: the library's runtime must do without.
	cmd.Env = append(append(os.Environ(), env...), "GODEBUG=cpu.rdtscp=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("valgrind: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out + "-01")
	if err != nil {
		tb.Fatalf("callgrind output: %v", err)
	}
	m := callgrindTotal.FindSubmatch(b)
	if m == nil {
		tb.Fatalf("no summary line in callgrind output")
	}
	x, _ := strconv.ParseFloat(string(m[1]), 64)
	return x
}

// BenchmarkCallInstructions reports user-space instructions per call
// added by the library: the difference between runs of 200,000 and
// 100,000 calls cancels start-up work.
func BenchmarkCallInstructions(b *testing.B) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		b.Fatal("valgrind is needed (apt-get install valgrind)")
	}
	prog := compile(b, "calls.c")
	vs := variants(b)
	for _, kind := range []string{"pwrite4k", "write1"} {
		b.Run(kind, func(b *testing.B) {
			per := map[string]float64{}
			for i := 0; i < b.N; i++ {
				for _, v := range vs {
					f := filepath.Join("/dev/shm", fmt.Sprintf("iopred-cg-%d", os.Getpid()))
					lo := mainThreadInstructions(b, v.env, prog, kind, "100000", f)
					hi := mainThreadInstructions(b, v.env, prog, kind, "200000", f)
					os.Remove(f)
					per[v.name] = (hi - lo) / 100000
				}
			}
			b.ReportMetric(per["bare"], "bare-instr/call")
			b.ReportMetric(per["capture"]-per["bare"], "capture-extra-instr/call")
			b.ReportMetric(per["nocapture"]-per["bare"], "nocapture-extra-instr/call")
			b.ReportMetric(per["traceonly"]-per["bare"], "traceonly-extra-instr/call")
		})
	}
}

// startupTime runs prog many times and returns the median wall time.
func startupTime(tb testing.TB, env []string, prog string, runs int) time.Duration {
	var times []float64
	for i := 0; i < runs; i++ {
		cmd := exec.Command(prog)
		cmd.Env = append(os.Environ(), env...)
		start := time.Now()
		if err := cmd.Run(); err != nil {
			tb.Fatalf("%s: %v", prog, err)
		}
		times = append(times, float64(time.Since(start)))
	}
	return time.Duration(median(times))
}

var statusField = regexp.MustCompile(`(?m)^(VmHWM|RssAnon|RssFile):\s+(\d+) kB`)

// memory starts prog, which does one I/O call and then pauses, and reads
// its peak, private and file-backed resident memory (KiB) from /proc.
func memory(tb testing.TB, env []string, prog string) map[string]float64 {
	cmd := exec.Command(prog)
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	time.Sleep(250 * time.Millisecond)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("%s: %v", prog, err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range statusField.FindAllSubmatch(b, -1) {
		x, _ := strconv.ParseFloat(string(m[2]), 64)
		out[string(m[1])] = x
	}
	return out
}

// BenchmarkStartup reports the extra wall time of a process under the
// library: one that does no I/O, and one that does a single recorded call
// (its Go runtime then takes its first call, and the trace is written at
// exit).
func BenchmarkStartup(b *testing.B) {
	vs := variants(b)
	for _, name := range []string{"noio.c", "oneio.c"} {
		prog := compile(b, name)
		b.Run(strings.TrimSuffix(name, ".c"), func(b *testing.B) {
			old := find(vs, "old-capture")
			var bare, lib, oldLib time.Duration
			for i := 0; i < b.N; i++ {
				for round := 0; round < 5; round++ {
					bare += startupTime(b, vs[0].env, prog, 20)
					lib += startupTime(b, vs[1].env, prog, 20)
					if old != nil {
						oldLib += startupTime(b, old.env, prog, 20)
					}
				}
			}
			n := float64(5 * b.N)
			b.ReportMetric(float64(bare)/n/1e3, "bare-us")
			b.ReportMetric(float64(lib-bare)/n/1e3, "extra-us")
			if old != nil {
				b.ReportMetric(float64(oldLib-bare)/n/1e3, "old-extra-us")
			}
		})
	}
}

// BenchmarkMemory reports the extra memory of a process that did one
// recorded call: peak resident, private (anonymous) and file-backed (the
// library's pages, shared by every traced process).
func BenchmarkMemory(b *testing.B) {
	vs := variants(b)
	prog := compile(b, "iosleep.c")
	old := find(vs, "old-capture")
	extra := map[string]float64{}
	for i := 0; i < b.N; i++ {
		bare, lib := memory(b, vs[0].env, prog), memory(b, vs[1].env, prog)
		for k := range bare {
			extra[k] += lib[k] - bare[k]
		}
		if old != nil {
			for k, v := range memory(b, old.env, prog) {
				extra["old-"+k] += v - bare[k]
			}
		}
	}
	for k, v := range extra {
		name := "extra-" + k + "-MiB"
		if rest, ok := strings.CutPrefix(k, "old-"); ok {
			name = "old-extra-" + rest + "-MiB"
		}
		b.ReportMetric(v/float64(b.N)/1024, name)
	}
}

// BenchmarkTraceSize reports the compressed trace bytes per event of the
// nested-loop workload, with and without context capture.
func BenchmarkTraceSize(b *testing.B) {
	prog := compile(b, "nested.c")
	lib := library(b)
	for _, depth := range []string{"16", "0"} {
		b.Run("depth"+depth, func(b *testing.B) {
			var perEvent float64
			for i := 0; i < b.N; i++ {
				traces, data := b.TempDir(), b.TempDir()
				run(b, []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + traces, "IOPRED_CONTEXT_DEPTH=" + depth}, prog, data, "200", "250", "4096")
				files, _ := filepath.Glob(filepath.Join(traces, "*.iopred.zst"))
				if len(files) != 1 {
					b.Fatalf("want one trace, found %v", files)
				}
				st, err := os.Stat(files[0])
				if err != nil {
					b.Fatal(err)
				}
				events := 0
				if _, err := tracefmt.ReadAll(files[0], func(r tracefmt.Record) error {
					if r.Event != nil {
						events++
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				perEvent += float64(st.Size()) / float64(events)
			}
			b.ReportMetric(perEvent/float64(b.N), "bytes/event")
		})
	}
}

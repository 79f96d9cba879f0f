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
// 1-byte write to /dev/shm, bare and traced, rounds interleaved. Each run
// prints its median batch of 1,000 calls and its 10th and 90th percentile
// batches; the figures are the medians of those over the rounds, minus
// the bare program's. The pinned runs put the whole process on one core
// (taskset -c 0), as on a node where every core runs a rank: the
// consumer thread's work then delays the application's own.
func BenchmarkCallOverhead(b *testing.B) {
	prog := compile(b, "calls.c")
	vs := variants(b)
	if _, err := exec.LookPath("taskset"); err != nil {
		b.Fatalf("taskset is needed (util-linux)")
	}
	for _, pinned := range []bool{false, true} {
		for _, kind := range []string{"pwrite4k", "write1"} {
			name := kind
			if pinned {
				name += "/pinned"
			}
			b.Run(name, func(b *testing.B) {
				// per variant: median, mean, p10, p90 of each round
				got := map[string][4][]float64{}
				for i := 0; i < b.N; i++ {
					for round := 0; round < 5; round++ {
						for _, v := range vs {
							f := filepath.Join("/dev/shm", fmt.Sprintf("iopred-bench-%d", os.Getpid()))
							var out string
							if pinned {
								out = run(b, v.env, "taskset", "-c", "0", prog, kind, "1000000", f)
							} else {
								out = run(b, v.env, prog, kind, "1000000", f)
							}
							fields := strings.Fields(out)
							os.Remove(f)
							if len(fields) != 4 {
								b.Fatalf("calls printed %q", fields)
							}
							cur := got[v.name]
							for k := range cur {
								x, _ := strconv.ParseFloat(fields[k], 64)
								cur[k] = append(cur[k], x)
							}
							got[v.name] = cur
						}
					}
				}
				bare := median(got["bare"][0])
				b.ReportMetric(bare, "bare-ns/call")
				names := []string{"capture", "nocapture", "traceonly"}
				if find(vs, "old-capture") != nil {
					names = append(names, "old-capture", "old-traceonly")
				}
				for _, name := range names {
					b.ReportMetric(median(got[name][0])-bare, name+"-extra-ns/call")
				}
				for _, name := range []string{"capture", "old-capture"} {
					if _, ok := got[name]; !ok {
						continue
					}
					b.ReportMetric(median(got[name][2])-median(got["bare"][2]), name+"-p10-extra-ns/call")
					b.ReportMetric(median(got[name][3])-median(got["bare"][3]), name+"-p90-extra-ns/call")
				}
				b.ReportMetric(median(got["capture"][0])/bare, "capture-ratio")
				b.ReportMetric(median(got["nocapture"][0])/bare, "nocapture-ratio")
			})
		}
	}
}

var callgrindTotal = regexp.MustCompile(`(?m)^summary:\s+(\d+)`)

// mainThreadProfile runs prog under valgrind's callgrind and returns the
// profile of the main thread (the consumer and Go threads are not the
// application's): instructions are a count, not a time, so they repeat
// on a noisy machine.
func mainThreadProfile(tb testing.TB, env []string, prog string, args ...string) string {
	dir := tb.TempDir()
	out := filepath.Join(dir, "cg.out")
	// Only what runs inside main is counted: the calls, and any wait for
	// the consumer inside them, but not the last drain of the rings at
	// exit, whose size varies from run to run (up to a ring of events, each
	// run through the model).
	cmdArgs := append([]string{"--tool=callgrind", "--separate-threads=yes", "--toggle-collect=main",
		"--callgrind-out-file=" + out, prog}, args...)
	cmd := exec.Command("valgrind", cmdArgs...)
	// valgrind 3.19 cannot decode RDTSCP, which the Go runtime's cputicks
	// uses when the CPU has it: the library's runtime must do without.
	cmd.Env = append(append(os.Environ(), env...), "GODEBUG=cpu.rdtscp=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("valgrind: %v\n%s", err, b)
	}
	return out + "-01"
}

// mainThreadInstructions counts the user-space instructions of the main
// thread of a callgrind profile.
func mainThreadInstructions(tb testing.TB, profile string) float64 {
	b, err := os.ReadFile(profile)
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

// annotateLine is one line of `callgrind_annotate --inclusive=yes`:
// the cost, then file:function and the object.
var annotateLine = regexp.MustCompile(`^\s*([\d,]+) \([^)]*\)\s+(\S+?):(\S+)(?: \[(\S+)\])?$`)

// inclusiveCosts returns the inclusive instruction count of every
// file:function of a profile, keyed "file:function", with the object
// when callgrind names one ("file:function@object").
func inclusiveCosts(tb testing.TB, profile string) map[string]float64 {
	out, err := exec.Command("callgrind_annotate", "--inclusive=yes", "--threshold=100", profile).Output()
	if err != nil {
		tb.Fatalf("callgrind_annotate: %v", err)
	}
	costs := map[string]float64{}
	for _, line := range strings.Split(string(out), "\n") {
		m := annotateLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		x, _ := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		key := filepath.Base(m[2]) + ":" + m[3]
		if m[4] != "" {
			key += "@" + filepath.Base(m[4])
		}
		costs[key] += x
	}
	return costs
}

// breakdown splits the instructions of one intercepted call (the
// library's wrapper of fn, everything it calls included) into the parts
// of the hot path, per call. The clock is inlined from clock.h, which
// callgrind reports as a file of its own; the record append is iop_end
// without the context capture and the hand-over, and the hand-over is
// what the application's thread spends waking the consumer or waiting
// for it (its futex calls).
func breakdown(costs map[string]float64, fn string, calls float64) map[string]float64 {
	get := func(keys ...string) float64 {
		var x float64
		for _, k := range keys {
			x += costs[k]
		}
		return x / calls
	}
	sum := func(match func(string) bool) float64 {
		var x float64
		for k, v := range costs {
			if match(k) {
				x += v
			}
		}
		return x / calls
	}
	lib := "@libiopred.so"
	wrapper := get("calls.def.h:" + fn + lib)
	real := sum(func(k string) bool {
		return strings.HasSuffix(k, ":"+fn+"@libc.so.6") && !strings.HasPrefix(k, "calls.def.h")
	})
	clock := get("clock.h:"+fn, "clock.h:"+fn+lib, "core.c:iop_clock_renew"+lib)
	capture := get("context.c:iop_capture" + lib)
	files := get("files.c:iop_pre_fd"+lib, "files.c:iop_post_rw"+lib)
	// The ring's futex calls (waking the consumer, waiting for room) are
	// the only system calls libiopred makes inside a recorded call once
	// the file is known; wake_consumer itself is inlined.
	handover := get("syscall.S:syscall@libc.so.6", "ring.c:wake_consumer"+lib)
	appendRec := get("core.c:iop_end"+lib) - capture - handover
	return map[string]float64{
		"wrapper":   wrapper,
		"real-call": real,
		"guards":    wrapper - real - clock - capture - files - appendRec - handover,
		"clock":     clock,
		"context":   capture,
		"file":      files,
		"append":    appendRec,
		"handover":  handover,
	}
}

// BenchmarkCallInstructions reports user-space instructions per call
// added by the library, two ways: *-extra-instr/call is the difference
// between runs of 200,000 and 100,000 calls of what the main thread runs
// inside main (start-up and exit are left out, and the difference cancels
// the program's own set-up); *-wrapper-extra-instr/call is what the
// wrapper costs beyond the real call it makes, from the same profile (it
// leaves out the call's way to the wrapper, the same as to libc's
// function, and is the same figure without the noise of any work the
// main thread does for the consumer). For the library with context
// capture it also reports where the instructions of one call go:
// interposition and guards, clock reads, context capture, file lookup,
// record append and hand-over (the wrapper's total includes the real
// call's instructions, reported too).
func BenchmarkCallInstructions(b *testing.B) {
	for _, tool := range []string{"valgrind", "callgrind_annotate"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Fatalf("%s is needed (apt-get install valgrind)", tool)
		}
	}
	prog := compile(b, "calls.c")
	vs := variants(b)
	fns := map[string]string{"pwrite4k": "pwrite", "write1": "write"}
	for _, kind := range []string{"pwrite4k", "write1"} {
		b.Run(kind, func(b *testing.B) {
			per := map[string]float64{}
			inWrapper := map[string]float64{}
			parts := map[string]float64{}
			for i := 0; i < b.N; i++ {
				for _, v := range vs {
					f := filepath.Join("/dev/shm", fmt.Sprintf("iopred-cg-%d", os.Getpid()))
					lo := mainThreadInstructions(b, mainThreadProfile(b, v.env, prog, kind, "100000", f))
					hiProfile := mainThreadProfile(b, v.env, prog, kind, "200000", f)
					hi := mainThreadInstructions(b, hiProfile)
					os.Remove(f)
					per[v.name] = (hi - lo) / 100000
					if v.name == "bare" {
						continue
					}
					p := breakdown(inclusiveCosts(b, hiProfile), fns[kind], 200000)
					inWrapper[v.name] = p["wrapper"] - p["real-call"]
					if v.name == "capture" {
						parts = p
					}
				}
			}
			b.ReportMetric(per["bare"], "bare-instr/call")
			for _, name := range []string{"capture", "nocapture", "traceonly", "old-capture", "old-traceonly"} {
				if _, ok := per[name]; ok {
					b.ReportMetric(per[name]-per["bare"], name+"-extra-instr/call")
					b.ReportMetric(inWrapper[name], name+"-wrapper-extra-instr/call")
				}
			}
			for _, part := range []string{"wrapper", "real-call", "guards", "clock", "context", "file", "append", "handover"} {
				b.ReportMetric(parts[part], part+"-instr/call")
			}
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

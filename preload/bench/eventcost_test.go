package bench

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// cgProfile is one thread of a callgrind profile: its total instructions
// and the inclusive cost of every call edge, keyed caller then callee
// (function names as callgrind writes them, without their object).
type cgProfile struct {
	total float64
	calls map[string]map[string]float64
}

// into is what all calls into fn cost, callers that are fn itself left
// out (their cost is inside the outer call already).
func (p *cgProfile) into(fn string) float64 {
	var x float64
	for caller, callees := range p.calls {
		if caller != fn {
			x += callees[fn]
		}
	}
	return x
}

// readCallgrind parses a callgrind output file (format version 1, one
// event, Ir): the summary, and the cost of each call edge, which is the
// line after its calls= line.
func readCallgrind(tb testing.TB, file string) *cgProfile {
	f, err := os.Open(file)
	if err != nil {
		tb.Fatalf("callgrind output: %v", err)
	}
	defer f.Close()
	p := &cgProfile{calls: map[string]map[string]float64{}}
	names := map[string]string{} // "(id)" -> function name
	name := func(v string) string {
		v = base(strings.TrimSpace(v))
		if strings.HasPrefix(v, "(") {
			id, rest, _ := strings.Cut(v, ")")
			id += ")"
			if rest = strings.TrimSpace(rest); rest != "" {
				names[id] = rest
				return rest
			}
			return names[id]
		}
		return v
	}
	var fn, cfn string
	callCost := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "summary:"):
			p.total, _ = strconv.ParseFloat(strings.TrimSpace(line[len("summary:"):]), 64)
		case strings.HasPrefix(line, "fn="):
			fn = name(line[3:])
		case strings.HasPrefix(line, "cfn="):
			cfn = name(line[4:])
		case strings.HasPrefix(line, "calls="):
			callCost = true
		case callCost:
			callCost = false
			fields := strings.Fields(line)
			if len(fields) < 2 {
				continue
			}
			x, err := strconv.ParseFloat(fields[len(fields)-1], 64)
			if err != nil {
				continue
			}
			m := p.calls[fn]
			if m == nil {
				m = map[string]float64{}
				p.calls[fn] = m
			}
			m[cfn] += x
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	return p
}

// base is a callgrind function name without the '2, '3 ... that
// callgrind appends to a function called from inside itself (a Go
// goroutine's stack switch can look like one).
func base(name string) string {
	if i := strings.LastIndexByte(name, '\''); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

// processProfile runs prog under callgrind, one profile per thread, and
// returns them, the program's main thread first.
func processProfile(tb testing.TB, env []string, prog string, args ...string) []*cgProfile {
	dir := tb.TempDir()
	out := filepath.Join(dir, "cg.out")
	cmdArgs := append([]string{"--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=" + out, prog}, args...)
	run(tb, append(env, "GODEBUG=cpu.rdtscp=off"), "valgrind", cmdArgs...)
	var ps []*cgProfile
	for i := 1; ; i++ {
		file := fmt.Sprintf("%s-%02d", out, i)
		if _, err := os.Stat(file); err != nil {
			break
		}
		ps = append(ps, readCallgrind(tb, file))
	}
	if len(ps) == 0 {
		tb.Fatalf("callgrind wrote no profile for %s", prog)
	}
	return ps
}

// eventCosts are a run's instructions, split by thread: the calling
// thread's, of which its context capture and its hand-over (futex
// wake-ups), and every thread's.
type eventCosts struct {
	caller, all             float64 // the main thread; every thread
	capture, callerHandover float64 // in the main thread
}

func (c eventCosts) minus(d eventCosts) eventCosts {
	return eventCosts{c.caller - d.caller, c.all - d.all, c.capture - d.capture, c.callerHandover - d.callerHandover}
}

// stageCosts sums a run's profiles into eventCosts. Only C code's call
// edges are used (the capture, the futex calls): callgrind follows them,
// where it loses Go's across stack switches.
func stageCosts(ps []*cgProfile) eventCosts {
	var c eventCosts
	c.caller = ps[0].total
	c.capture = ps[0].into("iop_capture")
	c.callerHandover = ps[0].into("syscall") + ps[0].into("wake_consumer")
	for _, p := range ps {
		c.all += p.total
	}
	return c
}

// stageWorker builds the preload package's test binary from the source
// tree src: its TestConsumerStage runs one stage of the consumer's Go
// work on a recorded trace. It returns "" when that tree has no such
// worker (a baseline older than it).
func stageWorker(tb testing.TB, src string) string {
	if _, err := os.Stat(filepath.Join(src, "preload", "stages_test.go")); err != nil {
		return ""
	}
	out := filepath.Join(tb.TempDir(), "preload.test")
	cmd := exec.Command("go", "test", "-c", "-o", out, "./preload")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building the stage worker in %s: %v\n%s", src, err, b)
	}
	return out
}

// stageInstructions counts, under callgrind (every thread, start-up and
// exit included), the worker running stage on trace. The collector is
// off (GOGC=off): its cycles come when the runtime's timing says, and
// moved a stage's count by up to 175 instructions per event between runs
// of the same stage (with it off, 2 per event); the library's collection
// work is counted in the traced process, so it falls in the hand-over.
func stageInstructions(tb testing.TB, worker, stage, trace string) float64 {
	out := filepath.Join(tb.TempDir(), "cg.out")
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+out, worker,
		"-test.run", "^TestConsumerStage$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1", "GOGC=off", "IOPRED_STAGE="+stage,
		"IOPRED_STAGE_TRACE="+trace, "IOPRED_DIR="+tb.TempDir())
	cmd.Dir = filepath.Dir(worker)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("stage %s on %s: %v\n%s", stage, trace, err, b)
	}
	return mainThreadInstructions(tb, out)
}

// consumerStages are the consumer's Go stages' instructions on one
// recorded trace, each counted alone (stageInstructions, minus the
// worker's reading of the trace).
type consumerStages struct{ model, encoding, compression float64 }

func (c consumerStages) minus(d consumerStages) consumerStages {
	return consumerStages{c.model - d.model, c.encoding - d.encoding, c.compression - d.compression}
}

func measureStages(tb testing.TB, worker, trace string) consumerStages {
	count := func(stage string) float64 { return stageInstructions(tb, worker, stage, trace) }
	none := count("none")
	encode := count("encode")
	return consumerStages{
		model:       count("model") - none,
		encoding:    encode - none,
		compression: count("write") - encode,
	}
}

// traceIn is the one trace prog left in dir (valgrind's own start-up
// processes leave theirs beside it).
func traceIn(tb testing.TB, dir, prog string) string {
	m, _ := filepath.Glob(filepath.Join(dir, filepath.Base(prog)+".*"+tracefmt.FileSuffix))
	if len(m) != 1 {
		tb.Fatalf("want one trace in %s, found %v", dir, m)
	}
	return m[0]
}

// BenchmarkEventCost counts the instructions of a traced event over all
// threads of the process (callgrind, repeatable on a shared machine): a
// loop of 40,000 pwrite of 4 KiB then 40,000 write of 1 byte (calls.c
// mixed), under the library and bare. The per-event figures are the
// difference between runs of 160,000 and 80,000 calls, so start-up and
// exit cancel; all-with-startup-instr/event is the whole 80,000-call run
// over the bare one.
//
// Stages: on the calling thread, caller (all of it), of which capture
// and the caller's futex wake-ups (C call edges, which callgrind follows).
// The consumer's Go stages are each counted alone: the preload package's
// test binary (TestConsumerStage) runs the model, the JSON encoding, and
// the encoding with compression, each in a process of its own under
// callgrind, on the very events the two traced runs recorded, and the
// same difference of the two runs is taken (the trace's reading, counted
// apart, subtracted). The hand-over is the rest of the process's count:
// the caller's wake-ups, draining the rings, the call into Go, the batch's
// glue and the Go runtime's share. With IOPRED_BENCH_BASELINE the same
// figures for the other library, old-*; its stages are counted with the
// worker built from IOPRED_BENCH_BASELINE_SRC when that tree has one.
func BenchmarkEventCost(b *testing.B) {
	if _, err := os.Stat("/usr/bin/valgrind"); err != nil {
		b.Fatalf("valgrind is needed (apt-get install valgrind)")
	}
	prog := compile(b, "calls.c")
	lib := library(b)
	type lib_ struct{ prefix, path, worker string }
	libs := []lib_{{"", lib, stageWorker(b, repoRoot(b))}}
	if old := baseline(b); old != "" {
		worker := ""
		if src := os.Getenv("IOPRED_BENCH_BASELINE_SRC"); src != "" {
			worker = stageWorker(b, src)
		}
		libs = append(libs, lib_{"old-", old, worker})
	}
	const lo, hi = 80000, 160000
	f := filepath.Join("/dev/shm", fmt.Sprintf("iopred-ev-%d", os.Getpid()))
	defer os.Remove(f)
	measure := func(env []string, n int) eventCosts {
		return stageCosts(processProfile(b, env, prog, "mixed", strconv.Itoa(n), f))
	}
	for i := 0; i < b.N; i++ {
		bareLo, bareHi := measure(nil, lo), measure(nil, hi)
		bare := bareHi.minus(bareLo)
		for _, l := range libs {
			loDir, hiDir := b.TempDir(), b.TempDir()
			runLo := measure([]string{"LD_PRELOAD=" + l.path, "IOPRED_DIR=" + loDir}, lo)
			runHi := measure([]string{"LD_PRELOAD=" + l.path, "IOPRED_DIR=" + hiDir}, hi)
			per := func(x float64) float64 { return x / (hi - lo) }
			d := runHi.minus(runLo).minus(bare)
			b.ReportMetric(per(d.caller), l.prefix+"caller-instr/event")
			b.ReportMetric(per(d.all), l.prefix+"all-instr/event")
			b.ReportMetric((runLo.all-bareLo.all)/lo, l.prefix+"all-with-startup-instr/event")
			b.ReportMetric(per(d.capture), l.prefix+"capture-instr/event")
			if l.worker == "" {
				continue
			}
			st := measureStages(b, l.worker, traceIn(b, hiDir, prog)).minus(measureStages(b, l.worker, traceIn(b, loDir, prog)))
			b.ReportMetric(per(d.all-d.caller+d.callerHandover-st.model-st.encoding-st.compression), l.prefix+"handover-instr/event")
			b.ReportMetric(per(st.model), l.prefix+"model-instr/event")
			b.ReportMetric(per(st.encoding), l.prefix+"encoding-instr/event")
			b.ReportMetric(per(st.compression), l.prefix+"compression-instr/event")
		}
	}
}

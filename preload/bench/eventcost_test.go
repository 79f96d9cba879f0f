package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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

// eventCosts are a run's instructions, split by thread and by stage of a
// traced event's way from the call to the trace file.
type eventCosts struct {
	caller, all                 float64 // the main thread; every thread
	capture, callerHandover     float64 // in the main thread
	model, encoding, compressed float64 // in the consumer (any other thread)
}

func (c eventCosts) minus(d eventCosts) eventCosts {
	return eventCosts{c.caller - d.caller, c.all - d.all, c.capture - d.capture, c.callerHandover - d.callerHandover,
		c.model - d.model, c.encoding - d.encoding, c.compressed - d.compressed}
}

// stageCosts sums a run's profiles into eventCosts. The stages:
// capture is the context capture on the calling thread; model is the
// predictor's work (the model, the online period and the job's
// statistics); encoding is the trace writer's Event, the compression of
// frames it triggered left out; compression is every frame's Flush.
// What is left of the consumer threads' instructions is the hand-over
// (draining the rings, the call into Go, the batch's glue and the Go
// runtime's share).
func stageCosts(ps []*cgProfile) eventCosts {
	var c eventCosts
	c.caller = ps[0].total
	c.capture = ps[0].into("iop_capture")
	c.callerHandover = ps[0].into("syscall") + ps[0].into("wake_consumer")
	for i, p := range ps {
		c.all += p.total
		if i == 0 {
			continue
		}
		for _, fn := range []string{"main.observe", "main.observePeriod", "main.observeJob"} {
			c.model += p.into(fn)
		}
		const event, flush = "iopred/tracefmt.(*Writer).Event", "iopred/tracefmt.(*Writer).Flush"
		c.encoding += p.into(event) - p.calls[event][flush]
		c.compressed += p.into(flush)
	}
	return c
}

// BenchmarkEventCost counts the instructions of a traced event over all
// threads of the process (callgrind, repeatable on a shared machine): a
// loop of 40,000 pwrite of 4 KiB then 40,000 write of 1 byte (calls.c
// mixed), under the library and bare. The per-event figures are the
// difference between runs of 160,000 and 80,000 calls, so start-up and
// exit cancel; all-with-startup-instr/event is the whole 80,000-call run
// over the bare one. Stages: caller (the calling thread, of which capture
// and the caller's hand-over, its futex wake-ups), and on the consumer
// the model, the JSON encoding, the zstd compression and the hand-over
// (the rest: ring drain, the call into Go, glue, runtime). With
// IOPRED_BENCH_BASELINE the same figures for the other library, old-*.
func BenchmarkEventCost(b *testing.B) {
	if _, err := os.Stat("/usr/bin/valgrind"); err != nil {
		b.Fatalf("valgrind is needed (apt-get install valgrind)")
	}
	prog := compile(b, "calls.c")
	lib := library(b)
	dir := b.TempDir()
	type lib_ struct{ prefix, path string }
	libs := []lib_{{"", lib}}
	if old := baseline(b); old != "" {
		libs = append(libs, lib_{"old-", old})
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
			env := []string{"LD_PRELOAD=" + l.path, "IOPRED_DIR=" + dir}
			runLo, runHi := measure(env, lo), measure(env, hi)
			per := func(x float64) float64 { return x / (hi - lo) }
			d := runHi.minus(runLo).minus(bare)
			b.ReportMetric(per(d.caller), l.prefix+"caller-instr/event")
			b.ReportMetric(per(d.all), l.prefix+"all-instr/event")
			b.ReportMetric((runLo.all-bareLo.all)/lo, l.prefix+"all-with-startup-instr/event")
			b.ReportMetric(per(d.capture), l.prefix+"capture-instr/event")
			b.ReportMetric(per(d.callerHandover+d.all-d.caller-d.model-d.encoding-d.compressed), l.prefix+"handover-instr/event")
			b.ReportMetric(per(d.model), l.prefix+"model-instr/event")
			b.ReportMetric(per(d.encoding), l.prefix+"encoding-instr/event")
			b.ReportMetric(per(d.compressed), l.prefix+"compression-instr/event")
		}
	}
}

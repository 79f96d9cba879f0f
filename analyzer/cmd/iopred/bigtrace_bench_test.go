package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"iopred/tracefmt"
)

// bigTraceEvents is the size of the trace BenchmarkBigTrace generates.
const bigTraceEvents = 3_000_000

// writeBigTrace writes a trace of one process with n events in the shape
// of a checkpointing simulation, generated here (never committed): per
// iteration an open, 64 strided 64 KiB pwrites of the checkpoint file, a
// 2-D walk of 16 reads of the input, a log line through stdio that grows
// with the iteration's number, an fsync and a close, 84 events from 7
// call sites every 10 ms.
func writeBigTrace(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w, err := tracefmt.NewWriter(bw, tracefmt.Header{Program: "/bin/sim", Host: "bench", PID: 4242, StartUnixNs: 1_795_000_000_000_000_000}, tracefmt.WriterOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	for ctx := uint64(1); ctx <= 7; ctx++ {
		if err := w.Context(tracefmt.Context{ID: ctx, Frames: []tracefmt.Frame{{Module: "/bin/sim", Offset: ctx * 64}}}); err != nil {
			tb.Fatal(err)
		}
	}
	for id, p := range []string{"/scratch/ckpt.dat", "/scratch/input.dat", "/scratch/log.txt"} {
		if err := w.File(tracefmt.File{ID: uint32(id + 1), Path: p}); err != nil {
			tb.Fatal(err)
		}
	}
	var logOff int64
	now := int64(0)
	count := 0
	emit := func(e tracefmt.Event) {
		if count >= n {
			return
		}
		e.StartNs, e.EndNs, e.Tid = now, now+10_000, 4242
		now += 20_000
		if err := w.Event(&e); err != nil {
			tb.Fatal(err)
		}
		count++
	}
	for it := int64(0); count < n; it++ {
		now = it * 10_000_000
		emit(tracefmt.Event{Op: "open", FileID: 1, Offset: tracefmt.NoOffset, Ret: 3, Ctx: 1})
		for j := int64(0); j < 64; j++ {
			emit(tracefmt.Event{Op: "pwrite", FileID: 1, Offset: (it*64 + j) << 16, Size: 1 << 16, Ret: 1 << 16, Bytes: 1 << 16, Ctx: 2})
		}
		for j := int64(0); j < 16; j++ {
			off := (it%64)<<20 + (j/4)<<18 + (j%4)<<12
			emit(tracefmt.Event{Op: "pread", FileID: 2, Offset: off, Size: 4096, Ret: 4096, Bytes: 4096, Ctx: 3})
		}
		line := int64(len("iteration  done\n")) + int64(len(itoa(it)))
		emit(tracefmt.Event{Op: "fwrite", FileID: 3, Offset: logOff, Size: line, Ret: 1, Bytes: line, Ctx: 4})
		logOff += line
		emit(tracefmt.Event{Op: "fsync", FileID: 1, Offset: tracefmt.NoOffset, Ctx: 5})
		emit(tracefmt.Event{Op: "close", FileID: 1, Offset: tracefmt.NoOffset, Ctx: 6})
		emit(tracefmt.Event{Op: "lseek", FileID: 3, Offset: logOff, Ret: logOff, Ctx: 7})
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit", Events: uint64(count)}); err != nil {
		tb.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func itoa(i int64) string {
	var b [20]byte
	k := len(b)
	for {
		k--
		b[k] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(b[k:])
		}
	}
}

// BenchmarkBigTrace runs `iopred patterns`, `period`, `replay` and
// `summary` as a user does on a trace of 3 million events (generated at
// run time) and reports each one's peak resident memory, wall time, CPU
// time (user + system, every thread) and events per CPU second. Goal: at
// most 64 MB each. With IOPRED_BIGTRACE_BASELINE naming another build of
// iopred, that build runs the same commands in the same run, for a side
// by side figure; IOPRED_BIGTRACE_COMMANDS (patterns,period for
// instance) runs fewer commands.
func BenchmarkBigTrace(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "iopred")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	trace := filepath.Join(dir, "sim.bench.4242"+tracefmt.FileSuffix)
	start := time.Now()
	writeBigTrace(b, trace, bigTraceEvents)
	st, err := os.Stat(trace)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("trace of %d events, %d bytes, written in %v", bigTraceEvents, st.Size(), time.Since(start).Round(time.Millisecond))
	builds := [][2]string{{"this", bin}}
	if base := os.Getenv("IOPRED_BIGTRACE_BASELINE"); base != "" {
		builds = append(builds, [2]string{"baseline", base})
	}
	cmds := []string{"patterns", "period", "replay", "summary"}
	if only := os.Getenv("IOPRED_BIGTRACE_COMMANDS"); only != "" {
		cmds = strings.Split(only, ",")
	}
	for _, cmd := range cmds {
		for _, build := range builds {
			b.Run(cmd+"/"+build[0], func(b *testing.B) {
				var wall, cpu time.Duration
				var maxRSS int64
				for i := 0; i < b.N; i++ {
					c := exec.Command(build[1], cmd, trace)
					t0 := time.Now()
					if out, err := c.CombinedOutput(); err != nil {
						b.Fatalf("%s %s: %v\n%s", build[1], cmd, err, out)
					}
					wall += time.Since(t0)
					cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
					if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
						maxRSS = max(maxRSS, ru.Maxrss)
					}
				}
				b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "ms/run")
				b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MiB")
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/run")
				b.ReportMetric(float64(bigTraceEvents)*float64(b.N)/cpu.Seconds()/1e6, "M-events/cpu-s")
			})
		}
	}
}

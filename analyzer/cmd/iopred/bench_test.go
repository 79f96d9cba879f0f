package main

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPeriodProcess times `iopred period` as a user runs it, process
// start and parsing included, on FTIO's example traces, and reports the
// peak resident memory. Goal: the 8-rank example under 50 ms (FTIO's
// Python takes about 3 s).
func BenchmarkPeriodProcess(b *testing.B) {
	dir := ftioExamples(b)
	bin := filepath.Join(b.TempDir(), "iopred")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, trace := range []string{"tmio-8ranks.jsonl", "custom-4ranks.json", "tmio-ior-384ranks.msgpack"} {
		b.Run(trace, func(b *testing.B) {
			var wall time.Duration
			var maxRSS int64
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(bin, "period", "--json", filepath.Join(dir, trace))
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				wall += time.Since(start)
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					maxRSS = max(maxRSS, ru.Maxrss)
				}
			}
			b.ReportMetric(float64(wall.Microseconds())/1e3/float64(b.N), "ms/run")
			b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MiB")
		})
	}
}

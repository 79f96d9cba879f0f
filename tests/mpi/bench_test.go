package mpi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"iopred/analyzer/job"
)

// BenchmarkMPIIOOverhead measures, side by side in one run, the time per
// MPI-IO call of a one-rank job without and with iopred, under each
// implementation: MPI_File_write_at of 4 KiB to /dev/shm (one MPI-IO
// event plus the pwrite underneath are recorded) and MPI_File_seek (one
// event, no I/O underneath), 20,000 calls each in batches of 1000.
// paced-overhead-*-ns is the interposer's own cost per call (goal: at
// most 1000 ns): the median of calls timed one by one, 20 us apart, so
// that the consumer keeps up. overhead-*-ns is the median batch of 1000
// back-to-back calls and mean-overhead-*-ns the mean over all: both also
// count the waits for the trace consumer (its model and trace writing)
// when the program issues events faster than it drains them.
func BenchmarkMPIIOOverhead(b *testing.B) {
	lib := library(b)
	const calls = 20000
	dir := "/dev/shm"
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = b.TempDir()
	}
	for _, m := range impls {
		b.Run(m.name, func(b *testing.B) {
			need(b, m.cc, m.run)
			prog := compile(b, m.cc, "mpibench.c")
			data := filepath.Join(dir, fmt.Sprintf("iopred-mpibench-%d", os.Getpid()))
			defer os.Remove(data)
			measure := func(env []string) (write, writeMean, seek, seekMean, pacedWrite, pacedSeek float64) {
				out, err := mpirun(b, m, 1, 2*time.Minute, env, prog, data, fmt.Sprint(calls))
				if err != nil {
					b.Fatalf("mpibench: %v\n%s", err, out)
				}
				// The last line is the program's; launchers may print before it.
				lines := bytesLines(out)
				if _, err := fmt.Sscanf(lines[len(lines)-1], "write_at %g %g seek %g %g paced %g %g", &write, &writeMean, &seek, &seekMean, &pacedWrite, &pacedSeek); err != nil {
					b.Fatalf("mpibench output %q: %v", out, err)
				}
				return
			}
			var bare, traced [6]float64
			for i := 0; i < b.N; i++ {
				w, wm, s, sm, pw, ps := measure([]string{"IOPRED_UNUSED=1"})
				bare = [6]float64{bare[0] + w, bare[1] + wm, bare[2] + s, bare[3] + sm, bare[4] + pw, bare[5] + ps}
				w, wm, s, sm, pw, ps = measure([]string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + b.TempDir()})
				traced = [6]float64{traced[0] + w, traced[1] + wm, traced[2] + s, traced[3] + sm, traced[4] + pw, traced[5] + ps}
			}
			n := float64(b.N)
			b.ReportMetric(bare[0]/n, "bare-write_at-ns")
			b.ReportMetric(traced[0]/n, "traced-write_at-ns")
			b.ReportMetric((traced[0]-bare[0])/n, "overhead-write_at-ns")
			b.ReportMetric((traced[1]-bare[1])/n, "mean-overhead-write_at-ns")
			b.ReportMetric(bare[2]/n, "bare-seek-ns")
			b.ReportMetric(traced[2]/n, "traced-seek-ns")
			b.ReportMetric((traced[2]-bare[2])/n, "overhead-seek-ns")
			b.ReportMetric((traced[3]-bare[3])/n, "mean-overhead-seek-ns")
			b.ReportMetric((traced[4]-bare[4])/n, "paced-overhead-write_at-ns")
			b.ReportMetric((traced[5]-bare[5])/n, "paced-overhead-seek-ns")
		})
	}
}

func bytesLines(out []byte) []string {
	var lines []string
	start := 0
	for i, c := range out {
		if c == '\n' {
			if i > start {
				lines = append(lines, string(out[start:i]))
			}
			start = i + 1
		}
	}
	if start < len(out) {
		lines = append(lines, string(out[start:]))
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	return lines
}

// BenchmarkFinalize reports what the job summary costs at MPI_Finalize,
// at 1, 2, 4 and 8 ranks of the IOR-like job (Open MPI, oversubscribed
// past two): rank 0's time in iopred's finalize step (waiting for the
// other ranks' partials included), the part spent merging partials, the
// bytes rank 0 received, and the summary's size. The partials are bounded
// (analyzer/job), and rank 0 takes log2(ranks) merge steps.
func BenchmarkFinalize(b *testing.B) {
	lib := library(b)
	m := impls[0]
	need(b, m.cc, m.run)
	prog := compile(b, m.cc, "ior.c")
	for _, np := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("ranks=%d", np), func(b *testing.B) {
			var fin, merge, recv, size float64
			for i := 0; i < b.N; i++ {
				data, traces := b.TempDir(), b.TempDir()
				out, err := mpirun(b, m, np, 3*time.Minute, []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + traces},
					prog, data, "3", "8192", "2048", "0", "ckpt=10")
				if err != nil {
					b.Fatalf("job failed: %v\n%s", err, out)
				}
				paths, _ := job.Discover(traces)
				if len(paths) != 1 {
					b.Fatalf("job summaries %v, want one", paths)
				}
				raw, err := os.ReadFile(paths[0])
				if err != nil {
					b.Fatal(err)
				}
				var s job.Summary
				if err := json.Unmarshal(raw, &s); err != nil || s.Cost == nil {
					b.Fatalf("%s: %v", paths[0], err)
				}
				fin += float64(s.Cost.FinalizeNs)
				merge += float64(s.Cost.MergeNs)
				recv += float64(s.Cost.ReceivedBytes)
				size += float64(len(raw))
			}
			n := float64(b.N)
			b.ReportMetric(fin/n/1e6, "finalize-ms")
			b.ReportMetric(merge/n/1e6, "merge-ms")
			b.ReportMetric(recv/n, "received-bytes")
			b.ReportMetric(size/n, "summary-bytes")
		})
	}
}

package mpi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"iopred/tests/testenv"
	"iopred/tracefmt"
)

// scaleRanks are the job sizes BenchmarkScale measures (three, so that a
// run takes minutes, not an hour, on two cores); IOPRED_SCALE_RANKS
// (comma-separated) replaces them.
var scaleRanks = []int{64, 512, 4096}

// BenchmarkScale times `iopred summary`, `period` and `report` as users
// run them, whole processes, on trace sets from 64 to 4,096 ranks with
// 1, 2 and 4 workers (--jobs), and prints one table: ranks, events,
// workers, wall time, CPU time (user + system, every thread), peak
// resident memory; then with 2 and 4 MPI ranks (Open MPI's mpirun, each
// rank measured by GNU time: CPU summed over the ranks, the largest
// rank's peak memory). Two kinds of job: synthetic (`iopred synth`, a
// periodic burst plus noise, about 350 events per rank) and a real MPI
// program's traces (the IOR-like ior.c under Open MPI at 4 ranks, traced
// by libiopred.so) replicated with shifted ranks. The events per rank are
// fixed, so time should grow linearly with the ranks and memory should
// not grow beyond the per-file tables. Run it with
//
//	go test -run '^$' -bench Scale -benchtime 1x ./tests/mpi/
func BenchmarkScale(b *testing.B) {
	library(b) // builds build/iopred and build/libiopred.so when missing
	bin := filepath.Join(testenv.RepoRoot(), "build", "iopred")
	ranks := scaleRanks
	if s := os.Getenv("IOPRED_SCALE_RANKS"); s != "" {
		ranks = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 4 {
				b.Fatalf("IOPRED_SCALE_RANKS: bad rank count %q", f)
			}
			ranks = append(ranks, n)
		}
	}
	m := impls[0]
	need(b, m.cc, m.run)
	prog := compile(b, m.cc, "ior.c")
	real := b.TempDir()
	if out, err := mpirun(b, m, iorRanks, 3*time.Minute, []string{"LD_PRELOAD=" + library(b), "IOPRED_DIR=" + real},
		prog, b.TempDir(), "3", "8192", "2048", "10", "ckpt=5"); err != nil {
		b.Fatalf("ior: %v\n%s", err, out)
	}
	realTraces, err := tracefmt.Discover(real)
	if err != nil || len(realTraces) == 0 {
		b.Fatalf("no trace of the real job: %v", err)
	}
	for i := 0; i < b.N; i++ {
		// Rows are printed as they are measured: a long run shows its
		// progress, and an interrupted one keeps what it measured.
		fmt.Printf("\n%-10s %6s %10s %-8s %-9s %9s %9s %9s %11s\n", "job", "ranks", "events", "analysis", "workers", "wall-s", "cpu-s", "peak-MiB", "events/cpu-s")
		for _, kind := range []string{"synthetic", "ior x" + fmt.Sprint(iorRanks)} {
			for _, n := range ranks {
				dir := filepath.Join(b.TempDir(), fmt.Sprint(n))
				if kind == "synthetic" {
					if out, err := exec.Command(bin, "synth", "--procs", fmt.Sprint(n), "--iterations", "5", "--compute", "1",
						"--noise-rate", "50", "-o", dir).CombinedOutput(); err != nil {
						b.Fatalf("synth: %v\n%s", err, out)
					}
				} else {
					replicate(b, realTraces, dir, n)
				}
				events := countEvents(b, bin, dir)
				for _, analysis := range []string{"summary", "period", "report"} {
					for _, jobs := range []int{1, 2, 4} {
						args := []string{analysis, "--jobs", fmt.Sprint(jobs)}
						switch analysis {
						case "report":
							args = append(args, "-o", filepath.Join(b.TempDir(), "r.html"))
						default:
							args = append(args, "--json")
						}
						wall, cpu, rss := run(b, bin, append(args, dir)...)
						fmt.Printf("%-10s %6d %10d %-8s %-9s %9.2f %9.2f %9.1f %11.0f\n", kind, n, events, analysis, fmt.Sprintf("jobs %d", jobs),
							wall.Seconds(), cpu.Seconds(), float64(rss)/1024, float64(events)/cpu.Seconds())
					}
					// The same analysis over 2 and 4 MPI ranks of Open MPI,
					// each rank reading its share on one goroutine.
					for _, np := range mpiScaleRanks {
						args := []string{analysis, "--mpi", "--jobs", "1"}
						switch analysis {
						case "report":
							args = append(args, "-o", filepath.Join(b.TempDir(), "r.html"))
						default:
							args = append(args, "--json")
						}
						wall, cpu, rss := runMPI(b, m, np, bin, append(args, dir)...)
						fmt.Printf("%-10s %6d %10d %-8s %-9s %9.2f %9.2f %9.1f %11.0f\n", kind, n, events, analysis, fmt.Sprintf("mpi %d", np),
							wall.Seconds(), cpu.Seconds(), float64(rss)/1024, float64(events)/cpu.Seconds())
					}
				}
				os.RemoveAll(dir)
			}
		}
	}
}

// mpiScaleRanks are the MPI job sizes BenchmarkScale runs the analyses
// with.
var mpiScaleRanks = []int{2, 4}

// runMPI runs the iopred command as np ranks of m's mpirun, each rank
// under GNU time, and returns the wall time of the whole job, the CPU
// time of its ranks (user and system, summed; mpirun's own is left out)
// and the largest peak resident memory of a rank in KiB.
func runMPI(b *testing.B, m impl, np int, bin string, args ...string) (time.Duration, time.Duration, int64) {
	b.Helper()
	need(b, "/usr/bin/time")
	dir := b.TempDir()
	// Each rank names its measurement after its rank, which Open MPI
	// and MPICH's launchers give in their own variables.
	script := `exec /usr/bin/time -f "%U %S %M" -o "$0/rank.${OMPI_COMM_WORLD_RANK:-$PMI_RANK}" "$@"`
	start := time.Now()
	out, err := mpirun(b, m, np, 30*time.Minute, nil, "sh", append([]string{"-c", script, dir, bin}, args...)...)
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s iopred %s: %v\n%s", m.run, strings.Join(args, " "), err, out)
	}
	var cpu time.Duration
	var peak int64
	for r := range np {
		f, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("rank.%d", r)))
		if err != nil {
			b.Fatalf("rank %d's measurement: %v", r, err)
		}
		var user, sys float64
		var rss int64
		if _, err := fmt.Sscanf(string(f), "%g %g %d", &user, &sys, &rss); err != nil {
			b.Fatalf("rank %d's measurement %q: %v", r, f, err)
		}
		cpu += time.Duration((user + sys) * 1e9)
		peak = max(peak, rss)
	}
	return wall, cpu, peak
}

// run runs the iopred command and returns its wall time, CPU time (user
// and system) and peak resident memory in KiB.
func run(b *testing.B, bin string, args ...string) (time.Duration, time.Duration, int64) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("iopred %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return wall, cpu, ru.Maxrss
}

// countEvents returns the events `iopred summary` counts in dir.
func countEvents(b *testing.B, bin, dir string) uint64 {
	b.Helper()
	out, err := exec.Command(bin, "summary", "--json", "--all-paths", dir).Output()
	if err != nil {
		b.Fatalf("summary %s: %v", dir, err)
	}
	var rep struct {
		Processes []struct {
			Events uint64 `json:"events"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		b.Fatal(err)
	}
	var n uint64
	for _, p := range rep.Processes {
		n += p.Events
	}
	return n
}

// replicate writes n ranks' traces into dir: copy k of the real job's
// trace of rank r is rank r + k*len(traces), with its own pid; every
// record but the header is the original's.
func replicate(b *testing.B, traces []string, dir string, n int) {
	b.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	np := len(traces)
	for rank := 0; rank < n; rank++ {
		src := traces[rank%np]
		r, err := tracefmt.Open(src)
		if err != nil {
			b.Fatal(err)
		}
		h := r.Header()
		if h.Rank == nil {
			b.Fatalf("%s has no rank", src)
		}
		rk := *h.Rank + rank/np*np
		h.Rank = &rk
		h.PID = 100000 + rank
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("ior.host.%d.r%d%s", h.PID, rk, tracefmt.FileSuffix)))
		if err != nil {
			b.Fatal(err)
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		w, err := tracefmt.NewWriter(bw, h, tracefmt.WriterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var footer *tracefmt.Footer
		err = r.Each(func(rec tracefmt.Record) error {
			switch {
			case rec.Context != nil:
				return w.Context(*rec.Context)
			case rec.File != nil:
				return w.File(*rec.File)
			case rec.Event != nil:
				return w.Event(rec.Event)
			case rec.Proc != nil:
				return w.Proc(*rec.Proc)
			case rec.Footer != nil:
				footer = rec.Footer
			}
			return nil
		})
		r.Close()
		if err != nil {
			b.Fatalf("%s: %v", src, err)
		}
		if footer == nil {
			err = w.Flush()
		} else {
			err = w.Close(*footer)
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

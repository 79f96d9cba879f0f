package prefetch

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"iopred/tests/testenv"
	"iopred/tracefmt"
)

// workload is one program of the benchmark: how to run it in a mode.
type workload struct {
	name  string
	files []string
	// cmd returns the command line and extra environment for mode m,
	// with traces (when traced) in dir.
	cmd func(m mode, dir string) (args []string, env []string)
	// warm runs before the timed runs (the repeated reader's first run).
	warm func(b *testing.B)
	// cached runs it with its files in the page cache: what prefetching
	// costs when there is nothing to gain.
	cached bool
	// goal marks the rows the goals name (the strided and the
	// repeated-run readers: 30% faster; random reads: at most 2% slower),
	// which run IOPRED_PREFETCH_BENCH_GOAL_REPS repetitions.
	goal bool
}

// warmCache reads the files whole, so that they are in the page cache.
func warmCache(b *testing.B, files ...string) {
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, fh); err != nil {
			b.Fatal(err)
		}
		fh.Close()
	}
}

// libEnv is the environment that puts a process under the library.
func libEnv(b *testing.B, m mode, dir string) []string {
	switch m {
	case tracedOff:
		return []string{"LD_PRELOAD=" + testenv.Library(b), "IOPRED_DIR=" + dir}
	case tracedOn:
		return []string{"LD_PRELOAD=" + testenv.Library(b), "IOPRED_DIR=" + dir, "IOPRED_PREFETCH=1"}
	case baselineOn:
		return []string{"LD_PRELOAD=" + os.Getenv("IOPRED_PREFETCH_BENCH_BASELINE"), "IOPRED_DIR=" + dir, "IOPRED_PREFETCH=1"}
	}
	return nil
}

// BenchmarkPrefetchTable runs each workload cold (one row cached), without iopred (Linux's
// read-ahead alone), under iopred with prefetching off and with it on,
// the three modes one after another in each repetition, the order turning
// (IOPRED_PREFETCH_BENCH_REPS repetitions, default 5; the rows of the
// issue's goals IOPRED_PREFETCH_BENCH_GOAL_REPS, default three times as
// many), and prints the median whole-process times with the quartiles of
// the paired on/off ratios, the time outside the program's own loop (the
// start and exit every mode pays), the reads covered and the bytes wasted:
//
//	nice go test -run '^$' -bench PrefetchTable -benchtime 1x -timeout 30m ./tests/prefetch
//
// IOPRED_PREFETCH_BENCH_BASELINE=/path/to/libiopred.so adds a fourth mode
// to each repetition, prefetching on under that build of the library (an
// earlier commit's), so that a change is judged side by side in one run.
func BenchmarkPrefetchTable(b *testing.B) {
	began := time.Now()
	reps := 5
	if v, err := strconv.Atoi(os.Getenv("IOPRED_PREFETCH_BENCH_REPS")); err == nil && v > 0 {
		reps = v
	}
	goalReps := 3 * reps
	if v, err := strconv.Atoi(os.Getenv("IOPRED_PREFETCH_BENCH_GOAL_REPS")); err == nil && v > 0 {
		goalReps = v
	}
	modes := []mode{plain, tracedOff, tracedOn}
	if base := os.Getenv("IOPRED_PREFETCH_BENCH_BASELINE"); base != "" {
		if _, err := os.Stat(base); err != nil {
			b.Fatalf("IOPRED_PREFETCH_BENCH_BASELINE: %v", err)
		}
		modes = append(modes, baselineOn)
	}
	dir := diskDir(b)
	data := randomFile(b, dir, "data", 512*mib)
	strided := testenv.CompileC(b, "strided.c")
	h5 := compileH5(b, "h5slab.c")
	field := filepath.Join(dir, "field.h5")
	if res := testenv.Run(b, nil, "", h5, "write", field, "512", "131072"); res.Code != 0 {
		b.Fatalf("h5slab write: %+v", res)
	}
	py := python3(b)
	script, _ := filepath.Abs(filepath.Join("testdata", "pystride.py"))
	mpicc := testenv.Tool(b, "mpicc.openmpi")
	mpiread := filepath.Join(b.TempDir(), "mpiread")
	if out, err := exec.Command(mpicc, "-O2", "-o", mpiread, filepath.Join("testdata", "mpiread.c")).CombinedOutput(); err != nil {
		b.Fatalf("mpicc: %v\n%s", err, out)
	}
	mpirun := testenv.Tool(b, "mpirun.openmpi")
	fio := testenv.Tool(b, "fio")
	model := filepath.Join(b.TempDir(), "model")
	size := fmt.Sprint(64 * kib)
	simple := func(prog string, args ...string) func(m mode, d string) ([]string, []string) {
		return func(m mode, d string) ([]string, []string) {
			return append([]string{prog}, args...), libEnv(b, m, d)
		}
	}
	randomArgs := []string{data, "512", size, "0", "100", "random", "7"}
	workloads := []workload{
		{name: "strided C reader (64 KiB every 1 MiB, 100 us compute)", files: []string{data}, goal: true,
			cmd: simple(strided, data, "512", size, fmt.Sprint(mib), "100", "pread")},
		{name: "same, file in the page cache (cost only)", files: []string{data}, cached: true,
			cmd: simple(strided, data, "512", size, fmt.Sprint(mib), "100", "pread")},
		{name: "same, pinned to one core (taskset -c 0)", files: []string{data},
			cmd: simple(testenv.Tool(b, "taskset"), "-c", "0", strided, data, "512", size, fmt.Sprint(mib), "100", "pread")},
		{name: "tiles, nested (runs of 16 at 32 MiB, runs 256 KiB apart, 100 us)", files: []string{data},
			cmd: simple(strided, data, "512", size, fmt.Sprint(32*mib), "100", "tiles")},
		{name: "HDF5 hyperslabs (64 KiB of each 1 MiB row, 4 rows a read, 400 us)", files: []string{field},
			cmd: simple(h5, "read", field, "8192", "4", "400")},
		{name: "Python readinto loop (64 KiB every 1 MiB, 100 us)", files: []string{data},
			cmd: simple(py, script, "readinto", data, "512", size, fmt.Sprint(mib), "100")},
		{name: "Python numpy.memmap loop (page faults: not seen)", files: []string{data},
			cmd: simple(py, script, "memmap", data, "512", size, fmt.Sprint(mib), "100")},
		{name: "MPI-IO read_at_all, 2 ranks (512 KiB every 4 MiB, 500 us)", files: []string{data},
			cmd: func(m mode, d string) ([]string, []string) {
				a := []string{mpirun, "--oversubscribe", "-np", "2", "-x", "OMPI_MCA_io=ompio"}
				for _, e := range libEnv(b, m, d) {
					a = append(a, "-x", e)
				}
				return append(a, mpiread, data, fmt.Sprint(512*kib), fmt.Sprint(4*mib), "120", "500"), mpiEnv
			}},
		{name: "repeated random reads, second run (IOPRED_MODEL, 100 us)", files: []string{data}, goal: true,
			cmd: func(m mode, d string) ([]string, []string) {
				return append([]string{strided}, randomArgs...), append(libEnv(b, m, d), "IOPRED_MODEL="+model)
			},
			warm: func(b *testing.B) {
				coldCache(b, data)
				env := append(libEnv(b, tracedOn, b.TempDir()), "IOPRED_MODEL="+model)
				if res := testenv.Run(b, env, "", strided, randomArgs...); res.Code != 0 {
					b.Fatalf("first run: %+v", res)
				}
			}},
		{name: "fio strided read in a forked job (rw=read:960k, 64 KiB, psync, thinktime 100 us)", files: []string{data},
			cmd: simple(fio, "--name=strided", "--filename="+data, "--rw=read:960k", "--bs=64k", "--size=512m",
				"--io_size=32m", "--ioengine=psync", "--thinktime=100", "--output-format=terse")},
		{name: "fio randread (64 KiB, psync, --thread)", files: []string{data}, goal: true,
			cmd: simple(fio, "--name=rand", "--filename="+data, "--rw=randread", "--bs=64k", "--size=512m",
				"--io_size=32m", "--ioengine=psync", "--thread", "--randrepeat=1", "--output-format=terse")},
	}

	type row struct {
		times [4][]time.Duration
		loops [4][]float64 // the program's own loop time ("time S" on stderr), when it prints one
		// blocked is the loop's time blocked (not on a CPU nor waiting
		// for one: waiting for the disk), when the program prints it
		// ("blocked S", strided.c); CPU taken by other work on the
		// machine does not move it.
		blocked [4][]float64
		pf      tracefmt.Prefetch
		reps    int
		took    time.Duration
	}
	rows := make([]row, len(workloads))
	for i, w := range workloads {
		rowStart := time.Now()
		if w.warm != nil {
			w.warm(b)
		}
		rows[i].reps = reps
		if w.goal {
			rows[i].reps = goalReps
		}
		for r := 0; r < rows[i].reps; r++ {
			// The order turns each repetition, so that what a run leaves
			// behind (write-back, other work's phases) falls on every mode.
			order := append([]mode(nil), modes...)
			for k := 0; k < r%len(modes); k++ {
				order = append(order[1:], order[0])
			}
			for _, m := range order {
				traces := b.TempDir()
				args, env := w.cmd(m, traces)
				if w.cached {
					warmCache(b, w.files...)
				} else {
					coldCache(b, w.files...)
				}
				start := time.Now()
				res := testenv.Run(b, env, "", args[0], args[1:]...)
				elapsed := time.Since(start)
				if res.Code != 0 {
					b.Fatalf("%s (%v): exit %d\n%s", w.name, m, res.Code, res.Stderr)
				}
				rows[i].times[m] = append(rows[i].times[m], elapsed)
				if loop, ok := loopTime(res.Stderr); ok {
					rows[i].loops[m] = append(rows[i].loops[m], loop)
				}
				if bl, ok := stderrSeconds(res.Stderr, "blocked "); ok {
					rows[i].blocked[m] = append(rows[i].blocked[m], bl)
				}
				if m == tracedOn {
					p := sum(footers(b, traces))
					balanced(b, p)
					q := &rows[i].pf
					q.Reads += p.Reads
					q.Covered += p.Covered
					q.PrefetchedBytes += p.PrefetchedBytes
					q.UsedBytes += p.UsedBytes
					q.WastedBytes += p.WastedBytes
				}
			}
		}
		rows[i].took = time.Since(rowStart)
	}

	ms := func(d float64) string { return fmt.Sprintf("%.1f ms", d*1e3) }
	seconds := func(ds []time.Duration) []float64 {
		out := make([]float64, len(ds))
		for i, d := range ds {
			out[i] = d.Seconds()
		}
		return out
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\nprefetching, cold cache, %d repetitions (the goal rows, marked *, %d), in each the %d modes one after another (the order turning);\n", reps, goalReps, len(modes))
	fmt.Fprintf(&out, "times are medians; changes are the median of each repetition's ratio [its quartiles]; \"loop\" is the program's own timer around its read loop,\n")
	fmt.Fprintf(&out, "\"outside the loop\" the whole process's time less the loop's: the start and exit each mode pays, which dilutes the whole-process ratio:\n")
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	blockedHead, baseHead := "loop blocked: read-ahead only, off, on", ""
	if len(modes) == 4 {
		blockedHead += ", baseline on"
		baseHead = "\tbaseline library, prefetch on\ton vs baseline on"
	}
	fmt.Fprintln(tw, "workload\tLinux read-ahead only (no iopred)\tiopred, prefetch off\tiopred, prefetch on\ton vs off\ton vs read-ahead only\tloop: on vs off\toutside the loop: read-ahead only, off, on\t"+blockedHead+"\treads covered\tprefetched\twasted"+baseHead+"\trow took")
	var allPrefetched, allWasted uint64
	for i, w := range workloads {
		r := rows[i]
		plainS, offS, onS := seconds(r.times[plain]), seconds(r.times[tracedOff]), seconds(r.times[tracedOn])
		loop, outside := "-", "-"
		if len(r.loops[tracedOn]) == r.reps && len(r.loops[tracedOff]) == r.reps {
			loop = change(r.loops[tracedOn], r.loops[tracedOff])
			if len(r.loops[plain]) == r.reps {
				var parts []string
				for _, m := range []mode{plain, tracedOff, tracedOn} {
					parts = append(parts, fmt.Sprintf("%.1f", median(differences(seconds(r.times[m]), r.loops[m]))*1e3))
				}
				outside = strings.Join(parts, ", ") + " ms"
			}
		}
		covered := "-"
		if r.pf.Reads > 0 {
			covered = fmt.Sprintf("%.1f%% of %d", 100*float64(r.pf.Covered)/float64(r.pf.Reads), r.pf.Reads/uint64(r.reps))
		}
		wasted := "-"
		if r.pf.PrefetchedBytes > 0 {
			wasted = fmt.Sprintf("%.1f%%", 100*float64(r.pf.WastedBytes)/float64(r.pf.PrefetchedBytes))
		}
		allPrefetched += r.pf.PrefetchedBytes
		allWasted += r.pf.WastedBytes
		blocked := "-"
		if len(r.blocked[tracedOn]) == r.reps && len(r.blocked[tracedOff]) == r.reps && len(r.blocked[plain]) == r.reps {
			var parts []string
			for _, m := range modes {
				parts = append(parts, fmt.Sprintf("%.1f", median(r.blocked[m])*1e3))
			}
			blocked = strings.Join(parts, ", ") + " ms"
		}
		base := ""
		if len(modes) == 4 {
			baseS := seconds(r.times[baselineOn])
			base = fmt.Sprintf("\t%s\t%s", ms(median(baseS)), change(onS, baseS))
		}
		name := w.name
		if w.goal {
			name = "* " + name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %s\t%s\t%s\t%s\t%s\t%s\t%.1f MiB\t%s%s\t%.0f s\n", name, ms(median(plainS)), ms(median(offS)), ms(median(onS)),
			change(onS, offS), quartiles(onS, offS), change(onS, plainS), loop, outside, blocked, covered, float64(r.pf.PrefetchedBytes)/float64(r.reps)/float64(mib), wasted, base, r.took.Seconds())
		b.ReportMetric(median(ratios(onS, offS)), fmt.Sprintf("on/off-%d", i))
	}
	tw.Flush()
	if allPrefetched > 0 {
		fmt.Fprintf(&out, "over all workloads: %.1f%% of the prefetched bytes wasted\n", 100*float64(allWasted)/float64(allPrefetched))
	}
	fmt.Fprintf(&out, "the table took %.0f s\n", time.Since(began).Seconds())
	fmt.Print(out.String())
}

// loopTime reads the "time S" line the test programs print on stderr.
func loopTime(stderr string) (float64, bool) { return stderrSeconds(stderr, "time ") }

// stderrSeconds reads the seconds on the stderr line that starts with
// prefix ("time ", "blocked ").
func stderrSeconds(stderr, prefix string) (float64, bool) {
	for _, line := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if v, err := strconv.ParseFloat(f[0], 64); err == nil {
					return v, true
				}
			}
		}
	}
	return 0, false
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// ratios pairs the repetitions: a[i]/b[i].
func ratios(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] / b[i]
	}
	return out
}

// change is the median paired ratio as a signed percentage.
func change(a, b []float64) string { return fmt.Sprintf("%+.1f%%", 100*(median(ratios(a, b))-1)) }

// quartiles are the first and third quartiles of the paired ratios, as
// signed percentages: how far the repetitions spread around the median.
func quartiles(a, b []float64) string {
	s := ratios(a, b)
	sort.Float64s(s)
	if len(s) == 0 {
		return "[-]"
	}
	q := func(f float64) float64 { return 100 * (s[int(f*float64(len(s)-1)+0.5)] - 1) }
	return fmt.Sprintf("[%+.1f%%, %+.1f%%]", q(0.25), q(0.75))
}

// differences pairs the repetitions: a[i]-b[i].
func differences(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

// BenchmarkStartupPhases tells apart where a short traced reader's time
// goes: it runs testdata/phases.c (512 cold preads of 64 KiB at a 1 MiB
// stride, no computation) without iopred and under it with prefetching
// off and on, the modes side by side in each repetition
// (IOPRED_PREFETCH_BENCH_REPS, default 9), and prints the median of each
// phase: from the spawn to main (loading and starting the library), the
// first open (the wait at the library's descriptor gate while its Go
// runtime starts), the first read, the other reads, and from the last
// read to the exit as the parent sees it (the trace's end).
// IOPRED_PREFETCH_BENCH_BASELINE adds prefetching on under another build,
// as for the table:
//
//	nice go test -run '^$' -bench StartupPhases -benchtime 1x ./tests/prefetch
func BenchmarkStartupPhases(b *testing.B) {
	reps := 9
	if v, err := strconv.Atoi(os.Getenv("IOPRED_PREFETCH_BENCH_REPS")); err == nil && v > 0 {
		reps = v
	}
	dir := diskDir(b)
	data := randomFile(b, dir, "data", 512*mib)
	prog := testenv.CompileC(b, "phases.c")
	modes := []mode{plain, tracedOff, tracedOn}
	if base := os.Getenv("IOPRED_PREFETCH_BENCH_BASELINE"); base != "" {
		if _, err := os.Stat(base); err != nil {
			b.Fatalf("IOPRED_PREFETCH_BENCH_BASELINE: %v", err)
		}
		modes = append(modes, baselineOn)
	}
	const nphases = 6
	var phases [4][nphases][]float64
	for r := 0; r < reps; r++ {
		// The order turns each repetition, as in the table.
		order := append([]mode(nil), modes...)
		for k := 0; k < r%len(modes); k++ {
			order = append(order[1:], order[0])
		}
		for _, m := range order {
			env := libEnv(b, m, b.TempDir())
			coldCache(b, data)
			spawn := time.Now()
			res := testenv.Run(b, env, "", prog, data, "512")
			exit := time.Now()
			if res.Code != 0 {
				b.Fatalf("phases (%v): exit %d\n%s", m, res.Code, res.Stderr)
			}
			var t [4]int64
			found := false
			for _, line := range strings.Split(res.Stderr, "\n") {
				if _, err := fmt.Sscanf(line, "phases %d %d %d %d", &t[0], &t[1], &t[2], &t[3]); err == nil {
					found = true
				}
			}
			if !found {
				b.Fatalf("phases (%v) printed no phases line:\n%s", m, res.Stderr)
			}
			stamps := []int64{spawn.UnixNano(), t[0], t[1], t[2], t[3], exit.UnixNano()}
			for k := 0; k < 5; k++ {
				phases[m][k] = append(phases[m][k], float64(stamps[k+1]-stamps[k])/1e6)
			}
			phases[m][5] = append(phases[m][5], float64(stamps[5]-stamps[0])/1e6)
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\nphases of 512 cold strided preads, ms, medians of %d repetitions (the modes side by side):\n", reps)
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tspawn to main\tfirst open\tfirst read\tother reads\tlast read to exit\ttotal")
	for _, m := range modes {
		fmt.Fprintf(tw, "%v", m)
		for k := 0; k < nphases; k++ {
			fmt.Fprintf(tw, "\t%.2f", median(phases[m][k]))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Print(out.String())
}

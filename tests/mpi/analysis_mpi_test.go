package mpi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"iopred/tests/interop"
	"iopred/tests/testenv"
	"iopred/tracefmt"
)

// analysisRun is what one run of an analysis left: its standard output
// and error, the page it wrote (report, export), and its exit status.
type analysisRun struct {
	stdout, stderr, page []byte
	code                 int
}

// runAnalysis runs `iopred ARGS` alone, or under m's mpirun at np ranks
// with --mpi added, writing a report page (if any) into a fresh directory
// under the same name.
func runAnalysis(t *testing.T, bin string, m *impl, np int, args []string) analysisRun {
	t.Helper()
	outDir := t.TempDir()
	args = append([]string(nil), args...)
	for i, a := range args {
		if a == "PAGE" {
			args[i] = "page.html"
		}
	}
	var cmd *exec.Cmd
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if m == nil {
		cmd = exec.CommandContext(ctx, bin, args...)
	} else {
		full := append([]string{args[0], "--mpi"}, args[1:]...)
		cmd = exec.CommandContext(ctx, m.run, m.launch(np, nil, bin, full...)...)
		cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
			"OMPI_MCA_rmaps_base_oversubscribe=1")
	}
	cmd.Dir = outDir
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v: did not finish in 3 minutes\n%s", cmd.Args, stderr.String())
	}
	res := analysisRun{stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		res.code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	if res.code != 0 && m == nil {
		t.Logf("%v: exit %d: %s", cmd.Args, res.code, stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(outDir, "page.html")); err == nil {
		res.page = b
	}
	return res
}

// analysisSets writes the trace sets the MPI mode is checked on: a
// synthetic MPI job, a real MPI program's traces (ior.c under Open MPI,
// MPI-IO and POSIX), processes without ranks (a shell pipeline's), and
// Darshan logs beside a truncated trace and a file that is no trace
// (per-file counters, Lustre layouts, a warning and an error that must
// reach rank 0's output and exit status).
func analysisSets(t *testing.T, bin string) map[string]string {
	t.Helper()
	root := t.TempDir()
	sets := map[string]string{}
	syn := filepath.Join(root, "synthetic")
	if out, err := exec.Command(bin, "synth", "--procs", "9", "--iterations", "6", "--compute", "1", "--noise-rate", "200", "-o", syn).CombinedOutput(); err != nil {
		t.Fatalf("synth: %v\n%s", err, out)
	}
	sets["synthetic"] = syn

	m := impls[0]
	need(t, m.cc, m.run)
	prog := compile(t, m.cc, "ior.c")
	ior := filepath.Join(root, "ior")
	if out, err := mpirun(t, m, iorRanks, 3*time.Minute, []string{"LD_PRELOAD=" + library(t), "IOPRED_DIR=" + ior},
		prog, t.TempDir(), "3", "8192", "2048", "4", "ckpt=2"); err != nil {
		t.Fatalf("ior: %v\n%s", err, out)
	}
	sets["ior"] = ior

	procs := filepath.Join(root, "processes")
	work := t.TempDir()
	r := testenv.Traced(t, procs, nil, work, "sh", "-c",
		"dd if=/dev/zero of=a bs=65536 count=40 2>/dev/null; dd if=a of=b bs=4096 2>/dev/null; cat a b > c; sleep 0.2; dd if=c of=d bs=1M 2>/dev/null; wc -c a b c d")
	if r.Code != 0 {
		t.Fatalf("sh: exit %d: %s", r.Code, r.Stderr)
	}
	sets["processes"] = procs

	mixed := filepath.Join(root, "darshan")
	os.MkdirAll(mixed, 0o755)
	for _, rel := range []string{"darshan/darshan-logs/mpi-io-test-x86_64-3.4.7.darshan", "darshan/pytokio/sample.darshan",
		"darshan/darshan-logs/hdf5_diagonal_write_1_byte_dxt.darshan"} {
		b, err := os.ReadFile(interop.Path(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(mixed, filepath.Base(rel)), b, 0o644)
	}
	traces, err := tracefmt.Discover(syn)
	if err != nil || len(traces) < 2 {
		t.Fatalf("synthetic traces: %v", err)
	}
	b, err := os.ReadFile(traces[1])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(mixed, "cut"+tracefmt.FileSuffix), b[:len(b)*2/3], 0o644)
	os.WriteFile(filepath.Join(mixed, "zz"+tracefmt.FileSuffix), []byte("this is no trace"), 0o644)
	sets["darshan+truncated"] = mixed
	return sets
}

// `mpirun -n R iopred ANALYSIS --mpi DIR` prints (and writes) byte for
// byte what `iopred ANALYSIS DIR` does, with the same exit status, under
// Debian's Open MPI and MPICH at 1, 2 and 4 ranks, for summary (JSON and
// text), period (the job's signal, JSON and text), report (the page) and
// patterns,
// on a synthetic job, a real MPI program's traces, processes without
// ranks, and Darshan logs with a truncated trace.
func TestAnalysesUnderMPI(t *testing.T) {
	bin := filepath.Join(testenv.RepoRoot(), "build", "iopred")
	library(t) // builds build/iopred too
	sets := analysisSets(t, bin)
	// The text forms print from the same figures as the JSON: they are
	// checked on one set, so that the test takes minutes, not ten.
	analyses := map[string][][]string{
		"synthetic":         {{"summary", "--json"}, {"summary"}, {"period", "--json"}, {"period"}, {"report", "-o", "PAGE"}, {"patterns", "--json"}},
		"ior":               {{"summary", "--json"}, {"period", "--json"}, {"report", "-o", "PAGE"}, {"patterns", "--json"}},
		"processes":         {{"summary", "--json"}, {"period", "--json"}, {"report", "-o", "PAGE"}},
		"darshan+truncated": {{"summary", "--json"}, {"report", "-o", "PAGE"}}, // counters: no job signal
	}
	for _, name := range []string{"synthetic", "ior", "processes", "darshan+truncated"} {
		dir := sets[name]
		for _, a := range analyses[name] {
			args := append(append([]string(nil), a...), dir)
			want := runAnalysis(t, bin, nil, 0, args)
			if len(want.stdout) == 0 {
				t.Fatalf("%s: %v printed nothing", name, args)
			}
			// The file that is no trace makes the analyses fail, after
			// their output.
			if (name == "darshan+truncated") != (want.code != 0) {
				t.Fatalf("%s: %v exited %d", name, args, want.code)
			}
			if name == "darshan+truncated" && a[0] == "summary" && !bytes.Contains(want.stdout, []byte("truncated trace")) {
				t.Fatalf("%s: the summary does not report the truncated trace:\n%s", name, head(want.stdout))
			}
			for i := range impls {
				m := &impls[i]
				need(t, m.run)
				for _, np := range []int{1, 2, 4} {
					got := runAnalysis(t, bin, m, np, args)
					what := fmt.Sprintf("%s: %s at %d ranks: %s", name, m.name, np, strings.Join(a, " "))
					if got.code != want.code {
						t.Errorf("%s: exit %d, alone %d", what, got.code, want.code)
					}
					if !bytes.Equal(got.stdout, want.stdout) {
						t.Errorf("%s: output differs from one process's:\n%s\nwant\n%s", what, head(got.stdout), head(want.stdout))
					}
					if !bytes.Equal(got.page, want.page) {
						t.Errorf("%s: the page differs from one process's (%d bytes, want %d)", what, len(got.page), len(want.page))
					}
				}
			}
		}
	}
}

func head(b []byte) []byte {
	if len(b) > 1500 {
		return b[:1500]
	}
	return b
}

// An analysis that cannot be spread over MPI says so rather than running
// on one rank: FTIO's sampling of the requests.
func TestMPIRefusesFTIOSampling(t *testing.T) {
	bin := filepath.Join(testenv.RepoRoot(), "build", "iopred")
	library(t)
	dir := t.TempDir()
	if out, err := exec.Command(bin, "synth", "--procs", "2", "--iterations", "3", "-o", dir).CombinedOutput(); err != nil {
		t.Fatalf("synth: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "period", "--mpi", "--fs", "10", dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--mpi") {
		t.Fatalf("period --mpi --fs 10: %v\n%s", err, out)
	}
}

// timings are the figures of `signature --all`'s last line that no two
// runs share.
var timings = regexp.MustCompile(`log read in [0-9.]+ s, all done in [0-9.]+ s`)

// `mpirun -n R iopred signature --all DIR --mpi` splits the applications
// among the ranks and prints, and writes, what one process does: the
// summary line (but its timings and directory), the scores against the
// simulator's truth, and each application's signature file, byte for
// byte, under Open MPI and MPICH at 1, 2 and 4 ranks.
func TestSignatureAllUnderMPI(t *testing.T) {
	bin := filepath.Join(testenv.RepoRoot(), "build", "iopred")
	library(t)
	sim := t.TempDir()
	if out, err := exec.Command(bin, "simulate", "center", "--scenario", "small", "--seed", "2", "--out", sim, "-q").CombinedOutput(); err != nil {
		t.Fatalf("simulate: %v\n%s", err, out)
	}
	args := []string{"signature", "--lmt", filepath.Join(sim, "lmt.sqlite3"), "--jobs", filepath.Join(sim, "sacct.txt"), "--tz", "UTC",
		"--truth", filepath.Join(sim, "truth.json"), "--min-runs", "3", "--all"}
	outcome := func(cmd *exec.Cmd, dir string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.String())
		}
		got := timings.ReplaceAllString(strings.ReplaceAll(stdout.String(), dir, "DIR"), "TIMES") + stderr.String()
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got += "\n== " + filepath.Base(f) + "\n" + string(b)
		}
		return got
	}
	dir := filepath.Join(t.TempDir(), "alone")
	want := outcome(exec.Command(bin, append(args, dir)...), dir)
	if !strings.Contains(want, "median over") || strings.Count(want, "\n== ") < 5 {
		t.Fatalf("one process's outcome checks too little:\n%.2000s", want)
	}
	for i := range impls {
		m := &impls[i]
		need(t, m.run)
		for _, np := range []int{1, 2, 4} {
			dir := filepath.Join(t.TempDir(), "mpi")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			cmd := exec.CommandContext(ctx, m.run, m.launch(np, nil, bin, append(args, dir, "--mpi")...)...)
			cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
			got := outcome(cmd, dir)
			cancel()
			if got != want {
				t.Errorf("%s at %d ranks: the outcome differs from one process's:\n%.1500s\nwant\n%.1500s", m.name, np, got, want)
			}
		}
	}
}

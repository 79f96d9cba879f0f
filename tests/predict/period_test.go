package predict

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tests/testenv"
)

// A program with periodic write bursts asks iopred_period about its own
// I/O while it runs: the period found is the interval between its bursts
// (measured from its trace) within the spread of this run's intervals,
// widened by one frequency bin of the run. (The library's last window is
// about three periods long once it has found the period three times in a
// row, and one bin of it is a third of the frequency: a bound no test
// could fail.)
func TestPeriodOnline(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "periodic")
	cmd := exec.Command("gcc", "-O2", "-I", filepath.Join(repoRoot(), "preload"), "-o", prog, filepath.Join("testdata", "periodic.c"), "-ldl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	lib := filepath.Join(repoRoot(), "build", "libiopred.so")
	data, traces := dataFile(t), t.TempDir()
	run := exec.Command(prog, data, "16", "300")
	run.Env = append(run.Environ(), "LD_PRELOAD="+lib, "IOPRED_DIR="+traces)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var mean, period float64
	var found int
	if _, err := fmt.Sscanf(lines[len(lines)-1], "mean_interval %f", &mean); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	var it int
	var conf, t0, t1 float64
	if _, err := fmt.Sscanf(lines[len(lines)-2], "iter %d found %d period %f confidence %f window %f %f", &it, &found, &period, &conf, &t0, &t1); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	t.Logf("bursts every %.4f s; iopred_period after %d iterations: %.4f s (confidence %.2f)", mean, it+1, period, conf)
	if found != 1 {
		t.Fatalf("no period found after %d iterations:\n%s", it+1, out)
	}
	iv := testenv.MeasureIntervals(t, testenv.WritesAt(t, traces, data, 0))
	if iv.Count != 15 {
		t.Fatalf("%d intervals between the bursts in the trace, want 15", iv.Count)
	}
	t.Logf("the library's last window: [%.4f s, %.4f s]", t0, t1)
	testenv.CheckPeriodOf(t, "iopred_period", &period, iv.Mean*float64(iv.Count), iv)
}

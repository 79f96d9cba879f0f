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
// widened by one frequency bin of the window the library analysed. That
// window is the whole history until the period has been found three
// times in a row, then about three periods: its bin is then a third of
// the frequency, which still tells the period from its harmonics. (One
// bin of the whole run was too tight: in a loaded run the library's
// 0.79 s window gave 0.265 s for bursts 0.30 to 0.48 s apart.)
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
	testenv.CheckPeriodOf(t, "iopred_period", &period, t1-t0, iv)
}

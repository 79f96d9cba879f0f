package predict

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A program with periodic write bursts asks iopred_period about its own
// I/O while it runs: the period found is the interval between its bursts
// (which it measures itself) within 2%.
func TestPeriodOnline(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "periodic")
	cmd := exec.Command("gcc", "-O2", "-I", filepath.Join(repoRoot(), "preload"), "-o", prog, filepath.Join("testdata", "periodic.c"), "-ldl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	lib := filepath.Join(repoRoot(), "build", "libiopred.so")
	run := exec.Command(prog, dataFile(t), "16", "300")
	run.Env = append(run.Environ(), "LD_PRELOAD="+lib, "IOPRED_DIR="+t.TempDir())
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
	var conf float64
	if _, err := fmt.Sscanf(lines[len(lines)-2], "iter %d found %d period %f confidence %f", &it, &found, &period, &conf); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	t.Logf("bursts every %.4f s; iopred_period after %d iterations: %.4f s (confidence %.2f)", mean, it+1, period, conf)
	if found != 1 {
		t.Fatalf("no period found after %d iterations:\n%s", it+1, out)
	}
	if rel := (period - mean) / mean; rel > 0.02 || rel < -0.02 {
		t.Errorf("period %.4f s is %.1f%% off the bursts' interval %.4f s", period, 100*rel, mean)
	}
}

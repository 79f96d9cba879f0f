// Package predict checks iopred's predictions on live processes: a C
// program under LD_PRELOAD=libiopred.so asks iopred_predict and
// iopred_period about its own I/O, and real programs (LAMMPS, fio, an HDF5
// writer) traced by the library go through FTIO and the predictor's replay.
package predict

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"iopred/tests/testenv"
)

func repoRoot() string { return testenv.RepoRoot() }

// dataFile is where the workload writes: in memory when the machine has
// /dev/shm, so that its fsync calls do not wait for a disk.
func dataFile(t *testing.T) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "iopred-predict-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return filepath.Join(dir, "data")
		}
	}
	return filepath.Join(t.TempDir(), "data")
}

type score struct{ checked, op, offset, size int }

func run(t *testing.T, prog string, env ...string) score {
	t.Helper()
	lib := filepath.Join(repoRoot(), "build", "libiopred.so")
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("%s missing: run make first", lib)
	}
	cmd := exec.Command(prog, dataFile(t))
	cmd.Env = append(os.Environ(), append([]string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + t.TempDir()}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", prog, err, out)
	}
	var s score
	if _, err := fmt.Sscanf(string(out), "checked %d op %d offset %d size %d", &s.checked, &s.op, &s.offset, &s.size); err != nil {
		t.Fatalf("unexpected output %q: %v", out, err)
	}
	return s
}

func build(t *testing.T) string {
	prog := filepath.Join(t.TempDir(), "predcheck")
	cmd := exec.Command("gcc", "-O2", "-I", filepath.Join(repoRoot(), "preload"), "-o", prog, filepath.Join("testdata", "predcheck.c"), "-ldl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return prog
}

// After the first iteration of its loop, the model predicts the program's
// next call (kind, offset and size) before the program makes it.
func TestPredictOnline(t *testing.T) {
	s := run(t, build(t))
	// 19 checked iterations of 8 pwrite, 1 fsync, 1 pread.
	if s.checked < 19*10-1 {
		t.Fatalf("only %d predictions were available", s.checked)
	}
	for name, right := range map[string]int{"op": s.op, "offset": s.offset, "size": s.size} {
		if frac := float64(right) / float64(s.checked); frac < 0.95 {
			t.Errorf("%s right in %d of %d predictions (%.2f), want at least 0.95", name, right, s.checked, frac)
		}
	}
}

// A model saved by one run (IOPRED_MODEL) predicts the next run of the same
// program from its very first call.
func TestPredictFromSavedModel(t *testing.T) {
	prog := build(t)
	model := filepath.Join(t.TempDir(), "model.msgpack")
	run(t, prog, "IOPRED_MODEL="+model)
	if _, err := os.Stat(model); err != nil {
		t.Fatalf("the first run saved no model: %v", err)
	}
	s := run(t, prog, "IOPRED_MODEL="+model, "CHECK_FIRST=1")
	if s.checked != 20*10 {
		t.Fatalf("%d predictions available, want one before each of the 200 calls", s.checked)
	}
	if s.op != s.checked || s.offset != s.checked || s.size != s.checked {
		t.Errorf("second run: op %d, offset %d, size %d right of %d; want all", s.op, s.offset, s.size, s.checked)
	}
}

// Without the library the program runs and finds no prediction API: the
// dlsym probe that applications use is safe.
func TestWithoutLibrary(t *testing.T) {
	out, err := exec.Command(build(t), dataFile(t)).CombinedOutput()
	if err != nil || string(out) != "checked 0 op 0 offset 0 size 0\n" {
		t.Fatalf("without the library: %v, %q", err, out)
	}
}

package predict

import (
	"math"
	"path/filepath"
	"testing"

	"iopred/analyzer/ftio"
	"iopred/tests/testenv"
	"iopred/tracefmt"
)

// LAMMPS from Debian writes a snapshot every 50 steps, traced by the
// library: FTIO's period of the write signal is the typical (median) interval between
// the snapshots (measured from the same trace) within 2%, and the
// predictor's offsets are at least as good as the contiguous baseline.
func TestLAMMPSDumps(t *testing.T) {
	lmp := testenv.Tool(t, "lmp")
	input, err := filepath.Abs(filepath.Join("testdata", "melt.lmp"))
	if err != nil {
		t.Fatal(err)
	}
	work, traces := t.TempDir(), t.TempDir()
	env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_plm_rsh_agent="}
	if res := testenv.Traced(t, traces, env, work, lmp, "-in", input, "-var", "out", work, "-log", "none", "-screen", "none"); res.Code != 0 {
		t.Fatalf("lmp: %+v", res)
	}
	snapshots := snapshotTimes(t, traces, filepath.Join(work, "snapshots.dump"))
	// 81 snapshots: a DFT over 80 periods resolves the period to within
	// 0.6%, which leaves room for the jitter of a shared machine.
	if len(snapshots) != 81 {
		t.Fatalf("%d snapshots written, want 81 (steps 0, 50, ..., 4000)", len(snapshots))
	}
	want := testenv.TypicalInterval(t, snapshots)
	testenv.CheckPeriod(t, traces, ftio.Options{Fs: -1, MaxSamples: 1 << 20}, want, 0.02)
	checkOffsets(t, programTrace(t, traces, "lmp"), 0)
}

// snapshotTimes returns the start of each burst of writes to path, in
// seconds: writes less than 20 ms apart belong to one snapshot.
func snapshotTimes(t *testing.T, dir, path string) []float64 {
	t.Helper()
	files, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	var starts []float64
	last := math.Inf(-1)
	for _, f := range files {
		r, err := tracefmt.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			e := rec.Event
			if e == nil || e.Path != path || !tracefmt.IsWrite(e.Op) || e.Bytes == 0 {
				continue
			}
			now := float64(e.StartNs) / 1e9
			if now-last > 0.02 {
				starts = append(starts, now)
			}
			last = float64(e.EndNs) / 1e9
		}
		r.Close()
	}
	return starts
}

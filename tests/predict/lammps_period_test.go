package predict

import (
	"path/filepath"
	"testing"

	"iopred/tests/testenv"
)

// LAMMPS from Debian writes a snapshot every 50 steps, traced by the
// library: the period `iopred period` finds by default (the job's write
// signal) is the snapshots' interval (measured from the same trace)
// within the spread of this run's intervals widened by one frequency bin,
// and the predictor's offsets are at least as good as the contiguous
// baseline. (FTIO's point samples at a rate chosen from the trace are not
// asked: at 46 kHz over a loaded machine's run they found a 1 ms period
// of the system calls inside a snapshot.)
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
	dump := filepath.Join(work, "snapshots.dump")
	snapshots := testenv.WriteTimes(t, traces, dump, testenv.MarkerOffsets(t, dump, "ITEM: TIMESTEP"))
	// 81 snapshots: a DFT over 80 periods resolves the period to within
	// 0.6%, which leaves room for the jitter of a shared machine.
	if len(snapshots) != 81 {
		t.Fatalf("%d snapshots written, want 81 (steps 0, 50, ..., 4000)", len(snapshots))
	}
	iv := testenv.MeasureIntervals(t, snapshots)
	testenv.CheckPeriod(t, traces, iv)
	checkOffsets(t, programTrace(t, traces, "lmp"), 0)
}

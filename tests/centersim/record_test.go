// Package centersim_test records real runs with the built library and
// gives them to the center simulator, as traces/record.sh does for the
// traces it embeds.
package centersim_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"iopred/analyzer/centersim"
	"iopred/tests/testenv"
)

// fio traced by libiopred.so, writing 10 bursts of 4 MiB with 300 ms of
// think time between them: the simulator takes the trace directory as an
// application whose runs write 10 bursts, spaced as asked, of the volume
// asked, and its truth says so.
func TestSimulateFromRecordedFio(t *testing.T) {
	fio := testenv.Tool(t, "fio")
	traces, work := t.TempDir(), t.TempDir()
	res := testenv.Traced(t, traces, nil, work, fio, "--thread", "--output=/dev/null", "--name=ckpt", "--directory="+work,
		"--rw=write", "--bs=1m", "--size=40m", "--thinktime=300ms", "--thinktime_blocks=4")
	if res.Code != 0 {
		t.Fatalf("fio: %+v", res)
	}
	p, err := centersim.LoadTraceProfile(traces, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Bursts) != 10 {
		t.Fatalf("%d bursts in the fio trace, want 10: %+v", len(p.Bursts), p.Bursts)
	}
	checkSimulated(t, traces, 10, 40e9/10)
}

// The IOR-like MPI-IO job (tests/mpi/testdata/ior.c) on 2 Open MPI ranks
// with 6 checkpoints: four phases (three writes, one read back) and six
// checkpoints make 10 bursts, the read one reading what the first wrote.
func TestSimulateFromRecordedMPIIO(t *testing.T) {
	mpicc := testenv.Tool(t, "mpicc.openmpi")
	mpirun := testenv.Tool(t, "mpirun.openmpi")
	bin := filepath.Join(t.TempDir(), "ior")
	src := filepath.Join(testenv.RepoRoot(), "tests", "mpi", "testdata", "ior.c")
	if r := testenv.Run(t, nil, "", mpicc, "-O2", "-o", bin, src); r.Code != 0 {
		t.Fatalf("mpicc: %+v", r)
	}
	traces, data := t.TempDir(), t.TempDir()
	env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "OMPI_MCA_rmaps_base_oversubscribe=1"}
	r := testenv.Run(t, env, "", mpirun, "--oversubscribe", "-np", "2", "-x", "LD_PRELOAD="+testenv.Library(t), "-x", "IOPRED_DIR="+traces,
		"-x", "IOPRED_JOB=0", bin, data, "2", "65536", "16384", "200", "ckpt=6")
	if r.Code != 0 {
		t.Fatalf("mpirun: %+v", r)
	}
	p, err := centersim.LoadTraceProfile(traces, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reads int
	for _, b := range p.Bursts {
		if b.ReadBytes > 0 {
			reads++
			if b.ReadBytes != 2*2*65536 {
				t.Errorf("read burst of %g bytes, want %d", b.ReadBytes, 2*2*65536)
			}
		}
	}
	if len(p.Bursts) != 10 || reads != 1 {
		t.Fatalf("%d bursts (%d reading), want 10 (1): %+v", len(p.Bursts), reads, p.Bursts)
	}
	checkSimulated(t, traces, 10, 0)
}

// checkSimulated runs the traced application alone at a small center and
// checks the truth: as many bursts per run as the trace had, of the
// median volume asked.
func checkSimulated(t *testing.T, dir string, bursts int, burstBytes float64) {
	t.Helper()
	s := &centersim.Scenario{Days: 1, StepS: 5, OSTs: 16, OSTBandwidth: 300e6, Apps: []centersim.AppSpec{{
		User: "me", Name: "traced", Nodes: 8, Class: centersim.ClassIOIntensive, Runs: 2, Iterations: [2]int{1, 1},
		Trace: dir, TraceIntervalS: 200, TraceBurstBytes: 20e9, Bandwidth: 2e9, Layout: centersim.Layout{Model: "n-to-m", Files: 4, Stripe: 4}}}}
	res, err := centersim.Run(s, centersim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := res.Truth.Apps[0]
	if a.Runs != 2 || a.Pattern == nil || a.Pattern.BurstsPerRun != float64(bursts) {
		t.Fatalf("truth: %d runs, pattern %+v; want 2 runs of %d bursts", a.Runs, a.Pattern, bursts)
	}
	if burstBytes > 0 && fmt.Sprintf("%.3g", a.Pattern.BurstBytes) != fmt.Sprintf("%.3g", 20e9) {
		t.Errorf("bursts of %.4g bytes, want 2e10 (equal bursts, median scaled to 2e10)", a.Pattern.BurstBytes)
	}
}

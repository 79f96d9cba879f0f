package slurm_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// `srun -n R iopred summary --mpi DIR` on the test cluster, whose
// MpiDefault is none, with the PMI that Debian's Slurm and MPI share:
// PMIx for Open MPI (Debian builds Open MPI against PMIx; srun
// --mpi=pmix), PMI-2 for MPICH (srun --mpi=pmi2). Rank 0 prints what one
// process prints, byte for byte, at 1, 2 and 4 ranks.
func TestSrunMPI(t *testing.T) {
	c := startCluster(t)
	bin := iopredCommand(t)
	traces := filepath.Join(c.dir, "jobs", "traces")
	if out, err := exec.Command(bin, "synth", "--procs", "8", "--iterations", "6", "--compute", "1", "--noise-rate", "200", "-o", traces).CombinedOutput(); err != nil {
		t.Fatalf("synth: %v\n%s", err, out)
	}
	want, err := exec.Command(bin, "summary", "--json", traces).Output()
	if err != nil || len(want) == 0 {
		t.Fatalf("summary alone: %v", err)
	}
	srun := tool(t, "srun")
	for _, pmi := range []string{"pmix", "pmi2"} {
		for _, np := range []string{"1", "2", "4"} {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			cmd := exec.CommandContext(ctx, srun, "--mpi="+pmi, "-n", np, "-J", "iopred-srun", bin, "summary", "--json", "--mpi", traces)
			cmd.Env = append(os.Environ(), c.env...)
			cmd.Dir = filepath.Join(c.dir, "jobs")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.WaitDelay = 5 * time.Second
			err := cmd.Run()
			cancel()
			if err != nil {
				t.Errorf("srun --mpi=%s -n %s: %v\n%s", pmi, np, err, stderr.String())
				continue
			}
			if !bytes.Equal(stdout.Bytes(), want) {
				t.Errorf("srun --mpi=%s -n %s: the summary differs from one process's:\n%.1500s\nwant\n%.1500s\nstderr: %s", pmi, np, stdout.Bytes(), want, stderr.String())
			}
		}
	}
}

package slurm_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

	// aid learn's days over srun's ranks: the same knowledge base.
	sim := filepath.Join(c.dir, "jobs", "center")
	if out, err := exec.Command(bin, "simulate", "center", "--scenario", "small", "--seed", "2", "--days", "3", "--osts", "8",
		"--out", sim, "-q").CombinedOutput(); err != nil {
		t.Fatalf("simulate: %v\n%s", err, out)
	}
	learn := []string{"aid", "learn", "--lmt", filepath.Join(sim, "lmt.sqlite3"), "--jobs", filepath.Join(sim, "sacct.txt"), "--tz", "UTC", "-q"}
	alone := filepath.Join(c.dir, "jobs", "kb-alone")
	if out, err := exec.Command(bin, append(learn, "--kb", alone)...).CombinedOutput(); err != nil {
		t.Fatalf("aid learn alone: %v\n%s", err, out)
	}
	wantKB := kbFiles(t, alone)
	for _, pmi := range []string{"pmix", "pmi2"} {
		kb := filepath.Join(c.dir, "jobs", "kb-"+pmi)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, srun, append([]string{"--mpi=" + pmi, "-n", "3", "-J", "iopred-srun", bin}, append(learn, "--kb", kb, "--mpi")...)...)
		cmd.Env = append(os.Environ(), c.env...)
		cmd.Dir = filepath.Join(c.dir, "jobs")
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("srun --mpi=%s -n 3 aid learn: %v\n%s", pmi, err, out)
			continue
		}
		got := kbFiles(t, kb)
		if len(got) != len(wantKB) || len(got) < 5 {
			t.Errorf("srun --mpi=%s: knowledge base files %d, one process %d", pmi, len(got), len(wantKB))
		}
		for name, b := range wantKB {
			if got[name] != b {
				t.Errorf("srun --mpi=%s: %s differs from one process's", pmi, name)
			}
		}
	}
}

// kbFiles reads a knowledge base's files but the lock, the manifest's
// time stamp masked.
func kbFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	updated := regexp.MustCompile(`"updated": "[^"]*"`)
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() || info.Name() == "lock" {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = updated.ReplaceAllString(string(b), `"updated": T`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

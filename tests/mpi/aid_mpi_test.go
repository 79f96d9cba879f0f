package mpi

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"iopred/tests/testenv"
)

// learnTimes and learnUpdated are what two learns of the same logs
// cannot share: the time taken and the manifest's clock.
var (
	learnTimes   = regexp.MustCompile(`in [0-9.]+ s\n`)
	learnUpdated = regexp.MustCompile(`"updated": "[^"]*"`)
)

// `mpirun -n R iopred aid learn ... --mpi` splits the days among the
// ranks, which read the days next to their block for the aggregates a
// day's bursts are found on, and rank 0 writes the knowledge base one
// process writes: the same output and every file byte for byte (the
// manifest's time stamp masked), under Open MPI and MPICH at 1, 2 and 4
// ranks, on a first learn of two days and on an increment whose days to
// read have a gap.
func TestAIDLearnUnderMPI(t *testing.T) {
	bin := filepath.Join(testenv.RepoRoot(), "build", "iopred")
	library(t)
	sim := t.TempDir()
	if out, err := exec.Command(bin, "simulate", "center", "--scenario", "small", "--seed", "2", "--days", "4", "--osts", "8",
		"--out", sim, "-q").CombinedOutput(); err != nil {
		t.Fatalf("simulate: %v\n%s", err, out)
	}
	learn := []string{"aid", "learn", "--lmt", filepath.Join(sim, "lmt.sqlite3"), "--jobs", filepath.Join(sim, "sacct.txt"), "--tz", "UTC"}
	// Days 2 and 3 first (day 3's bursts not final), then all: days 1, 3
	// and 4 are read, day 2 is kept between them.
	steps := map[string][][]string{
		"gap": {{"--from", "2024-01-02", "--to", "2024-01-04"}, nil},
	}
	outcome := func(t *testing.T, m *impl, np int, steps [][]string) string {
		t.Helper()
		kb := filepath.Join(t.TempDir(), "kb")
		var got strings.Builder
		for _, extra := range steps {
			args := append(append(append([]string(nil), learn...), extra...), "--kb", kb)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			var cmd *exec.Cmd
			if m == nil {
				cmd = exec.CommandContext(ctx, bin, args...)
			} else {
				cmd = exec.CommandContext(ctx, m.run, m.launch(np, nil, bin, append(args, "--mpi")...)...)
				cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
					"OMPI_MCA_rmaps_base_oversubscribe=1")
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.WaitDelay = 5 * time.Second
			err := cmd.Run()
			cancel()
			if err != nil {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.String())
			}
			got.WriteString(learnTimes.ReplaceAllString(stdout.String(), "in T s\n") + stderr.String())
		}
		err := filepath.Walk(kb, func(p string, info os.FileInfo, err error) error {
			if err != nil || !info.Mode().IsRegular() || info.Name() == "lock" {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(kb, p)
			got.WriteString("\n== " + rel + "\n" + learnUpdated.ReplaceAllString(string(b), `"updated": T`))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return got.String()
	}
	for name, steps := range steps {
		want := outcome(t, nil, 1, steps)
		if strings.Count(want, "\n== agg/") < 4 || !strings.Contains(want, "I/O-intensive") {
			t.Fatalf("%s: one process's outcome checks too little:\n%.2000s", name, want)
		}
		for i := range impls {
			m := &impls[i]
			need(t, m.run)
			for _, np := range []int{1, 2, 4} {
				if got := outcome(t, m, np, steps); got != want {
					t.Errorf("%s, %s at %d ranks: the outcome differs from one process's:\n%.1500s\nwant\n%.1500s", name, m.name, np, got, want)
				}
			}
		}
	}
}

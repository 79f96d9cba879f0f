//go:build cgo

package mpi

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// payload is what rank r sends in the child: lengths differ by rank, one
// rank sends nothing, contents name the rank.
func payload(r int) []byte {
	if r == 1 {
		return nil
	}
	return bytes.Repeat([]byte{byte('a' + r)}, 1000*r+3)
}

// TestChildGather is the MPI job TestGatherUnderMPI launches; alone, it
// does nothing.
func TestChildGather(t *testing.T) {
	if os.Getenv("IOPRED_MPI_CHILD") != "1" {
		t.Skip("run by TestGatherUnderMPI under mpirun")
	}
	w, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	all, err := w.Gather(payload(w.Rank()))
	if err != nil {
		t.Fatal(err)
	}
	if w.Rank() == 0 {
		if len(all) != w.Size() {
			t.Fatalf("%d messages from %d ranks", len(all), w.Size())
		}
		for r, b := range all {
			if !bytes.Equal(b, payload(r)) {
				t.Fatalf("rank %d's bytes: got %d bytes, want %d", r, len(b), len(payload(r)))
			}
		}
		fmt.Printf("gathered %d ranks with %s\n", w.Size(), w.Implementation())
	} else if all != nil {
		t.Fatalf("rank %d got the gathered messages", w.Rank())
	}
	if err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
}

// TestGatherUnderMPI runs the test binary as an MPI job under Debian's
// Open MPI and MPICH at 1, 2 and 4 ranks: rank 0 must receive every
// rank's bytes, in rank order, whatever the implementation's ABI.
func TestGatherUnderMPI(t *testing.T) {
	for _, m := range []struct{ name, run, want string }{
		{"openmpi", "mpirun.openmpi", "Open MPI"}, {"mpich", "mpirun.mpich", "MPICH"}} {
		for _, np := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/%d", m.name, np), func(t *testing.T) {
				if _, err := exec.LookPath(m.run); err != nil {
					if os.Getenv("IOPRED_SKIP_MISSING_TOOLS") == "1" {
						t.Skip(m.run + " not installed")
					}
					t.Fatalf("%s not found: install openmpi-bin and mpich", m.run)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				args := []string{"-n", fmt.Sprint(np)}
				if m.name == "openmpi" {
					args = append(args, "--oversubscribe")
				}
				args = append(args, os.Args[0], "-test.run", "^TestChildGather$", "-test.v")
				cmd := exec.CommandContext(ctx, m.run, args...)
				cmd.Env = append(os.Environ(), "IOPRED_MPI_CHILD=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
				cmd.WaitDelay = 5 * time.Second
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", m.run, err, out)
				}
				if want := fmt.Sprintf("gathered %d ranks with %s", np, m.want); !strings.Contains(string(out), want) {
					t.Fatalf("output lacks %q:\n%s", want, out)
				}
			})
		}
	}
}

// A library that cannot be loaded is a clear error that names it, not a
// crash: the plain binary runs where no MPI is installed.
func TestInitNamesMissingLibrary(t *testing.T) {
	t.Setenv("IOPRED_MPI_LIB", "/nonexistent/libmpi-iopred-test.so")
	w, err := Init()
	if w != nil || err == nil || !strings.Contains(err.Error(), "/nonexistent/libmpi-iopred-test.so") || !strings.Contains(err.Error(), "IOPRED_MPI_LIB") {
		t.Fatalf("Init: %v, %v", w, err)
	}
}

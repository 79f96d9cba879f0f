package main

import (
	"bytes"
	"flag"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"iopred/analyzer/job"
	"iopred/internal/mpi"
	"iopred/internal/msgcheck"
)

// mpiFlag defines --mpi, which spreads an analysis over the ranks of the
// MPI job the process runs in.
func mpiFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("mpi", false, "run as one rank of an MPI job (mpirun -n R iopred ... --mpi, or srun): the traces are split among the ranks, each reads its share on --jobs goroutines, rank 0 combines the partial results and prints the same output as one process; MPI is loaded only then (IOPRED_MPI_LIB names the library)")
}

// mpiRun is one rank's part in an analysis spread over an MPI job.
type mpiRun struct {
	w *mpi.World
}

// startMPI initialises MPI.
func startMPI() (*mpiRun, error) {
	w, err := mpi.Init()
	if err != nil {
		return nil, err
	}
	return &mpiRun{w: w}, nil
}

// share is the block of the n traces this rank reads.
func (m *mpiRun) share(n int) (lo, hi int) { return mpi.Block(n, m.w.Rank(), m.w.Size()) }

// root tells the rank that combines and prints.
func (m *mpiRun) root() bool { return m.w.Rank() == 0 }

// finish ends MPI.
func (m *mpiRun) finish() error { return m.w.Finalize() }

// envelope is what a rank sends to rank 0: its encoded parts, or why it
// has none (so that a rank that fails still takes part in the gather and
// no rank waits for it).
type envelope struct {
	Err   string   `msgpack:"err"`
	Parts [][]byte `msgpack:"parts"`
}

// gather sends this rank's parts (or err) to rank 0, which gets every
// rank's parts in rank order; the other ranks get nil. A rank's error
// becomes rank 0's, naming the rank.
func (m *mpiRun) gather(parts [][]byte, err error) ([][][]byte, error) {
	env := envelope{Parts: parts}
	if err != nil {
		env.Err, env.Parts = err.Error(), nil
	}
	b, encErr := msgpack.Marshal(&env)
	if encErr != nil {
		b, _ = msgpack.Marshal(&envelope{Err: encErr.Error()})
	}
	all, gerr := m.w.Gather(b)
	if gerr != nil {
		m.w.Abort(1)
		return nil, gerr
	}
	if !m.root() {
		return nil, nil
	}
	out := make([][][]byte, len(all))
	var firstErr error
	for r, b := range all {
		var e envelope
		if err := msgcheck.Check(b); err != nil {
			return nil, fmt.Errorf("MPI rank %d: %w", r, err)
		}
		if err := msgpack.NewDecoder(bytes.NewReader(b)).Decode(&e); err != nil {
			return nil, fmt.Errorf("MPI rank %d: %w", r, err)
		}
		if e.Err != "" && firstErr == nil {
			firstErr = fmt.Errorf("MPI rank %d: %s", r, e.Err)
		}
		out[r] = e.Parts
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// jobViewMPI is job.FromTracesWith spread over the ranks of an MPI job:
// each rank reads the partials of its share of the traces, rank 0 merges
// them (the other ranks get nil).
func jobViewMPI(m *mpiRun, traces []string, opt job.Options) (*job.Summary, []string, error) {
	plan, err := job.NewPlan(traces, opt)
	var parts [][]byte
	if err == nil {
		var b []byte
		b, err = plan.Read(m.share(len(traces))).Encode()
		parts = [][]byte{b}
	}
	all, err := m.gather(parts, err)
	if err != nil || !m.root() {
		return nil, nil, err
	}
	shares := make([]*job.Results, len(all))
	for r, ps := range all {
		if len(ps) != 1 {
			return nil, nil, fmt.Errorf("MPI rank %d sent %d parts, not 1", r, len(ps))
		}
		if shares[r], err = job.DecodeResults(ps[0]); err != nil {
			return nil, nil, fmt.Errorf("MPI rank %d: %w", r, err)
		}
		all[r] = nil
	}
	return plan.Summarize(shares)
}

//go:build !cgo

package mpi

import "errors"

// errNoCgo is what a binary built without cgo answers in the MPI mode: it
// cannot load a C library.
var errNoCgo = errors.New("mpi: this iopred was built without cgo (CGO_ENABLED=0) and cannot load MPI; rebuild it with cgo for --mpi")

// Libraries are the MPI libraries Init would try.
var Libraries = []string{"libmpi.so.40", "libmpich.so.12"}

// World is MPI_COMM_WORLD of a running job; without cgo there is none.
type World struct{}

// Init reports that MPI cannot be loaded without cgo.
func Init() (*World, error) { return nil, errNoCgo }

// Rank is this process's rank.
func (w *World) Rank() int { return 0 }

// Size is the number of ranks.
func (w *World) Size() int { return 1 }

// Implementation names the MPI library loaded.
func (w *World) Implementation() string { return "" }

// Gather is never reached without cgo.
func (w *World) Gather(b []byte) ([][]byte, error) { return nil, errNoCgo }

// Wait is never reached without cgo.
func (w *World) Wait() error { return errNoCgo }

// Decide is never reached without cgo.
func (w *World) Decide(v bool) (bool, error) { return false, errNoCgo }

// Finalize is never reached without cgo.
func (w *World) Finalize() error { return nil }

// Abort is never reached without cgo.
func (w *World) Abort(code int) {}

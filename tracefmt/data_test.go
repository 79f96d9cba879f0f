package tracefmt

import "testing"

// DataFlow counts every byte once: an MPI-IO data call's bytes on the call,
// not on the POSIX calls inside it (nor on those inside other MPI calls,
// which are the MPI library's own); a nonblocking call's on its
// completion, in the call's direction; outside MPI on the POSIX call.
func TestDataFlow(t *testing.T) {
	mpi := func(op string, seq, parent int64) *Event {
		return &Event{Layer: LayerMPIIO, Op: op, Seq: seq, Parent: parent}
	}
	posix := func(op string, parent int64) *Event { return &Event{Layer: LayerPOSIX, Op: op, Parent: parent} }
	steps := []struct {
		e    *Event
		want Direction
	}{
		{mpi("MPI_Init", 1, 0), NoData},
		{posix("read", 1), NoData}, // hwloc reading /sys inside MPI_Init
		{mpi("MPI_File_write_at", 2, 0), Write},
		{posix("pwrite", 2), NoData},
		{mpi("MPI_File_iread_at", 3, 0), NoData},
		{posix("pread", 3), NoData},
		{mpi("MPI_File_iwrite_at", 4, 0), NoData},
		{mpi("MPI_Waitall", 5, 3), Read},
		{mpi("MPI_Waitall", 6, 4), Write},
		{mpi("MPI_Waitall", 7, 3), NoData}, // already completed
		{mpi("MPI_Wait", 8, 99), NoData},   // a request that is not I/O
		{posix("write", 0), Write},
		{&Event{Layer: LayerStdio, Op: "fwrite"}, Write},
		{posix("close", 0), NoData},
		// A loop's repeated operation, remembered, and others between.
		{posix("pread", 0), Read},
		{posix("pread", 0), Read},
		{posix("pread", 9), NoData},
		{posix("pread", 0), Read},
		{posix("pwrite", 0), Write},
		{posix("pwrite", 0), Write},
		{posix("lseek", 0), NoData},
		{posix("lseek", 0), NoData},
		{posix("", 0), NoData},
		{mpi("MPI_File_iwrite_at", 10, 0), NoData},
		{mpi("MPI_File_iwrite_at", 11, 0), NoData},
		{mpi("MPI_Wait", 12, 10), Write},
		{mpi("MPI_File_read_at", 13, 0), Read},
		{mpi("MPI_File_read_at", 14, 0), Read},
		{mpi("MPI_Wait", 15, 11), Write},
	}
	var flow DataFlow
	for i, s := range steps {
		if got := flow.Of(s.e); got != s.want {
			t.Errorf("step %d (%s, seq %d, parent %d): direction %d, want %d", i, s.e.Op, s.e.Seq, s.e.Parent, got, s.want)
		}
	}
}

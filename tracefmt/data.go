package tracefmt

import "strings"

// Direction is which way an event moved application data.
type Direction int8

// The directions an event's data can take.
const (
	NoData Direction = iota // the event moved no application data of its own
	Read
	Write
)

// DataFlow tells, event by event in one trace's order, which events carry
// the application's own data, so that analyses count every byte once:
//   - a POSIX or stdio call made inside an MPI call (Parent set) moves that
//     call's bytes (or, in collective buffering, other ranks'), or the MPI
//     library's own (MPI_Init reading /sys), so it carries none of the
//     application's. (Whether the parent moved data cannot be told from
//     the stream: a long call's record can come after its children's.)
//   - a nonblocking MPI-IO call (MPI_File_iread_at, ...) starts the
//     transfer, and its completion (MPI_Wait*, MPI_Test* with the call as
//     Parent) carries the bytes and the offset, in the call's direction;
//   - every other read or write carries its own bytes.
//
// The zero value is ready to use; use one DataFlow per trace.
type DataFlow struct {
	pending map[int64]Direction // nonblocking calls by Seq, until completed
	// The latest operation named and its direction: a loop repeats its
	// call, and the name's two switches cost more than the comparison.
	lastOp  string
	lastDir Direction
}

// Of returns the direction of e's own data.
func (d *DataFlow) Of(e *Event) Direction {
	if e.Layer != LayerMPIIO {
		if e.Parent != 0 {
			return NoData
		}
		return d.direction(e.Op)
	}
	if strings.HasPrefix(e.Op, "MPI_File_i") && e.Seq != 0 {
		if dir := d.direction(e.Op); dir != NoData {
			if d.pending == nil {
				d.pending = make(map[int64]Direction)
			}
			d.pending[e.Seq] = dir
			return NoData
		}
	}
	if e.Parent != 0 && (strings.HasPrefix(e.Op, "MPI_Wait") || strings.HasPrefix(e.Op, "MPI_Test")) {
		dir, ok := d.pending[e.Parent]
		if !ok {
			return NoData
		}
		delete(d.pending, e.Parent)
		return dir
	}
	return d.direction(e.Op)
}

// direction is direction(op), remembered for the latest op.
func (d *DataFlow) direction(op string) Direction {
	if op != d.lastOp || op == "" {
		d.lastOp, d.lastDir = op, direction(op)
	}
	return d.lastDir
}

func direction(op string) Direction {
	switch {
	case IsRead(op):
		return Read
	case IsWrite(op):
		return Write
	}
	return NoData
}

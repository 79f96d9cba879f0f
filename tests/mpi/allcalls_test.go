package mpi

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"iopred/tracefmt"
)

// Offsets that the expectation cannot pin down exactly.
const (
	anyOffset = -100 // ranks race at the shared pointer
)

// wantEvent is one expected MPI-IO event of allcalls.c.
type wantEvent struct {
	op          string
	lo, hi      int64 // offset range (lo == hi: exact; anyOffset: unchecked)
	size, bytes int64
}

func exact(op string, off, size, bytes int64) wantEvent {
	return wantEvent{op, off, off, size, bytes}
}

// allcallsWant lists, in program order, the MPI-IO events rank r of
// allcalls.c (see its comment) must leave; np ranks.
func allcallsWant(r, np int64) []wantEvent {
	R := r * 1024
	no := tracefmt.NoOffset
	const T = 64
	ordered := func(op string, base, bytes int64) wantEvent {
		// the shared pointer read at entry: between the collective's start
		// and this rank's own start
		return wantEvent{op, base, base + T*r, T, bytes}
	}
	w := []wantEvent{
		exact("MPI_File_open", no, 0, 0),
		exact("MPI_File_set_size", no, 8192, 0),
		exact("MPI_File_preallocate", no, 8192, 0),
		exact("MPI_File_set_view", 0, 0, 0),
		exact("MPI_File_write_at", R, T, T),
		exact("MPI_File_read_at_all", R, T, T),
		exact("MPI_File_write_at_all_begin", R+64, T, 0),
		exact("MPI_File_write_at_all_end", R+64, T, T),
		exact("MPI_File_seek", R+128, 0, 0),
		exact("MPI_File_write", R+128, T, T),
		exact("MPI_File_write_all", R+192, T, T),
		exact("MPI_File_iwrite", R+256, T, 0),
		exact("MPI_Wait", R+256, T, T),
		exact("MPI_File_iwrite_all", R+320, T, 0),
		exact("MPI_Test", R+320, T, T),
		exact("MPI_File_write_all_begin", R+384, T, 0),
		exact("MPI_File_write_all_end", R+384, T, T),
		exact("MPI_File_iwrite_at", R+448, T, 0),
		exact("MPI_File_iwrite_at", R+512, T, 0),
		exact("MPI_Waitany", R+448, T, T),
		exact("MPI_Waitany", R+512, T, T),
		exact("MPI_File_iwrite_at_all", R+576, T, 0),
		exact("MPI_File_iread_at", R, T, 0),
		exact("MPI_Waitsome", R, T, T),
		exact("MPI_Waitsome", R+576, T, T),
		exact("MPI_File_iread_at_all", R+64, T, 0),
		exact("MPI_Testall", R+64, T, T),
		exact("MPI_File_seek", R+448, 0, 0),
		exact("MPI_File_iread", R+448, T, 0),
		exact("MPI_Testany", R+448, T, T),
		exact("MPI_File_iread_all", R+512, T, 0),
		exact("MPI_Testsome", R+512, T, T),
		exact("MPI_File_read", R+576, T, T),
		exact("MPI_File_read_all", R+640, T, T),
		exact("MPI_File_read_all_begin", R+704, T, 0),
		exact("MPI_File_read_all_end", R+704, T, T),
		exact("MPI_File_read_at", R, T, T),
		exact("MPI_File_seek_shared", 4096, 0, 0),
		exact("MPI_File_write_shared", 4096+T*r, T, T),
		exact("MPI_File_iwrite_shared", 4096+T*np+T*r, T, 0),
		exact("MPI_Wait", 4096+T*np+T*r, T, T),
		exact("MPI_File_seek_shared", 4352, 0, 0),
		ordered("MPI_File_write_ordered", 4352, T),
		exact("MPI_File_seek_shared", 4352, 0, 0),
		ordered("MPI_File_read_ordered_begin", 4352, 0),
		ordered("MPI_File_read_ordered_end", 4352, T),
		{"MPI_File_read_shared", anyOffset, anyOffset, T, T},
		exact("MPI_File_seek_shared", 4608, 0, 0),
		ordered("MPI_File_write_ordered_begin", 4608, 0),
		ordered("MPI_File_write_ordered_end", 4608, T),
		{"MPI_File_iread_shared", anyOffset, anyOffset, T, 0},
		{"MPI_Wait", anyOffset, anyOffset, T, T},
		exact("MPI_File_sync", no, 0, 0),
		exact("MPI_File_close", no, 0, 0),
	}
	if r == 0 {
		w = append(w, exact("MPI_File_delete", no, 0, 0))
	}
	return w
}

// sortCompletionRuns orders runs of consecutive events of one completion
// op by offset: which request a Waitany or Waitsome finishes first is up
// to the MPI library.
func sortCompletionRuns[T any](xs []T, op func(T) string, off func(T) int64) {
	for i := 0; i < len(xs); {
		j := i + 1
		for j < len(xs) && op(xs[j]) == op(xs[i]) && strings.HasPrefix(op(xs[i]), "MPI_Wait") {
			j++
		}
		sort.SliceStable(xs[i:j], func(a, b int) bool { return off(xs[i+a]) < off(xs[i+b]) })
		i = j
	}
}

// Every MPI-IO function iopred wraps, called once each by every rank of a
// two-rank job (allcalls.c), is recorded once, in order, with the byte
// offset its etype offset stands for (the view counts in ints), the size
// count x 4, the bytes moved (0 at an issue or a split begin, the status's
// count at the completion), and a completion or _end event whose parent is
// the call it completes. Under Open MPI and MPICH.
func TestAllCalls(t *testing.T) {
	lib := library(t)
	const np = 2
	for _, m := range impls {
		t.Run(m.name, func(t *testing.T) {
			need(t, m.cc, m.run)
			prog := compile(t, m.cc, "allcalls.c")
			data, traces := t.TempDir(), t.TempDir()
			out, err := mpirun(t, m, np, 2*time.Minute, []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + traces}, prog, data)
			if err != nil {
				t.Fatalf("job failed: %v\n%s", err, out)
			}
			trs := readTraces(t, traces, "allcalls")
			byRank(t, trs, np)
			for _, tr := range trs {
				r := int64(rank(tr))
				var got []*tracefmt.Event
				bySeq := map[int64]*tracefmt.Event{}
				for _, e := range tr.events {
					if e.Layer != tracefmt.LayerMPIIO {
						continue
					}
					bySeq[e.Seq] = e
					if e.Op != "MPI_Init" && e.Op != "MPI_Finalize" {
						got = append(got, e)
					}
				}
				want := allcallsWant(r, np)
				sortCompletionRuns(got, func(e *tracefmt.Event) string { return e.Op }, func(e *tracefmt.Event) int64 { return e.Offset })
				sortCompletionRuns(want, func(w wantEvent) string { return w.op }, func(w wantEvent) int64 { return w.lo })
				if len(got) != len(want) {
					var ops []string
					for _, e := range got {
						ops = append(ops, e.Op)
					}
					t.Fatalf("rank %d: %d MPI-IO events, want %d: %v", r, len(got), len(want), ops)
				}
				for i, w := range want {
					e := got[i]
					offOK := w.lo == anyOffset || (e.Offset >= w.lo && e.Offset <= w.hi)
					if e.Op != w.op || !offOK || e.Size != w.size || e.Bytes != w.bytes || e.Ret != 0 ||
						!strings.HasSuffix(e.Path, filepath.Join(filepath.Base(data), "all.dat")) {
						t.Errorf("rank %d event %d: %s at %d size %d bytes %d ret %d on %s; want %s at [%d,%d] size %d bytes %d",
							r, i, e.Op, e.Offset, e.Size, e.Bytes, e.Ret, e.Path, w.op, w.lo, w.hi, w.size, w.bytes)
						continue
					}
					completes := strings.HasPrefix(e.Op, "MPI_Wait") || strings.HasPrefix(e.Op, "MPI_Test") || strings.HasSuffix(e.Op, "_end")
					if completes != (e.Parent != 0) {
						t.Errorf("rank %d: %s has parent %d", r, e.Op, e.Parent)
						continue
					}
					if p := bySeq[e.Parent]; completes && (p == nil || p.Offset != e.Offset || p.Size != e.Size ||
						!(strings.HasPrefix(p.Op, "MPI_File_i") || strings.HasSuffix(p.Op, "_begin"))) {
						t.Errorf("rank %d: %s at %d completes %v, not its issue", r, e.Op, e.Offset, p)
					}
				}
			}
		})
	}
}

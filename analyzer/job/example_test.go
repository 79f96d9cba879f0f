package job_test

import (
	"fmt"

	"iopred/analyzer/job"
	"iopred/tracefmt"
)

// Two ranks write a shared file in an N-1 strided layout, 1 KiB each per
// 2 KiB row. Each builds its partial from its own events; the merged
// partial's summary has one global pattern for the whole file.
func ExampleMergeTree() {
	var parts []*job.Partial
	for rank := 0; rank < 2; rank++ {
		r := rank
		b := job.NewBuilder(tracefmt.Header{Program: "app", Rank: &r, StartUnixNs: 1_700_000_000e9})
		for row := int64(0); row < 8; row++ {
			t := row * 1_000_000
			b.Add(&tracefmt.Event{Layer: tracefmt.LayerMPIIO, Op: "MPI_File_write_at", Path: "/scratch/out",
				Offset: row*2048 + int64(rank)*1024, Size: 1024, Bytes: 1024, StartNs: t, EndNs: t + 1000})
		}
		parts = append(parts, b.Partial(rank, false, 0, 0))
	}
	merged, err := job.MergeTree(parts)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := job.Summarize(merged)
	f := s.Patterns[0]
	fmt.Printf("%d ranks, %d writes, %d bytes\n", s.Ranks, s.Counts.Writes, s.Counts.BytesWritten)
	fmt.Printf("%s %s: %d of %d requests in %d global pattern\n", f.Path, f.Kind, f.InGlobals, f.Requests, len(f.Globals))
	fmt.Println(f.Strings[0])
	// Output:
	// 2 ranks, 16 writes, 16384 bytes
	// /scratch/out write: 16 of 16 requests in 1 global pattern
	// id[]: [0 1] logical: [0,(2048)^8] length: [1024,(0)^8] physical: [0,(1024)^8]
}

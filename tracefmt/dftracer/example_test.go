package dftracer_test

import (
	"fmt"

	"iopred/tracefmt"
	_ "iopred/tracefmt/dftracer"
)

// Importing the package registers the format: tracefmt.Open reads a
// DFTracer file (plain or gzipped) as an iopred trace of its I/O calls.
func Example() {
	s, err := tracefmt.Open("testdata/app-1234.pfw.gz")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	h := s.Header()
	fmt.Printf("pid %d rank %d on %s: %v\n", h.PID, *h.Rank, h.Host, h.Args)
	s.Each(func(r tracefmt.Record) error {
		if e := r.Event; e != nil && e.Op == "pread64" {
			fmt.Printf("%s %s: %d bytes at %d, %d ns\n", e.Op, e.Path, e.Bytes, e.Offset, e.EndNs-e.StartNs)
		}
		return nil
	})
	// Output:
	// pid 1234 rank 2 on node07: [python3 train.py --epochs 2]
	// pread64 /data/train/img_0.npz: 1024 bytes at 65536, 25000 ns
}

package darshan_test

import (
	"fmt"
	"path/filepath"

	"iopred/tests/interop"
	"iopred/tracefmt"
	"iopred/tracefmt/darshan"
)

// Open reads a log whole: the job, the names, the counters and the DXT
// segments.
func ExampleOpen() {
	log, err := darshan.Open(filepath.Join(interop.Dir(), "darshan/darshan-logs/mpi-io-test-x86_64-3.4.7.darshan"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("format", log.Version, "by", log.Job.Metadata["lib_ver"], "with", log.Job.NProcs, "processes")
	for _, r := range log.Records {
		if r.Module == darshan.ModMPIIO {
			written, _ := r.Int("MPIIO_BYTES_WRITTEN")
			fmt.Printf("%s: %d bytes written by all ranks (rank %d)\n", filepath.Base(log.Path(r.ID)), written, r.Rank)
		}
	}
	// Output:
	// format 3.41 by 3.4.7 with 4 processes
	// mpi-io-test.tmp.dat: 67108864 bytes written by all ranks (rank -1)
}

// Importing the package registers the format: tracefmt.Discover lists a
// log's ranks and tracefmt.Open reads each as an iopred trace.
func ExampleFormat() {
	names, err := tracefmt.Discover(filepath.Join(interop.Dir(), "darshan/darshan-logs/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"))
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := tracefmt.Open(names[3])
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	events := 0
	s.Each(func(r tracefmt.Record) error {
		if e := r.Event; e != nil && e.Layer == tracefmt.LayerMPIIO {
			if events++; events == 1 {
				fmt.Printf("rank %d: %s of %d bytes at offset %d\n", *e.Rank, e.Op, e.Size, e.Offset)
			}
		}
		return nil
	})
	fmt.Println(len(names), "ranks;", events, "MPI-IO calls in rank 3")
	// Output:
	// rank 3: MPI_File_write_at of 16777216 bytes at offset 50331648
	// 32 ranks; 8 MPI-IO calls in rank 3
}

// The OSTs a job's files lie on, from the log's LUSTRE records: the
// footprint the server side otherwise infers.
func ExampleLog_OSTs() {
	l, err := darshan.Open(filepath.Join(interop.Dir(), "darshan", "pytokio", "sample.darshan"))
	if err != nil {
		fmt.Println(err)
		return
	}
	r := l.Lustre[0]
	fmt.Printf("%s: stripe size %d, %d stripes\n", filepath.Base(l.Path(r.ID)), r.StripeSize(), r.StripeCount())
	fmt.Println("job's OSTs:", l.OSTs())
	// Output:
	// vpicio.hdf5: stripe size 1048576, 24 stripes
	// job's OSTs: [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23]
}

package mpi_test

import (
	"fmt"

	"iopred/internal/mpi"
)

// Ten traces over three ranks: contiguous blocks in rank order, which rank
// 0 reassembles in the same order.
func ExampleBlock() {
	for r := range 3 {
		lo, hi := mpi.Block(10, r, 3)
		fmt.Printf("rank %d: traces %d to %d\n", r, lo, hi-1)
	}
	// Output:
	// rank 0: traces 0 to 2
	// rank 1: traces 3 to 5
	// rank 2: traces 6 to 9
}

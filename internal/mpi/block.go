package mpi

// Block returns the half-open range [lo, hi) of n items that rank takes
// of size ranks: contiguous blocks, in rank order, of sizes that differ by
// at most one.
func Block(n, rank, size int) (lo, hi int) {
	return rank * n / size, (rank + 1) * n / size
}

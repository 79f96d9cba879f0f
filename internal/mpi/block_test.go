package mpi

import "testing"

func TestBlock(t *testing.T) {
	for _, c := range []struct{ n, size int }{{0, 1}, {1, 4}, {7, 2}, {10, 4}, {4096, 3}, {5, 5}} {
		next := 0
		for r := range c.size {
			lo, hi := Block(c.n, r, c.size)
			if lo != next || hi < lo || hi-lo > c.n/c.size+1 {
				t.Fatalf("Block(%d, %d, %d) = [%d, %d): want contiguous from %d, near %d items", c.n, r, c.size, lo, hi, next, c.n/c.size)
			}
			next = hi
		}
		if next != c.n {
			t.Fatalf("Block(%d, *, %d) covers %d items", c.n, c.size, next)
		}
	}
}

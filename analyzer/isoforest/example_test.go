package isoforest_test

import (
	"fmt"

	"iopred/analyzer/isoforest"
)

// A point far from a tight cluster is isolated in few splits: its score
// is the lowest.
func Example() {
	pts := [][]float64{{0, 0}, {0.1, 0}, {0, 0.1}, {0.1, 0.1}, {0.05, 0.05}, {0.02, 0.08}, {5, 5}}
	s := isoforest.Fit(pts, isoforest.Options{Seed: 1}).ScoreSamples(pts)
	low := 0
	for i := range s {
		if s[i] < s[low] {
			low = i
		}
	}
	fmt.Println("most abnormal:", pts[low])
	// Output: most abnormal: [5 5]
}

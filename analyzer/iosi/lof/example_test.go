package lof_test

import (
	"fmt"

	"iopred/analyzer/iosi/lof"
)

// Run time and I/O volume of six runs: the one that ran long and moved
// much more stands out.
func ExampleScores() {
	runs := [][]float64{{10, 5}, {10.5, 5.2}, {9.8, 4.9}, {10.2, 5.1}, {10.1, 4.8}, {16, 9}}
	s, err := lof.Scores(runs, 3)
	if err != nil {
		panic(err)
	}
	fmt.Println(lof.Outliers(s, 1.5))
	// Output: [false false false false false true]
}

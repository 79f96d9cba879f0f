package pattern_test

import (
	"fmt"

	"iopred/predictor/pattern"
)

// The offsets of the paper's Figure 8 and their patterns.
func ExampleDetect() {
	units := pattern.Detect([]int64{0, 3, 7, 14, 17, 21, 28, 31, 35, 42, 46, 50, 54, 58}, 3)
	fmt.Println(pattern.Format(units))
	// Output: [0,(3,4,7)^3], [42,(4)^4]
}

// Predicting the next offsets from the current pattern (section 4.2).
func ExampleStream() {
	s := pattern.NewStream(4)
	for _, off := range []int64{0, 3, 7, 14, 17, 21, 28} {
		s.Add(off, 1)
	}
	fmt.Println(s.Certain(), s.Predict(3))
	// Output: true [31 35 42]
}

// Looking an offset up in a compressed index without expanding it.
func ExampleEntry_Lookup() {
	logical := []int64{0, 100, 200, 300}
	length := []int64{10, 10, 10, 10}
	physical := []int64{0, 10, 20, 30}
	idx, _ := pattern.BuildIndex(5, logical, length, physical, 0)
	h, ok := idx[0].Lookup(205)
	fmt.Println(len(idx), ok, h.Pos, h.Physical, h.Length, h.ID)
	// Output: 1 true 2 25 5 5
}

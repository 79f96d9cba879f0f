package ordered_test

import (
	"fmt"
	"strings"

	"iopred/internal/ordered"
)

// Each hands the results back in order, whatever goroutine finished first.
func ExampleEach() {
	words := []string{"open", "pwrite", "fsync", "close"}
	ordered.Each(len(words), 3, func(i int) string {
		return strings.ToUpper(words[i])
	}, func(i int, w string) {
		fmt.Println(i, w)
	})
	// Output:
	// 0 OPEN
	// 1 PWRITE
	// 2 FSYNC
	// 3 CLOSE
}

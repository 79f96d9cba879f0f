package centersim

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSeeds reads a list of scenario seeds as the evaluations take it
// from IOPRED_DRIFT_SEEDS: comma-separated seeds and inclusive ranges,
// mixed ("7,8,9", "1001-1012", "101-106,910"). A field that is neither is
// an error naming it, so that a mistyped list never runs fewer seeds than
// asked without saying so.
func ParseSeeds(list string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		b := a
		if err == nil && isRange {
			b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
		}
		if err != nil || b < a {
			return nil, fmt.Errorf("seed list %q: %q is not a seed or a range of seeds", list, f)
		}
		if b-a >= 1<<20 {
			return nil, fmt.Errorf("seed list %q: the range %q holds more than 1,048,576 seeds", list, f)
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	return out, nil
}

package ordered

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// Map and Each give fn's results in index order whatever the number of
// goroutines and however long each piece takes; Each never has more
// than 2*jobs results computed and not yet consumed.
func TestOrderAndBound(t *testing.T) {
	for _, tc := range []struct{ n, jobs int }{{0, 4}, {1, 4}, {7, 1}, {50, 2}, {50, 8}, {3, 16}} {
		t.Run(fmt.Sprintf("n%d_jobs%d", tc.n, tc.jobs), func(t *testing.T) {
			slow := func(i int) int {
				if i%3 == 0 {
					time.Sleep(time.Duration(i%5) * 100 * time.Microsecond)
				}
				return i * i
			}
			want := make([]int, tc.n)
			for i := range want {
				want[i] = i * i
			}
			if got := Map(tc.n, tc.jobs, slow); !slices.Equal(got, want) {
				t.Errorf("Map: %v, want %v", got, want)
			}
			var computed, consumed, most atomic.Int64
			var got []int
			Each(tc.n, tc.jobs, func(i int) int {
				v := slow(i)
				if w := computed.Add(1) - consumed.Load(); w > most.Load() {
					most.Store(w)
				}
				return v
			}, func(i, v int) {
				if i != len(got) {
					t.Fatalf("consume(%d) after %d results", i, len(got))
				}
				got = append(got, v)
				consumed.Add(1)
			})
			if !slices.Equal(got, want) {
				t.Errorf("Each: %v, want %v", got, want)
			}
			if bound := int64(max(2*tc.jobs, 1)); most.Load() > bound {
				t.Errorf("%d results waited at once, want at most %d", most.Load(), bound)
			}
		})
	}
}

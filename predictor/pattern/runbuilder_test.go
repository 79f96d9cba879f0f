package pattern

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// The builder, fed one entry at a time, finds exactly the runs Runs finds
// over the whole slice: on strided, irregular and mixed-length streams.
func TestRunBuilderMatchesRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	gens := map[string]func(i int) (int64, int64){
		"strided":  func(i int) (int64, int64) { return int64(i) * 4096 * 8, 4096 },
		"random":   func(i int) (int64, int64) { return rng.Int64N(1 << 20), 512 * (1 + rng.Int64N(3)) },
		"twolevel": func(i int) (int64, int64) { return int64(i/10)*1<<20 + int64(i%10)*64, 64 },
		"lengths":  func(i int) (int64, int64) { return int64(i) * 100, int64(1 + i%3) },
		// Rows of 4 in a 2-D walk, whose runs are held as groups; every
		// 7th row moved, which starts a new group.
		"rows": func(i int) (int64, int64) { return int64(i/4)*1<<18 + int64(i%4)*4096 + int64(i/28)*3, 4096 },
	}
	for name, gen := range gens {
		t.Run(name, func(t *testing.T) {
			for _, n := range []int{0, 1, 2, 3, 57, 1000} {
				var logical, length, physical []int64
				b := NewRunBuilder(5, 0)
				var moved int64
				for i := 0; i < n; i++ {
					off, l := gen(i)
					logical, length, physical = append(logical, off), append(length, l), append(physical, moved)
					b.Add(off, l, moved)
					moved += l
				}
				want := Runs(5, logical, length, physical)
				if got := b.Runs(); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("n=%d: builder runs\n%v\nwant\n%v", n, got, want)
				}
				g := b.FinishGroups()
				if got := g.Runs(); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("n=%d: FinishGroups\n%v\nwant\n%v", n, got, want)
				}
				if len(b.groups) != 0 || len(b.Runs()) != 0 {
					t.Fatalf("n=%d: the builder holds runs after FinishGroups", n)
				}
			}
		})
	}
}

// Past its bound the builder keeps the first runs and counts the entries
// of the others.
func TestRunBuilderBound(t *testing.T) {
	b := NewRunBuilder(0, 2)
	for _, e := range [][2]int64{{0, 8}, {100, 16}, {300, 32}, {400, 32}, {1000, 4}} {
		b.Add(e[0], e[1], 0)
	}
	runs := b.Runs()
	if len(runs) != 2 || runs[0].Logical != 0 || runs[1].Logical != 100 {
		t.Fatalf("runs %v, want the first two", runs)
	}
	if got := b.Overflow(); got != 3 {
		t.Fatalf("overflow %d, want 3 entries", got)
	}
}

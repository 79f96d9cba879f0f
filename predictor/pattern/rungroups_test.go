package pattern

import (
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

// groupsOf feeds each id's raw entries to a RunBuilder, in id order, and
// returns the groups and the runs Runs gives, in the same order.
func groupsOf(raw map[int64][3][]int64) (RunGroups, []Run) {
	ids := make([]int64, 0, len(raw))
	for id := range raw {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var g RunGroups
	var runs []Run
	for _, id := range ids {
		e := raw[id]
		b := NewRunBuilder(id, 0)
		for i := range e[0] {
			b.Add(e[0][i], e[1][i], e[2][i])
		}
		g.Append(b.FinishGroups())
		runs = append(runs, Runs(id, e[0], e[1], e[2])...)
	}
	return g, runs
}

// MergeGroups over a builder's groups gives Merge's globals and rest (in
// Merge's order) for the layouts of Figure 10, N-1 strided writes of
// several ids, 2-D walks whose rows come back (runs at equal offsets),
// backward walks and random entries; and EncodedSizeWith counts what
// EncodedSize counts with the rest held.
func TestMergeGroupsMatchesMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	cases := map[string]map[int64][3][]int64{"figure 10": figure10()}
	add := func(raw map[int64][3][]int64, id, off, length int64) {
		e := raw[id]
		var phys int64
		if n := len(e[0]); n > 0 {
			phys = e[2][n-1] + e[1][n-1]
		}
		e[0], e[1], e[2] = append(e[0], off), append(e[1], length), append(e[2], phys)
		raw[id] = e
	}
	nn := map[int64][3][]int64{}
	for seg := int64(0); seg < 40; seg++ {
		for id := int64(0); id < 4; id++ {
			for j := int64(0); j < 8; j++ {
				add(nn, id, seg*4*8*4096+id*8*4096+j*4096, 4096)
			}
		}
	}
	cases["N-1 strided"] = nn
	walk := map[int64][3][]int64{}
	for it := int64(0); it < 300; it++ {
		for j := int64(0); j < 16; j++ {
			add(walk, 0, (it%8)<<20+(j/4)<<18+(j%4)<<12, 4096)
		}
		add(walk, 1, 1<<30-it*8192, 512)
	}
	cases["2-D walk and backward"] = walk
	for trial := 0; trial < 50; trial++ {
		raw := map[int64][3][]int64{}
		for i := 0; i < 400; i++ {
			id := int64(rng.IntN(3))
			if rng.IntN(4) == 0 {
				add(raw, id, rng.Int64N(64)*512, 512*(1+rng.Int64N(2)))
			} else {
				n := int64(len(raw[id][0]))
				add(raw, id, (n/5)*8192+(n%5)*1024+id*100000, 1024)
			}
		}
		cases[string(rune('a'+trial%26))+"random"+string(rune('0'+trial/26))] = raw
	}
	for name, raw := range cases {
		g, runs := groupsOf(raw)
		if !reflect.DeepEqual(g.Runs(), runs) || g.Len() != len(runs) {
			t.Fatalf("%s: the groups hold other runs than Runs gives", name)
		}
		wantG, wantRest := Merge(runs)
		var gotRest []Run
		var size RunsSize
		gotG := MergeGroups(g, func(r Run) { gotRest = append(gotRest, r); size.Add(r) })
		if !reflect.DeepEqual(gotG, wantG) || !reflect.DeepEqual(gotRest, wantRest) {
			t.Fatalf("%s: MergeGroups %d globals, %d rest; Merge %d, %d", name, len(gotG), len(gotRest), len(wantG), len(wantRest))
		}
		want, err := (&Index{Globals: wantG, Runs: wantRest}).EncodedSize()
		if err != nil {
			t.Fatal(err)
		}
		if got, err := (&Index{Globals: gotG}).EncodedSizeWith(&size); err != nil || got != want {
			t.Fatalf("%s: EncodedSizeWith %d (%v), EncodedSize %d", name, got, err, want)
		}
	}
}

// EncodedSizeWith is exact where the runs' array header grows: 0, 1, 15,
// 16, 65535 and 65536 runs.
func TestEncodedSizeWith(t *testing.T) {
	for _, n := range []int{0, 1, 15, 16, 65535, 65536} {
		x := Index{Globals: []Global{{IDs: []int64{1, 2}, Logical: Unit{Init: 0, Deltas: []int64{8}, Reps: 2}}}}
		var size RunsSize
		for i := 0; i < n; i++ {
			r := Run{ID: int64(i % 3), Logical: int64(i) * 77, Stride: 8, Count: int64(1 + i%300), Length: 4, Physical: int64(i), PhysStride: 4}
			x.Runs = append(x.Runs, r)
			size.Add(r)
		}
		want, err := x.EncodedSize()
		if err != nil {
			t.Fatal(err)
		}
		x.Runs = nil
		if got, err := x.EncodedSizeWith(&size); err != nil || got != want {
			t.Errorf("%d runs: EncodedSizeWith %d (%v), EncodedSize %d", n, got, err, want)
		}
	}
}

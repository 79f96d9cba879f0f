package pattern

import (
	"fmt"
	"sort"
)

// Run is a simple strided local pattern of one id: Count raw entries of the
// same Length whose logical offsets advance by Stride and physical offsets by
// PhysStride. It is the building block of global patterns.
type Run struct {
	//lint:ignore U1000 tells msgpack to encode the fields by position, without keys
	_msgpack   struct{} `msgpack:",as_array"`
	ID         int64    `msgpack:"id" json:"id"`
	Logical    int64    `msgpack:"l" json:"logical"`
	Stride     int64    `msgpack:"s" json:"stride"`
	Count      int64    `msgpack:"c" json:"count"`
	Length     int64    `msgpack:"n" json:"length"`
	Physical   int64    `msgpack:"p" json:"physical"`
	PhysStride int64    `msgpack:"ps" json:"phys_stride"`
}

// Runs splits the raw entries of one id into maximal strided runs, greedily
// from the start. A run of one entry gets Stride and PhysStride equal to its
// length, as if it were the first write of a contiguous run.
func Runs(id int64, logical, length, physical []int64) []Run {
	var out []Run
	for i := 0; i < len(logical) && i < len(length) && i < len(physical); {
		r := Run{ID: id, Logical: logical[i], Count: 1, Length: length[i], Physical: physical[i],
			Stride: length[i], PhysStride: length[i]}
		j := i + 1
		if j < len(logical) && j < len(length) && j < len(physical) && length[j] == r.Length {
			r.Stride = logical[j] - logical[i]
			r.PhysStride = physical[j] - physical[i]
			for j < len(logical) && j < len(length) && j < len(physical) &&
				length[j] == r.Length &&
				logical[j]-logical[j-1] == r.Stride &&
				physical[j]-physical[j-1] == r.PhysStride {
				j++
			}
			r.Count = int64(j - i)
		}
		out = append(out, r)
		i = j
	}
	return out
}

// Global is a global pattern (Figure 11): the local pattern of one id
// (logical, length and physical units) and the ids whose copies of it tile
// the file. Within a global stride of Stride*Reps bytes, Stride/Length ids
// interleave their entries row by row; the next global stride repeats the
// layout with the next ids (Figure 10).
type Global struct {
	//lint:ignore U1000 tells msgpack to encode the fields by position, without keys
	_msgpack struct{} `msgpack:",as_array"`
	IDs      []int64  `msgpack:"ids" json:"ids"`
	Logical  Unit     `msgpack:"l" json:"logical"`  // [i,(stride)^rows]
	Length   Unit     `msgpack:"n" json:"length"`   // [length,(0)^rows]
	Physical Unit     `msgpack:"p" json:"physical"` // [p0,(physstride)^rows]

	ordinal []int64 // ordinal[p]: how many times IDs[p] occurs in IDs[:p]
}

// Len is the number of raw entries the global pattern stands for.
func (g *Global) Len() int64 { return int64(len(g.IDs)) * g.Logical.Reps }

// String prints the global pattern as Figure 12 does.
func (g *Global) String() string {
	return fmt.Sprintf("id[]: %v logical: %s length: %s physical: %s", g.IDs, g.Logical, g.Length, g.Physical)
}

func (g *Global) stride() int64 { return g.Logical.Deltas[0] }
func (g *Global) length() int64 { return g.Length.Init }
func (g *Global) cols() int64   { return g.stride() / g.length() }

func (g *Global) index() {
	seen := map[int64]int64{}
	g.ordinal = make([]int64, len(g.IDs))
	for p, id := range g.IDs {
		g.ordinal[p] = seen[id]
		seen[id]++
	}
}

// Merge sorts the runs by logical offset and merges neighbours that abut in
// the layout of a global pattern (section 2.4): same stride, count, length
// and physical stride; within a global stride the runs follow one another
// Length bytes apart until they fill the stride; the next global stride
// starts Stride*Count bytes after the first; and each id's physical offsets
// continue where its previous run in the pattern ended. Runs that join no
// other come back in rest.
func Merge(runs []Run) (globals []Global, rest []Run) {
	sorted := append([]Run(nil), runs...)
	SortRuns(sorted)
	return MergeSorted(sorted)
}

// SortRuns sorts runs in place into the order Merge works in: by logical
// offset, then id, runs that tie keeping their order.
func SortRuns(runs []Run) {
	if runsSorted(runs) {
		return
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if runs[i].Logical != runs[j].Logical {
			return runs[i].Logical < runs[j].Logical
		}
		return runs[i].ID < runs[j].ID
	})
}

func runsSorted(runs []Run) bool {
	for i := 1; i < len(runs); i++ {
		a, b := &runs[i-1], &runs[i]
		if b.Logical < a.Logical || b.Logical == a.Logical && b.ID < a.ID {
			return false
		}
	}
	return true
}

// MergeSorted is Merge over runs already in its order (SortRuns): the
// runs of a stream that moves forward through its file, or runs sorted
// in place by their owner, merged without the copy Merge makes. rest
// reuses the storage of sorted, which the caller gives up.
func MergeSorted(sorted []Run) (globals []Global, rest []Run) {
	rest = sorted[:0] // rest's k-th run comes from sorted[i] with i >= k
	for i := 0; i < len(sorted); {
		first := sorted[i]
		j := i + 1
		if first.Length > 0 && first.Stride > 0 && first.Stride%first.Length == 0 {
			cols := first.Stride / first.Length
			gsize := first.Stride * first.Count
			seen := map[int64]int64{first.ID: 1}
			for ; j < len(sorted); j++ {
				r, k := sorted[j], int64(j-i)
				want := first.Logical + (k/cols)*gsize + (k%cols)*first.Length
				if r.Stride != first.Stride || r.Count != first.Count || r.Length != first.Length ||
					r.PhysStride != first.PhysStride || r.Logical != want ||
					r.Physical != first.Physical+first.PhysStride*first.Count*seen[r.ID] {
					break
				}
				seen[r.ID]++
			}
		}
		if j-i < 2 {
			rest = append(rest, first)
			i++
			continue
		}
		g := Global{
			Logical:  Unit{Init: first.Logical, Deltas: []int64{first.Stride}, Reps: first.Count},
			Length:   Unit{Init: first.Length, Deltas: []int64{0}, Reps: first.Count},
			Physical: Unit{Init: first.Physical, Deltas: []int64{first.PhysStride}, Reps: first.Count},
		}
		for _, r := range sorted[i:j] {
			g.IDs = append(g.IDs, r.ID)
		}
		g.index()
		globals = append(globals, g)
		i = j
	}
	if len(rest) == 0 {
		rest = nil // as Merge always gave
	}
	return globals, rest
}

// Lookup finds the entry holding byte off (Algorithm 3): the global stride
// it falls in, its row and column there, hence the position p in IDs, the
// chunk id, and the physical offset from how many runs of that id come
// before p (counted once when the pattern is built, so the lookup is O(1)).
func (g *Global) Lookup(off int64) (Hit, bool) {
	if len(g.IDs) == 0 || off < g.Logical.Init || g.Logical.Reps <= 0 {
		return Hit{}, false
	}
	if g.ordinal == nil {
		g.index()
	}
	s, l := g.stride(), g.length()
	r := off - g.Logical.Init
	gsize := s * g.Logical.Reps
	gsID, gsRem := r/gsize, r%gsize
	row := gsRem / s
	col := (gsRem % s) / l
	p := (s/l)*gsID + col
	if p >= int64(len(g.IDs)) {
		return Hit{}, false
	}
	start := g.Logical.Init + gsID*gsize + row*s + col*l
	shift := off - start
	phys := g.Physical.Init + g.Physical.Deltas[0]*g.Physical.Reps*g.ordinal[p] + g.Physical.Deltas[0]*row
	return Hit{Pos: row, Offset: start, Length: l - shift, Physical: phys + shift, ID: g.IDs[p]}, true
}

// Runs returns the local runs the global pattern stands for, in logical
// order.
func (g *Global) Runs() []Run {
	if g.ordinal == nil {
		g.index()
	}
	out := make([]Run, len(g.IDs))
	cols, gsize := g.cols(), g.stride()*g.Logical.Reps
	for p, id := range g.IDs {
		k := int64(p)
		out[p] = Run{ID: id, Logical: g.Logical.Init + (k/cols)*gsize + (k%cols)*g.length(),
			Stride: g.stride(), Count: g.Logical.Reps, Length: g.length(),
			Physical:   g.Physical.Init + g.Physical.Deltas[0]*g.Logical.Reps*g.ordinal[p],
			PhysStride: g.Physical.Deltas[0]}
	}
	return out
}

func (g *Global) validate() error {
	switch {
	case len(g.IDs) == 0:
		return fmt.Errorf("no ids")
	case len(g.Logical.Deltas) != 1 || len(g.Length.Deltas) != 1 || len(g.Physical.Deltas) != 1:
		return fmt.Errorf("logical, length and physical must each have one delta")
	case g.Logical.Reps <= 0 || g.Logical.Reps > maxReps || g.Length.Reps != g.Logical.Reps || g.Physical.Reps != g.Logical.Reps:
		return fmt.Errorf("repetitions %d, %d, %d must be equal and in 1..%d", g.Logical.Reps, g.Length.Reps, g.Physical.Reps, int64(maxReps))
	case g.Length.Init <= 0 || g.Length.Deltas[0] != 0:
		return fmt.Errorf("length must be a positive constant")
	case g.Logical.Deltas[0] <= 0 || g.Logical.Deltas[0]%g.Length.Init != 0:
		return fmt.Errorf("stride %d must be a positive multiple of the length %d", g.Logical.Deltas[0], g.Length.Init)
	case g.Logical.Deltas[0] > 1<<50 || g.Logical.Reps > (1<<60)/g.Logical.Deltas[0] ||
		g.Physical.Deltas[0] > 1<<50 || g.Physical.Deltas[0] < -(1<<50) || len(g.IDs) > 1<<30:
		return fmt.Errorf("stride %d times %d repetitions too large", g.Logical.Deltas[0], g.Logical.Reps)
	}
	return nil
}

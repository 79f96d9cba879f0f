package pattern

import (
	"container/heap"

	"github.com/vmihailenco/msgpack/v5"
)

// RunGroups holds runs in a RunBuilder's compact form: runs of one shape
// at constant logical and physical distances as one group. The zero value
// is empty.
type RunGroups struct {
	groups []runGroup
	n      int
}

// Len is the number of runs.
func (g *RunGroups) Len() int { return g.n }

// Append adds o's runs after g's.
func (g *RunGroups) Append(o RunGroups) {
	g.groups = append(g.groups, o.groups...)
	g.n += o.n
}

// Runs returns the runs, in the order they were added.
func (g *RunGroups) Runs() []Run { return appendRuns(make([]Run, 0, g.n), g.groups) }

// FinishGroups returns the runs (the one still growing included) as
// groups and empties the builder: Finish without making the runs.
func (b *RunBuilder) FinishGroups() RunGroups {
	b.close()
	g := RunGroups{groups: b.groups, n: b.nruns}
	b.groups, b.nruns, b.cur = nil, 0, Run{}
	return g
}

// runCursor walks one group in Merge's order (logical offset, then id,
// then the order the runs were added).
type runCursor struct {
	g    *runGroup
	i    int   // runs of the group taken
	base int   // position of the group's first run in the order added
	run  Run   // the next run
	seq  int   // its position in the order added
	step int64 // +1 or -1 through the group
}

func (c *runCursor) load() {
	k := int64(c.i)
	if c.step < 0 {
		k = int64(c.g.n - 1 - c.i)
	}
	c.run = c.g.first
	c.run.Logical += k * c.g.dLog
	c.run.Physical += k * c.g.dPhys
	c.seq = c.base + int(k)
}

type cursorHeap []*runCursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	a, b := &h[i].run, &h[j].run
	if a.Logical != b.Logical {
		return a.Logical < b.Logical
	}
	if a.ID != b.ID {
		return a.ID < b.ID
	}
	return h[i].seq < h[j].seq
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*runCursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sortedRuns yields the runs of g in Merge's order, one at a time, with
// one cursor per group: a k-way merge of the groups, each of which is
// already in order (forwards or backwards).
type sortedRuns struct{ h cursorHeap }

func newSortedRuns(g *RunGroups) *sortedRuns {
	s := &sortedRuns{}
	base := 0
	for i := range g.groups {
		gr := &g.groups[i]
		c := &runCursor{g: gr, base: base, step: 1}
		if gr.dLog < 0 {
			c.step = -1
		}
		c.load()
		s.h = append(s.h, c)
		base += gr.n
	}
	heap.Init(&s.h)
	return s
}

func (s *sortedRuns) next() (Run, bool) {
	if len(s.h) == 0 {
		return Run{}, false
	}
	c := s.h[0]
	r := c.run
	if c.i++; c.i < c.g.n {
		c.load()
		heap.Fix(&s.h, 0)
	} else {
		heap.Pop(&s.h)
	}
	return r, true
}

// MergeGroups is Merge over the runs of g without making them all: it
// walks them in Merge's order and holds only the runs of the global
// pattern it is trying; the runs that join none go to rest, in Merge's
// order. It returns Merge's globals.
func MergeGroups(g RunGroups, rest func(Run)) []Global {
	src := newSortedRuns(&g)
	var buf []Run // runs from position i on, read ahead
	at := func(k int) (Run, bool) {
		for len(buf) <= k {
			r, ok := src.next()
			if !ok {
				return Run{}, false
			}
			buf = append(buf, r)
		}
		return buf[k], true
	}
	var globals []Global
	for {
		first, ok := at(0)
		if !ok {
			return globals
		}
		j := 1
		if first.Length > 0 && first.Stride > 0 && first.Stride%first.Length == 0 {
			cols := first.Stride / first.Length
			gsize := first.Stride * first.Count
			seen := map[int64]int64{first.ID: 1}
			for ; ; j++ {
				r, ok := at(j)
				if !ok {
					break
				}
				k := int64(j)
				want := first.Logical + (k/cols)*gsize + (k%cols)*first.Length
				if r.Stride != first.Stride || r.Count != first.Count || r.Length != first.Length ||
					r.PhysStride != first.PhysStride || r.Logical != want ||
					r.Physical != first.Physical+first.PhysStride*first.Count*seen[r.ID] {
					break
				}
				seen[r.ID]++
			}
		}
		if j < 2 {
			rest(first)
			buf = buf[1:]
			if len(buf) == 0 {
				buf = nil // let the storage go rather than creep along it
			}
			continue
		}
		gl := Global{
			Logical:  Unit{Init: first.Logical, Deltas: []int64{first.Stride}, Reps: first.Count},
			Length:   Unit{Init: first.Length, Deltas: []int64{0}, Reps: first.Count},
			Physical: Unit{Init: first.Physical, Deltas: []int64{first.PhysStride}, Reps: first.Count},
		}
		for _, r := range buf[:j] {
			gl.IDs = append(gl.IDs, r.ID)
		}
		gl.index()
		globals = append(globals, gl)
		buf = append([]Run(nil), buf[j:]...)
	}
}

// RunsSize counts the runs given to it and the bytes of their msgpack
// form, for EncodedSizeWith.
type RunsSize struct {
	n     int
	bytes byteCounter
	enc   *msgpack.Encoder
}

// Add counts one run.
func (s *RunsSize) Add(r Run) {
	if s.enc == nil {
		s.enc = msgpack.NewEncoder(&s.bytes)
		s.enc.UseCompactInts(true) // as Marshal
	}
	s.n++
	_ = s.enc.Encode(&r) // a counter takes every byte
}

// EncodedSizeWith is the EncodedSize of x with the runs s counted as its
// Runs (x.Runs must be empty): the size of an index whose runs are never
// all held.
func (x *Index) EncodedSizeWith(s *RunsSize) (int, error) {
	if len(x.Runs) > 0 {
		return 0, errRunsSet
	}
	base, err := x.EncodedSize()
	if err != nil || s.n == 0 {
		return base, err
	}
	// The key "r" (a fixstr of one byte), the array's header, its runs;
	// the map's header stays one byte for up to 15 fields.
	header := 1
	switch {
	case s.n > 65535:
		header = 5
	case s.n > 15:
		header = 3
	}
	return base + 2 + header + int(s.bytes), nil
}

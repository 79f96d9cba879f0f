package pattern

// RunBuilder splits a stream of raw entries of one id into the same
// maximal strided runs as Runs, one entry at a time, so that a process can
// keep its runs without keeping its entries. It holds at most Max finished
// runs; entries of later runs are counted in Overflow instead. Finished
// runs of one shape that follow one another at constant logical and
// physical distances (the rows of a 2-D walk) are held as one group, so
// its memory follows the shapes, not the rows.
//
// The zero value is not ready: use NewRunBuilder.
type RunBuilder struct {
	id       int64
	max      int
	cur      Run
	lastLog  int64 // logical offset of the current run's last entry
	lastPhys int64
	groups   []runGroup
	nruns    int // finished runs held, in all groups
	overflow int64
}

// runGroup is n runs: first, and copies of it moved by i*dLog logical
// and i*dPhys physical bytes.
type runGroup struct {
	first       Run
	dLog, dPhys int64
	n           int
}

func (g *runGroup) add(r Run) bool {
	f := &g.first
	if r.ID != f.ID || r.Stride != f.Stride || r.Count != f.Count || r.Length != f.Length || r.PhysStride != f.PhysStride {
		return false
	}
	if g.n == 1 {
		g.dLog, g.dPhys = r.Logical-f.Logical, r.Physical-f.Physical
	} else if r.Logical != f.Logical+int64(g.n)*g.dLog || r.Physical != f.Physical+int64(g.n)*g.dPhys {
		return false
	}
	g.n++
	return true
}

// appendRuns appends the runs of the groups to dst.
func appendRuns(dst []Run, groups []runGroup) []Run {
	for _, g := range groups {
		r := g.first
		for i := 0; i < g.n; i++ {
			dst = append(dst, r)
			r.Logical += g.dLog
			r.Physical += g.dPhys
		}
	}
	return dst
}

// NewRunBuilder returns a builder for the entries of id that keeps at most
// max runs (max <= 0: no bound).
func NewRunBuilder(id int64, max int) *RunBuilder {
	return &RunBuilder{id: id, max: max}
}

// Add appends one entry: its logical offset, length and physical offset.
func (b *RunBuilder) Add(logical, length, physical int64) {
	c := &b.cur
	switch {
	case c.Count == 0:
	case c.Count == 1 && length == c.Length:
		c.Stride, c.PhysStride = logical-c.Logical, physical-c.Physical
		c.Count, b.lastLog, b.lastPhys = 2, logical, physical
		return
	case c.Count >= 2 && length == c.Length && logical-b.lastLog == c.Stride && physical-b.lastPhys == c.PhysStride:
		c.Count++
		b.lastLog, b.lastPhys = logical, physical
		return
	default:
		b.close()
	}
	*c = Run{ID: b.id, Logical: logical, Count: 1, Length: length, Physical: physical, Stride: length, PhysStride: length}
	b.lastLog, b.lastPhys = logical, physical
}

func (b *RunBuilder) close() {
	if b.cur.Count == 0 {
		return
	}
	if b.max > 0 && b.nruns >= b.max {
		b.overflow += b.cur.Count
	} else {
		if n := len(b.groups); n == 0 || !b.groups[n-1].add(b.cur) {
			b.groups = append(b.groups, runGroup{first: b.cur, n: 1})
		}
		b.nruns++
	}
	b.cur = Run{}
}

// Runs returns the runs so far, the one still growing included; the
// builder can go on afterwards.
func (b *RunBuilder) Runs() []Run {
	out := appendRuns(make([]Run, 0, b.nruns+1), b.groups)
	if b.cur.Count > 0 && (b.max <= 0 || len(out) < b.max) {
		out = append(out, b.cur)
	}
	return out
}

// Overflow is the number of entries in runs past the bound, which Runs
// leaves out.
func (b *RunBuilder) Overflow() int64 {
	if b.cur.Count > 0 && b.max > 0 && b.nruns >= b.max {
		return b.overflow + b.cur.Count
	}
	return b.overflow
}

package pattern

// RunBuilder splits a stream of raw entries of one id into the same
// maximal strided runs as Runs, one entry at a time, so that a process can
// keep its runs without keeping its entries. It holds at most Max finished
// runs; entries of later runs are counted in Overflow instead.
//
// The zero value is not ready: use NewRunBuilder.
type RunBuilder struct {
	id       int64
	max      int
	cur      Run
	lastLog  int64 // logical offset of the current run's last entry
	lastPhys int64
	runs     []Run
	overflow int64
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
	if b.max > 0 && len(b.runs) >= b.max {
		b.overflow += b.cur.Count
	} else {
		b.runs = append(b.runs, b.cur)
	}
	b.cur = Run{}
}

// Runs returns the runs so far, the one still growing included; the
// builder can go on afterwards.
func (b *RunBuilder) Runs() []Run {
	out := append([]Run(nil), b.runs...)
	if b.cur.Count > 0 && (b.max <= 0 || len(out) < b.max) {
		out = append(out, b.cur)
	}
	return out
}

// Overflow is the number of entries in runs past the bound, which Runs
// leaves out.
func (b *RunBuilder) Overflow() int64 {
	if b.cur.Count > 0 && b.max > 0 && len(b.runs) >= b.max {
		return b.overflow + b.cur.Count
	}
	return b.overflow
}

// Finish returns the runs, the one still growing included, without
// copying them: the builder must not be used afterwards. It is Runs for
// a builder whose owner is done with it.
func (b *RunBuilder) Finish() []Run {
	if b.cur.Count > 0 && (b.max <= 0 || len(b.runs) < b.max) {
		b.runs = append(b.runs, b.cur)
	}
	out := b.runs
	b.runs, b.cur = nil, Run{}
	return out
}

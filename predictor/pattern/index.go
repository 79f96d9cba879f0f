package pattern

import "fmt"

// Entry is a pattern index entry (Figure 6): the logical offsets of a run of
// raw index entries as one pattern unit, and their lengths and physical
// offsets as lists of units over the same positions.
type Entry struct {
	//lint:ignore U1000 tells msgpack to encode the fields by position, without keys
	_msgpack struct{} `msgpack:",as_array"`
	ID       int64    `msgpack:"id" json:"id"` // chunk, process or file id
	Logical  Unit     `msgpack:"l" json:"logical"`
	Length   []Unit   `msgpack:"n" json:"length"`
	Physical []Unit   `msgpack:"p" json:"physical"`
}

// Len is the number of raw index entries the entry stands for.
func (e *Entry) Len() int64 { return e.Logical.Len() }

// String prints the entry as "id 0: [0,(3,4,7)^3] len [...] phys [...]".
func (e *Entry) String() string {
	return fmt.Sprintf("id %d: %s len %s phys %s", e.ID, e.Logical, Format(e.Length), Format(e.Physical))
}

// BuildIndex compresses raw index entries (logical offset, length, physical
// offset) of one id the way Figure 9 does: it finds the patterns of the
// logical offsets, then splits lengths and physical offsets into the same
// groups and finds the patterns of each group.
func BuildIndex(id int64, logical, length, physical []int64, window int) ([]Entry, error) {
	if len(length) != len(logical) || len(physical) != len(logical) {
		return nil, fmt.Errorf("pattern: %d logical offsets, %d lengths, %d physical offsets: the three must match",
			len(logical), len(length), len(physical))
	}
	units := Detect(logical, window)
	entries := make([]Entry, len(units))
	var at int64
	for i, u := range units {
		n := u.Len()
		entries[i] = Entry{
			ID:       id,
			Logical:  u,
			Length:   Detect(length[at:at+n], window),
			Physical: Detect(physical[at:at+n], window),
		}
		at += n
	}
	return entries, nil
}

// ExpandIndex returns the raw entries an index stands for.
func ExpandIndex(entries []Entry) (logical, length, physical []int64) {
	for i := range entries {
		e := &entries[i]
		logical = e.Logical.AppendValues(logical)
		for _, u := range e.Length {
			length = u.AppendValues(length)
		}
		for _, u := range e.Physical {
			physical = u.AppendValues(physical)
		}
	}
	return logical, length, physical
}

// Hit is the answer to a lookup: the raw entry holding a requested offset.
type Hit struct {
	Pos      int64 // position of the raw entry inside the pattern entry (0-based)
	Offset   int64 // logical offset where the raw entry starts
	Length   int64 // bytes from the requested offset to the end of the raw entry
	Physical int64 // physical offset of the requested byte
	ID       int64 // chunk id of the data
}

// Lookup finds the raw entry of e that holds byte off without expanding
// (Algorithm 2). For each column of the logical pattern (each delta
// position) it computes the row whose offset is the largest not above off,
// as Algorithm 2 does with row = roff/stride, and checks that off falls in
// that entry's extent; unlike Algorithm 2 it also handles zero and negative
// strides. When entries overlap, the latest in the pattern wins, as later
// writes do in PLFS. The cost is O(len(Deltas)) plus the number of length
// and physical units.
func (e *Entry) Lookup(off int64) (Hit, bool) {
	u := &e.Logical
	cols := int64(len(u.Deltas))
	if cols == 0 {
		if u.Tail > 0 {
			return e.hitAt(0, u.Init, off)
		}
		return Hit{}, false
	}
	stride, increasing := int64(0), true
	for _, d := range u.Deltas {
		stride += d
		increasing = increasing && d > 0
	}
	if increasing {
		// Algorithm 2 as the paper gives it: offsets grow, so the entry
		// is the one with the greatest offset not above off.
		if off < u.Init {
			return Hit{}, false
		}
		roff := off - u.Init
		row, rem := roff/stride, roff%stride
		col, sum := int64(0), int64(0)
		for col+1 < cols && sum+u.Deltas[col] <= rem {
			sum += u.Deltas[col]
			col++
		}
		n := u.Len()
		if n == 0 {
			return Hit{}, false
		}
		if row > u.Reps || row*cols+col >= n {
			return e.hitAt(n-1, u.At(n-1), off)
		}
		return e.hitAt(row*cols+col, u.Init+row*stride+sum, off)
	}
	best := Hit{Pos: -1}
	base := u.Init
	for c := int64(0); c < cols; c++ {
		rows := u.Reps
		if c < u.Tail {
			rows++
		}
		if rows > 0 {
			row := int64(-1)
			switch {
			case stride > 0:
				if off >= base {
					row = min((off-base)/stride, rows-1)
				}
			case stride == 0:
				if off >= base {
					row = rows - 1
				}
			default:
				if base <= off {
					row = 0
				} else if r := (base - off + (-stride) - 1) / (-stride); r < rows {
					row = r
				}
			}
			if row >= 0 {
				pos := row*cols + c
				if h, ok := e.hitAt(pos, base+row*stride, off); ok && pos > best.Pos {
					best = h
				}
			}
		}
		base += u.Deltas[c]
	}
	return best, best.Pos >= 0
}

func (e *Entry) hitAt(pos, start, off int64) (Hit, bool) {
	length, ok := valueAt(e.Length, pos)
	if !ok || off < start || off-start >= length {
		return Hit{}, false
	}
	phys, ok := valueAt(e.Physical, pos)
	if !ok {
		return Hit{}, false
	}
	shift := off - start
	return Hit{Pos: pos, Offset: start, Length: length - shift, Physical: phys + shift, ID: e.ID}, true
}

// LookupIndex looks off up in every entry and returns the hit of the latest
// entry that holds it (later entries describe later writes).
func LookupIndex(entries []Entry, off int64) (Hit, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		if h, ok := entries[i].Lookup(off); ok {
			return h, true
		}
	}
	return Hit{}, false
}

func (e *Entry) validate() error {
	if err := e.Logical.validate(); err != nil {
		return fmt.Errorf("logical: %w", err)
	}
	for _, list := range []struct {
		name  string
		units []Unit
	}{{"length", e.Length}, {"physical", e.Physical}} {
		var n int64
		for i, u := range list.units {
			if err := u.validate(); err != nil {
				return fmt.Errorf("%s unit %d: %w", list.name, i, err)
			}
			n += u.Len()
			if n > maxReps*(1<<20) || n < 0 {
				return fmt.Errorf("%s: too many values", list.name)
			}
		}
		if n != e.Logical.Len() {
			return fmt.Errorf("%s patterns stand for %d values, logical for %d", list.name, n, e.Logical.Len())
		}
	}
	return nil
}

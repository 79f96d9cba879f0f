package sequitur

// digramIndex maps a digram key to the node where the digram starts. It is
// an open-addressing hash table with linear probing and backward-shift
// deletion: the grammar looks digrams up several times per appended
// symbol, and a Go map's hashing and probing were a fifth of the time a
// model spent on each event. Its contents, not its layout, are what the
// grammar sees: nothing iterates over it, so the grammar is the same as
// with a map.
type digramIndex struct {
	slots []digramSlot // power-of-two length; node < 0 marks an empty slot
	n     int
	shift uint // 64 - log2(len(slots))
}

type digramSlot struct {
	key  uint64
	node int32
}

const digramMinSlots = 16

func (d *digramIndex) home(k uint64) int {
	return int((k * 0x9E3779B97F4A7C15) >> d.shift)
}

// get returns the node indexed for k.
func (d *digramIndex) get(k uint64) (int32, bool) {
	if d.n == 0 {
		return 0, false
	}
	mask := len(d.slots) - 1
	for i := d.home(k); ; i = (i + 1) & mask {
		s := &d.slots[i]
		if s.node < 0 {
			return 0, false
		}
		if s.key == k {
			return s.node, true
		}
	}
}

// set indexes node (>= 0) for k.
func (d *digramIndex) set(k uint64, node int32) {
	s, _ := d.probe(k)
	s.node = node
}

// getOrSet returns the node indexed for k, or indexes node for k and
// reports that none was: one probe where get and set would take two.
func (d *digramIndex) getOrSet(k uint64, node int32) (int32, bool) {
	s, found := d.probe(k)
	if found {
		return s.node, true
	}
	s.node = node
	return 0, false
}

// probe returns k's slot and true, or claims an empty slot for k and
// returns it and false; the caller then sets its node.
func (d *digramIndex) probe(k uint64) (*digramSlot, bool) {
	if 4*(d.n+1) > 3*len(d.slots) {
		d.grow()
	}
	mask := len(d.slots) - 1
	for i := d.home(k); ; i = (i + 1) & mask {
		s := &d.slots[i]
		if s.node < 0 {
			s.key = k
			d.n++
			return s, false
		}
		if s.key == k {
			return s, true
		}
	}
}

// del forgets k.
func (d *digramIndex) del(k uint64) { d.delIf(k, -1) }

// delIf forgets k if the node indexed for it is node, or whatever it is
// when node < 0. The entries of the probe run after it move back, so that
// no lookup stops early at the hole.
func (d *digramIndex) delIf(k uint64, node int32) {
	if d.n == 0 {
		return
	}
	mask := len(d.slots) - 1
	i := d.home(k)
	for {
		s := &d.slots[i]
		if s.node < 0 {
			return
		}
		if s.key == k {
			if node >= 0 && s.node != node {
				return
			}
			break
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := &d.slots[j]
		if s.node < 0 {
			break
		}
		// s may fill the hole at i when its home is not within (i, j].
		if h := d.home(s.key); (j-h)&mask >= (j-i)&mask {
			d.slots[i] = *s
			i = j
		}
	}
	d.slots[i] = digramSlot{node: nilNode}
	d.n--
}

func (d *digramIndex) len() int { return d.n }

func (d *digramIndex) grow() {
	old := d.slots
	size := max(2*len(old), digramMinSlots)
	d.slots = make([]digramSlot, size)
	for i := range d.slots {
		d.slots[i].node = nilNode
	}
	d.shift = 64
	for s := size; s > 1; s >>= 1 {
		d.shift--
	}
	d.n = 0
	for _, s := range old {
		if s.node >= 0 {
			d.set(s.key, s.node)
		}
	}
}

// memoryBytes is the heap the index holds.
func (d *digramIndex) memoryBytes() int { return 16 * len(d.slots) }

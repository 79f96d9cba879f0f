package pattern

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// figure8 is the logical offsets of process 0 in the paper's Figures 2, 8, 9.
var figure8 = []int64{0, 3, 7, 14, 17, 21, 28, 31, 35, 42, 46, 50, 54, 58}

// Figure 8: the detector turns the offsets into [0,(3,4,7)^3], [42,(4)^4].
func TestDetectFigure8(t *testing.T) {
	got := Format(Detect(figure8, 3))
	if want := "[0,(3,4,7)^3], [42,(4)^4]"; got != want {
		t.Fatalf("Detect(figure 8) = %s, want %s", got, want)
	}
	if back := Expand(Detect(figure8, 3)); !slices.Equal(back, figure8) {
		t.Fatalf("Expand = %v, want %v", back, figure8)
	}
}

// Section 4.2: after [0,(3,4,7)^2] the next three offsets are 31, 35, 42.
func TestNextSection42(t *testing.T) {
	u := Detect(figure8[:7], 4)
	if len(u) != 1 || u[0].String() != "[0,(3,4,7)^2]" {
		t.Fatalf("Detect(0..28) = %s, want [0,(3,4,7)^2]", Format(u))
	}
	if got := u[0].Next(3); !slices.Equal(got, []int64{31, 35, 42}) {
		t.Fatalf("Next(3) = %v, want [31 35 42]", got)
	}
	s := NewStream(4)
	for _, o := range figure8[:7] {
		s.Add(o, 1)
	}
	if got := s.Predict(3); !slices.Equal(got, []int64{31, 35, 42}) {
		t.Fatalf("Stream.Predict(3) = %v, want [31 35 42]", got)
	}
	if !s.Certain() {
		t.Fatal("Stream not certain after two repetitions")
	}
}

// figure9Entries builds raw entries for the offsets of Figure 8 with
// lengths that change within the pattern and physical offsets that count
// the bytes before each entry, as in a PLFS data dropping.
func figure9Entries() (logical, length, physical []int64) {
	logical = figure8
	for i := range logical {
		l := int64(2 + i%3) // 2,3,4,2,3,4,...
		if i >= 9 {
			l = 1
		}
		length = append(length, l)
	}
	var p int64
	for _, l := range length {
		physical = append(physical, p)
		p += l
	}
	return
}

// Figure 9 and Algorithm 2: lengths and physical offsets are grouped by the
// two logical patterns; offset 29 is found in pattern A at row 2, the first
// delta, i.e. the seventh entry (offset 28), without expanding.
func TestLookupFigure9(t *testing.T) {
	logical, length, physical := figure9Entries()
	idx, err := BuildIndex(0, logical, length, physical, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx) != 2 || idx[0].Logical.String() != "[0,(3,4,7)^3]" || idx[1].Logical.String() != "[42,(4)^4]" {
		t.Fatalf("index = %v", idx)
	}
	if idx[0].Len() != 9 || Count(idx[0].Length) != 9 || Count(idx[0].Physical) != 9 {
		t.Fatalf("pattern A: %d offsets, %d lengths, %d physical offsets, want 9 each", idx[0].Len(), Count(idx[0].Length), Count(idx[0].Physical))
	}
	// Each group's lengths are themselves one pattern.
	if len(idx[0].Length) != 1 || len(idx[1].Length) != 1 {
		t.Fatalf("length patterns: %s | %s", Format(idx[0].Length), Format(idx[1].Length))
	}
	h, ok := LookupIndex(idx, 29)
	// The paper: row = 29/14 = 2, rem = 1, first delta, pos 7 counting from 1.
	if !ok || h.Pos != 6 || h.Offset != 28 {
		t.Fatalf("lookup 29 = %+v, %v; want the 7th entry, offset 28", h, ok)
	}
	if h.Length != length[6]-1 || h.Physical != physical[6]+1 {
		t.Fatalf("lookup 29 = %+v, want length %d physical %d", h, length[6]-1, physical[6]+1)
	}
	l2, p2, ph2 := ExpandIndex(idx)
	if !slices.Equal(l2, logical) || !slices.Equal(p2, length) || !slices.Equal(ph2, physical) {
		t.Fatal("ExpandIndex does not give back the raw entries")
	}
}

// figure10 writes the raw entries of Figure 10: six processes write 10-byte
// pieces; within a global stride of four 30-byte rows, three of them
// interleave column by column; (4,7,6) then (2,8,9) then again.
func figure10() map[int64][3][]int64 {
	groups := [][]int64{{4, 7, 6}, {2, 8, 9}, {4, 7, 6}, {2, 8, 9}}
	raw := map[int64][3][]int64{}
	for g, ids := range groups {
		for col, id := range ids {
			e := raw[id]
			for row := int64(0); row < 4; row++ {
				var phys int64
				if n := len(e[0]); n > 0 {
					phys = e[2][n-1] + e[1][n-1]
				}
				e[0] = append(e[0], 1000+int64(g)*120+row*30+int64(col)*10)
				e[1] = append(e[1], 10)
				e[2] = append(e[2], phys)
			}
			raw[id] = e
		}
	}
	return raw
}

// Figures 10 to 12 and Algorithm 3: the runs of the six processes merge into
// one global pattern with ids [4,7,6,2,8,9,4,7,6,2,8,9], logical 1000,(30)^4,
// length 10, physical 0,(10)^4; offset 1250 is in chunk 7 at physical 40.
func TestGlobalFigure10(t *testing.T) {
	var runs []Run
	for id, e := range figure10() {
		runs = append(runs, Runs(id, e[0], e[1], e[2])...)
	}
	globals, rest := Merge(runs)
	if len(globals) != 1 || len(rest) != 0 {
		t.Fatalf("Merge: %d globals, %d rest; want 1, 0", len(globals), len(rest))
	}
	g := &globals[0]
	if !slices.Equal(g.IDs, []int64{4, 7, 6, 2, 8, 9, 4, 7, 6, 2, 8, 9}) ||
		g.Logical.String() != "[1000,(30)^4]" || g.Length.String() != "[10,(0)^4]" || g.Physical.String() != "[0,(10)^4]" {
		t.Fatalf("global = %s", g)
	}
	h, ok := g.Lookup(1250)
	if !ok || h.ID != 7 || h.Physical != 40 || h.Offset != 1250 || h.Length != 10 {
		t.Fatalf("Lookup(1250) = %+v, %v; want chunk 7, physical 40, length 10", h, ok)
	}
	// Every byte of the file maps where the raw entries say.
	raw := figure10()
	for id, e := range raw {
		for i := range e[0] {
			for b := int64(0); b < e[1][i]; b++ {
				h, ok := g.Lookup(e[0][i] + b)
				if !ok || h.ID != id || h.Physical != e[2][i]+b || h.Length != e[1][i]-b {
					t.Fatalf("Lookup(%d) = %+v, %v; want id %d physical %d", e[0][i]+b, h, ok, id, e[2][i]+b)
				}
			}
		}
	}
	if _, ok := g.Lookup(999); ok {
		t.Fatal("offset before the pattern found")
	}
	if _, ok := g.Lookup(1000 + 480); ok {
		t.Fatal("offset after the pattern found")
	}
	if back := g.Runs(); len(back) != 12 {
		t.Fatalf("Runs() = %d runs, want 12", len(back))
	}
}

// structured returns named sequences of the kinds the issue lists.
func structured(rng *rand.Rand) map[string][]int64 {
	seqs := map[string][]int64{}
	var s []int64
	for i := int64(0); i < 1000; i++ {
		s = append(s, 4096*i)
	}
	seqs["fixed stride"] = s
	s = nil
	for i := int64(0); i < 30; i++ {
		for j := int64(0); j < 20; j++ {
			s = append(s, i*100000+j*512)
		}
	}
	seqs["2-D"] = s
	s = nil
	for i := int64(0); i < 6; i++ {
		for j := int64(0); j < 7; j++ {
			for k := int64(0); k < 5; k++ {
				s = append(s, i*1<<20+j*4096+k*8)
			}
		}
	}
	seqs["3-D"] = s
	s = nil
	var v int64
	for i := 0; i < 500; i++ {
		v += int64(rng.IntN(5)+1) * 512
		s = append(s, v)
	}
	seqs["irregular gaps"] = s
	s = nil
	for i := int64(0); i < 300; i++ {
		s = append(s, 1<<30-i*8192)
	}
	seqs["negative stride"] = s
	s = nil
	for i := 0; i < 300; i++ {
		s = append(s, int64(i/10)*100)
	}
	seqs["repeats"] = s
	seqs["empty"] = nil
	seqs["one"] = []int64{42}
	seqs["two"] = []int64{42, -7}
	return seqs
}

// Lossless: expanding the detected patterns gives back the input, for
// structured and random sequences and every window size.
func TestDetectLossless(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for name, q := range structured(rng) {
		for _, w := range []int{0, 1, 2, 3, 8, 16, 64} {
			if got := Expand(Detect(q, w)); !slices.Equal(got, q) && !(len(got) == 0 && len(q) == 0) {
				t.Fatalf("%s, window %d: Expand(Detect) differs from the input", name, w)
			}
		}
	}
	for trial := 0; trial < 2000; trial++ {
		n := rng.IntN(200)
		q := make([]int64, n)
		alphabet := rng.IntN(4) + 1
		for i := range q {
			switch trial % 3 {
			case 0:
				q[i] = rng.Int64() - rng.Int64()
			default:
				if i > 0 {
					q[i] = q[i-1] + int64(rng.IntN(alphabet)) - 1
				}
			}
		}
		w := rng.IntN(20)
		if got := Expand(Detect(q, w)); !slices.Equal(got, q) && !(len(got) == 0 && len(q) == 0) {
			t.Fatalf("trial %d window %d: Expand(Detect(%v)) = %v", trial, w, q, got)
		}
	}
}

// Structured sequences compress to one unit each, however long the rows of
// a 2-D or 3-D walk and whether or not the last row is complete.
func TestDetectStructured(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seqs := structured(rng)
	for _, name := range []string{"fixed stride", "negative stride", "2-D", "3-D", "repeats", "one", "two"} {
		if units := Detect(seqs[name], 16); len(units) != 1 {
			t.Errorf("%s: %d units, want 1: %s", name, len(units), Format(units))
		}
	}
	var rows []int64
	for i := int64(0); i < 10; i++ {
		for j := int64(0); j < 300; j++ { // rows far longer than the window
			if i < 9 || j < 123 {
				rows = append(rows, i*1<<20+j*4096)
			}
		}
	}
	for _, w := range []int{0, 8} {
		if u := Detect(rows, w); len(u) != 1 || u[0].Reps != 9 || u[0].Tail != 123 {
			t.Errorf("window %d: long rows, short last row: %d units, want [0,(...)^9+122]", w, len(u))
		}
	}
}

// Lookups without expanding agree with a scan of the raw entries.
func TestLookupMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for name, q := range structured(rng) {
		if len(q) == 0 {
			continue
		}
		// Sort and make the entries disjoint, as PLFS does before lookups.
		q = slices.Clone(q)
		slices.Sort(q)
		q = slices.Compact(q)
		length := make([]int64, len(q))
		physical := make([]int64, len(q))
		var p int64
		for i := range q {
			gap := int64(1 << 20)
			if i+1 < len(q) {
				gap = q[i+1] - q[i]
			}
			length[i] = max(1, min(gap, int64(1+rng.IntN(600))))
			physical[i] = p
			p += length[i]
		}
		idx, err := BuildIndex(1, q, length, physical, 8)
		if err != nil {
			t.Fatal(err)
		}
		for trial := 0; trial < 3000; trial++ {
			off := q[0] - 10 + rng.Int64N(q[len(q)-1]-q[0]+700)
			var want Hit
			found := false
			for i := range q {
				if off >= q[i] && off < q[i]+length[i] {
					want = Hit{Pos: -1, Offset: q[i], Length: q[i] + length[i] - off, Physical: physical[i] + off - q[i], ID: 1}
					found = true
				}
			}
			got, ok := LookupIndex(idx, off)
			got.Pos = -1
			if ok != found || (found && got != want) {
				t.Fatalf("%s: lookup %d = %+v, %v; scan says %+v, %v", name, off, got, ok, want, found)
			}
		}
	}
}

// Negative strides: the newest entry holding a byte is found.
func TestLookupNegativeStride(t *testing.T) {
	logical := []int64{900, 800, 700, 600, 500}
	length := []int64{10, 10, 10, 10, 10}
	physical := []int64{0, 10, 20, 30, 40}
	idx, _ := BuildIndex(3, logical, length, physical, 4)
	if len(idx) != 1 {
		t.Fatalf("%v", idx)
	}
	for i, o := range logical {
		h, ok := idx[0].Lookup(o + 5)
		if !ok || h.Pos != int64(i) || h.Physical != physical[i]+5 {
			t.Fatalf("lookup %d = %+v %v", o+5, h, ok)
		}
	}
	if _, ok := idx[0].Lookup(550); ok {
		t.Fatal("hole between entries found")
	}
}

// Runs of different strides, lengths or misplaced physical offsets stay
// apart; a contiguous block per process (MILC (B)) merges.
func TestMergeRules(t *testing.T) {
	blocks := []Run{}
	for id := int64(0); id < 4; id++ {
		blocks = append(blocks, Runs(id, []int64{id * 4096, id*4096 + 1024, id*4096 + 2048, id*4096 + 3072},
			[]int64{1024, 1024, 1024, 1024}, []int64{0, 1024, 2048, 3072})...)
	}
	g, rest := Merge(blocks)
	if len(g) != 1 || len(rest) != 0 || len(g[0].IDs) != 4 {
		t.Fatalf("contiguous blocks: %v %v", g, rest)
	}
	h, ok := g[0].Lookup(2*4096 + 1500)
	if !ok || h.ID != 2 || h.Physical != 1500 {
		t.Fatalf("lookup = %+v %v", h, ok)
	}
	bad := []Run{
		{ID: 1, Logical: 0, Stride: 20, Count: 3, Length: 10, Physical: 0, PhysStride: 10},
		{ID: 2, Logical: 10, Stride: 20, Count: 3, Length: 10, Physical: 5, PhysStride: 10},
		{ID: 3, Logical: 60, Stride: 30, Count: 3, Length: 10, Physical: 0, PhysStride: 10},
	}
	if g, rest := Merge(bad); len(g) != 0 || len(rest) != 3 {
		t.Fatalf("mismatched runs merged: %v", g)
	}
}

// The stream's patterns describe the accesses losslessly, lengths and
// physical offsets included.
func TestStreamLossless(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	seqs := structured(rng)
	for trial := 0; trial < 300; trial++ {
		q := make([]int64, rng.IntN(150))
		for i := range q {
			if i > 0 {
				q[i] = q[i-1] + int64(rng.IntN(3))*100
			}
		}
		seqs["random"+string(rune('a'+trial%26))+string(rune('a'+trial/26))] = q
	}
	for name, q := range seqs {
		if len(q) == 0 {
			continue
		}
		s := NewStream(8)
		var lens, phys []int64
		var p int64
		for i, o := range q {
			l := int64(100 + (i%3)*(len(name)%2))
			s.Add(o, l)
			lens = append(lens, l)
			phys = append(phys, p)
			p += l
		}
		e := s.Patterns()
		if s.Dropped() > 0 {
			continue
		}
		lo, le, ph := ExpandIndex(e)
		if !slices.Equal(lo, q) || !slices.Equal(le, lens) || !slices.Equal(ph, phys) {
			t.Fatalf("%s: stream patterns %v expand to %v / %v / %v", name, e, lo, le, ph)
		}
	}
}

// The stream keeps bounded memory on an irregular stream and counts what it
// dropped; on a fixed stride it keeps one pattern and predicts exactly.
func TestStreamBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	s := NewStream(16)
	var v int64
	for i := 0; i < 200000; i++ {
		v += rng.Int64N(1 << 20)
		s.Add(v, 4096)
	}
	if len(s.Patterns()) > MaxStreamUnits+1 || len(s.recent) > 6*16 || cap(s.recent) > 16*16 {
		t.Fatalf("%d patterns, %d recent steps kept", len(s.Patterns()), cap(s.recent))
	}
	var covered int64
	for _, e := range s.Patterns() {
		covered += e.Len()
	}
	if covered+s.Dropped() != s.Len() {
		t.Fatalf("patterns cover %d + dropped %d, want %d accesses", covered, s.Dropped(), s.Len())
	}
	s = NewStream(16)
	for i := int64(0); i < 1000; i++ {
		s.Add(i*8192, 4096)
	}
	if len(s.Patterns()) != 2 || !s.Certain() {
		t.Fatalf("fixed stride: %v, certain %v", s.Patterns(), s.Certain())
	}
	off, lens := s.PredictAccesses(2)
	if !slices.Equal(off, []int64{1000 * 8192, 1001 * 8192}) || !slices.Equal(lens, []int64{4096, 4096}) {
		t.Fatalf("predicted %v %v", off, lens)
	}
	s.Add(5, 4096)
	if s.Certain() {
		t.Fatal("certain after a mismatch")
	}
}

// Nested loops give a pattern tree whose levels match the loops, and trees
// expand back to their input.
func TestBuildTree(t *testing.T) {
	// Figure 18 style: three inner patterns repeating as a whole.
	var q []int64
	var v int64
	for i := 0; i < 5; i++ {
		for _, inner := range [][2]int64{{1, 4}, {5, 3}, {2, 6}} {
			for j := int64(0); j < inner[1]; j++ {
				q = append(q, v)
				v += inner[0]
			}
		}
	}
	q = append(q, v)
	tr := BuildTree(q, 8, 4)
	if !slices.Equal(tr.Expand(), q) {
		t.Fatal("tree does not expand to its input")
	}
	if len(tr.Nodes) != 1 || tr.Depth() != 2 || tr.Nodes[0].Reps != 5 || len(tr.Nodes[0].Children) != 3 {
		t.Fatalf("tree = %s, want one parent of three patterns repeated 5 times", tr.String())
	}
	if s := tr.Nodes[0].Starts; s == nil || s.Init != 0 || s.Deltas[0] != 4+15+12 || s.Reps != 4 {
		t.Fatalf("parent starts = %v", tr.Nodes[0].Starts)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for name, q := range structured(rng) {
		tr := BuildTree(q, 8, 5)
		if got := tr.Expand(); !slices.Equal(got, q) && len(q) > 0 {
			t.Fatalf("%s: tree does not expand to its input", name)
		}
	}
}

// The msgpack form round-trips and is compact for a strided index.
func TestCodecRoundTrip(t *testing.T) {
	logical, length, physical := figure9Entries()
	idx, _ := BuildIndex(0, logical, length, physical, 3)
	var runs []Run
	for id, e := range figure10() {
		runs = append(runs, Runs(id, e[0], e[1], e[2])...)
	}
	globals, rest := Merge(runs)
	x := Index{Entries: idx, Globals: globals, Runs: append(rest, Run{ID: 1, Count: 1, Length: 3})}
	b, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	y, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x.Entries, y.Entries) || !reflect.DeepEqual(x.Runs, y.Runs) || len(y.Globals) != 1 {
		t.Fatal("round trip changed the index")
	}
	if h, ok := y.Globals[0].Lookup(1250); !ok || h.ID != 7 {
		t.Fatal("decoded global pattern lookup failed")
	}
	// A 100,000-entry 2-D strided index is one entry of a few dozen bytes.
	var lo, le, ph []int64
	for i := int64(0); i < 1000; i++ {
		for j := int64(0); j < 100; j++ {
			lo = append(lo, i*1<<20+j*64)
			le = append(le, 16)
			ph = append(ph, int64(len(ph))*16)
		}
	}
	big, _ := BuildIndex(0, lo, le, ph, 16)
	n, _ := (&Index{Entries: big}).EncodedSize()
	if len(big) > 2 || n*1000 > 32*len(lo) {
		t.Fatalf("2-D index: %d entries, %d bytes for %d raw entries", len(big), n, len(lo))
	}
}

// Corrupt input gives errors naming what is wrong.
func TestUnmarshalErrors(t *testing.T) {
	for name, x := range map[string]Index{
		"count mismatch": {Entries: []Entry{{Logical: Unit{Init: 0, Deltas: []int64{1}, Reps: 3}, Length: []Unit{{Init: 1, Tail: 1}}, Physical: []Unit{{Init: 1, Tail: 1}}}}},
		"negative reps":  {Entries: []Entry{{Logical: Unit{Deltas: []int64{1}, Reps: -1}}}},
		"bad global":     {Globals: []Global{{IDs: []int64{1}, Logical: Unit{Deltas: []int64{7}, Reps: 2}, Length: Unit{Init: 3, Deltas: []int64{0}, Reps: 2}, Physical: Unit{Deltas: []int64{3}, Reps: 2}}}},
	} {
		b, _ := x.Marshal()
		if _, err := Unmarshal(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Unmarshal([]byte{0xc1}); err == nil {
		t.Error("garbage: no error")
	}
}

// FuzzUnmarshal: the decoder returns an error or an index whose lookups
// work, never panics.
func FuzzUnmarshal(f *testing.F) {
	logical, length, physical := figure9Entries()
	idx, _ := BuildIndex(0, logical, length, physical, 3)
	var runs []Run
	for id, e := range figure10() {
		runs = append(runs, Runs(id, e[0], e[1], e[2])...)
	}
	globals, _ := Merge(runs)
	b, _ := (&Index{Entries: idx, Globals: globals}).Marshal()
	f.Add(b)
	f.Add([]byte{0x80})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := Unmarshal(data)
		if err != nil {
			return
		}
		for _, off := range []int64{-1, 0, 29, 1250, 1 << 40} {
			LookupIndex(x.Entries, off)
			for i := range x.Globals {
				x.Globals[i].Lookup(off)
			}
		}
	})
}

// Rows longer than the window: once two rows are seen, the stream folds
// them into one pattern and predicts the jump to the next row.
func TestStreamRows(t *testing.T) {
	s := NewStream(8)
	var q []int64
	for i := int64(0); i < 5; i++ {
		for j := int64(0); j < 100; j++ {
			q = append(q, i*1<<20+j*512)
		}
	}
	misses := 0
	for i, o := range q {
		if i > 0 {
			if p := s.Predict(1); len(p) == 0 || p[0] != o {
				misses++
			}
		}
		s.Add(o, 512)
	}
	// The first row costs two accesses (no pattern yet), the first jump
	// three (the jump, then two accesses until the stride repeats twice),
	// the second jump one; then the rows fold into one pattern.
	if misses > 6 {
		t.Fatalf("%d mispredictions over %d accesses", misses, len(q))
	}
	if e := s.Patterns(); len(e) != 2 || e[0].Logical.Reps != 4 {
		t.Fatalf("patterns %v, want one row pattern repeated 4 times and the tail", e)
	}
	if got := s.Predict(2); !slices.Equal(got, []int64{5 << 20, 5<<20 + 512}) {
		t.Fatalf("next row predicted at %v", got)
	}
}

// FuzzDetect: for any sequence and window, the patterns, the index entries
// and the stream's patterns expand back to the input.
func FuzzDetect(f *testing.F) {
	f.Add([]byte{0, 3, 7, 14, 17, 21, 28, 31, 35, 42, 46, 50, 54, 58}, uint8(3))
	f.Add([]byte{1, 1, 1, 2, 1, 1, 1, 2, 1, 1}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, w uint8) {
		// Cut at 256 values: detection costs more than linear time in
		// the sequence's length, and Go's fuzzer grows and then minimises
		// its inputs; longer sequences add no new shapes, only time.
		data = data[:min(len(data), 256)]
		q := make([]int64, len(data))
		for i, b := range data {
			q[i] = int64(int8(b)) * 1000
			if i > 0 && b&1 == 0 {
				q[i] += q[i-1]
			}
		}
		if got := Expand(Detect(q, int(w%40))); !slices.Equal(got, q) && len(q) > 0 {
			t.Fatalf("Expand(Detect(%v)) = %v", q, got)
		}
		s := NewStream(int(w%40) + 1)
		length := make([]int64, len(q))
		for i, o := range q {
			length[i] = int64(data[i]%4) + 1
			s.Add(o, length[i])
		}
		if s.Dropped() == 0 && len(q) > 0 {
			lo, le, _ := ExpandIndex(s.Patterns())
			if !slices.Equal(lo, q) || !slices.Equal(le, length) {
				t.Fatalf("stream patterns of %v expand to %v %v", q, lo, le)
			}
		}
	})
}

// A long repetition that breaks off part-way (a loop of 1000 writes over
// 256 slots, restarted: rows of 256, 256, 256 and 232) gives back more
// steps than the stream's recent window holds; the stream must keep going
// and still predict the rows that follow.
func TestStreamLongBrokenRepetition(t *testing.T) {
	s := NewStream(16)
	var offs []int64
	for batch := 0; batch < 50; batch++ {
		for i := 0; i < 1000; i++ {
			offs = append(offs, int64(i%256)*4096)
		}
	}
	for _, o := range offs {
		s.Add(o, 4096)
	}
	if got := s.Predict(2); len(got) == 0 {
		t.Fatal("no prediction after 50 batches of the same loop")
	}
}

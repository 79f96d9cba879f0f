// Package pattern discovers and describes the structure of offset sequences
// the way Pattern PLFS does (He et al., HPDC'13): pattern units
// [i, (d0, d1, ...)^r] found by a sliding-window detector over the deltas of
// a sequence (Algorithm 1), index entries whose lengths and physical offsets
// are grouped by the logical-offset patterns (Figure 9) and looked up without
// expanding (Algorithm 2), global patterns merging the strided runs of many
// processes (Algorithm 3), multi-level pattern trees for nested loops, and a
// bounded-memory streaming detector that predicts the next offsets.
//
// Every representation is lossless: expanding it gives back its input.
package pattern

import (
	"fmt"
	"strconv"
	"strings"
)

// Unit is the pattern unit [Init, (Deltas...)^Reps] of the paper's Figure 7.
// It stands for the len(Deltas)*Reps values Init, Init+d0, Init+d0+d1, ...
// (the deltas cycle), followed by Tail more values of the same walk
// (0 <= Tail <= len(Deltas), or Tail <= 1 without deltas).
//
// The detector partitions the deltas of a sequence, so consecutive units
// abut: a unit's end is the next unit's Init, and only the last unit of a
// sequence has a Tail: its end value (Tail 1), plus the values of a last,
// partial repetition. This is how `[0,(3,4,7)^3], [42,(4)^4]` describes the
// fourteen offsets of Figure 8 without counting 42 twice, and how a 2-D
// walk whose last row ends early is still one unit.
type Unit struct {
	//lint:ignore U1000 tells msgpack to encode the fields by position, without keys
	_msgpack struct{} `msgpack:",as_array"`
	Init     int64    `msgpack:"i" json:"init"`
	Deltas   []int64  `msgpack:"d" json:"deltas"`
	Reps     int64    `msgpack:"r" json:"reps"`
	Tail     int64    `msgpack:"t,omitempty" json:"tail,omitempty"`
}

// Len is the number of values the unit stands for.
func (u Unit) Len() int64 {
	return int64(len(u.Deltas))*u.Reps + u.Tail
}

// Stride is the sum of the deltas: how far one repetition moves.
func (u Unit) Stride() int64 {
	var s int64
	for _, d := range u.Deltas {
		s += d
	}
	return s
}

// End is the value one full repetition past the last: the next unit's Init
// when units abut.
func (u Unit) End() int64 { return u.Init + u.Reps*u.Stride() }

// At returns the value at position pos (0 <= pos < Len) without expanding.
func (u Unit) At(pos int64) int64 {
	l := int64(len(u.Deltas))
	if l == 0 {
		return u.Init
	}
	row, col := pos/l, pos%l
	v := u.Init + row*u.Stride()
	for _, d := range u.Deltas[:col] {
		v += d
	}
	return v
}

// Last is the last value the unit stands for; Init when it is empty.
func (u Unit) Last() int64 {
	if n := u.Len(); n > 0 {
		return u.At(n - 1)
	}
	return u.Init
}

// AppendValues appends the values the unit stands for to dst.
func (u Unit) AppendValues(dst []int64) []int64 {
	v := u.Init
	for r := int64(0); r < u.Reps; r++ {
		for _, d := range u.Deltas {
			dst = append(dst, v)
			v += d
		}
	}
	for i := int64(0); i < u.Tail; i++ {
		dst = append(dst, v)
		if i < int64(len(u.Deltas)) {
			v += u.Deltas[i]
		}
	}
	return dst
}

// Next predicts the n values that follow the unit's end if the pattern goes
// on (section 4.2): after [0,(3,4,7)^2], whose end is 28, come 31, 35, 42.
// It returns nil for a unit without deltas.
func (u Unit) Next(n int) []int64 {
	if len(u.Deltas) == 0 || n <= 0 {
		return nil
	}
	out := make([]int64, n)
	v := u.End()
	for i := range out {
		v += u.Deltas[i%len(u.Deltas)]
		out[i] = v
	}
	return out
}

// String prints the unit in the paper's notation, [0,(3,4,7)^3]; a tail of
// more than the end value shows as [0,(1,1,8)^3+2].
func (u Unit) String() string {
	var b strings.Builder
	b.WriteString("[")
	b.WriteString(strconv.FormatInt(u.Init, 10))
	b.WriteString(",(")
	for i, d := range u.Deltas {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	b.WriteString(")^")
	b.WriteString(strconv.FormatInt(u.Reps, 10))
	if u.Tail > 1 {
		// The end value (Tail 1) is implied by the notation; more is shown.
		b.WriteString("+")
		b.WriteString(strconv.FormatInt(u.Tail-1, 10))
	}
	b.WriteString("]")
	return b.String()
}

// Format prints a list of units as the paper does: "[0,(3,4,7)^3], [42,(4)^4]".
func Format(units []Unit) string {
	parts := make([]string, len(units))
	for i, u := range units {
		parts[i] = u.String()
	}
	return strings.Join(parts, ", ")
}

// Expand returns the values a list of units stands for.
func Expand(units []Unit) []int64 {
	var n int64
	for _, u := range units {
		n += u.Len()
	}
	out := make([]int64, 0, n)
	for _, u := range units {
		out = u.AppendValues(out)
	}
	return out
}

// Count is the number of values a list of units stands for.
func Count(units []Unit) int64 {
	var n int64
	for _, u := range units {
		n += u.Len()
	}
	return n
}

// valueAt returns the value at position pos of a list of units.
func valueAt(units []Unit, pos int64) (int64, bool) {
	for _, u := range units {
		n := u.Len()
		if pos < n {
			return u.At(pos), true
		}
		pos -= n
	}
	return 0, false
}

// maxReps bounds the repetitions a decoded unit may claim, so that Len and
// At cannot overflow.
const maxReps = 1 << 40

// validate reports why a unit cannot be what the detector produces.
func (u Unit) validate() error {
	switch {
	case u.Reps < 0:
		return fmt.Errorf("negative repetitions %d", u.Reps)
	case u.Reps > maxReps:
		return fmt.Errorf("repetitions %d above %d", u.Reps, int64(maxReps))
	case u.Reps > 0 && len(u.Deltas) == 0:
		return fmt.Errorf("%d repetitions of no deltas", u.Reps)
	case len(u.Deltas) > 1<<20:
		return fmt.Errorf("%d deltas", len(u.Deltas))
	case u.Tail < 0 || u.Tail > max(1, int64(len(u.Deltas))):
		return fmt.Errorf("tail %d outside 0..%d", u.Tail, max(1, len(u.Deltas)))
	}
	return nil
}

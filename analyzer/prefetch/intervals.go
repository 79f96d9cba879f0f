package prefetch

import "sort"

// span is the byte range [lo, hi).
type span struct{ lo, hi int64 }

// intervals is a set of bytes kept as sorted, disjoint, non-adjacent spans.
type intervals struct{ s []span }

// add inserts [lo, hi).
func (v *intervals) add(lo, hi int64) {
	if hi <= lo {
		return
	}
	n := len(v.s)
	if n == 0 || v.s[n-1].hi < lo {
		v.s = append(v.s, span{lo, hi}) // the common case: beyond the end
		return
	}
	// First span that ends at or after lo, and first that starts after hi.
	i := sort.Search(n, func(k int) bool { return v.s[k].hi >= lo })
	j := sort.Search(n, func(k int) bool { return v.s[k].lo > hi })
	if i == j {
		v.s = append(v.s, span{})
		copy(v.s[i+1:], v.s[i:])
		v.s[i] = span{lo, hi}
		return
	}
	merged := span{min(lo, v.s[i].lo), max(hi, v.s[j-1].hi)}
	v.s[i] = merged
	v.s = append(v.s[:i+1], v.s[j:]...)
}

// covers reports whether every byte of [lo, hi) is in the set.
func (v *intervals) covers(lo, hi int64) bool {
	if hi <= lo {
		return true
	}
	i := sort.Search(len(v.s), func(k int) bool { return v.s[k].hi > lo })
	return i < len(v.s) && v.s[i].lo <= lo && v.s[i].hi >= hi
}

// size is the number of bytes in the set.
func (v *intervals) size() int64 {
	var n int64
	for _, s := range v.s {
		n += s.hi - s.lo
	}
	return n
}

// overlapRange is the number of bytes of [lo, hi) in the set.
func (v *intervals) overlapRange(lo, hi int64) int64 {
	var n int64
	for i := sort.Search(len(v.s), func(k int) bool { return v.s[k].hi > lo }); i < len(v.s) && v.s[i].lo < hi; i++ {
		n += min(hi, v.s[i].hi) - max(lo, v.s[i].lo)
	}
	return n
}

// remove takes [lo, hi) out of the set.
func (v *intervals) remove(lo, hi int64) {
	if hi <= lo {
		return
	}
	i := sort.Search(len(v.s), func(k int) bool { return v.s[k].hi > lo })
	j := i
	var keep []span
	for ; j < len(v.s) && v.s[j].lo < hi; j++ {
		if v.s[j].lo < lo {
			keep = append(keep, span{v.s[j].lo, lo})
		}
		if v.s[j].hi > hi {
			keep = append(keep, span{hi, v.s[j].hi})
		}
	}
	if i == j {
		return
	}
	rest := append(keep, v.s[j:]...)
	v.s = append(v.s[:i], rest...)
}

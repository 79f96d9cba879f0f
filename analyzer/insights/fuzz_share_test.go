package insights

import (
	"testing"
)

// FuzzDecodeCollector: another rank's collector, however mangled, is
// refused with an error or combines and gives findings; it never panics.
func FuzzDecodeCollector(f *testing.F) {
	c := NewShareCollector(Thresholds{})
	r := 0
	c.Procs = append(c.Procs, &Proc{Index: 0, Rank: &r})
	c.Files["/d/f"] = &File{Path: "/d/f", Procs: map[int]*FileProc{0: {Opens: 2}}}
	c.Sizes[1][4096] = 3
	c.sizeOrder[1] = []int64{4096}
	if b, err := c.Encode(); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCollector(b)
		if err != nil {
			return
		}
		Combine(Thresholds{}, []*Collector{c}).Findings()
	})
}

package centersim

import (
	"slices"
	"strings"
	"testing"
)

// TestParseSeeds proves that seeds and ranges mix, and that every field
// the list cannot use is refused by name rather than dropped.
func TestParseSeeds(t *testing.T) {
	for _, c := range []struct {
		list string
		want []uint64
		bad  string
	}{
		{list: "7", want: []uint64{7}},
		{list: "7,8, 9", want: []uint64{7, 8, 9}},
		{list: "1001-1004", want: []uint64{1001, 1002, 1003, 1004}},
		{list: "101-102,910", want: []uint64{101, 102, 910}},
		{list: "5-5", want: []uint64{5}},
		{list: "1101-1112x", bad: `"1101-1112x"`},
		{list: "9-3", bad: `"9-3"`},
		{list: "3,,4", bad: `""`},
		{list: "seven", bad: `"seven"`},
		{list: "-4", bad: `"-4"`},
		{list: "0-99999999", bad: "more than"},
	} {
		got, err := ParseSeeds(c.list)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("ParseSeeds(%q) = %v, %v; want an error naming %s", c.list, got, err, c.bad)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseSeeds(%q) = %v, %v; want %v", c.list, got, err, c.want)
		}
	}
}

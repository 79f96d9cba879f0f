package sequitur

import (
	"math/rand"
	"testing"
)

// The digram index behaves as a map under any mix of operations,
// including keys that collide in their home slot.
func TestDigramIndexAsMap(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var d digramIndex
	ref := map[uint64]int32{}
	keys := make([]uint64, 3000)
	for i := range keys {
		switch i % 3 {
		case 0:
			keys[i] = rng.Uint64()
		case 1:
			keys[i] = digramKey(int32(rng.Intn(50)), ^int32(rng.Intn(50)))
		default:
			keys[i] = uint64(i) << 40 // the same home slot while the table is small
		}
	}
	for step := 0; step < 200000; step++ {
		k := keys[rng.Intn(len(keys))]
		switch rng.Intn(5) {
		case 0:
			v := int32(rng.Intn(1 << 20))
			d.set(k, v)
			ref[k] = v
		case 1:
			d.del(k)
			delete(ref, k)
		case 2:
			v := int32(rng.Intn(1 << 20))
			got, found := d.getOrSet(k, v)
			want, wok := ref[k]
			if found != wok || (found && got != want) {
				t.Fatalf("step %d: getOrSet(%#x) = %d, %v; map has %d, %v", step, k, got, found, want, wok)
			}
			if !wok {
				ref[k] = v
			}
		case 3:
			v := ref[k]
			if rng.Intn(2) == 0 {
				v = int32(rng.Intn(1 << 20))
			}
			d.delIf(k, v)
			if w, ok := ref[k]; ok && w == v {
				delete(ref, k)
			}
		}
		got, ok := d.get(k)
		want, wok := ref[k]
		if ok != wok || got != want {
			t.Fatalf("step %d: get(%#x) = %d, %v; map has %d, %v", step, k, got, ok, want, wok)
		}
		if d.len() != len(ref) {
			t.Fatalf("step %d: %d entries, map has %d", step, d.len(), len(ref))
		}
	}
	for _, k := range keys {
		got, ok := d.get(k)
		want, wok := ref[k]
		if ok != wok || got != want {
			t.Fatalf("get(%#x) = %d, %v; map has %d, %v", k, got, ok, want, wok)
		}
	}
}

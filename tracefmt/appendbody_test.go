package tracefmt

import (
	"encoding/json"
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// The record types appendBody writes by hand, with their field counts: a
// field added to one of them must be added to appendBody too, and then
// here.
func TestAppendBodyKnowsEveryField(t *testing.T) {
	for _, c := range []struct {
		v      any
		fields int
	}{
		{Header{}, 19}, {File{}, 2}, {Context{}, 2}, {Frame{}, 3}, {Proc{}, 5}, {Footer{}, 7}, {Prefetch{}, 9}, {indexedContext{}, 2},
	} {
		if n := reflect.TypeOf(c.v).NumField(); n != c.fields {
			t.Errorf("%T has %d fields, appendBody writes %d: teach appendBody the new ones", c.v, n, c.fields)
		}
	}
}

var trickyStrings = []string{
	"", "plain", "/data/run 1/out.h5", `quote " and \ backslash`, "<tag> & amp", "tab\there\nnewline\x00nul\x1f",
	"\x7f del", "é accent", "日本語", "\u2028 line separator \u2029", "bad utf8 \xff\xfe end", "emoji 🙂",
}

func randString(rng *rand.Rand) string {
	if rng.Intn(3) == 0 {
		return trickyStrings[rng.Intn(len(trickyStrings))]
	}
	b := make([]byte, rng.Intn(12))
	for i := range b {
		b[i] = byte(rng.Intn(256))
	}
	return string(b)
}

func randFloat(rng *rand.Rand) float64 {
	switch rng.Intn(6) {
	case 0:
		return 0
	case 1:
		return float64(rng.Intn(1000))
	case 2:
		return rng.Float64()
	case 3:
		return math.Ldexp(rng.Float64(), rng.Intn(200)-100) // tiny to huge
	case 4:
		return -rng.ExpFloat64() * 1e-7
	}
	return []float64{1e-6, 1e21, 9.99e20, 1e-7, 123456789012345678, math.MaxFloat64, math.SmallestNonzeroFloat64}[rng.Intn(7)]
}

// appendBody writes every record as json.Marshal does, byte for byte.
func TestAppendBodyAsJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 20000; i++ {
		var v any
		switch i % 5 {
		case 0:
			h := Header{Version: rng.Intn(3), Program: randString(rng), Host: randString(rng), PID: rng.Intn(1 << 22),
				PPID: rng.Intn(100) - 1, StartUnixNs: rng.Int63(), StartMonoNs: -rng.Int63(), ContextDepth: rng.Intn(65), Library: randString(rng)}
			for j := rng.Intn(4); j > 0; j-- {
				h.Args = append(h.Args, randString(rng))
			}
			if rng.Intn(2) == 0 {
				h.Args = []string{}
			}
			if rng.Intn(2) == 0 {
				h.ForkUnixNs = rng.Int63()
			}
			if rng.Intn(4) == 0 {
				h.Shared, h.Partial = true, randString(rng)
				h.Job = &SourceJob{UID: rng.Int63(), CommandLine: randString(rng), RunNs: rng.Int63(), Modules: []string{randString(rng)}}
				h.Notes = []string{randString(rng), randString(rng)}
			}
			if rng.Intn(2) == 0 {
				r := rng.Intn(1000) - 10
				h.Rank = &r
			}
			if rng.Intn(3) == 0 {
				h.Source, h.JobID, h.Procs = randString(rng), randString(rng), rng.Intn(5000)-1
			}
			v = h
		case 1:
			v = File{ID: rng.Uint32(), Path: randString(rng)}
		case 2:
			c := indexedContext{Index: rng.Uint32(), Context: Context{ID: rng.Uint64()}}
			if rng.Intn(4) > 0 {
				c.Frames = []Frame{}
			}
			for j := rng.Intn(5); j > 0; j-- {
				c.Frames = append(c.Frames, Frame{Module: randString(rng), Offset: rng.Uint64(), Function: []string{"", randString(rng)}[rng.Intn(2)]})
			}
			v = c
		case 3:
			v = Proc{Op: randString(rng), TimeNs: rng.Int63() - rng.Int63(), Child: []int{0, rng.Intn(1 << 22), -5}[rng.Intn(3)],
				Path: []string{"", randString(rng)}[rng.Intn(2)], Status: []int{0, rng.Intn(256) - 128}[rng.Intn(2)]}
		case 4:
			f := Footer{Reason: randString(rng), EndNs: rng.Int63(), Events: rng.Uint64(), Bytes: rng.Uint64(), Dropped: uint64(rng.Intn(3))}
			switch rng.Intn(3) {
			case 0:
			case 1:
				f.Model = map[string]any{}
			default:
				f.Model = map[string]any{}
				for j := rng.Intn(10); j > 0; j-- {
					vals := []any{nil, true, false, randString(rng), rng.Intn(1 << 30), int64(-rng.Int63()), uint64(rng.Uint64()),
						uint32(rng.Uint32()), int32(rng.Int31()), uint(rng.Uint32()), randFloat(rng), -randFloat(rng)}
					f.Model[randString(rng)] = vals[rng.Intn(len(vals))]
				}
			}
			if rng.Intn(2) == 0 {
				f.Prefetch = &Prefetch{Reads: rng.Uint64(), Covered: rng.Uint64(), PrefetchedBytes: rng.Uint64(), UsedBytes: rng.Uint64(),
					WastedBytes: rng.Uint64(), Calls: rng.Uint64(), Misses: uint64(rng.Intn(3))}
				if rng.Intn(2) == 0 {
					f.Prefetch.Capped, f.Prefetch.TableFiles = uint64(rng.Intn(5)), rng.Intn(5)
				}
			}
			v = f
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendBody(nil, v)
		if !ok {
			t.Fatalf("appendBody refused %#v", v)
		}
		if string(got) != string(want) {
			t.Fatalf("appendBody(%#v)\n got %s\nwant %s", v, got, want)
		}
	}
}

// Values appendBody leaves to encoding/json.
func TestAppendBodyRefuses(t *testing.T) {
	for _, v := range []any{
		Footer{Model: map[string]any{"x": math.NaN()}},
		Footer{Model: map[string]any{"x": []int{1}}},
		Footer{Model: map[string]any{"x": float32(1)}},
		struct{ A int }{1},
	} {
		if _, ok := appendBody(nil, v); ok {
			t.Errorf("appendBody accepted %#v", v)
		}
	}
}

// Package fuzzinput builds small seed corpora for Go fuzz targets: a valid
// document and a few small edits of it.
//
// Go's fuzzer minimises every input that reaches new code before it goes
// on, and the minimiser costs about one run of the target per byte of the
// input. A seed of a few kilobytes therefore keeps a worker minimising for
// tens of seconds at a time, and the fuzzer reports 0 execs/s although it
// runs. Seeds of a few hundred bytes, near the valid document so that the
// decoder's deeper checks are reached, keep the minimiser short.
package fuzzinput

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// Edits returns doc followed by n small edits of it: cuts short, a byte
// changed, deleted or doubled, a few bytes repeated. The edits are the same
// for the same document and n, so a corpus built from them is stable from
// run to run.
func Edits(doc []byte, n int) [][]byte {
	out := [][]byte{bytes.Clone(doc)}
	if len(doc) == 0 {
		return out
	}
	h := fnv.New64a()
	h.Write(doc)
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(n)))
	for k := 0; k < n; k++ {
		i := rng.IntN(len(doc))
		var e []byte
		switch k % 5 {
		case 0: // cut short
			e = bytes.Clone(doc[:i])
		case 1: // a byte changed to one that often means a length or a type
			e = bytes.Clone(doc)
			e[i] = []byte{0x00, 0xff, 0x7f, 0x80, 0xc0, '"', '\n', '9'}[rng.IntN(8)]
		case 2: // a byte deleted
			e = append(bytes.Clone(doc[:i]), doc[i+1:]...)
		case 3: // a byte doubled
			e = append(bytes.Clone(doc[:i+1]), doc[i:]...)
		case 4: // up to 8 bytes repeated in place
			j := min(len(doc), i+1+rng.IntN(8))
			e = append(bytes.Clone(doc[:j]), doc[i:]...)
		}
		out = append(out, e)
	}
	return out
}

// Lines returns the first n lines of a text document, each with its
// newline: a seed for a line-oriented reader whose full fixtures are too
// long to seed with.
func Lines(doc []byte, n int) []byte {
	end := 0
	for k := 0; k < n && end < len(doc); k++ {
		i := bytes.IndexByte(doc[end:], '\n')
		if i < 0 {
			return bytes.Clone(doc)
		}
		end += i + 1
	}
	return bytes.Clone(doc[:end])
}

// ShrinkMsgpack returns a smaller msgpack document that valid still
// accepts: it drops map entries and array elements of doc one at a time,
// keeping each removal after which valid(document) holds. A saved model or
// a partial of a few calls is a kilobyte or two of field names and
// statistics; shrunk, it is a few hundred bytes that still pass the
// decoder's checks, which makes it a seed the fuzzer can afford to edit.
// A doc that is not msgpack, or that valid refuses once re-encoded, comes
// back unchanged.
func ShrinkMsgpack(doc []byte, valid func([]byte) bool) []byte {
	decode := func(b []byte) (any, error) {
		var v any
		err := msgpack.Unmarshal(b, &v)
		return v, err
	}
	encode := func(v any) ([]byte, error) {
		var b bytes.Buffer
		enc := msgpack.NewEncoder(&b)
		enc.SetSortMapKeys(true)
		enc.UseCompactInts(true)
		enc.UseCompactFloats(true)
		err := enc.Encode(v)
		return b.Bytes(), err
	}
	return shrink(doc, decode, encode, valid)
}

// ShrinkJSON is ShrinkMsgpack for a JSON document; numbers keep their
// text.
func ShrinkJSON(doc []byte, valid func([]byte) bool) []byte {
	decode := func(b []byte) (any, error) {
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		err := dec.Decode(&v)
		return v, err
	}
	return shrink(doc, decode, json.Marshal, valid)
}

// shrink drops map entries and array elements of the decoded doc while
// valid accepts the encoded result.
func shrink(doc []byte, decode func([]byte) (any, error), encodeValue func(any) ([]byte, error), valid func([]byte) bool) []byte {
	root, err := decode(doc)
	if err != nil {
		return doc
	}
	encode := func() ([]byte, bool) {
		b, err := encodeValue(root)
		if err != nil {
			return nil, false
		}
		return b, valid(b)
	}
	best, ok := encode()
	if !ok {
		return doc
	}
	// walk works on the value that get returns and set stores, so that
	// a shortened array is written back into its parent.
	var walk func(get func() any, set func(any))
	walk = func(get func() any, set func(any)) {
		switch x := get().(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				old := x[k]
				delete(x, k)
				if b, ok := encode(); ok {
					best = b
					continue
				}
				x[k] = old
				walk(func() any { return x[k] }, func(v any) { x[k] = v })
			}
		case []any:
			for i := len(x) - 1; i >= 0; i-- {
				full := x
				set(append(slices.Clone(x[:i]), x[i+1:]...))
				if b, ok := encode(); ok {
					best = b
					x = get().([]any)
					continue
				}
				set(full)
				walk(func() any { return x[i] }, func(v any) { x[i] = v })
			}
		}
	}
	walk(func() any { return root }, func(v any) { root = v })
	return best
}

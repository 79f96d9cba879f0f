package pattern

import (
	"bytes"
	"errors"
	"fmt"

	"iopred/internal/msgcheck"

	"github.com/vmihailenco/msgpack/v5"
)

// Index is the serialisable pattern index of a file or process: local
// pattern entries, global patterns, and the runs that joined no global
// pattern.
type Index struct {
	Entries []Entry  `msgpack:"e,omitempty"`
	Globals []Global `msgpack:"g,omitempty"`
	Runs    []Run    `msgpack:"r,omitempty"`
}

// Marshal encodes the index in msgpack (short keys), the compact form the
// per-process model persists and the compression ratio counts.
func (x *Index) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true) // a delta of 16 takes one byte, not nine
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Unmarshal decodes an index written by Marshal and checks that it is
// consistent (lengths and physical offsets stand for as many values as the
// logical offsets, repetitions within bounds, global patterns well formed).
// It returns an error, never panics, on any input.
func Unmarshal(data []byte) (*Index, error) {
	var x Index
	if err := msgcheck.Check(data); err != nil {
		return nil, fmt.Errorf("pattern: decode index: %w", err)
	}
	if err := msgpack.Unmarshal(data, &x); err != nil {
		return nil, fmt.Errorf("pattern: decode index: %w", err)
	}
	for i := range x.Entries {
		if err := x.Entries[i].validate(); err != nil {
			return nil, fmt.Errorf("pattern: decode index: entry %d: %w", i, err)
		}
	}
	for i := range x.Globals {
		if err := x.Globals[i].validate(); err != nil {
			return nil, fmt.Errorf("pattern: decode index: global %d: %w", i, err)
		}
		x.Globals[i].index()
	}
	for i, r := range x.Runs {
		if r.Count < 1 || r.Count > maxReps || r.Length < 0 {
			return nil, fmt.Errorf("pattern: decode index: run %d: count %d, length %d", i, r.Count, r.Length)
		}
	}
	return &x, nil
}

// EncodedSize is the size of the index's msgpack form, counted as it is
// encoded rather than held (the index of a long irregular trace encodes
// to megabytes).
func (x *Index) EncodedSize() (int, error) {
	var n byteCounter
	enc := msgpack.NewEncoder(&n)
	enc.UseCompactInts(true) // as Marshal
	err := enc.Encode(x)
	return int(n), err
}

var errRunsSet = errors.New("pattern: EncodedSizeWith: the index has runs of its own")

// byteCounter is an io.Writer and io.ByteWriter that counts the bytes
// written to it.
type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) { *c += byteCounter(len(p)); return len(p), nil }

func (c *byteCounter) WriteByte(byte) error { *c++; return nil }

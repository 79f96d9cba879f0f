package msgcheck

import (
	"bytes"

	"github.com/vmihailenco/msgpack/v5"
)

// Marshal encodes v as msgpack with compact integers (a small count
// takes one byte, not nine): the form in which analyses' partial results
// travel between processes.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Unmarshal decodes b, another process's message, into v once Check has
// found its declared lengths true.
func Unmarshal(b []byte, v any) error {
	if err := Check(b); err != nil {
		return err
	}
	return msgpack.NewDecoder(bytes.NewReader(b)).Decode(v)
}

// Package msgcheck checks that a msgpack document's declared lengths fit
// in the document before a decoder trusts them.
//
// github.com/vmihailenco/msgpack/v5 (v5.4.1) sizes a slice from the
// array length its input declares, whatever the input's size: its
// allocation limit is never applied (decode_slice.go tests the limit flag
// against 1, which a flag of value 8 never equals). A 58-byte model that
// declares an array of 0xdddddddd elements makes it ask for 60 GB, and the
// process dies of "out of memory", which no recover catches. Every element
// takes at least one byte, so a length larger than what is left of the
// document is a lie; Check finds it before the decoder runs.
package msgcheck

import "fmt"

// MaxDepth bounds the nesting of arrays and maps, so that a document of
// nested one-byte arrays cannot exhaust the decoder's stack.
const MaxDepth = 256

// Check walks the msgpack values in b (one or more, back to back) and
// returns an error naming the byte offset of the first value whose
// declared length runs past the end of b, that is cut short, that nests
// deeper than MaxDepth, or whose type byte msgpack does not define (0xc1).
func Check(b []byte) error {
	c := checker{b: b}
	for c.i < len(b) {
		if err := c.value(0); err != nil {
			return err
		}
	}
	return nil
}

type checker struct {
	b []byte
	i int
}

// need returns the n-byte big-endian integer at the cursor and advances.
func (c *checker) need(n int) (uint64, error) {
	if len(c.b)-c.i < n {
		return 0, fmt.Errorf("msgpack: offset %d: value cut short", c.i)
	}
	var v uint64
	for _, x := range c.b[c.i : c.i+n] {
		v = v<<8 | uint64(x)
	}
	c.i += n
	return v, nil
}

// skip advances over n bytes of payload.
func (c *checker) skip(at int, n uint64) error {
	if n > uint64(len(c.b)-c.i) {
		return fmt.Errorf("msgpack: offset %d: %d bytes declared, %d left", at, n, len(c.b)-c.i)
	}
	c.i += int(n)
	return nil
}

// items checks n values (2n for a map) that follow.
func (c *checker) items(at int, n uint64, perItem uint64, depth int) error {
	if depth >= MaxDepth {
		return fmt.Errorf("msgpack: offset %d: nested deeper than %d", at, MaxDepth)
	}
	if n > uint64(len(c.b)-c.i)/perItem {
		return fmt.Errorf("msgpack: offset %d: %d elements declared, %d bytes left", at, n, len(c.b)-c.i)
	}
	for k := uint64(0); k < n*perItem; k++ {
		if err := c.value(depth + 1); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) value(depth int) error {
	at := c.i
	t, err := c.need(1)
	if err != nil {
		return err
	}
	switch {
	case t <= 0x7f || t >= 0xe0: // fixint
		return nil
	case t <= 0x8f: // fixmap
		return c.items(at, t&0x0f, 2, depth)
	case t <= 0x9f: // fixarray
		return c.items(at, t&0x0f, 1, depth)
	case t <= 0xbf: // fixstr
		return c.skip(at, t&0x1f)
	}
	switch t {
	case 0xc0, 0xc2, 0xc3: // nil, false, true
		return nil
	case 0xc1:
		return fmt.Errorf("msgpack: offset %d: type byte 0xc1 is never used", at)
	case 0xc4, 0xc5, 0xc6, 0xd9, 0xda, 0xdb: // bin and str 8, 16, 32
		n, err := c.need(lengthWidth(t))
		if err != nil {
			return err
		}
		return c.skip(at, n)
	case 0xc7, 0xc8, 0xc9: // ext 8, 16, 32: length, type, data
		n, err := c.need(lengthWidth(t))
		if err != nil {
			return err
		}
		return c.skip(at, n+1)
	case 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3: // numbers
		return c.skip(at, numberWidth[t-0xca])
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 and its type
		return c.skip(at, 1+uint64(1)<<(t-0xd4))
	case 0xdc, 0xdd: // array 16, 32
		n, err := c.need(lengthWidth(t))
		if err != nil {
			return err
		}
		return c.items(at, n, 1, depth)
	default: // 0xde, 0xdf: map 16, 32
		n, err := c.need(lengthWidth(t))
		if err != nil {
			return err
		}
		return c.items(at, n, 2, depth)
	}
}

// numberWidth is the payload size of the number types 0xca to 0xd3
// (float 32, float 64, uint 8 to 64, int 8 to 64).
var numberWidth = [10]uint64{4, 8, 1, 2, 4, 8, 1, 2, 4, 8}

// lengthWidth is the size of the length field that follows type byte t:
// str, bin, ext, array and map in their 8-, 16- and 32-bit forms. A
// switch, not a map literal: a literal builds its map at every value
// (some 5.5 M instructions to check a 2.5 KiB model, callgrind).
func lengthWidth(t uint64) int {
	switch t {
	case 0xc4, 0xc7, 0xd9: // bin 8, ext 8, str 8
		return 1
	case 0xc5, 0xc8, 0xda, 0xdc, 0xde: // bin 16, ext 16, str 16, array 16, map 16
		return 2
	default: // bin 32, ext 32, str 32, array 32, map 32
		return 4
	}
}

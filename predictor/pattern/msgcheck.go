package pattern

import (
	"fmt"
)

// checkMsgpack walks a msgpack document without decoding it and rejects
// one whose arrays, maps or strings claim more elements or bytes than the
// input holds, so that a corrupt length cannot make the decoder allocate
// gigabytes. Every element takes at least one byte, which bounds a
// container's length by the bytes left.
func checkMsgpack(b []byte) error {
	pending := 1 // values still to read
	i := 0
	need := func(n uint64) error {
		if n > uint64(len(b)-i) {
			return fmt.Errorf("byte %d: length %d beyond the %d bytes left", i, n, len(b)-i)
		}
		return nil
	}
	be := func(n int) (uint64, error) {
		if err := need(uint64(n)); err != nil {
			return 0, err
		}
		var v uint64
		for _, c := range b[i : i+n] {
			v = v<<8 | uint64(c)
		}
		i += n
		return v, nil
	}
	for pending > 0 {
		if i >= len(b) {
			return fmt.Errorf("byte %d: input ends inside a value", i)
		}
		c := b[i]
		i++
		pending--
		var skip uint64
		var items uint64
		var err error
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c >= 0x80 && c <= 0x8f:
			items = 2 * uint64(c&0x0f)
		case c >= 0x90 && c <= 0x9f:
			items = uint64(c & 0x0f)
		case c >= 0xa0 && c <= 0xbf:
			skip = uint64(c & 0x1f)
		case c == 0xc4 || c == 0xd9:
			skip, err = be(1)
		case c == 0xc5 || c == 0xda:
			skip, err = be(2)
		case c == 0xc6 || c == 0xdb:
			skip, err = be(4)
		case c == 0xc7:
			skip, err = be(1)
			skip++
		case c == 0xc8:
			skip, err = be(2)
			skip++
		case c == 0xc9:
			skip, err = be(4)
			skip++
		case c == 0xca:
			skip = 4
		case c == 0xcb:
			skip = 8
		case c >= 0xcc && c <= 0xcf:
			skip = 1 << (c - 0xcc)
		case c >= 0xd0 && c <= 0xd3:
			skip = 1 << (c - 0xd0)
		case c >= 0xd4 && c <= 0xd8:
			skip = 1 + 1<<(c-0xd4)
		case c == 0xdc:
			items, err = be(2)
		case c == 0xdd:
			items, err = be(4)
		case c == 0xde:
			items, err = be(2)
			items *= 2
		case c == 0xdf:
			items, err = be(4)
			items *= 2
		default:
			return fmt.Errorf("byte %d: invalid type code 0x%02x", i-1, c)
		}
		if err != nil {
			return err
		}
		if err := need(skip); err != nil {
			return err
		}
		i += int(skip)
		// Every value still pending needs at least one byte.
		if err := need(items + uint64(pending)); err != nil {
			return err
		}
		pending += int(items)
	}
	return nil
}

package pattern

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// EncodeMsgpack writes the groups as an array of [first run, logical
// distance, physical distance, runs] (msgpack.CustomEncoder), so that
// RunGroups cross processes as compactly as they are held.
func (g RunGroups) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(len(g.groups)); err != nil {
		return err
	}
	for _, x := range g.groups {
		if err := enc.EncodeArrayLen(4); err != nil {
			return err
		}
		if err := enc.Encode(&x.first); err != nil {
			return err
		}
		for _, v := range []int64{x.dLog, x.dPhys, int64(x.n)} {
			if err := enc.EncodeInt(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// DecodeMsgpack reads what EncodeMsgpack wrote (msgpack.CustomDecoder),
// refusing groups without runs.
func (g *RunGroups) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	*g = RunGroups{}
	for i := 0; i < n; i++ {
		if k, err := dec.DecodeArrayLen(); err != nil {
			return err
		} else if k != 4 {
			return fmt.Errorf("pattern: run group of %d fields, want 4", k)
		}
		var x runGroup
		if err := dec.Decode(&x.first); err != nil {
			return err
		}
		var runs int64
		for _, v := range []*int64{&x.dLog, &x.dPhys, &runs} {
			if *v, err = dec.DecodeInt64(); err != nil {
				return err
			}
		}
		if runs < 1 || runs > 1<<40 {
			return fmt.Errorf("pattern: run group of %d runs", runs)
		}
		x.n = int(runs)
		g.groups = append(g.groups, x)
		g.n += x.n
	}
	return nil
}

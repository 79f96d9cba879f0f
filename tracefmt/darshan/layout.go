package darshan

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
)

// Lustre is one file's Lustre layout as Darshan's LUSTRE module kept it:
// its layout components (one before module version 2, which had no
// composite layouts) and the OSTs its stripes lie on.
type Lustre struct {
	ID         uint64
	Rank       int64
	Components []LustreComponent
	// OSTs are the OST indices of the used components' stripes, in order.
	OSTs []int64
}

// LustreComponent is one component of a file layout. Fields Darshan did
// not record (module version 1) are -1.
type LustreComponent struct {
	StripeSize, StripeCount, Pattern, Flags, ExtentStart, ExtentEnd, MirrorID int64
	Pool                                                                      string
}

// StripeSize and StripeCount are the first component's (the whole file's
// for a plain layout); 0 without a component.
func (l *Lustre) StripeSize() int64 {
	if len(l.Components) == 0 {
		return 0
	}
	return l.Components[0].StripeSize
}

// StripeCount is the first component's stripe count.
func (l *Lustre) StripeCount() int64 {
	if len(l.Components) == 0 {
		return 0
	}
	return l.Components[0].StripeCount
}

// Heatmap is one of Darshan's HEATMAP records: the bytes a layer (POSIX,
// MPIIO, STDIO) read and wrote in each time bin of one rank, from the
// job's start.
type Heatmap struct {
	ID       uint64
	Rank     int64
	Layer    string  // from the record's name, "heatmap:POSIX"
	BinWidth float64 // seconds
	Writes   []int64 // bytes written in each bin
	Reads    []int64
}

// maxCount bounds the lengths a LUSTRE or HEATMAP record claims before its
// data is read: no file has more stripes, no run more bins.
const maxCount = 1 << 20

// readLustre decodes a LUSTRE region (module versions 1 and 2).
func (l *Log) readLustre(r io.ReaderAt, m *Module) error {
	if m.Version == 0 || m.Version > 2 {
		return fmt.Errorf("LUSTRE module version %d: this reader knows 1 and 2", m.Version)
	}
	src, err := l.moduleSource(r, m)
	if err != nil {
		return err
	}
	m.Decoded = true
	bo := l.ByteOrder
	ints := func(n int64) ([]int64, error) {
		buf := make([]byte, 8*n)
		if err := readFull(src, buf); err != nil {
			return nil, err
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(bo.Uint64(buf[8*i:]))
		}
		return out, nil
	}
	fail := func(err error) error {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = errPartial // the region ends inside a record
		}
		return fmt.Errorf("after %d records: %w", m.Records, err)
	}
	for {
		var head []int64
		if m.Version == 1 {
			// id, rank, then OSTS, MDTS, STRIPE_OFFSET, STRIPE_SIZE,
			// STRIPE_WIDTH (the stripe count), then the OSTs.
			head, err = ints(7)
		} else {
			// id, rank, components, stripes, then each component's seven
			// counters and 16-byte pool name, then the OSTs.
			head, err = ints(4)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fail(err)
		}
		rec := &Lustre{ID: uint64(head[0]), Rank: head[1]}
		if m.Version == 1 {
			n := head[6]
			if n < 0 || n > maxCount {
				return fmt.Errorf("record %d claims %d stripes", m.Records+1, n)
			}
			rec.Components = []LustreComponent{{StripeSize: head[5], StripeCount: n, Pattern: -1, Flags: -1, ExtentEnd: -1, MirrorID: -1}}
			if rec.OSTs, err = ints(n); err != nil {
				return fail(err)
			}
		} else {
			comps, stripes := head[2], head[3]
			if comps < 0 || comps > maxCount || stripes < 0 || stripes > maxCount {
				return fmt.Errorf("record %d claims %d components and %d stripes", m.Records+1, comps, stripes)
			}
			buf := make([]byte, 72)
			var used int64
			done := false
			for range comps {
				if err := readFull(src, buf); err != nil {
					return fail(err)
				}
				v := func(i int) int64 { return int64(bo.Uint64(buf[8*i:])) }
				// Darshan marks the components a layout did not use with
				// a stripe size of -1; the used ones come first.
				if v(0) == -1 || done {
					done = true
					continue
				}
				pool := string(bytes.TrimRight(buf[56:72], "\x00"))
				rec.Components = append(rec.Components, LustreComponent{StripeSize: v(0), StripeCount: v(1), Pattern: v(2), Flags: v(3),
					ExtentStart: v(4), ExtentEnd: v(5), MirrorID: v(6), Pool: strings.ToValidUTF8(pool, "?")})
				used += v(1)
			}
			osts, err := ints(stripes)
			if err != nil {
				return fail(err)
			}
			rec.OSTs = osts[:min(max(used, 0), stripes)]
		}
		l.Lustre = append(l.Lustre, rec)
		m.Records++
	}
}

// readHeatmap decodes a HEATMAP region (module version 1).
func (l *Log) readHeatmap(r io.ReaderAt, m *Module) error {
	if m.Version != 1 {
		return fmt.Errorf("HEATMAP module version %d: this reader knows 1", m.Version)
	}
	src, err := l.moduleSource(r, m)
	if err != nil {
		return err
	}
	m.Decoded = true
	bo := l.ByteOrder
	// The record as the runtime laid it out in memory: base record, bin
	// width, bin count and the two bin pointers (16 bytes, meaningless on
	// disk), then the write bins and the read bins.
	head := make([]byte, 48)
	var firstBins int64
	var firstWidth float64
	for {
		err := readFull(src, head)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("after %d records: %w", m.Records, err)
		}
		h := &Heatmap{ID: bo.Uint64(head), Rank: int64(bo.Uint64(head[8:])), BinWidth: math.Float64frombits(bo.Uint64(head[16:]))}
		n := int64(bo.Uint64(head[24:]))
		if n < 0 || n > maxCount {
			return fmt.Errorf("record %d claims %d bins", m.Records+1, n)
		}
		bins := make([]byte, 16*n)
		if err := readFull(src, bins); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = errPartial
			}
			return fmt.Errorf("record %d (rank %d) of %d bins: %w", m.Records+1, h.Rank, n, err)
		}
		h.Writes, h.Reads = make([]int64, n), make([]int64, n)
		for i := range n {
			h.Writes[i] = int64(bo.Uint64(bins[8*i:]))
			h.Reads[i] = int64(bo.Uint64(bins[8*(n+i):]))
		}
		// Darshan 3.4.0 to 3.4.3 could give a rank one bin more or less
		// than the others (clock skew, Darshan issue 941): its records are
		// brought to the first record's bins, as Darshan's own reader
		// does for one too many; one too few gains an empty last bin.
		if m.Records == 0 {
			firstBins, firstWidth = n, h.BinWidth
		} else if h.BinWidth == firstWidth {
			switch n {
			case firstBins + 1:
				h.Writes, h.Reads = h.Writes[:n-1], h.Reads[:n-1]
			case firstBins - 1:
				h.Writes, h.Reads = append(h.Writes, 0), append(h.Reads, 0)
			}
		}
		h.Layer = strings.TrimPrefix(l.Path(h.ID), "heatmap:")
		l.Heatmaps = append(l.Heatmaps, h)
		m.Records++
	}
}

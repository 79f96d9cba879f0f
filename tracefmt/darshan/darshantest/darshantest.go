// Package darshantest writes small Darshan logs for tests: any log format
// version from 3.00 to 3.41, either byte order, zlib-compressed (one or
// several streams per region) or not, with chosen job facts, names,
// counter records and DXT segments. Real logs test what Darshan writes;
// these test the combinations no real log at hand has (a big-endian 3.41
// log with DXT, a partial module, a corrupt field).
package darshantest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"math"
	"sort"
)

// Log describes a log to write. Zero values give a little-endian,
// zlib-compressed 3.41 log.
type Log struct {
	Version string                 // "3.00", "3.10", "3.20", "3.21" or "3.41"; "" is "3.41"
	Order   binary.AppendByteOrder // nil is little-endian
	// Compression is 0 (zlib), 1 (bzip2, which this package cannot write)
	// or 2 (none).
	Compression uint8
	// Streams splits each compressed region into this many zlib streams,
	// as a job of several ranks writes them (0 or 1: one).
	Streams int
	Partial uint64 // the header's flags, by slot

	UID, JobID, NProcs int64
	StartSec, EndSec   int64
	StartNsec, EndNsec int64 // written by 3.41 only
	Metadata           string
	Exe                string
	Mounts             [][2]string // type, path

	Names   map[uint64]string
	Modules []Module
}

// Module is a module region: its header slot, version and uncompressed
// content (records built with Counters and DXT, or any bytes).
type Module struct {
	Slot    int
	Version uint32
	Data    []byte
}

func (l *Log) order() binary.AppendByteOrder {
	if l.Order == nil {
		return binary.LittleEndian
	}
	return l.Order
}

func (l *Log) version() string {
	if l.Version == "" {
		return "3.41"
	}
	return l.Version
}

// Bytes returns the log file.
func (l *Log) Bytes() []byte {
	bo := l.order()
	v := l.version()
	new := v == "3.41"
	slots, hsize := 16, 360
	if new {
		slots, hsize = 64, 1328
	}
	// Job region.
	var job bytes.Buffer
	put := func(w *bytes.Buffer, x int64) { w.Write(bo.AppendUint64(nil, uint64(x))) }
	put(&job, l.UID)
	put(&job, l.StartSec)
	if new {
		put(&job, l.StartNsec)
	}
	put(&job, l.EndSec)
	if new {
		put(&job, l.EndNsec)
	}
	put(&job, l.NProcs)
	put(&job, l.JobID)
	meta := make([]byte, 1024)
	copy(meta, l.Metadata)
	job.Write(meta)
	job.WriteString(l.Exe)
	for _, m := range l.Mounts {
		job.WriteString("\n" + m[0] + "\t" + m[1])
	}
	job.WriteByte(0)
	// Name region.
	var names bytes.Buffer
	ids := make([]uint64, 0, len(l.Names))
	for id := range l.Names {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		names.Write(bo.AppendUint64(nil, id))
		if v == "3.00" {
			names.Write(bo.AppendUint32(nil, uint32(len(l.Names[id]))))
			names.WriteString(l.Names[id])
		} else {
			names.WriteString(l.Names[id])
			names.WriteByte(0)
		}
	}
	var body bytes.Buffer
	type span struct{ off, n uint64 }
	place := func(data []byte) span {
		if len(data) == 0 {
			return span{}
		}
		off := uint64(hsize + body.Len())
		body.Write(l.compress(data))
		return span{off, uint64(hsize+body.Len()) - off}
	}
	place(job.Bytes())
	nameSpan := place(names.Bytes())
	mods := make([]span, slots)
	vers := make([]uint32, slots)
	sorted := append([]Module(nil), l.Modules...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Slot < sorted[j].Slot })
	for _, m := range sorted {
		if m.Slot < 0 || m.Slot >= slots {
			continue
		}
		mods[m.Slot] = place(m.Data)
		vers[m.Slot] = m.Version
	}
	hdr := make([]byte, 0, hsize)
	var ver [8]byte
	copy(ver[:], v)
	hdr = append(hdr, ver[:]...)
	hdr = bo.AppendUint64(hdr, 6567223)
	hdr = append(hdr, l.Compression)
	if new {
		hdr = append(hdr, make([]byte, 7)...)
		hdr = bo.AppendUint64(hdr, l.Partial)
	} else {
		hdr = append(hdr, make([]byte, 3)...)
		hdr = bo.AppendUint32(hdr, uint32(l.Partial))
	}
	hdr = bo.AppendUint64(hdr, nameSpan.off)
	hdr = bo.AppendUint64(hdr, nameSpan.n)
	for _, s := range mods {
		hdr = bo.AppendUint64(hdr, s.off)
		hdr = bo.AppendUint64(hdr, s.n)
	}
	for _, x := range vers {
		hdr = bo.AppendUint32(hdr, x)
	}
	return append(hdr, body.Bytes()...)
}

// compress encodes a region as the log's compression says.
func (l *Log) compress(data []byte) []byte {
	if l.Compression == 2 {
		return data
	}
	n := max(l.Streams, 1)
	var out bytes.Buffer
	step := (len(data) + n - 1) / n
	for i := 0; i < len(data); i += step {
		w := zlib.NewWriter(&out)
		w.Write(data[i:min(i+step, len(data))])
		w.Close()
	}
	return out.Bytes()
}

// Counters returns one counter record: id, rank, then one value per name
// of intNames and floatNames (a module version's, darshan.CounterNames),
// taken from ints and floats, zero for the names they lack.
func Counters(bo binary.AppendByteOrder, intNames, floatNames []string, id uint64, rank int64, ints map[string]int64, floats map[string]float64) []byte {
	in, fn := intNames, floatNames
	b := bo.AppendUint64(nil, id)
	b = bo.AppendUint64(b, uint64(rank))
	for _, n := range in {
		b = bo.AppendUint64(b, uint64(ints[n]))
	}
	for _, n := range fn {
		b = bo.AppendUint64(b, math.Float64bits(floats[n]))
	}
	return b
}

// Segment is one DXT call.
type Segment struct {
	Offset, Length int64
	Start, End     float64
	Thread         uint64
}

// DXT returns one DXT file record with its segments; threads says whether
// the module version records pthread ids (DXT_POSIX 2, DXT_MPIIO 3).
func DXT(bo binary.AppendByteOrder, id uint64, rank int64, host string, writes, reads []Segment, threads bool) []byte {
	b := bo.AppendUint64(nil, id)
	b = bo.AppendUint64(b, uint64(rank))
	b = bo.AppendUint64(b, 0)
	h := make([]byte, 64)
	copy(h, host)
	b = append(b, h...)
	b = bo.AppendUint64(b, uint64(len(writes)))
	b = bo.AppendUint64(b, uint64(len(reads)))
	for _, s := range append(append([]Segment(nil), writes...), reads...) {
		b = bo.AppendUint64(b, uint64(s.Offset))
		b = bo.AppendUint64(b, uint64(s.Length))
		b = bo.AppendUint64(b, math.Float64bits(s.Start))
		b = bo.AppendUint64(b, math.Float64bits(s.End))
		if threads {
			b = bo.AppendUint64(b, s.Thread)
		}
	}
	return b
}

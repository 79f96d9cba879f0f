package darshan

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// jobRecordSize is DARSHAN_JOB_RECORD_SIZE: the job record, then the
// command line and the mount table, NUL-terminated.
const jobRecordSize = 4096

// readJob reads the job region: the job record, the command line and the
// mount table.
func (l *Log) readJob(r io.ReaderAt, f format) error {
	start := uint64(l.header.job)
	end := uint64(l.Size)
	if l.header.nameOff != 0 {
		end = l.header.nameOff
	} else {
		for _, m := range l.Modules {
			if m.Offset > start && m.Offset < end {
				end = m.Offset
			}
		}
	}
	if end <= start {
		return l.fail("job", int64(start), fmt.Errorf("the header places the next region at byte %d, inside the header", end))
	}
	buf := make([]byte, jobRecordSize)
	n := 0
	src := l.region(r, start, end-start)
	for n < len(buf) {
		k, err := src.Read(buf[n:])
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			return l.fail("job", int64(start), err)
		}
	}
	fixed := 5 * 8
	if f.jobNsec {
		fixed = 7 * 8
	}
	const metadataLen = 1024
	if n <= fixed+metadataLen {
		return l.fail("job", int64(start), fmt.Errorf("%d bytes, fewer than a job record's %d", n, fixed+metadataLen+1))
	}
	bo := l.ByteOrder
	word := func(i int) int64 { return int64(bo.Uint64(buf[8*i:])) }
	j := &l.Job
	j.UID = word(0)
	var startSec, startNsec, endSec, endNsec int64
	if f.jobNsec {
		startSec, startNsec, endSec, endNsec = word(1), word(2), word(3), word(4)
		j.NProcs, j.JobID = word(5), word(6)
	} else {
		startSec, endSec = word(1), word(2)
		j.NProcs, j.JobID = word(3), word(4)
	}
	if startNsec < 0 || startNsec >= 1e9 || endNsec < 0 || endNsec >= 1e9 {
		return l.fail("job", int64(start), fmt.Errorf("job times with nanoseconds %d and %d, outside 0 to 999999999", startNsec, endNsec))
	}
	j.Start = time.Unix(startSec, startNsec).UTC()
	j.End = time.Unix(endSec, endNsec).UTC()
	j.Metadata = map[string]string{}
	for _, line := range strings.Split(cString(buf[fixed:fixed+metadataLen]), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && k != "" {
			j.Metadata[k] = v
		}
	}
	lines := strings.Split(cString(buf[fixed+metadataLen:n]), "\n")
	// Darshan writes a space after each argument; its parser prints the
	// line without the last.
	j.Exe = strings.TrimRight(lines[0], " ")
	for _, line := range lines[1:] {
		if typ, path, ok := strings.Cut(line, "\t"); ok {
			j.Mounts = append(j.Mounts, Mount{Type: typ, Path: path})
		}
	}
	return nil
}

// cString is b up to its first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// readNames reads the name map: record id to file name.
func (l *Log) readNames(r io.ReaderAt, f format) {
	if l.header.nameLen == 0 {
		return
	}
	off := l.header.nameOff
	if off < uint64(l.header.job) {
		l.Problems = append(l.Problems, l.fail("name map", int64(off), errors.New("the header places it inside the header")))
		return
	}
	br := bufio.NewReaderSize(l.region(r, off, l.header.nameLen), MaxNameLen+16)
	bo := l.ByteOrder
	var head [12]byte
	for count := 0; ; count++ {
		n := 8
		if f.nameLen32 {
			n = 12
		}
		err := readFull(br, head[:n])
		if err == io.EOF {
			return
		}
		var name string
		if err == nil {
			if f.nameLen32 {
				size := bo.Uint32(head[8:])
				if size > MaxNameLen {
					err = fmt.Errorf("name record %d is %d bytes long, more than %d", count+1, size, MaxNameLen)
				} else {
					b := make([]byte, size)
					if err = readFull(br, b); err == io.EOF && size > 0 {
						err = errPartial
					} else if err == io.EOF {
						err = nil
					}
					name = string(b)
				}
			} else {
				var b []byte
				b, err = br.ReadSlice(0)
				switch {
				case err == bufio.ErrBufferFull:
					err = fmt.Errorf("name record %d has no NUL in its first %d bytes", count+1, MaxNameLen)
				case err == io.EOF:
					err = errPartial
				case err == nil:
					name = string(b[:len(b)-1])
				}
			}
		}
		if err != nil {
			l.Problems = append(l.Problems, l.fail("name map", int64(off), fmt.Errorf("after %d names: %w", count, err)))
			return
		}
		id := bo.Uint64(head[:])
		if old, ok := l.Names[id]; !ok || (old == "" && name != "") {
			l.Names[id] = name
		}
	}
}

// readModules decodes the regions of the modules this reader knows.
func (l *Log) readModules(r io.ReaderAt) {
	for i := range l.Modules {
		m := &l.Modules[i]
		var err error
		switch m.ID {
		case ModPOSIX, ModMPIIO, ModSTDIO:
			err = l.readCounters(r, m)
		case ModH5F, ModH5D, ModPnetCDFFile, ModPnetCDFVar:
			if _, lerr := counterLayout(m.ID, m.Version); lerr != nil {
				continue // an older version: listed as not decoded
			}
			err = l.readCounters(r, m)
		case ModDXTPOSIX, ModDXTMPIIO:
			err = l.readDXT(r, m)
		case ModLustre:
			err = l.readLustre(r, m)
		case ModHeatmap:
			err = l.readHeatmap(r, m)
		default:
			continue
		}
		if err != nil {
			l.Problems = append(l.Problems, l.fail(m.Name()+" module", int64(m.Offset), err))
		}
	}
}

// moduleSource checks a module region's place and opens it.
func (l *Log) moduleSource(r io.ReaderAt, m *Module) (io.Reader, error) {
	if m.Offset < uint64(l.header.job) {
		return nil, errors.New("the header places it inside the header")
	}
	return bufio.NewReaderSize(l.region(r, m.Offset, m.Length), 64<<10), nil
}

// readCounters decodes a POSIX, MPI-IO or STDIO region.
func (l *Log) readCounters(r io.ReaderAt, m *Module) error {
	set, err := counterLayout(m.ID, m.Version)
	if err != nil {
		return err
	}
	src, err := l.moduleSource(r, m)
	if err != nil {
		return err
	}
	m.Decoded = true
	bo := l.ByteOrder
	buf := make([]byte, set.recordSize())
	ni, nf := len(set.ints), len(set.floats)
	// Records and their counters come from slabs of a batch of records: a
	// log of a big job holds many thousands.
	const batch = 128
	var recs []Record
	var ints []int64
	var floats []float64
	for {
		err := readFull(src, buf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("after %d records: %w", m.Records, err)
		}
		if len(recs) == 0 {
			recs, ints, floats = make([]Record, batch), make([]int64, batch*ni), make([]float64, batch*nf)
		}
		rec := &recs[0]
		*rec = Record{Module: m.ID, Version: m.Version, ID: bo.Uint64(buf), Rank: int64(bo.Uint64(buf[8:])),
			Ints: ints[:ni:ni], Floats: floats[:nf:nf], set: set}
		recs, ints, floats = recs[1:], ints[ni:], floats[nf:]
		at := 16
		if set.parent {
			rec.File = bo.Uint64(buf[16:])
			at += 8
		}
		for i := range ni {
			rec.Ints[i] = int64(bo.Uint64(buf[at+8*i:]))
		}
		for i := range nf {
			rec.Floats[i] = math.Float64frombits(bo.Uint64(buf[at+8*(ni+i):]))
		}
		l.Records = append(l.Records, rec)
		m.Records++
	}
}

// dxtHeaderSize is the size of a DXT file record before its segments: the
// base record, the shared flag, the host name and the two counts.
const dxtHeaderSize = 16 + 8 + 64 + 8 + 8

// readDXT decodes a DXT_POSIX or DXT_MPIIO region.
func (l *Log) readDXT(r io.ReaderAt, m *Module) error {
	// Segments gained the pthread id at DXT_POSIX 2 and DXT_MPIIO 3;
	// DXT_MPIIO 1 did not record offsets.
	threads := (m.ID == ModDXTPOSIX && m.Version >= 2) || (m.ID == ModDXTMPIIO && m.Version >= 3)
	newest := uint32(2)
	if m.ID == ModDXTMPIIO {
		newest = 3
	}
	switch {
	case m.Version == 0:
		return fmt.Errorf("%s module version 0", m.Name())
	case m.Version > newest:
		return fmt.Errorf("%s module version %d is newer than this reader knows (%d)", m.Name(), m.Version, newest)
	}
	src, err := l.moduleSource(r, m)
	if err != nil {
		return err
	}
	m.Decoded = true
	bo := l.ByteOrder
	segSize := 32
	if threads {
		segSize = 40
	}
	head := make([]byte, dxtHeaderSize)
	seg := make([]byte, segSize)
	for {
		err := readFull(src, head)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("after %d file records: %w", m.Records, err)
		}
		d := &DXTFile{Module: m.ID, Version: m.Version, ID: bo.Uint64(head), Rank: int64(bo.Uint64(head[8:])),
			Hostname: cString(head[24:88])}
		writes, reads := int64(bo.Uint64(head[88:])), int64(bo.Uint64(head[96:]))
		if writes < 0 || reads < 0 || writes > math.MaxInt64-reads {
			return fmt.Errorf("file record %d (rank %d) claims %d writes and %d reads", m.Records+1, d.Rank, writes, reads)
		}
		// Room for what the counts claim, up to a bound: the data, not
		// the counts, decides how much memory grows past it.
		d.Writes = make([]Segment, 0, min(writes, 1<<14))
		d.Reads = make([]Segment, 0, min(reads, 1<<14))
		for i := int64(0); i < writes+reads; i++ {
			if err := readFull(src, seg); err != nil {
				if err == io.EOF {
					err = errPartial
				}
				return fmt.Errorf("file record %d (rank %d, %s) claims %d segments, the data ends after %d: %w",
					m.Records+1, d.Rank, l.Path(d.ID), writes+reads, i, err)
			}
			s := Segment{Offset: int64(bo.Uint64(seg)), Length: int64(bo.Uint64(seg[8:])),
				Start: math.Float64frombits(bo.Uint64(seg[16:])), End: math.Float64frombits(bo.Uint64(seg[24:]))}
			if threads {
				s.Thread = bo.Uint64(seg[32:])
			}
			if m.ID == ModDXTMPIIO && m.Version == 1 {
				s.Offset = -1
			}
			if i < writes {
				d.Writes = append(d.Writes, s)
			} else {
				d.Reads = append(d.Reads, s)
			}
		}
		l.DXT = append(l.DXT, d)
		m.Records++
	}
}

// warn lists what the log lacks.
func (l *Log) warn() {
	var undecoded []string
	for _, m := range l.Modules {
		if m.Partial {
			what := "files it could not record are missing"
			if m.ID == ModDXTPOSIX || m.ID == ModDXTMPIIO {
				what = "calls past that point are missing"
			}
			l.Warnings = append(l.Warnings, fmt.Sprintf("%s: incomplete: Darshan ran out of memory for this module, %s", m.Name(), what))
		}
		if !m.Decoded && l.failed(m) == nil {
			undecoded = append(undecoded, m.Name())
		}
	}
	if len(undecoded) > 0 {
		sort.Strings(undecoded)
		l.Warnings = append(l.Warnings, "not decoded: "+strings.Join(undecoded, ", ")+" (this reader decodes POSIX, MPI-IO, STDIO, H5F 3, H5D 2, PNETCDF_FILE 3, PNETCDF_VAR 1, DXT_POSIX, DXT_MPIIO, LUSTRE and HEATMAP)")
	}
	if l.Version == "3.20" {
		l.Warnings = append(l.Warnings, "log format 3.20 (Darshan 3.2.0): that release is known to corrupt some counter values (Darshan's own parser warns of it)")
	}
}

// failed returns the fault met in a module's region, if any.
func (l *Log) failed(m Module) *Error {
	for _, p := range l.Problems {
		if p.Region == m.Name()+" module" {
			return p
		}
	}
	return nil
}

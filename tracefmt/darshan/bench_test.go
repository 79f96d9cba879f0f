package darshan

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"testing"

	"iopred/tracefmt"
	"iopred/tracefmt/darshan/darshantest"
)

// benchLog reads a fixture into memory.
func benchLog(b *testing.B, name string) []byte {
	b.Helper()
	data, err := os.ReadFile(fixture(b, name))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkReadLargestLog reads the largest fixture (sample-badost, 459
// KB: 2,051 POSIX and STDIO records of a 2,048-rank job): MB/s of log.
func BenchmarkReadLargestLog(b *testing.B) {
	data := benchLog(b, "sample-badost.darshan")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), int64(len(data)), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// dxtFixture is the fixture with the most DXT segments (17,652 in 75 file
// records of one process).
const dxtFixture = "nonmpi_dxt_anonymized.darshan"

// BenchmarkReadDXT decodes the DXT fixture: MB/s of log and DXT
// segments/s.
func BenchmarkReadDXT(b *testing.B) {
	data := benchLog(b, dxtFixture)
	l, err := Read(bytes.NewReader(data), int64(len(data)), "bench")
	if err != nil {
		b.Fatal(err)
	}
	segs := 0
	for _, d := range l.DXT {
		segs += len(d.Writes) + len(d.Reads)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), int64(len(data)), "bench"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(segs)*float64(b.N)/b.Elapsed().Seconds(), "segments/s")
}

// dxtStream decodes a log and opens its first trace.
func dxtStream(b *testing.B, data []byte) tracefmt.Stream {
	b.Helper()
	l, err := Read(bytes.NewReader(data), int64(len(data)), "bench")
	if err != nil {
		b.Fatal(err)
	}
	v := group("bench", l, nil)
	return newStream(v, v.by[v.procs[0]])
}

// BenchmarkStreamDXT decodes the DXT fixture and reads it as iopred
// events, the way every analysis reads it: events/s.
func BenchmarkStreamDXT(b *testing.B) {
	data := benchLog(b, dxtFixture)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		s := dxtStream(b, data)
		for {
			rec, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if rec.Event != nil {
				events++
			}
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkNativeSameEvents reads the DXT fixture's events from an iopred
// trace (written from it once, default options), as this project's own
// reader does: the baseline of BenchmarkStreamDXT, on the same events.
func BenchmarkNativeSameEvents(b *testing.B) {
	s := dxtStream(b, benchLog(b, dxtFixture))
	var trace bytes.Buffer
	w, err := tracefmt.NewWriter(&trace, s.Header(), tracefmt.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for {
		rec, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		switch {
		case rec.File != nil:
			err = w.File(*rec.File)
		case rec.Counters != nil:
			err = w.Counters(rec.Counters)
		case rec.Event != nil:
			err = w.Event(rec.Event)
		case rec.Footer != nil:
			err = w.Close(*rec.Footer)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	raw := trace.Bytes()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		r, err := tracefmt.NewReader(bytes.NewReader(raw), "bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Each(func(rec tracefmt.Record) error {
			if rec.Event != nil {
				events++
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReadLargeDXT decodes a synthetic log far larger than the
// fixtures: 16 ranks of 65,536 DXT_POSIX segments each (1,048,576 in all,
// 9.6 MB compressed in one zlib stream per rank): segments/s, and B/op for
// the memory the segments take.
func BenchmarkReadLargeDXT(b *testing.B) {
	le := binary.LittleEndian
	var dxt []byte
	for r := range 16 {
		w := make([]darshantest.Segment, 65536)
		for i := range w {
			at := float64(i) * 1e-4
			w[i] = darshantest.Segment{Offset: int64(i) * 4096, Length: 4096, Start: at, End: at + 5e-5, Thread: 1}
		}
		dxt = append(dxt, darshantest.DXT(le, uint64(r+1), int64(r), "n", w, nil, true)...)
	}
	spec := darshantest.Log{NProcs: 16, StartSec: 1, EndSec: 10, Exe: "app", Streams: 16, Names: map[uint64]string{1: "/a"},
		Modules: []darshantest.Module{{Slot: 10, Version: 2, Data: dxt}}}
	data := spec.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), int64(len(data)), "bench"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(16*65536)*float64(b.N)/b.Elapsed().Seconds(), "segments/s")
}

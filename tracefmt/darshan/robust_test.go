package darshan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"iopred/tracefmt/darshan/darshantest"
)

// sameContent reports what differs between two readings of one log.
func sameContent(t *testing.T, got, want *Log) {
	t.Helper()
	if got.Version != want.Version || !reflect.DeepEqual(got.Job, want.Job) || !reflect.DeepEqual(got.Names, want.Names) {
		t.Errorf("job or names differ:\n got %s %+v\nwant %s %+v", got.Version, got.Job, want.Version, want.Job)
	}
	if len(got.Records) != len(want.Records) || len(got.DXT) != len(want.DXT) {
		t.Fatalf("%d records and %d DXT files, want %d and %d", len(got.Records), len(got.DXT), len(want.Records), len(want.DXT))
	}
	for i := range want.Records {
		if !reflect.DeepEqual(got.Records[i], want.Records[i]) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got.Records[i], want.Records[i])
		}
	}
	for i := range want.DXT {
		if !reflect.DeepEqual(got.DXT[i], want.DXT[i]) {
			t.Fatalf("DXT file %d:\n got %+v\nwant %+v", i, got.DXT[i], want.DXT[i])
		}
	}
}

// TestVariantsReadAlike proves that the reader reads every fixture the same
// once its regions are recompressed with bzip2 (two streams a region),
// stored uncompressed, split into two zlib streams, or written in the
// other byte order (the modules it decodes byte-swapped field by field by
// the independent decoder): bzip2, no compression, concatenated streams
// and both byte orders of every format version.
func TestVariantsReadAlike(t *testing.T) {
	paths := fixtures(t)
	dir := variants(t, paths)
	for _, path := range paths {
		orig, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"bzip2", "none", "zlib2", "swap"} {
			t.Run(mode+"/"+filepath.Base(path), func(t *testing.T) {
				l, err := Open(filepath.Join(dir, mode+"-"+filepath.Base(path)))
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]Compression{"bzip2": Bzip2, "none": None, "zlib2": Zlib, "swap": Zlib}[mode]
				if l.Compression != want {
					t.Errorf("compression %v, want %v", l.Compression, want)
				}
				if (l.ByteOrder == orig.ByteOrder) == (mode == "swap") {
					t.Errorf("byte order %v, original %v", l.ByteOrder, orig.ByteOrder)
				}
				ref := orig
				if mode == "swap" {
					// The swapped copy keeps POSIX, MPI-IO, STDIO and DXT only.
					kept := *orig
					kept.Records = nil
					for _, r := range orig.Records {
						if r.Module == ModPOSIX || r.Module == ModMPIIO || r.Module == ModSTDIO {
							kept.Records = append(kept.Records, r)
						}
					}
					ref = &kept
				}
				sameContent(t, l, ref)
			})
		}
	}
}

// synthetic builds a log of every kind of record the reader decodes, in
// the given format version and byte order: names, POSIX, MPI-IO and STDIO
// records (one shared), and DXT segments with threads when the version
// has them.
func synthetic(version string, bo binary.ByteOrder, comp uint8, streams int) (*darshantest.Log, map[string]int64) {
	f := formats[version]
	slot := func(id ModuleID) int {
		for i, m := range f.modules {
			if m == id {
				return i
			}
		}
		panic(id)
	}
	ab := bo.(binary.AppendByteOrder)
	versions := map[ModuleID]uint32{ModPOSIX: 4, ModMPIIO: 3, ModSTDIO: 2, ModDXTPOSIX: 2, ModDXTMPIIO: 3}
	if version == "3.00" {
		versions = map[ModuleID]uint32{ModPOSIX: 1, ModMPIIO: 1}
	}
	l := &darshantest.Log{Version: version, Order: ab, Compression: comp, Streams: streams,
		UID: 1000, JobID: 77, NProcs: 2, StartSec: 1700000000, EndSec: 1700000010, StartNsec: 5, EndNsec: 999999999,
		Metadata: "lib_ver=9.9.9\nh=romio_no_indep_rw=true\n", Exe: "/bin/app -n 2", Mounts: [][2]string{{"lustre", "/scratch"}, {"ext4", "/"}},
		Names: map[uint64]string{11: "/scratch/a", 12: "/scratch/b", 13: "<STDOUT>"}}
	want := map[string]int64{}
	counters := func(id ModuleID, recs ...[]byte) {
		var data []byte
		for _, r := range recs {
			data = append(data, r...)
		}
		l.Modules = append(l.Modules, darshantest.Module{Slot: slot(id), Version: versions[id], Data: data})
	}
	rec := func(id ModuleID, file uint64, rank int64, prefix string, n int64) []byte {
		ints, floats, err := CounterNames(id, versions[id])
		if err != nil {
			panic(err)
		}
		want[id.String()+"/"+prefix] += n
		return darshantest.Counters(ab, ints, floats, file, rank,
			map[string]int64{prefix + "_BYTES_READ": n, prefix + "_BYTES_WRITTEN": 2 * n, prefix + "_OPENS": 1},
			map[string]float64{prefix + "_F_READ_TIME": float64(n) / 1000})
	}
	counters(ModPOSIX, rec(ModPOSIX, 11, -1, "POSIX", 100), rec(ModPOSIX, 12, 1, "POSIX", 7))
	counters(ModMPIIO, rec(ModMPIIO, 11, -1, "MPIIO", 100))
	if version == "3.00" {
		return l, want
	}
	counters(ModSTDIO, rec(ModSTDIO, 13, 0, "STDIO", 3))
	threads := version == "3.41"
	if !threads {
		versions[ModDXTPOSIX], versions[ModDXTMPIIO] = 1, 2
	}
	seg := func(off, n int64, start, end float64, th uint64) darshantest.Segment {
		return darshantest.Segment{Offset: off, Length: n, Start: start, End: end, Thread: th}
	}
	var dp, dm []byte
	for rank := int64(0); rank < 2; rank++ {
		dp = append(dp, darshantest.DXT(ab, 11, rank, "node"+string(rune('0'+rank)), []darshantest.Segment{
			seg(rank*100, 50, 1.0, 1.5, 7), seg(rank*100+50, 50, 2.0, 2.5, 7)}, []darshantest.Segment{seg(rank*100, 100, 5.0, 5.25, 8)}, threads)...)
		dm = append(dm, darshantest.DXT(ab, 11, rank, "node", []darshantest.Segment{seg(rank*100, 100, 0.9, 2.6, 7)}, nil, threads)...)
	}
	l.Modules = append(l.Modules, darshantest.Module{Slot: slot(ModDXTPOSIX), Version: versions[ModDXTPOSIX], Data: dp},
		darshantest.Module{Slot: slot(ModDXTMPIIO), Version: versions[ModDXTMPIIO], Data: dm})
	return l, want
}

// TestSyntheticVersionsAndOrders proves that every format version reads
// in both byte orders, compressed in one stream, in three, or not at
// all: the job record (nanoseconds from 3.41 on), the metadata and mount
// table, names (3.00's length-prefixed ones too), counters placed by
// module version, DXT segments with pthread ids where the version has
// them, and offsets of DXT_MPIIO 1 left unknown.
func TestSyntheticVersionsAndOrders(t *testing.T) {
	for _, version := range []string{"3.00", "3.10", "3.20", "3.21", "3.41"} {
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			for _, c := range []struct {
				comp    uint8
				streams int
			}{{0, 1}, {0, 3}, {2, 1}} {
				spec, want := synthetic(version, bo, c.comp, c.streams)
				name := version + "/" + bo.String() + "/" + Compression(c.comp).String()
				t.Run(name, func(t *testing.T) {
					data := spec.Bytes()
					l, err := Read(bytes.NewReader(data), int64(len(data)), name)
					if err != nil {
						t.Fatal(err)
					}
					if l.ByteOrder != bo || l.Version != version || l.Job.JobID != 77 || l.Job.NProcs != 2 ||
						l.Job.Exe != "/bin/app -n 2" || l.Job.Metadata["lib_ver"] != "9.9.9" || len(l.Job.Mounts) != 2 || l.Job.Mounts[0] != (Mount{"lustre", "/scratch"}) {
						t.Errorf("header or job: %s %v %+v", l.Version, l.ByteOrder, l.Job)
					}
					nsec := version == "3.41"
					if (l.Job.Start.Nanosecond() == 5) != nsec || (l.Runtime().Seconds() == 11) == nsec {
						t.Errorf("start %v, run time %v", l.Job.Start, l.Runtime())
					}
					if len(l.Names) != 3 || l.Names[12] != "/scratch/b" {
						t.Errorf("names %v", l.Names)
					}
					for key, n := range want {
						mod, prefix, _ := strings.Cut(key, "/")
						var got int64
						for _, r := range l.Records {
							if r.Module.String() == mod {
								v, ok := r.Int(prefix + "_BYTES_READ")
								w, _ := r.Int(prefix + "_BYTES_WRITTEN")
								f, _ := r.Float(prefix + "_F_READ_TIME")
								if !ok || w != 2*v || math.Abs(f-float64(v)/1000) > 1e-12 {
									t.Errorf("%s record: read %d, written %d, read time %v", mod, v, w, f)
								}
								got += v
							}
						}
						if got != n {
							t.Errorf("%s bytes read %d, want %d", mod, got, n)
						}
					}
					if version == "3.00" {
						return
					}
					if len(l.DXT) != 4 {
						t.Fatalf("%d DXT files, want 4", len(l.DXT))
					}
					p, m := l.DXT[1], l.DXT[3]
					if p.Rank != 1 || p.Hostname != "node1" || len(p.Writes) != 2 || len(p.Reads) != 1 || p.Writes[1].Offset != 150 || p.Reads[0].End != 5.25 {
						t.Errorf("DXT_POSIX %+v", p)
					}
					if (p.Writes[0].Thread == 7) != nsec {
						t.Errorf("thread %d", p.Writes[0].Thread)
					}
					if m.Module != ModDXTMPIIO || m.Writes[0].Offset != 100 || m.Writes[0].Length != 100 {
						t.Errorf("DXT_MPIIO %+v", m)
					}
				})
			}
		}
	}
	// DXT_MPIIO 1 did not record offsets.
	spec, _ := synthetic("3.10", binary.LittleEndian, 0, 1)
	spec.Modules[len(spec.Modules)-1].Version = 1
	data := spec.Bytes()
	l, err := Read(bytes.NewReader(data), int64(len(data)), "v1")
	if err != nil || l.DXT[3].Writes[0].Offset != -1 {
		t.Errorf("DXT_MPIIO 1: %v, offset %d", err, l.DXT[3].Writes[0].Offset)
	}
}

// TestTruncatedLogs proves that a log cut at any byte never panics: cut
// in the header or the job record it gives an *Error naming the region;
// cut later it gives the log with every record that lies wholly before
// the cut (a prefix of the whole log's records) and a truncated *Error
// naming the region the cut fell in.
func TestTruncatedLogs(t *testing.T) {
	paths := []string{fixture(t, "treddy_mpi-io-test_*.darshan"), fixture(t, "mpi-io-test-ppc64-3.1.8.darshan"),
		fixture(t, "mpi-io-test-x86_64-3.0.0.darshan"), fixture(t, "hdf5_diagonal_write_1_byte_dxt.darshan")}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := Read(bytes.NewReader(data), int64(len(data)), "whole")
		if err != nil {
			t.Fatal(err)
		}
		step := max(1, len(data)/300)
		for cut := 0; cut < len(data); cut += step {
			l, err := Read(bytes.NewReader(data[:cut]), int64(cut), "cut")
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%s cut at %d: %v, want an *Error", filepath.Base(path), cut, err)
			}
			if l == nil {
				if e.Region != "header" && e.Region != "job" {
					t.Errorf("cut at %d: no log, fault in %q", cut, e.Region)
				}
				continue
			}
			if !e.Truncated || !strings.Contains(e.Error(), "cut short") {
				t.Errorf("cut at %d: %v, want a truncation", cut, err)
			}
			if len(l.Records) > len(whole.Records) || len(l.DXT) > len(whole.DXT) {
				t.Fatalf("cut at %d: more records than the whole log", cut)
			}
			for i, r := range l.Records {
				if !reflect.DeepEqual(r, whole.Records[i]) {
					t.Fatalf("cut at %d: record %d differs from the whole log's", cut, i)
				}
			}
			for i, d := range l.DXT {
				if !reflect.DeepEqual(d, whole.DXT[i]) {
					t.Fatalf("cut at %d: DXT file %d differs from the whole log's", cut, i)
				}
			}
		}
	}
}

// TestCorruptLogs proves that corrupt logs give an *Error naming the
// region and saying what is wrong, never a panic, and that huge counts
// and lengths make no huge allocation (the test would run out of memory).
func TestCorruptLogs(t *testing.T) {
	base, _ := synthetic("3.41", binary.LittleEndian, 0, 1)
	le := binary.LittleEndian
	cases := []struct {
		name   string
		mutate func(l *darshantest.Log, data []byte) []byte
		region string
		text   string
	}{
		{"not a log", func(_ *darshantest.Log, d []byte) []byte {
			return []byte("hello world, this is not a Darshan log at all")
		}, "header", "not a Darshan log"},
		{"newer format", func(_ *darshantest.Log, d []byte) []byte { copy(d, "3.50"); return d }, "header", "newer than this reader"},
		{"Darshan 2", func(_ *darshantest.Log, d []byte) []byte { copy(d, "2.06\x00\x00\x00\x00"); return d }, "header", "Darshan 2"},
		{"bad magic", func(_ *darshantest.Log, d []byte) []byte { d[9] ^= 0xff; return d }, "header", "bad magic"},
		{"bad compression", func(_ *darshantest.Log, d []byte) []byte { d[16] = 9; return d }, "header", "compression"},
		{"zlib garbage", func(_ *darshantest.Log, d []byte) []byte {
			off := le.Uint64(d[32+16+16:]) // POSIX, slot 1
			for i := off; i < off+20; i++ {
				d[i] = 0x5a
			}
			return d
		}, "POSIX module", "zlib"},
		{"module inside the header", func(_ *darshantest.Log, d []byte) []byte { le.PutUint64(d[32+16+16:], 100); return d }, "POSIX module", "inside the header"},
		{"module past the end", func(_ *darshantest.Log, d []byte) []byte { le.PutUint64(d[32+16+16:], 1<<40); return d }, "POSIX module", "cut short"},
		{"huge module length", func(_ *darshantest.Log, d []byte) []byte { le.PutUint64(d[32+16+16+8:], 1<<62); return d }, "POSIX module", "cut short"},
		{"newer POSIX", func(_ *darshantest.Log, d []byte) []byte { le.PutUint32(d[32+16+64*16+4:], 9); return d }, "POSIX module", "newer than this reader"},
		{"negative DXT count", func(l *darshantest.Log, _ []byte) []byte {
			l.Compression = 2
			m := &l.Modules[len(l.Modules)-2]
			m.Data = append([]byte(nil), m.Data...)
			le.PutUint64(m.Data[88:], uint64(1<<64-5))
			return l.Bytes()
		}, "DXT_POSIX module", "claims"},
		{"huge DXT count", func(l *darshantest.Log, _ []byte) []byte {
			m := &l.Modules[len(l.Modules)-2]
			m.Data = append([]byte(nil), m.Data...)
			le.PutUint64(m.Data[96:], 1<<60)
			return l.Bytes()
		}, "DXT_POSIX module", "the data ends after"},
		{"record cut inside", func(l *darshantest.Log, _ []byte) []byte {
			l.Modules[0].Data = l.Modules[0].Data[:len(l.Modules[0].Data)-3]
			return l.Bytes()
		}, "POSIX module", "ends inside a record"},
		{"name without its NUL", func(l *darshantest.Log, _ []byte) []byte {
			l.Compression = 2
			l.Names = map[uint64]string{1: strings.Repeat("x", MaxNameLen+100)}
			data := l.Bytes()
			return bytes.Replace(data, []byte(strings.Repeat("x", 10)+"\x00"), []byte(strings.Repeat("x", 11)), 1)
		}, "name map", "no NUL"},
		{"job too short", func(l *darshantest.Log, _ []byte) []byte {
			l.Compression = 2
			data := l.Bytes()
			le.PutUint64(data[32:], 1328+100) // the name map 100 bytes into the job record
			return data
		}, "job", "fewer than a job record"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := *base
			spec.Modules = append([]darshantest.Module(nil), base.Modules...)
			data := c.mutate(&spec, spec.Bytes())
			_, err := Read(bytes.NewReader(data), int64(len(data)), "bad.darshan")
			var e *Error
			if !errors.As(err, &e) || e.Region != c.region || !strings.Contains(err.Error(), c.text) || !strings.HasPrefix(err.Error(), "bad.darshan: ") {
				t.Errorf("got %v, want an error in the %s region saying %q", err, c.region, c.text)
			}
		})
	}
	// A name record of 3.00 claiming a huge length.
	old, _ := synthetic("3.00", binary.LittleEndian, 2, 1)
	data := old.Bytes()
	nameOff := le.Uint64(data[24:])
	le.PutUint32(data[nameOff+8:], 1<<31)
	if _, err := Read(bytes.NewReader(data), int64(len(data)), "old"); err == nil || !strings.Contains(err.Error(), "bytes long") {
		t.Errorf("huge 3.00 name length: %v", err)
	}
}

// TestPartialModules proves that a module Darshan flagged as out of
// memory is read with a warning saying what is missing, in every format
// (the flags of logs before 3.41 are numbered by their own slots).
func TestPartialModules(t *testing.T) {
	for _, version := range []string{"3.10", "3.21", "3.41"} {
		spec, _ := synthetic(version, binary.LittleEndian, 0, 1)
		f := formats[version]
		for slot, id := range f.modules {
			if id == ModSTDIO || id == ModDXTPOSIX {
				spec.Partial |= 1 << slot
			}
		}
		data := spec.Bytes()
		l, err := Read(bytes.NewReader(data), int64(len(data)), "partial")
		if err != nil {
			t.Fatal(err)
		}
		if !l.Module(ModSTDIO).Partial || !l.Module(ModDXTPOSIX).Partial || l.Module(ModPOSIX).Partial {
			t.Errorf("%s: partial flags %+v", version, l.Modules)
		}
		w := strings.Join(l.Warnings, "\n")
		if !strings.Contains(w, "STDIO: incomplete: Darshan ran out of memory") || !strings.Contains(w, "DXT_POSIX: incomplete") || !strings.Contains(w, "calls past that point are missing") {
			t.Errorf("%s: warnings %q", version, l.Warnings)
		}
	}
}

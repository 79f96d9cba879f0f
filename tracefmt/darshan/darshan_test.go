package darshan

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"iopred/tests/interop"
	"iopred/tests/testenv"
)

// fixtures lists every Darshan log kept in tests/interop.
func fixtures(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"darshan/darshan-logs", "darshan/pytokio", "darshan/iopred"} {
		m, err := filepath.Glob(filepath.Join(interop.Path(t, dir), "*.darshan"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 13 {
		t.Fatalf("%d Darshan logs in tests/interop, want the 13 its README lists", len(out))
	}
	return out
}

// fixture returns the path of one log kept in tests/interop.
func fixture(t testing.TB, name string) string {
	t.Helper()
	for _, dir := range []string{"darshan/darshan-logs/", "darshan/pytokio/"} {
		if m, _ := filepath.Glob(filepath.Join(interop.Dir(), dir+name)); len(m) == 1 {
			return m[0]
		}
	}
	t.Fatalf("no fixture %s", name)
	return ""
}

// refModule is what the independent decoder sums over a module.
type refModule struct {
	Version       uint32
	Partial       bool
	Records       int
	Shared        int
	Opens         int64
	Reads         int64
	Writes        int64
	BytesRead     int64   `json:"bytes_read"`
	BytesWritten  int64   `json:"bytes_written"`
	ReadTime      float64 `json:"read_time"`
	WriteTime     float64 `json:"write_time"`
	MetaTime      float64 `json:"meta_time"`
	WriteSegments int     `json:"write_segments"`
	ReadSegments  int     `json:"read_segments"`
	Ranks         []int64
}

type refLog struct {
	Version     string
	BigEndian   bool `json:"big_endian"`
	Compression uint8
	Job         struct {
		UID, JobID, NProcs int64
		StartSec           int64 `json:"start_sec"`
		StartNsec          int64 `json:"start_nsec"`
		EndSec             int64 `json:"end_sec"`
		EndNsec            int64 `json:"end_nsec"`
		Exe                string
	}
	Names   int
	Modules map[string]refModule
}

// references runs the independent decoder (testdata/darshan_ref.py) on
// logs, in one process.
func references(t *testing.T, paths []string) map[string]refLog {
	t.Helper()
	py := testenv.Tool(t, "python3")
	out, err := exec.Command(py, append([]string{"testdata/darshan_ref.py"}, paths...)...).Output()
	if err != nil {
		t.Fatalf("darshan_ref.py: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(paths) {
		t.Fatalf("darshan_ref.py printed %d lines for %d logs", len(lines), len(paths))
	}
	refs := map[string]refLog{}
	for i, line := range lines {
		var ref refLog
		if err := json.Unmarshal([]byte(line), &ref); err != nil {
			t.Fatalf("darshan_ref.py %s: %v", paths[i], err)
		}
		refs[paths[i]] = ref
	}
	return refs
}

// variants makes copies of logs with darshan_ref.py, in every mode
// (bzip2, none, zlib2, swap); the copy of a log in a mode is
// dir/<mode>-<its name>.
func variants(t *testing.T, paths []string) (dir string) {
	t.Helper()
	py := testenv.Tool(t, "python3")
	dir = t.TempDir()
	if out, err := exec.Command(py, append([]string{"testdata/darshan_ref.py", "--variants", dir}, paths...)...).CombinedOutput(); err != nil {
		t.Fatalf("darshan_ref.py --variants: %v\n%s", err, out)
	}
	return dir
}

// totals sums what the Go reader decoded of a module, as the reference
// decoder sums it.
func totals(l *Log, id ModuleID) refModule {
	var t refModule
	if m := l.Module(id); m != nil {
		t.Version, t.Partial = m.Version, m.Partial
	}
	p := id.String()
	if id == ModMPIIO {
		p = "MPIIO"
	}
	get := func(r *Record, name string) int64 { v, _ := r.Int(p + "_" + name); return v }
	getf := func(r *Record, name string) float64 { v, _ := r.Float(p + "_F_" + name); return v }
	for _, r := range l.Records {
		if r.Module != id {
			continue
		}
		t.Records++
		if r.Rank == -1 {
			t.Shared++
		}
		if id == ModMPIIO {
			t.Opens += get(r, "INDEP_OPENS") + get(r, "COLL_OPENS")
			t.Reads += get(r, "INDEP_READS") + get(r, "COLL_READS")
			t.Writes += get(r, "INDEP_WRITES") + get(r, "COLL_WRITES")
		} else {
			t.Opens += get(r, "OPENS")
			t.Reads += get(r, "READS")
			t.Writes += get(r, "WRITES")
		}
		t.BytesRead += get(r, "BYTES_READ")
		t.BytesWritten += get(r, "BYTES_WRITTEN")
		t.ReadTime += getf(r, "READ_TIME")
		t.WriteTime += getf(r, "WRITE_TIME")
		t.MetaTime += getf(r, "META_TIME")
	}
	ranks := map[int64]bool{}
	for _, d := range l.DXT {
		if d.Module != id {
			continue
		}
		t.Records++
		t.WriteSegments += len(d.Writes)
		t.ReadSegments += len(d.Reads)
		for _, s := range d.Writes {
			t.BytesWritten += s.Length
		}
		for _, s := range d.Reads {
			t.BytesRead += s.Length
		}
		ranks[d.Rank] = true
	}
	for r := range ranks {
		t.Ranks = append(t.Ranks, r)
	}
	sort.Slice(t.Ranks, func(i, j int) bool { return t.Ranks[i] < t.Ranks[j] })
	return t
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// sameTotals compares two modules' totals, times within rounding.
func sameTotals(t *testing.T, what string, got, want refModule) {
	t.Helper()
	gt, wt := got, want
	if !near(got.ReadTime, want.ReadTime) || !near(got.WriteTime, want.WriteTime) || !near(got.MetaTime, want.MetaTime) {
		t.Errorf("%s: times %v %v %v, want %v %v %v", what, got.ReadTime, got.WriteTime, got.MetaTime, want.ReadTime, want.WriteTime, want.MetaTime)
	}
	gt.ReadTime, gt.WriteTime, gt.MetaTime = 0, 0, 0
	wt.ReadTime, wt.WriteTime, wt.MetaTime = 0, 0, 0
	if len(wt.Ranks) == 0 {
		wt.Ranks = nil
	}
	gj, _ := json.Marshal(gt)
	wj, _ := json.Marshal(wt)
	if string(gj) != string(wj) {
		t.Errorf("%s:\n got %s\nwant %s", what, gj, wj)
	}
}

// checkAgainst compares a log the Go reader read with the independent
// decoder's reading of a file.
func checkAgainst(t *testing.T, l *Log, ref refLog) {
	t.Helper()
	if l.Version != ref.Version || (l.ByteOrder == binary.BigEndian) != ref.BigEndian || uint8(l.Compression) != ref.Compression {
		t.Errorf("version %s, big-endian %v, compression %v; want %s, %v, %d", l.Version, l.ByteOrder == binary.BigEndian,
			l.Compression, ref.Version, ref.BigEndian, ref.Compression)
	}
	j := l.Job
	if j.UID != ref.Job.UID || j.JobID != ref.Job.JobID || j.NProcs != ref.Job.NProcs || j.Exe != strings.TrimRight(ref.Job.Exe, " ") ||
		j.Start.Unix() != ref.Job.StartSec || int64(j.Start.Nanosecond()) != ref.Job.StartNsec ||
		j.End.Unix() != ref.Job.EndSec || int64(j.End.Nanosecond()) != ref.Job.EndNsec {
		t.Errorf("job %+v, want %+v", j, ref.Job)
	}
	if len(l.Names) != ref.Names {
		t.Errorf("%d names, want %d", len(l.Names), ref.Names)
	}
	for _, id := range []ModuleID{ModPOSIX, ModMPIIO, ModSTDIO, ModDXTPOSIX, ModDXTMPIIO} {
		want, ok := ref.Modules[id.String()]
		if !ok {
			if l.Module(id) != nil {
				t.Errorf("%s: the reader found a region the reference did not", id)
			}
			continue
		}
		sameTotals(t, id.String(), totals(l, id), want)
	}
}

// TestFixturesMatchIndependentDecoder proves, on every Darshan log in
// tests/interop (formats 3.00 to 3.41, both byte orders, with and without
// DXT), that the reader reads the whole log without a fault and finds the
// job facts (uid, job id, process count, start, end, command line), the
// number of names and, per module, the record count, the shared records,
// the summed opens, reads, writes, bytes and times, and the DXT segment
// counts, bytes and ranks that an independent decoder written in Python
// (testdata/darshan_ref.py) finds.
func TestFixturesMatchIndependentDecoder(t *testing.T) {
	paths := fixtures(t)
	refs := references(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			l, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainst(t, l, refs[path])
		})
	}
}

// TestFixtureFactsFromTheirSources proves the reader against what the
// logs' sources state, independently of any decoder: the darshan-logs
// READMEs (the release logs run mpi-io-test on 4 processes with its
// defaults, one 16 MiB block each, written then read; the DXT log runs it
// on 32 processes for 4 iterations, 2 GiB in all; the HDF5 log ran 10
// ranks with POSIX, DXT_POSIX, H5F and H5D) and the values the Darshan
// project's own tests (pydarshan) expect of the pytokio logs.
func TestFixtureFactsFromTheirSources(t *testing.T) {
	const mib = 1 << 20
	release := map[string][2]string{ // log -> format version, Darshan version
		"mpi-io-test-x86_64-3.0.0.darshan": {"3.00", "3.0.0"}, "mpi-io-test-x86_64-3.1.8.darshan": {"3.10", "3.1.8"},
		"mpi-io-test-ppc64-3.1.8.darshan": {"3.10", "3.1.8"}, "mpi-io-test-x86_64-3.2.1.darshan": {"3.21", "3.2.1"},
		"mpi-io-test-x86_64-3.4.7.darshan": {"3.41", "3.4.7"}, "mpi-io-test-x86_64-3.5.0.darshan": {"3.41", "3.5.0"},
	}
	for name, v := range release {
		t.Run(name, func(t *testing.T) {
			l, err := Open(fixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			mpi := totals(l, ModMPIIO)
			if l.Version != v[0] || l.Job.Metadata["lib_ver"] != v[1] || l.Job.NProcs != 4 || !strings.Contains(l.Job.Exe, "mpi-io-test") {
				t.Errorf("format %s, lib_ver %s, %d procs, exe %q", l.Version, l.Job.Metadata["lib_ver"], l.Job.NProcs, l.Job.Exe)
			}
			if mpi.BytesWritten != 4*16*mib || mpi.BytesRead != 4*16*mib || mpi.Writes != 4 || mpi.Reads != 4 {
				t.Errorf("MPI-IO %+v, want 4 writes and 4 reads of 16 MiB", mpi)
			}
			if (l.ByteOrder == binary.BigEndian) != strings.Contains(name, "ppc64") {
				t.Errorf("byte order %v", l.ByteOrder)
			}
		})
	}
	t.Run("treddy_mpi-io-test", func(t *testing.T) {
		l, err := Open(fixture(t, "treddy_mpi-io-test_*.darshan"))
		if err != nil {
			t.Fatal(err)
		}
		mpi, dxt := totals(l, ModMPIIO), totals(l, ModDXTMPIIO)
		if l.Job.NProcs != 32 || l.Job.Exe != "mpi-io-test -i 4 -v" {
			t.Errorf("%d procs, exe %q", l.Job.NProcs, l.Job.Exe)
		}
		if mpi.BytesWritten != 2048*mib || mpi.BytesRead != 2048*mib || mpi.Writes != 128 || mpi.Reads != 128 {
			t.Errorf("MPI-IO %+v, want 128 writes and 128 reads, 2 GiB each way", mpi)
		}
		if dxt.WriteSegments != 128 || dxt.ReadSegments != 128 || dxt.BytesWritten != 2048*mib || len(dxt.Ranks) != 32 {
			t.Errorf("DXT_MPIIO %+v, want a segment per call of 32 ranks", dxt)
		}
	})
	t.Run("hdf5_diagonal_write_1_byte_dxt", func(t *testing.T) {
		l, err := Open(fixture(t, "hdf5_diagonal_write_1_byte_dxt.darshan"))
		if err != nil {
			t.Fatal(err)
		}
		var mods []string
		for _, m := range l.Modules {
			mods = append(mods, m.Name())
		}
		if l.Job.NProcs != 10 || strings.Join(mods, " ") != "POSIX H5F H5D DXT_POSIX" {
			t.Errorf("%d procs, modules %v", l.Job.NProcs, mods)
		}
	})
	t.Run("nonmpi_dxt_anonymized", func(t *testing.T) {
		// pydarshan's I/O cost figure of this log (issue 590): read, write
		// and meta seconds of POSIX and STDIO, one process.
		l, err := Open(fixture(t, "nonmpi_dxt_anonymized.darshan"))
		if err != nil {
			t.Fatal(err)
		}
		p, s := totals(l, ModPOSIX), totals(l, ModSTDIO)
		for _, c := range []struct{ got, want float64 }{{p.ReadTime, 0.281718}, {p.WriteTime, 0.504260}, {p.MetaTime, 0.170138},
			{s.ReadTime, 0.232386}, {s.WriteTime, 0.165982}, {s.MetaTime, 0.072751}} {
			if math.Abs(c.got-c.want) > 1e-6 {
				t.Errorf("time %.6f s, want %.6f s", c.got, c.want)
			}
		}
		if l.Job.NProcs != 1 || !l.HasDXT() {
			t.Errorf("%d procs, DXT %v", l.Job.NProcs, l.HasDXT())
		}
	})
	t.Run("sample", func(t *testing.T) {
		l, err := Open(fixture(t, "sample.darshan"))
		if err != nil {
			t.Fatal(err)
		}
		if l.Job.JobID != 4478544 || l.Job.UID != 69615 || l.Job.NProcs != 2048 || l.Job.Start.Unix() != 1490000867 ||
			l.Job.End.Unix() != 1490000983 || l.Runtime().Seconds() != 117 || l.Job.Metadata["lib_ver"] != "3.1.3" {
			t.Errorf("job %+v, run time %v", l.Job, l.Runtime())
		}
		if len(l.Modules) != 4 || l.Module(ModMPIIO).Length != 154 || l.Module(ModMPIIO).Partial {
			t.Errorf("modules %+v", l.Modules)
		}
		first := func(id ModuleID, n int) *Record {
			for _, r := range l.Records {
				if r.Module == id {
					if n == 0 {
						return r
					}
					n--
				}
			}
			t.Fatalf("no %s record", id)
			return nil
		}
		p := first(ModPOSIX, 0)
		opens, _ := p.Int("POSIX_OPENS")
		openTime, _ := p.Float("POSIX_F_OPEN_START_TIMESTAMP")
		if p.ID != 6301063301082038805 || p.Rank != -1 || opens != 2049 || openTime != 3.9191410541534424 {
			t.Errorf("POSIX record id %d rank %d opens %d open time %v", p.ID, p.Rank, opens, openTime)
		}
		m := first(ModMPIIO, 0)
		coll, _ := m.Int("MPIIO_COLL_OPENS")
		mopen, _ := m.Float("MPIIO_F_OPEN_TIMESTAMP")
		if coll != 2048 || mopen != 3.912783145904541 {
			t.Errorf("MPI-IO collective opens %d, open time %v", coll, mopen)
		}
		w0, _ := first(ModSTDIO, 0).Int("STDIO_BYTES_WRITTEN")
		w1, _ := first(ModSTDIO, 1).Int("STDIO_WRITES")
		if w0 != 280 || w1 != 68 {
			t.Errorf("STDIO bytes written %d, writes %d", w0, w1)
		}
	})
	t.Run("sample-badost", func(t *testing.T) {
		l, err := Open(fixture(t, "sample-badost.darshan"))
		if err != nil {
			t.Fatal(err)
		}
		s, p := totals(l, ModSTDIO), totals(l, ModPOSIX)
		if l.Job.JobID != 6265799 || l.Job.NProcs != 2048 || l.Runtime().Seconds() != 780 || s.Records != 3 || s.BytesRead+s.BytesWritten != 1656773 {
			t.Errorf("job %d, %d procs, %v; STDIO %+v", l.Job.JobID, l.Job.NProcs, l.Runtime(), s)
		}
		// pydarshan's I/O cost: seconds per process.
		for _, c := range []struct{ got, want float64 }{{p.WriteTime / 2048, 33.48587587394286}, {p.MetaTime / 2048, 0.5547398688504472},
			{s.ReadTime / 2048, 0.011203573201783001}, {s.WriteTime / 2048, 4.632166e-07}, {s.MetaTime / 2048, 0.135187}} {
			if math.Abs(c.got-c.want) > 1e-6*math.Max(1, c.want) {
				t.Errorf("time %.9g s, want %.9g s", c.got, c.want)
			}
		}
	})
	t.Run("noposix", func(t *testing.T) {
		l, err := Open(fixture(t, "noposix.darshan"))
		if err != nil {
			t.Fatal(err)
		}
		if l.Job.JobID != 83017637 || l.Job.UID != 996599276 || l.Job.NProcs != 512 || l.Job.Start.Unix() != 1514923055 ||
			l.Job.End.Unix() != 1514962267 || l.Runtime().Seconds() != 39213 || l.Module(ModPOSIX) != nil ||
			l.Module(ModLustre).Version != 1 || l.Module(ModSTDIO).Version != 1 {
			t.Errorf("job %+v, modules %+v", l.Job, l.Modules)
		}
	})
}

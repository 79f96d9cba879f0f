package ftio

import (
	"math"
	"path/filepath"
	"testing"

	"iopred/tests/interop"
	"iopred/tracefmt"
	_ "iopred/tracefmt/darshan" // reads Darshan logs as streams
	"iopred/tracefmt/tracetest"
)

// TestFileSourcesPathFilter proves FTIO's sampling of an iopred trace
// leaves out the system's and the MPI runtime's files, as the job's
// signal does: a program's start-up reads of /etc and /proc and Open
// MPI's session files do not widen the window or add requests, and
// FilteredFileSources with no filter keeps them.
func TestFileSourcesPathFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app"+tracefmt.FileSuffix)
	var events []*tracefmt.Event
	ev := func(file uint32, op string, start int64) {
		events = append(events, &tracefmt.Event{Op: op, FileID: file, Offset: 0, Size: 4096, Ret: 4096, Bytes: 4096, StartNs: start, EndNs: start + 1e6})
	}
	ev(1, "pread", 0)
	ev(2, "pread", 1e6)
	ev(3, "pwrite", 5e6)
	for i := int64(0); i < 20; i++ {
		ev(4, "pwrite", 1e9+i*3e8)
		ev(4, "pread", 1e9+i*3e8+1e8)
	}
	ev(3, "pwrite", 9e9)
	tracetest.Write(t, path, tracefmt.Header{Program: "/opt/app", PID: 7, StartUnixNs: 1e18},
		tracetest.Files("/etc/passwd", "/proc/self/maps", "/tmp/ompi.node.0/jf.1/shared_mem", "/data/out"),
		events, tracefmt.Footer{Reason: "exit", EndNs: 10e9})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name       string
		filtered   bool
		mode       Mode
		reqs       int
		start, end float64
	}{
		{"writes, filtered", true, ModeWrite, 20, 1, 1 + 19*0.3 + 1e-3},
		{"reads, filtered", true, ModeRead, 20, 1.1, 1.1 + 19*0.3 + 1e-3},
		{"writes, every path", false, ModeWrite, 22, 0.005, 9.001},
		{"reads, every path", false, ModeRead, 22, 0, 1.1 + 19*0.3 + 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srcs []Source
			var err error
			if tc.filtered {
				srcs, err = FileSources([]string{path}, tc.mode, nil)
			} else {
				srcs, err = FilteredFileSources([]string{path}, tc.mode, nil, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			n, lo, hi := 0, math.Inf(1), math.Inf(-1)
			for _, src := range srcs {
				must(src(func(r Request) error {
					n++
					lo, hi = math.Min(lo, r.Start), math.Max(hi, r.End)
					return nil
				}))
			}
			if n != tc.reqs || math.Abs(lo-tc.start) > 1e-9 || math.Abs(hi-tc.end) > 1e-9 {
				t.Errorf("%d requests over [%g, %g] s, want %d over [%g, %g] s", n, lo, hi, tc.reqs, tc.start, tc.end)
			}
		})
	}
}

// TestVolumePerPeriod proves the volume per period is the bytes one
// period moves, whatever the bursts' phase in the window, where the
// total over span/period (n bursts in n-1 periods and a burst) and
// FTIO's B_IO·R_IO/f are high or low.
func TestVolumePerPeriod(t *testing.T) {
	const perBurst = 262144.0
	for _, tc := range []struct {
		name           string
		bursts, period int // samples
		width, lead    int
	}{
		{"12 bursts of 2 samples every 20", 12, 20, 2, 0},
		{"30 bursts of 1 sample every 7, lead 3", 30, 7, 1, 3},
		{"16 bursts of 3 samples every 25, lead 17", 16, 25, 3, 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const fs = 100.0
			x := make([]float64, tc.lead+(tc.bursts-1)*tc.period+tc.width)
			for b := 0; b < tc.bursts; b++ {
				for j := 0; j < tc.width; j++ {
					x[tc.lead+b*tc.period+j] = perBurst * fs / float64(tc.width)
				}
			}
			res, err := AnalyzeSignal(x, 0, fs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.PeriodS == nil {
				t.Fatalf("no period, want %d samples", tc.period)
			}
			if math.Abs(*res.PeriodS*fs-float64(tc.period)) > 0.05*float64(tc.period) {
				t.Fatalf("period %g s, want %d samples", *res.PeriodS, tc.period)
			}
			if got := *res.VolumePerPeriod; math.Abs(got-perBurst) > 1e-6*perBurst {
				t.Errorf("volume per period %.6g B, want %.6g (FTIO's %.6g)", got, perBurst, *res.FTIOVolumePerPeriod)
			}
		})
	}
}

// TestLayer proves the layer choice on a Darshan DXT log of an MPI-IO
// job: the MPI-IO records alone are the default's requests (every byte
// once), the POSIX records the calls the MPI-IO ones made; an unknown
// layer is an error.
func TestLayer(t *testing.T) {
	log := filepath.Join(interop.Path(t, "darshan"), "darshan-logs", "treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan")
	count := func(layer tracefmt.Layer) (n int, bytes float64) {
		srcs, err := FileSourcesWith([]string{log}, ModeBoth, nil, SourceOptions{Filter: defaultFilter, Layer: layer})
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range srcs {
			if err := src(func(r Request) error { n++; bytes += r.Bandwidth * (r.End - r.Start); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		return n, bytes
	}
	dn, db := count("")
	mn, mb := count(tracefmt.LayerMPIIO)
	pn, _ := count(tracefmt.LayerPOSIX)
	if dn != 256 || mn != dn || math.Abs(mb-db) > 1e-6*db || pn != 256 {
		t.Errorf("requests: default %d (%g B), mpiio %d (%g B), posix %d; want 256 of each, mpiio's the default's", dn, db, mn, mb, pn)
	}
	if _, err := FileSourcesWith([]string{log}, ModeBoth, nil, SourceOptions{Layer: "hdf5"}); err == nil {
		t.Error("layer hdf5: no error")
	}
}

// TestLengthenKeepsVolumePerBurst proves that when the period is made a
// multiple of the one the spectrum picked (a harmonic of a burst train),
// the volume per period is one burst's again: measured over the
// harmonic's shorter windows it is half a burst (windows with and without
// one), which is what the report printed before.
func TestLengthenKeepsVolumePerBurst(t *testing.T) {
	const perBurst, fs = 4194304.0, 5.0
	for _, tc := range []struct {
		name           string
		bursts, period int // samples
		m              int
	}{
		{"40 bursts every 10 samples, seen at half", 40, 10, 2},
		{"24 bursts every 12 samples, seen at a third", 24, 12, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float64, tc.bursts*tc.period)
			for b := 0; b < tc.bursts; b++ {
				x[b*tc.period] = perBurst * fs
			}
			res, err := AnalyzeSignal(x, 0, fs, Options{})
			if err != nil || res.PeriodS == nil {
				t.Fatalf("no period (%v)", err)
			}
			// The harmonic the spectrum may pick instead: m times the
			// frequency, its phase m times the fundamental's.
			f := *res.FreqHz * float64(tc.m)
			period := 1 / f
			h := res
			h.FreqHz, h.PeriodS, h.Phase = &f, &period, res.Phase*float64(tc.m)
			v := volumePerPeriod(x, 0, fs, f, h.Phase)
			h.VolumePerPeriod = &v
			if math.Abs(v-perBurst) < 0.25*perBurst {
				t.Fatalf("the harmonic's volume per period is %.4g B: the test's premise (it is less than a burst) fails", v)
			}
			h.Lengthen(tc.m)
			if math.Abs(*h.PeriodS-*res.PeriodS) > 1e-9 || math.Abs(*h.FreqHz-*res.FreqHz) > 1e-9 {
				t.Errorf("lengthened period %g s (%g Hz), want %g s", *h.PeriodS, *h.FreqHz, *res.PeriodS)
			}
			if got := *h.VolumePerPeriod; math.Abs(got-perBurst) > 1e-6*perBurst {
				t.Errorf("volume per period after Lengthen(%d) %.6g B, want %.6g", tc.m, got, perBurst)
			}
		})
	}
}

// TestCopyFileRangeCountsBothWays proves that a copy_file_range (how cp
// and cat copy a file) counts as a write of the file it copied into, as
// well as a read of the file it copied from: its event names the input
// file and keeps the output file's id in Aux. A copy into a descriptor
// iopred does not know (Aux 0: a pipe) writes no file, and an output file
// the path filter leaves out is left out of the writes too.
func TestCopyFileRangeCountsBothWays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp"+tracefmt.FileSuffix)
	var events []*tracefmt.Event
	copyTo := func(out int64, start int64) {
		events = append(events, &tracefmt.Event{Op: "copy_file_range", FileID: 1, Aux: out, Offset: 0, Size: 1 << 20,
			Ret: 1 << 20, Bytes: 1 << 20, StartNs: start, EndNs: start + 1e6})
	}
	for i := int64(0); i < 10; i++ {
		copyTo(2, 1e9+i*3e8)     // into /data/out
		copyTo(0, 1e9+i*3e8+1e8) // into a pipe
		copyTo(3, 1e9+i*3e8+2e8) // into a file the filter leaves out
	}
	tracetest.Write(t, path, tracefmt.Header{Program: "/bin/cp", PID: 9, StartUnixNs: 1e18},
		tracetest.Files("/data/in", "/data/out", "/proc/self/fd/9"), events, tracefmt.Footer{Reason: "exit", EndNs: 5e9})

	for _, tc := range []struct {
		mode Mode
		reqs int
	}{
		{ModeWrite, 10}, {ModeRead, 30}, {ModeBoth, 40},
	} {
		srcs, err := FileSources([]string{path}, tc.mode, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, src := range srcs {
			err := src(func(r Request) error {
				n++
				if want := float64(1<<20) / 1e-3; math.Abs(r.Bandwidth-want) > 1e-6*want {
					t.Errorf("%s: bandwidth %g, want %g", tc.mode, r.Bandwidth, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if n != tc.reqs {
			t.Errorf("%s: %d requests, want %d", tc.mode, n, tc.reqs)
		}
	}
}

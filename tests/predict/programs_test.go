package predict

import (
	"path/filepath"
	"strings"
	"testing"

	"iopred/analyzer/replay"
	"iopred/tests/testenv"
	"iopred/tracefmt"
)

// programTrace returns the trace of the program named prog in dir (a run
// may leave others, such as Open MPI's orted).
func programTrace(t testing.TB, dir, prog string) string {
	t.Helper()
	files, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), prog+".") {
			return f
		}
	}
	t.Fatalf("no trace of %s among %v", prog, files)
	return ""
}

// checkOffsets replays a program's trace through the predictor and checks
// its offset predictions for the file each call touched are at least as
// good as the contiguous baseline (next offset = end of the previous call
// on that file), and at least min.
func checkOffsets(t *testing.T, trace string, min float64) replay.OffsetReport {
	t.Helper()
	rep, _, err := replay.File(trace, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Offset
	t.Logf("%s: offsets predicted %.1f%% (given the file %.1f%%), contiguous baseline %.1f%% over %d calls",
		filepath.Base(trace), 100*o.Model, 100*o.GivenFile, 100*o.Contiguous, o.Scored)
	if o.Scored == 0 {
		t.Fatalf("no data calls scored in %s", trace)
	}
	if o.GivenFile < o.Contiguous {
		t.Errorf("offsets given the file %.3f, below the contiguous baseline %.3f", o.GivenFile, o.Contiguous)
	}
	if o.GivenFile < min {
		t.Errorf("offsets given the file %.3f, want at least %.2f", o.GivenFile, min)
	}
	return o
}

// An HDF5 writer linked to Debian's libhdf5: each checkpoint file holds
// five datasets with attributes, so the library's writes jump between
// metadata and data (the paper's CM1 case). After the first checkpoints
// the offsets are predicted for at least 90% of the calls, where the
// contiguous baseline gets well under half.
func TestHDF5Checkpoints(t *testing.T) {
	h5cc := testenv.Tool(t, "h5cc")
	build := t.TempDir() // h5cc leaves its object file in the working directory
	prog := filepath.Join(build, "h5ckpt")
	src, err := filepath.Abs(filepath.Join("testdata", "h5ckpt.c"))
	if err != nil {
		t.Fatal(err)
	}
	if res := testenv.Run(t, nil, build, h5cc, "-O2", "-o", prog, src); res.Code != 0 {
		t.Fatalf("h5cc: %+v", res)
	}
	data, traces := t.TempDir(), t.TempDir()
	bare := testenv.Run(t, nil, "", prog, t.TempDir(), "20")
	res := testenv.Traced(t, traces, nil, "", prog, data, "20")
	if res != bare || res.Code != 0 {
		t.Fatalf("with the library %+v, without %+v", res, bare)
	}
	o := checkOffsets(t, programTrace(t, traces, "h5ckpt"), 0.9)
	if o.Model < 0.9 {
		t.Errorf("offsets predicted without knowing the file: %.3f, want at least 0.9", o.Model)
	}
}

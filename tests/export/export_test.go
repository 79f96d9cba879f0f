// Package export tests `iopred export` end to end: real programs traced by
// the library, exported by the built command, and the files read by
// readers that share no code with the writers: Python's json module with
// a check of the trace-event rules (testdata/check_trace.py), and Apache
// Arrow's Go Parquet reader. Slices, rows and bytes must equal what
// `iopred summary --all-paths` counts on the same traces.
package export

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"iopred/tests/testenv"
)

// counts is what `iopred summary --all-paths --json` says of the traces.
type counts struct {
	Events                  uint64
	BytesRead, BytesWritten int64
	Processes               int
}

func summaryOf(t *testing.T, iopred, dir string) counts {
	t.Helper()
	out, err := exec.Command(iopred, "summary", "--all-paths", "--json", dir).Output()
	if err != nil {
		t.Fatalf("iopred summary: %v", err)
	}
	var s struct {
		Processes []struct {
			Events       uint64 `json:"events"`
			BytesRead    int64  `json:"bytes_read"`
			BytesWritten int64  `json:"bytes_written"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	var c counts
	for _, p := range s.Processes {
		c.Events += p.Events
		c.BytesRead += p.BytesRead
		c.BytesWritten += p.BytesWritten
	}
	c.Processes = len(s.Processes)
	return c
}

// checkExports exports the traces in dir both ways with the built command
// and checks both files against the summary; threads is the least number
// of thread tracks the Perfetto file must have.
func checkExports(t *testing.T, dir string, threads int) {
	t.Helper()
	iopred := filepath.Join(testenv.RepoRoot(), "build", "iopred")
	want := summaryOf(t, iopred, dir)
	if want.Events == 0 {
		t.Fatal("the summary counts no event")
	}
	out := t.ArtifactDir()
	trace, table := filepath.Join(out, "trace.json"), filepath.Join(out, "events.parquet")
	for _, args := range [][]string{{"--format", "perfetto", dir, "-o", trace}, {"--format", "parquet", dir, "-o", table}} {
		if b, err := exec.Command(iopred, append([]string{"export"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("iopred export %v: %v\n%s", args, err, b)
		}
	}

	// Perfetto, read by Python.
	py := testenv.Tool(t, "python3")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(py, filepath.Join("testdata", "check_trace.py"), trace)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("check_trace.py: %v\n%s", err, stderr.String())
	}
	var got struct {
		Slices      uint64 `json:"slices"`
		Predictions uint64 `json:"predictions"`
		BytesRead   int64  `json:"bytes_read"`
		BytesWrite  int64  `json:"bytes_write"`
		Processes   int    `json:"processes"`
		Threads     int    `json:"threads"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Slices != want.Events || got.BytesRead != want.BytesRead || got.BytesWrite != want.BytesWritten || got.Processes != want.Processes {
		t.Errorf("perfetto: %+v; the summary: %+v", got, want)
	}
	if got.Threads < threads || got.Predictions == 0 {
		t.Errorf("perfetto: %d thread tracks (want at least %d), %d predictions", got.Threads, threads, got.Predictions)
	}

	// Parquet, read by Apache Arrow.
	f, err := os.Open(table)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	defer tbl.Release()
	col := func(name string) int {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %s in %s", name, tbl.Schema())
		}
		return idx[0]
	}
	bytesCol, dirCol := tbl.Column(col("bytes")).Data().Chunks(), tbl.Column(col("dir")).Data().Chunks()
	var read, written int64
	for c := range bytesCol {
		b, d := bytesCol[c].(*array.Int64), dirCol[c].(*array.String)
		for i := 0; i < b.Len(); i++ {
			switch d.Value(i) {
			case "read":
				read += b.Value(i)
			case "write":
				written += b.Value(i)
			}
		}
	}
	if uint64(tbl.NumRows()) != want.Events || read != want.BytesRead || written != want.BytesWritten {
		t.Errorf("parquet: %d rows, %d bytes read, %d written; the summary: %+v", tbl.NumRows(), read, written, want)
	}
}

// A traced process (tests/posix nested.c: 48 rounds of open, write,
// pwrite, lseek, read, fwrite, fread and close on four files) and a
// traced program of four threads, exported together.
func TestExportProcesses(t *testing.T) {
	testenv.Library(t)
	gcc := testenv.Tool(t, "gcc")
	root := testenv.RepoRoot()
	nested, threads := filepath.Join(t.TempDir(), "nested"), filepath.Join(t.TempDir(), "threads")
	for prog, src := range map[string]string{nested: "posix/testdata/nested.c", threads: "posix/testdata/threads.c"} {
		if out, err := exec.Command(gcc, "-O2", "-pthread", "-o", prog, filepath.Join(root, "tests", src)).CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", src, err, out)
		}
	}
	data, traces := t.TempDir(), t.TempDir()
	if r := testenv.Traced(t, traces, nil, "", nested, data, "48", "50", "1000"); r.Code != 0 {
		t.Fatalf("nested: %+v", r)
	}
	if r := testenv.Traced(t, traces, nil, "", threads, filepath.Join(data, "threads.dat"), "4", "2000"); r.Code != 0 {
		t.Fatalf("threads: %+v", r)
	}
	checkExports(t, traces, 1+4)
}

// A 4-rank Open MPI job of the IOR-like program (tests/mpi ior.c):
// collective and independent MPI-IO, the POSIX calls ROMIO makes inside
// them, the runtime's own files.
func TestExportMPIJob(t *testing.T) {
	lib := testenv.Library(t)
	cc := testenv.Tool(t, "mpicc.openmpi")
	run := testenv.Tool(t, "mpirun.openmpi")
	prog := filepath.Join(t.TempDir(), "ior")
	src := filepath.Join(testenv.RepoRoot(), "tests", "mpi", "testdata", "ior.c")
	if out, err := exec.Command(cc, "-O2", "-Wno-stringop-overflow", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	data, traces := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, run, "--oversubscribe", "-np", "4", "-x", "LD_PRELOAD="+lib, "-x", "IOPRED_DIR="+traces,
		prog, data, "3", "8192", "2048", "20", "ckpt=20")
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("job: %v\n%s", err, out)
	}
	checkExports(t, traces, 4)
}

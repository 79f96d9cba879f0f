package export

import (
	"bytes"
	"path/filepath"
	"testing"

	"iopred/tracefmt"
	"iopred/tracefmt/tracetest"
)

// A copy_file_range (how cp and cat copy) names the file it read, and its
// bytes also land in the file in Aux: the exports' byte counts, overall
// and per layer, are the summary's, both sides of the copy counted.
func TestCopyFileRangeCountsBothSides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp.n1.9"+tracefmt.FileSuffix)
	events := []*tracefmt.Event{
		{Op: "openat", FileID: 1, Offset: tracefmt.NoOffset, Ret: 3, StartNs: 100, EndNs: 200},
		{Op: "openat", FileID: 2, Offset: tracefmt.NoOffset, Ret: 4, StartNs: 300, EndNs: 400},
		{Op: "copy_file_range", FileID: 1, Aux: 2, Offset: 0, Size: 1 << 30, Ret: 700, Bytes: 700, StartNs: 500, EndNs: 900},
		{Op: "copy_file_range", FileID: 1, Aux: 2, Offset: 700, Size: 1 << 30, Ret: 0, StartNs: 1000, EndNs: 1100},
	}
	tracetest.Write(t, path, tracefmt.Header{Program: "/bin/cp", Host: "n1", PID: 9, StartUnixNs: 1e18},
		tracetest.Files("/data/in", "/data/out"), events, tracefmt.Footer{Reason: "exit", EndNs: 2000})
	traces := []string{path}
	_, read, written := summaryCounts(t, traces)
	if read != 700 || written != 700 {
		t.Fatalf("the summary counts %d read, %d written; want 700 and 700", read, written)
	}
	var buf bytes.Buffer
	for name, export := range map[string]func() (Stats, error){
		"perfetto": func() (Stats, error) { return Perfetto(&buf, traces, PerfettoOptions{}) },
		"parquet":  func() (Stats, error) { return Parquet(&buf, traces, ParquetOptions{}) },
	} {
		buf.Reset()
		st, err := export()
		if err != nil {
			t.Fatal(err)
		}
		if st.BytesRead != read || st.BytesWritten != written {
			t.Errorf("%s: %d read, %d written; the summary counts %d and %d", name, st.BytesRead, st.BytesWritten, read, written)
		}
		checkLayers(t, traces, st)
	}
}

package export_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"iopred/analyzer/export"
	"iopred/tracefmt"
)

// exampleTrace writes a trace of one process that writes 3 blocks of
// 4 KiB and returns its path.
func exampleTrace() string {
	dir, _ := os.MkdirTemp("", "export-example")
	var buf bytes.Buffer
	w, _ := tracefmt.NewWriter(&buf, tracefmt.Header{Program: "/bin/app", Host: "node1", PID: 42, StartUnixNs: 1.7e18}, tracefmt.WriterOptions{})
	w.File(tracefmt.File{ID: 1, Path: "/scratch/out.dat"})
	for i := int64(0); i < 3; i++ {
		w.Event(&tracefmt.Event{Op: "pwrite", FileID: 1, Offset: i * 4096, Size: 4096, Ret: 4096, Bytes: 4096,
			StartNs: i * 1000, EndNs: i*1000 + 500, Tid: 42})
	}
	w.Close(tracefmt.Footer{Reason: "exit", EndNs: 3000})
	path := filepath.Join(dir, "app.node1.42"+tracefmt.FileSuffix)
	os.WriteFile(path, buf.Bytes(), 0o644)
	return path
}

func ExamplePerfetto() {
	trace := exampleTrace()
	defer os.RemoveAll(filepath.Dir(trace))
	var out bytes.Buffer
	st, err := export.Perfetto(&out, []string{trace}, export.PerfettoOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.Events, "slices,", st.BytesWritten, "bytes written")
	first := bytes.Index(out.Bytes(), []byte(`{"ph":"X"`))
	fmt.Println(string(out.Bytes()[first : first+bytes.IndexByte(out.Bytes()[first:], '\n')]))
	// Output:
	// 3 slices, 12288 bytes written
	// {"ph":"X","name":"pwrite","cat":"posix","pid":1,"tid":42,"ts":0,"dur":0.500,"args":{"file":"/scratch/out.dat","offset":0,"size":4096,"bytes":4096,"ret":4096,"dir":"write"}},
}

func ExampleParquet() {
	trace := exampleTrace()
	defer os.RemoveAll(filepath.Dir(trace))
	var out bytes.Buffer
	st, err := export.Parquet(&out, []string{trace}, export.ParquetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.Events, "rows,", st.BytesWritten, "bytes written; a Parquet file:", string(out.Bytes()[:4]))
	// Output:
	// 3 rows, 12288 bytes written; a Parquet file: PAR1
}

package patterns_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"iopred/analyzer/patterns"
	"iopred/tracefmt"
)

// A process writing 1000 records of 64 bytes, one every 4 KiB: one pattern
// entry, and a 32,000-byte raw index shrinks to a few bytes.
func ExampleAnalyze() {
	dir, err := os.MkdirTemp("", "patterns-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var buf bytes.Buffer
	w, _ := tracefmt.NewWriter(&buf, tracefmt.Header{Program: "/bin/app", Host: "n", PID: 9}, tracefmt.WriterOptions{})
	w.File(tracefmt.File{ID: 1, Path: "/scratch/out"})
	for i := int64(0); i < 1000; i++ {
		w.Event(&tracefmt.Event{Op: "pwrite", FileID: 1, Offset: i * 4096, Size: 64, Ret: 64, Bytes: 64, StartNs: i, EndNs: i + 1})
	}
	w.Close(tracefmt.Footer{Reason: "exit"})
	trace := filepath.Join(dir, "app.n.9"+tracefmt.FileSuffix)
	os.WriteFile(trace, buf.Bytes(), 0o644)

	rep, err := patterns.Analyze([]string{trace}, 0)
	if err != nil {
		log.Fatal(err)
	}
	f := rep.Files[0]
	fmt.Println(f.Path, f.Requests, f.Local[0].Kind, f.Local[0].Patterns, f.RawIndexBytes, f.Coverage)
	// Output: /scratch/out 1000 write [[0,(4096)^999]] 32000 1
}

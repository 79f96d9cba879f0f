package summary_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"iopred/analyzer/summary"
	"iopred/tracefmt"
)

// Three processes' traces summarised in two shares, as two MPI ranks
// would: each share's Partial crosses in its wire form, and Combine gives
// the summary of all three.
func ExampleCombine() {
	dir, err := os.MkdirTemp("", "summary-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var traces []string
	for pid := 1; pid <= 3; pid++ {
		var buf bytes.Buffer
		w, _ := tracefmt.NewWriter(&buf, tracefmt.Header{Program: "/bin/app", Host: "n", PID: pid, StartUnixNs: 1e18}, tracefmt.WriterOptions{})
		w.File(tracefmt.File{ID: 1, Path: "/scratch/out"})
		for i := int64(0); i < 10; i++ {
			w.Event(&tracefmt.Event{Op: "pwrite", FileID: 1, Offset: i * 4096, Size: 4096, Ret: 4096, Bytes: 4096, StartNs: i * 1000, EndNs: i*1000 + 100})
		}
		w.Close(tracefmt.Footer{Reason: "exit", EndNs: 20000})
		trace := filepath.Join(dir, fmt.Sprintf("app.n.%d%s", pid, tracefmt.FileSuffix))
		os.WriteFile(trace, buf.Bytes(), 0o644)
		traces = append(traces, trace)
	}
	opt := summary.Options{}
	var parts []*summary.Partial
	for _, share := range [][2]int{{0, 1}, {1, 3}} {
		b, err := summary.Read(traces, share[0], share[1], opt).Encode()
		if err != nil {
			log.Fatal(err)
		}
		p, err := summary.DecodePartial(b, opt)
		if err != nil {
			log.Fatal(err)
		}
		parts = append(parts, p)
	}
	rep, err := summary.Combine(traces, parts, opt)
	if err != nil {
		log.Fatal(err)
	}
	f := rep.Files[0]
	fmt.Println(len(rep.Processes), f.Path, f.Processes, f.BytesWritten)
	// Output: 3 /scratch/out 3 122880
}

package insights_test

import (
	"fmt"
	"os"
	"path/filepath"

	"iopred/analyzer/insights"
	"iopred/analyzer/summary"
	"iopred/tracefmt"
)

// A process that appends 2,000 records of 100 bytes: its requests are
// small and misaligned, and the findings say so with their figures.
func ExampleCollector_Findings() {
	dir, _ := os.MkdirTemp("", "insights")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.h.1"+tracefmt.FileSuffix)
	f, _ := os.Create(path)
	w, _ := tracefmt.NewWriter(f, tracefmt.Header{Program: "app", PID: 1, StartUnixNs: 1.7e18}, tracefmt.WriterOptions{})
	w.File(tracefmt.File{ID: 1, Path: "/scratch/out.log"})
	for i := range int64(2000) {
		w.Event(&tracefmt.Event{Op: "write", FileID: 1, Offset: i * 100, Size: 100, Ret: 100, Bytes: 100, StartNs: i * 1000, EndNs: i*1000 + 500})
	}
	w.Close(tracefmt.Footer{Reason: "exit", EndNs: 2e6})
	f.Close()

	c := insights.NewCollector(insights.Thresholds{})
	summary.Summarize([]string{path}, summary.Options{Observer: c})
	for _, fd := range c.Findings() {
		if fd.Severity == insights.High {
			fmt.Printf("%s: %s\n", fd.Title, fd.Evidence[0])
		}
	}
	// Output:
	// Small write requests: 2,000 of 2,000 write requests (100%) moved less than 1 MiB; mean size 100 B
	// Misaligned requests: 1,998 of 2,000 requests (100%) start off a 4 KiB boundary: 0 reads, 1,998 writes
}

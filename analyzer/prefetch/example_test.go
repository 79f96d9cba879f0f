package prefetch_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"iopred/analyzer/prefetch"
	"iopred/tracefmt"
)

// One run of a strided reader: the Markov model trains on the first half of
// the reads and cannot predict the unseen second half; the pattern
// predictor can.
func ExampleEvaluate() {
	dir, err := os.MkdirTemp("", "prefetch-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var buf bytes.Buffer
	w, _ := tracefmt.NewWriter(&buf, tracefmt.Header{Program: "/bin/app", Host: "n", PID: 9}, tracefmt.WriterOptions{})
	w.File(tracefmt.File{ID: 1, Path: "/data/in"})
	for i := int64(0); i < 1000; i++ {
		w.Event(&tracefmt.Event{Op: "pread", FileID: 1, Offset: i * 1 << 20, Size: 4096, Ret: 4096, Bytes: 4096, StartNs: i, EndNs: i + 1})
	}
	w.Close(tracefmt.Footer{Reason: "exit"})
	trace := filepath.Join(dir, "app.n.9"+tracefmt.FileSuffix)
	os.WriteFile(trace, buf.Bytes(), 0o644)

	rep, err := prefetch.Evaluate(nil, []string{trace}, prefetch.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rep.Results {
		fmt.Printf("%s %d/%d\n", r.Predictor, r.Predicted, r.Reads)
	}
	// Output:
	// pattern 500/500
	// markov 0/500
	// markov-initial 0/500
	// readahead 0/500
}

package tracefmt_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"iopred/tracefmt"
)

// A converter of a tool that counts instead of tracing writes a file's
// totals as a Counters record; the reader gives them back with the path.
func ExampleWriter_Counters() {
	dir, err := os.MkdirTemp("", "counters")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sim.node1.0.r0"+tracefmt.FileSuffix)
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	w, err := tracefmt.NewWriter(f, tracefmt.Header{Program: "/bin/sim", Source: "darshan 3.4.7, log format 3.41"}, tracefmt.WriterOptions{})
	if err != nil {
		log.Fatal(err)
	}
	w.File(tracefmt.File{ID: 1, Path: "/scratch/out.dat"})
	w.Counters(&tracefmt.Counters{FileID: 1, Layer: tracefmt.LayerPOSIX, Calls: map[string]uint64{"open": 1, "write": 64},
		BytesWritten: 64 << 20, WriteNs: 1_500_000_000})
	w.Close(tracefmt.Footer{Reason: "exit"})
	f.Close()

	tracefmt.ReadAll(path, func(r tracefmt.Record) error {
		if c := r.Counters; c != nil {
			fmt.Printf("%s: %d writes, %d bytes, %v s\n", c.Path, c.Calls["write"], c.BytesWritten, float64(c.WriteNs)/1e9)
		}
		return nil
	})
	// The time-resolved analyses refuse traces without events.
	var ne *tracefmt.NoEventsError
	fmt.Println("time-resolved analyses:", errors.As(tracefmt.CheckTimeResolved(path), &ne))
	// Output:
	// /scratch/out.dat: 64 writes, 67108864 bytes, 1.5 s
	// time-resolved analyses: true
}

// A format keeps what it read of a file in a FileCache, so that listing a
// file's processes and opening each reads the file once.
func ExampleFileCache() {
	f, err := os.CreateTemp("", "log")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(f.Name())
	f.WriteString("three lines\nof a\nlog\n")
	f.Close()
	var cache tracefmt.FileCache[int]
	reads := 0
	lines := func(path string) (int, error) {
		reads++
		data, err := os.ReadFile(path)
		n := 0
		for _, c := range data {
			if c == '\n' {
				n++
			}
		}
		return n, err
	}
	for range 3 {
		n, _ := cache.Get(f.Name(), lines)
		fmt.Print(n, " ")
	}
	fmt.Println("lines;", reads, "read")
	// Output: 3 3 3 lines; 1 read
}

package tracefmt_test

import (
	"bytes"
	"fmt"
	"io"
	"log"

	"iopred/tracefmt"
)

func ExampleNewWriter() {
	var trace bytes.Buffer
	w, err := tracefmt.NewWriter(&trace, tracefmt.Header{Program: "/bin/app", Host: "node1", PID: 4242},
		tracefmt.WriterOptions{})
	if err != nil {
		log.Fatal(err)
	}
	w.Context(tracefmt.Context{ID: 77, Frames: []tracefmt.Frame{{Module: "/bin/app", Offset: 0x1a2b, Function: "save"}}})
	w.File(tracefmt.File{ID: 1, Path: "/scratch/out.dat"})
	for i := int64(0); i < 3; i++ {
		w.Event(&tracefmt.Event{Op: "write", FileID: 1, Offset: i * 4096, Size: 4096, Ret: 4096, Bytes: 4096,
			StartNs: 1000 * i, EndNs: 1000*i + 300, Tid: 4242, Ctx: 77})
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit", EndNs: 5000, Events: 3, Bytes: 3 * 4096}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("frame open after Close:", w.FrameOpen())
	// Output: frame open after Close: false
}

func ExampleNewReader() {
	var trace bytes.Buffer
	w, _ := tracefmt.NewWriter(&trace, tracefmt.Header{Program: "/bin/app", PID: 7}, tracefmt.WriterOptions{})
	w.File(tracefmt.File{ID: 1, Path: "/tmp/data"})
	w.Event(&tracefmt.Event{Op: "pwrite", FileID: 1, Offset: 8192, Size: 512, Ret: 512, Bytes: 512, StartNs: 10, EndNs: 25})
	w.Event(&tracefmt.Event{Op: "close", FileID: 1, Offset: tracefmt.NoOffset, StartNs: 30, EndNs: 31})
	w.Close(tracefmt.Footer{Reason: "exit", Events: 2, Bytes: 512})

	r, err := tracefmt.NewReader(&trace, "example")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Println("program:", r.Header().Program)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err) // *tracefmt.TruncatedError or *tracefmt.FormatError
		}
		if e := rec.Event; e != nil {
			line, _ := e.MarshalJSON()
			fmt.Println(string(line))
		}
	}
	fmt.Println("footer events:", r.Footer().Events)
	// Output:
	// program: /bin/app
	// {"layer":"posix","op":"pwrite","path":"/tmp/data","file_id":1,"offset":8192,"size":512,"ret":512,"bytes":512,"start_ns":10,"end_ns":25,"tid":0,"pid":7,"rank":null,"ctx":0,"errno":0,"aux":0}
	// {"layer":"posix","op":"close","path":"/tmp/data","file_id":1,"offset":null,"size":0,"ret":0,"bytes":0,"start_ns":30,"end_ns":31,"tid":0,"pid":7,"rank":null,"ctx":0,"errno":0,"aux":0}
	// footer events: 2
}

package tracefmt

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// FuzzReader feeds arbitrary bytes to the reader: it must never panic nor
// hang, and must fail only with a *FormatError, a *TruncatedError or io.EOF.
// The first seed is a loop of 3 iterations in frames of at most 200 bytes:
// several frames in a few hundred bytes. (40 iterations made a seed whose
// edits Go's fuzzer took minutes to minimise, at a cost quadratic in their
// length; tests/fuzzinput.)
func FuzzReader(f *testing.F) {
	f.Add(writeTrace(f, testHeader(), WriterOptions{FrameBytes: 200}, loopRecords(3, 1)))
	f.Add(writeTrace(f, testHeader(), WriterOptions{}, []record{{footer: &Footer{Reason: "exit"}}}))
	f.Add([]byte("not a trace"))
	f.Add([]byte{})
	checkReader(f, func(t *testing.T, data []byte) { readAllChecked(t, data) })
}

// FuzzReaderFrames fuzzes the decompressed content: the fuzzer's bytes
// become the lines of a well-framed trace, which exercises the line
// parser rather than the zstd decoder. Each input is read as format
// version 1 and as version 2 (whose events take omitted fields from
// their context's earlier event), in one frame and cut into frames at
// every fourth line (version 2's per-context state restarts at each).
func FuzzReaderFrames(f *testing.F) {
	hdrs := []string{fuzzHeader(1), fuzzHeader(2)}
	f.Add([]byte(`{"k":"c","i":1,"id":5,"frames":[{"mod":"m","off":1}]}` + "\n" + `{"k":"f","id":1,"path":"/x"}` + "\n" +
		`{"k":"e","o":"pwrite","f":1,"c":1,"i":3,"s":10,"x":-5,"t":100,"d":5}` + "\n" + `{"k":"e","o":"read","nx":1,"r":-1,"e":9,"t":1,"d":5}` + "\n" +
		`{"k":"p","op":"fork","t":3,"child":9}` + "\n" + `{"k":"z","reason":"exit","model":{"a":1}}` + "\n"))
	f.Add([]byte(`{"k":"e","o":"w\u0072ite","t":1,"d":1,"b":3,"a":-9223372036854775808}` + "\n"))
	f.Add([]byte(`{"k":"f","id":1,"path":"/x"}` + "\n" + `{"k":"e","o":"MPI_File_iwrite_at","f":1,"s":8,"b":0,"q":7,"t":1,"d":1}` + "\n" +
		`{"k":"e","o":"pwrite","s":8,"p":7,"t":1,"d":1}` + "\n" + `{"k":"e","o":"MPI_Wait","s":8,"b":8,"x":0,"q":8,"p":7,"t":1,"d":1}` + "\n"))
	f.Add([]byte(`{"k":"g","name":"epoch","cat":"PyTorch","t":5,"end":90,"tid":3,"args":{"epoch":"1"}}` + "\n" +
		`{"k":"e","o":"read","t":6,"d":1}` + "\n" + `{"k":"g","name":"","t":1,"end":2}` + "\n"))
	// Version 2 forms: the operation, file, size and aux left to the
	// context; a context's first event in a frame without an operation.
	f.Add([]byte(`{"k":"c","i":1,"id":5,"frames":[]}` + "\n" + `{"k":"f","id":1,"path":"/x"}` + "\n" +
		`{"k":"e","o":"pwrite","f":1,"c":1,"s":4096,"a":3,"t":100,"d":5}` + "\n" + `{"k":"e","o":"write","s":1,"x":-4000,"t":1,"d":5}` + "\n" +
		`{"k":"e","c":1,"t":7,"d":5}` + "\n" + `{"k":"e","t":7,"d":5}` + "\n" + `{"k":"e","c":1,"s":0,"a":0,"f":0,"nx":1,"t":7,"d":5}` + "\n" +
		`{"k":"e","c":1,"t":7,"d":5}` + "\n" + `{"k":"e","c":2,"t":7,"d":5}` + "\n"))
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		f.Fatal(err)
	}
	checkReader(f, func(t *testing.T, body []byte) {
		for _, hdr := range hdrs {
			data := enc.EncodeAll([]byte(hdr), nil)
			readAllChecked(t, enc.EncodeAll(body, data))
			lines := bytes.SplitAfter(body, []byte("\n"))
			for i := 0; i < len(lines); i += 4 {
				data = enc.EncodeAll(bytes.Join(lines[i:min(i+4, len(lines))], nil), data)
			}
			readAllChecked(t, data)
		}
	})
}

// fuzzHeader is a header line of format version v.
func fuzzHeader(v int) string {
	return `{"k":"h","v":` + strconv.Itoa(v) + `,"prog":"p","host":"h","pid":1,"ppid":0,"rank":2,"t0_unix_ns":0,"t0_mono_ns":0,"ctx_depth":0,"lib":""}` + "\n"
}

func checkReader(f *testing.F, fn func(*testing.T, []byte)) { f.Fuzz(fn) }

// readAllChecked also checks FinalFooter: when it finds a footer and the
// reader reads the input to io.EOF, the reader's last footer is that one
// (a reader that stops on an error earlier may not reach it).
func readAllChecked(t *testing.T, data []byte) {
	final, finalOK := finalFooter(bytes.NewReader(data), "fuzz")
	r, err := NewReader(bytes.NewReader(data), "fuzz")
	if err != nil {
		checkErr(t, err)
		return
	}
	defer r.Close()
	for i := 0; ; i++ {
		rec, err := r.Next()
		if err != nil {
			checkErr(t, err)
			if finalOK && err == io.EOF && !reflect.DeepEqual(r.Footer(), final) {
				t.Fatalf("FinalFooter found %+v; the reader ends with %v and footer %+v", final, err, r.Footer())
			}
			return
		}
		if rec.Event != nil {
			if _, err := rec.Event.MarshalJSON(); err != nil {
				t.Fatal(err)
			}
		}
		if i > len(data)*8+16 {
			t.Fatal("more records than the input can hold")
		}
	}
}

func checkErr(t *testing.T, err error) {
	var fe *FormatError
	var te *TruncatedError
	if err != io.EOF && !errors.As(err, &fe) && !errors.As(err, &te) {
		t.Fatalf("unexpected error type %T: %v", err, err)
	}
}

package tracefmt

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// decoded is everything a Reader returns for one input: the header or the
// error that refused it, every record, the error that ended the reading,
// and the tables as they stand at the end.
type decoded struct {
	hdr      Header
	openErr  string
	recs     []Record
	endErr   string
	files    map[uint32]File
	contexts map[uint64]Context
	footer   *Footer
}

// decodeWith reads data to its end, with the fast event scanner or
// without it (every line through scanLine and encoding/json).
func decodeWith(t *testing.T, data []byte, name string, general bool) decoded {
	t.Helper()
	var d decoded
	r, err := NewReader(bytes.NewReader(data), name)
	if err != nil {
		d.openErr = err.Error()
		return d
	}
	defer r.Close()
	r.generalOnly = general
	d.hdr = r.Header()
	for {
		rec, err := r.Next()
		if err != nil {
			if err != io.EOF {
				d.endErr = err.Error()
			}
			break
		}
		d.recs = append(d.recs, rec)
	}
	d.files, d.contexts, d.footer = r.Files(), r.Contexts(), r.Footer()
	return d
}

// sameDecoding fails the test when the fast scanner and the general path
// decode data differently: a record, a table, or an error's text.
func sameDecoding(t *testing.T, data []byte, name string) int {
	t.Helper()
	fast, general := decodeWith(t, data, name, false), decodeWith(t, data, name, true)
	if fast.openErr != general.openErr || fast.endErr != general.endErr {
		t.Fatalf("%s: errors differ: fast %q / %q, general %q / %q", name, fast.openErr, fast.endErr, general.openErr, general.endErr)
	}
	if len(fast.recs) != len(general.recs) {
		t.Fatalf("%s: fast path read %d records, general path %d", name, len(fast.recs), len(general.recs))
	}
	for i := range fast.recs {
		if !reflect.DeepEqual(fast.recs[i], general.recs[i]) {
			t.Fatalf("%s: record %d differs:\nfast    %+v\ngeneral %+v", name, i, recordString(fast.recs[i]), recordString(general.recs[i]))
		}
	}
	if !reflect.DeepEqual(fast, general) {
		t.Fatalf("%s: header or tables differ", name)
	}
	return len(fast.recs)
}

func recordString(r Record) string {
	if r.Event != nil {
		return string(r.Event.AppendJSON(nil))
	}
	return string(r.Kind)
}

// repoRoot is the module's root, two levels up from nothing: the
// directory holding go.mod above the package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod above the package: %v", err)
	}
	return dir
}

// committedTraces lists every iopred trace kept in the repository (outside
// .git and build), and fails the test when there are fewer than 100: a
// walk that found almost nothing would prove nothing.
func committedTraces(t *testing.T) []string {
	t.Helper()
	root := repoRoot(t)
	var traces []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "build") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, FileSuffix) {
			traces = append(traces, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) < 100 {
		t.Fatalf("found only %d traces under %s", len(traces), root)
	}
	return traces
}

// TestFastScannerDecodesAsGeneralPath decodes every iopred trace kept in
// the repository and every input of the reader's fuzz corpora twice, with
// the fast event scanner and without it, and requires the same records,
// tables and error messages. It also cuts and corrupts some traces, so
// that the error paths are compared too.
func TestFastScannerDecodesAsGeneralPath(t *testing.T) {
	traces := committedTraces(t)
	events := 0
	for i, p := range traces {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n := sameDecoding(t, data, p)
		events += n
		if i%10 == 0 && len(data) > 64 {
			sameDecoding(t, data[:len(data)*2/3], p+" (cut)")
		}
	}
	t.Logf("%d traces, %d records decoded alike", len(traces), events)

	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	// The committed traces are of format version 1: version 2's are
	// written here, from varied streams, whole and cut.
	for seed := int64(1); seed <= 4; seed++ {
		data := writeTrace(t, testHeader(), WriterOptions{FrameBytes: 8 << 10}, siteRecords(rand.New(rand.NewSource(seed)), 5000))
		events += sameDecoding(t, data, "version 2 seed "+strconv.Itoa(int(seed)))
		sameDecoding(t, data[:len(data)*2/3], "version 2 (cut)")
	}
	t.Logf("%d records decoded alike with the version 2 traces", events)
	// The corpora: the repository's, and what `go test -fuzz` gathered
	// on this machine (in the build cache), if anything.
	cache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	corpora := 0
	for _, hdr := range [][]byte{[]byte(fuzzHeader(1)), []byte(fuzzHeader(2))} {
		for _, target := range []string{"FuzzReader", "FuzzReaderFrames", "FuzzScanEvent"} {
			files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
			gathered, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(cache)), "fuzz", "iopred", "tracefmt", target, "*"))
			for _, f := range append(files, gathered...) {
				in := corpusBytes(t, f)
				switch target {
				case "FuzzReader":
					sameDecoding(t, in, f)
				case "FuzzReaderFrames":
					sameDecoding(t, enc.EncodeAll(in, enc.EncodeAll(hdr, nil)), f)
				case "FuzzScanEvent":
					body := append([]byte(`{"k":"f","id":1,"path":"/x"}`+"\n"), in...)
					sameDecoding(t, enc.EncodeAll(append(body, '\n'), enc.EncodeAll(hdr, nil)), f)
				}
				corpora++
			}
		}
	}
	if corpora == 0 {
		t.Fatal("no fuzz corpus files in testdata/fuzz")
	}
	t.Logf("%d fuzz corpus inputs decoded alike", corpora)
}

// corpusBytes reads the one []byte value of a `go test fuzz v1` file.
func corpusBytes(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a corpus file of one value", path)
	}
	v := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
	s, err := strconv.Unquote(v)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// TestScanEventForms lists the event lines the fast scanner takes and
// those it leaves to scanLine; on every one it takes, the fields equal
// scanLine's.
func TestScanEventForms(t *testing.T) {
	for _, tc := range []struct {
		line string
		fast bool
	}{
		{`{"k":"e","o":"write","f":1,"i":10000,"s":4096,"t":17640710,"d":4096000}`, true},
		{`{"k":"e","o":"read","nx":1,"r":-1,"e":9,"t":1,"d":5}`, true},
		{`{"k":"e","o":"","t":-0,"d":0}`, true},
		{`{"k":"e","o":"w","a":-999999999999999999,"t":1,"d":1}`, true},
		{`{"k":"e","o":"w","t":1,"t":2,"d":1}`, true},                     // the last value counts, as in encoding/json
		{`{"k":"e","o":"w","t":1,"d":1,"x":5,"nx":0}`, true},              // nx 0 keeps the offset
		{`{"k":"e","o":"w","a":-9223372036854775808,"t":1,"d":1}`, false}, // 19 digits
		{`{"k":"e","o":"w","t":01,"d":1}`, false},
		{`{"k":"e","o":"w","t":1.5,"d":1}`, false},
		{`{"k":"e","o":"w","t":1e3,"d":1}`, false},
		{`{"k":"e","o":"w","t":1,"d":1} `, false},
		{`{"k":"e","o":"w","t":1, "d":1}`, false},
		{`{"k":"e","o":"w\u0072ite","t":1,"d":1}`, false},
		{`{"k":"e","o":"w","t":"1","d":1}`, false},
		{`{"k":"e","o":"w","t":1,"d":1,"zz":1}`, false},
		{`{"k":"e","o":"w","t":1,"d":1,"k":"c"}`, false},
		{`{"k":"e","o":"w","t":1,"d":1,"o":"r"}`, false},
		{`{"k":"e","o":"w","t":1,"d":-}`, false},
		{`{"k":"e","o":"w","t":1,"d":1`, false},
		{`{"k":"e","o":"w","t":1,"d":1}}`, false},
		{`{"k":"e","o":"w","t":null,"d":1}`, false},
		{`{"k":"e","o":"w"}`, true},
		{`{"k":"e"}`, true},                            // version 2: the context may fix the operation
		{`{"k":"e","c":2,"t":1,"d":1}`, true},          // version 2: no operation
		{`{"k":"e","c":2,"o":"w","t":1,"d":1}`, false}, // the operation after another key
		{`{"k":"e","o":5,"t":1,"d":1}`, false},
		{`{"k":"e" ,"t":1,"d":1}`, false},
		{`{"o":"w","k":"e","t":1,"d":1}`, false},
		{`{"k":"c","i":1,"id":5,"frames":[]}`, false},
	} {
		var fast eventFields
		got := scanEvent([]byte(tc.line), &fast)
		if got != tc.fast {
			t.Errorf("%s: fast scanner took it: %v, want %v", tc.line, got, tc.fast)
			continue
		}
		if got {
			sameFields(t, []byte(tc.line), &fast)
		}
	}
}

// sameFields fails unless scanLine reads line as an event with the fields
// in fast.
func sameFields(t *testing.T, line []byte, fast *eventFields) {
	t.Helper()
	var general eventFields
	kind, complex, err := scanLine(line, &general)
	if err != nil || kind != string(KindEvent) || complex {
		t.Fatalf("%q: the fast scanner took a line that scanLine reads as kind %q, complex %v, error %v", line, kind, complex, err)
	}
	if !bytes.Equal(fast.op, general.op) {
		t.Fatalf("%q: operation %q, scanLine %q", line, fast.op, general.op)
	}
	fast.op, general.op = nil, nil
	if !reflect.DeepEqual(*fast, general) {
		t.Fatalf("%q: fields differ:\nfast    %+v\ngeneral %+v", line, *fast, general)
	}
}

// FuzzScanEvent: on every line the fast scanner takes, its fields are
// exactly scanLine's; it never panics on the others.
func FuzzScanEvent(f *testing.F) {
	f.Add([]byte(`{"k":"e","o":"write","f":1,"i":10000,"s":4096,"t":17640710,"d":4096000}`))
	f.Add([]byte(`{"k":"e","o":"read","nx":1,"r":-1,"e":9,"c":2,"b":3,"a":4,"q":5,"p":6,"x":-7,"t":1,"d":5}`))
	f.Add([]byte(`{"k":"e","o":"w","t":999999999999999999,"d":-1}`))
	f.Add([]byte(`{"k":"e","c":3,"t":5,"d":1}`))
	f.Add([]byte(`{"k":"e","f":2,"s":0,"a":0,"t":5,"d":1}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast eventFields
		if scanEvent(line, &fast) {
			sameFields(t, line, &fast)
		}
	})
}

// TestFastScannerErrorsNameTheLine: an event the fast scanner decodes but
// the reader refuses (a file used before its definition) is reported as
// the general path reports it, naming the file, frame, line and field.
func TestFastScannerErrorsNameTheLine(t *testing.T) {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	hdr := `{"k":"h","v":1,"prog":"p","host":"h","pid":1,"ppid":0,"rank":2,"t0_unix_ns":0,"t0_mono_ns":0,"ctx_depth":0,"lib":""}` + "\n"
	for _, body := range []string{
		`{"k":"e","o":"w","t":1,"d":1}` + "\n" + `{"k":"e","o":"w","f":7,"t":1,"d":1}` + "\n",
		`{"k":"e","o":"w","t":1,"d":1}` + "\n" + `{"k":"e","o":"w","c":3,"t":1,"d":1}` + "\n",
		`{"k":"e","o":"w","t":1,"d":1}` + "\n" + `{"k":"e","o":"w","i":99999999999,"t":1,"d":1}` + "\n",
		`{"k":"e","o":"w","t":1}` + "\n",
	} {
		data := enc.EncodeAll([]byte(body), enc.EncodeAll([]byte(hdr), nil))
		sameDecoding(t, data, "bad.iopred.zst")
		d := decodeWith(t, data, "bad.iopred.zst", false)
		var fe *FormatError
		r, _ := NewReader(bytes.NewReader(data), "bad.iopred.zst")
		err := r.Each(func(Record) error { return nil })
		r.Close()
		if !errors.As(err, &fe) || fe.Field == "" || fe.Line == 0 || !strings.HasPrefix(d.endErr, "bad.iopred.zst: frame at byte ") {
			t.Errorf("%q: error %v does not name the file, line and field", body, err)
		}
	}
}

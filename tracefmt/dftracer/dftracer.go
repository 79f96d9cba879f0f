// Package dftracer reads DFTracer's traces (.pfw, and .pfw.gz compressed
// with gzip) as iopred traces. DFTracer writes one file per process: JSON
// lines of Chrome-trace-style events ("name", "cat", "pid", "tid", "ts"
// and "dur" in microseconds, "ph" "X" for a call and "M" for metadata,
// "args" with the call's arguments), between an optional "[" line and an
// optional "]" line; older versions end lines with "," and write numbers
// as strings; DFTracer 2 writes "ph" as a number and its hashes as
// hexadecimal strings. File names come as "fname" in the arguments or, in
// newer versions, as a hash ("fhash") that a metadata event ("FH") maps to
// the name; host names and command lines the same way ("HH", "SH").
//
// A process that DFTracer 1.x saw fork without exec keeps writing into
// its parent's file under its parent's pid; its thread id is its own pid,
// and both record the fork. The reader rebuilds the process tree from
// these: each such child is a process of its own, with its parent and
// fork time, and its descriptors' positions apart from the others'.
//
// Importing the package registers the "dftracer" format with tracefmt:
// the POSIX and STDIO events become iopred events, the application-level
// events of other categories (functions, epochs, steps) regions, every
// analysis reads them, and `iopred import dftracer` converts them.
package dftracer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// MaxLine bounds a line of a trace: a longer one is an error, never a
// larger buffer.
const MaxLine = 1 << 20

// LineError is a line that is not a DFTracer event.
type LineError struct {
	File string
	Line int // from 1
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// errCut marks input that ends inside a line or a gzip stream.
var errCut = errors.New("the trace ends inside a line (the process was killed, or the file was cut)")

// number is a JSON number that older DFTracer versions write as a string.
type number struct {
	v   int64
	set bool
}

func (n *number) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	if s == "null" || s == "" {
		return nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		n.v, n.set = v, true
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || f > 9.2e18 || f < -9.2e18 {
		return fmt.Errorf("not a number: %s", b)
	}
	n.v, n.set = int64(f), true
	return nil
}

// phase is an event's kind as the Chrome trace format's letter: "X" a
// call or region, "M" metadata, "C" a counter. DFTracer 2 writes it as a
// number (1 complete, 2 counter, 3 aggregated, 4 metadata), which becomes
// the letter it replaces ("A" for aggregated).
type phase string

func (p *phase) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*p = phase(s)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("ph is neither a letter nor a number: %s", b)
	}
	switch n {
	case 1:
		*p = "X"
	case 2:
		*p = "C"
	case 3:
		*p = "A"
	case 4:
		*p = "M"
	default:
		*p = phase("#" + strconv.FormatInt(n, 10))
	}
	return nil
}

// event is one line.
type event struct {
	Name string                     `json:"name"`
	Cat  string                     `json:"cat"`
	Pid  number                     `json:"pid"`
	Tid  number                     `json:"tid"`
	Ts   number                     `json:"ts"`
	Dur  number                     `json:"dur"`
	Ph   phase                      `json:"ph"`
	Args map[string]json.RawMessage `json:"args"`
}

// str returns an argument as a string: a JSON string's content, or a
// number's digits.
func (e *event) str(key string) (string, bool) {
	raw, ok := e.Args[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	if t := strings.TrimSpace(string(raw)); t != "" && t != "null" && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
		return t, true
	}
	return "", false
}

// num returns an integer argument (a number, or a string of digits).
func (e *event) num(key string) (int64, bool) {
	raw, ok := e.Args[key]
	if !ok {
		return 0, false
	}
	var n number
	if n.UnmarshalJSON(raw) != nil || !n.set {
		return 0, false
	}
	return n.v, true
}

// lineReader yields the event lines of a trace.
type lineReader struct {
	name   string
	closer io.Closer
	gz     *gzip.Reader
	br     *bufio.Reader
	line   int
	buf    []byte
}

// openLines opens the trace file at path.
func openLines(path string) (*lineReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newLines(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// newLines reads a trace from in, gunzipping it when it starts with
// gzip's magic number; name stands for it in messages.
func newLines(in io.Reader, name string) (*lineReader, error) {
	r := &lineReader{name: name}
	br := bufio.NewReaderSize(in, 256<<10)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, &LineError{File: name, Line: 0, Err: fmt.Errorf("gzip: %w", err)}
		}
		r.gz, br = gz, bufio.NewReaderSize(gz, 256<<10)
	}
	r.br = br
	return r, nil
}

func (r *lineReader) Close() error {
	if r.gz != nil {
		r.gz.Close()
	}
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// next returns the next line that may hold an event, without the "[" and
// "]" of the JSON array form and a line's trailing comma; io.EOF at the
// end, errCut (in a *LineError) when the input ends inside a line.
func (r *lineReader) next() ([]byte, error) {
	for {
		r.buf = r.buf[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = r.br.ReadSlice('\n')
			if len(r.buf)+len(chunk) > MaxLine {
				r.line++
				return nil, &LineError{File: r.name, Line: r.line, Err: fmt.Errorf("a line longer than %d bytes", MaxLine)}
			}
			r.buf = append(r.buf, chunk...)
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			r.line++
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = errCut
			}
			return nil, &LineError{File: r.name, Line: r.line, Err: err}
		}
		if len(r.buf) == 0 && err == io.EOF {
			return nil, io.EOF
		}
		r.line++
		complete := err == nil // ended by a newline
		// An event is an object: a "[" before it or a "]" or "," after it
		// belong to the array around the events.
		line := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(r.buf), []byte("[")))
		line = bytes.TrimSpace(bytes.TrimSuffix(line, []byte("]")))
		line = bytes.TrimSpace(bytes.TrimSuffix(line, []byte(",")))
		if len(line) == 0 {
			if !complete {
				return nil, io.EOF
			}
			continue
		}
		if !complete && !json.Valid(line) {
			return nil, &LineError{File: r.name, Line: r.line, Err: errCut}
		}
		return line, nil
	}
}

// parse decodes an event line.
func (r *lineReader) parse(line []byte) (*event, error) {
	var e event
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, &LineError{File: r.name, Line: r.line, Err: fmt.Errorf("not a DFTracer event: %w", err)}
	}
	return &e, nil
}

// Sniff reports whether head, the first bytes of a file, start a DFTracer
// trace: a JSON event (after an optional "[") with the fields DFTracer
// writes.
func Sniff(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n[")
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	return bytes.Contains(t, []byte(`"ph":`)) && bytes.Contains(t, []byte(`"pid":`)) && bytes.Contains(t, []byte(`"cat":`))
}

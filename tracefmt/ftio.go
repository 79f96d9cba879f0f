package tracefmt

// Importers for the traces that FTIO reads (see FTIO.md beside this file).
//
// Three encodings carry the same content, a set of "modes" (read_sync,
// write_sync, read_async_t, read_async_b, write_async_t, write_async_b)
// each holding parallel arrays of request start times, end times and
// bandwidths:
//
//   - JSON: one object whose keys are mode names; each value holds a
//     "bandwidth" object with the arrays "t_rank_s", "t_rank_e" (seconds)
//     and "b_rank_avr" (bytes per second; "b_rank_sum" when avr is absent).
//     FTIO's hand-written "custom" JSON is this shape with only those
//     arrays.
//   - JSON lines (TMIO's online output): a concatenation of such objects,
//     usually one single-key object per mode per flush. Each flush carries
//     only the requests new since the previous one, so the arrays of all
//     lines with the same mode are concatenated.
//   - MessagePack (TMIO's binary output): a stream of positional arrays
//     [mode, _, _, total_bytes, ..., requests] where element 13 lists the
//     requests as [bytes, t_start, t_end, t_end_required, bw_sum, bw_avr,
//     bw_sum_required, bw_avr_required, ops]. A mode "x_async" yields the
//     two modes "x_async_t" (end = t_end, bw = bw_avr) and "x_async_b"
//     (end = t_end_required, bw = bw_avr_required).
//
// The content, not the file name, decides which decoder runs.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// FTIOFormat names an encoding of FTIO's input.
type FTIOFormat string

// The FTIO encodings the importers read.
const (
	FTIOJSON    FTIOFormat = "ftio-json"    // JSON object or JSON lines
	FTIOMsgpack FTIOFormat = "ftio-msgpack" // stream of MessagePack arrays
)

// FTIORequest is one request of an FTIO trace: an interval and the
// bandwidth the request sustained over it. FTIO traces carry no rank per
// request, so none is given.
type FTIORequest struct {
	Mode      string  // "write_sync", "read_async_t", ...
	Start     float64 // seconds since the application started
	End       float64 // seconds
	Bandwidth float64 // bytes per second over [Start, End)
}

// Write reports whether the request wrote data.
func (r FTIORequest) Write() bool { return strings.HasPrefix(r.Mode, "write") }

// Event converts the request to an iopred event; Size and Bytes are the
// bandwidth times the duration, rounded.
func (r FTIORequest) Event() Event {
	op := "read"
	if r.Write() {
		op = "write"
	}
	b := int64(math.Round(r.Bandwidth * (r.End - r.Start)))
	return Event{Layer: LayerPOSIX, Op: op, Offset: NoOffset, Size: b, Ret: b, Bytes: b,
		StartNs: int64(math.Round(r.Start * 1e9)), EndNs: int64(math.Round(r.End * 1e9))}
}

// FTIOError locates bad FTIO input: the file, the line (JSON) or the
// record number (MessagePack, counting from 1), and the field.
type FTIOError struct {
	File   string
	Line   int // JSON line, 0 when not known
	Record int // MessagePack array index from 1, 0 for JSON
	Field  string
	Err    error
}

func (e *FTIOError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Record > 0 {
		fmt.Fprintf(&b, ": record %d", e.Record)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %s", e.Field)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *FTIOError) Unwrap() error { return e.Err }

// DetectFTIO tells from the first bytes of a file whether it is FTIO
// input, and which encoding. It returns "" for anything else (an iopred
// trace starts with the zstd magic number and is not FTIO input).
func DetectFTIO(head []byte) FTIOFormat {
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return FTIOJSON
	}
	if len(head) > 0 {
		c := head[0]
		// fixarray, array16, array32: TMIO writes one array per record.
		if c&0xf0 == 0x90 || c == 0xdc || c == 0xdd {
			return FTIOMsgpack
		}
	}
	return ""
}

// IsFTIOFile opens path and reports its FTIO encoding, or "" when it is
// not FTIO input: a process of a multi-process file ("<path>#<proc>") and
// a file whose name a registered format claims (DFTracer's JSON lines
// start like FTIO's JSON) are not.
func IsFTIOFile(path string) (FTIOFormat, error) {
	if _, proc := splitProcess(path); proc != "" {
		return "", nil
	}
	if _, ok := formatBySuffix(path); ok {
		return "", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	return DetectFTIO(head[:n]), nil
}

// ReadFTIOFile decodes the FTIO file at path and calls fn for every
// request in file order. It returns the encoding it found.
func ReadFTIOFile(path string, fn func(FTIORequest) error) (FTIOFormat, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return ReadFTIO(f, path, fn)
}

// ReadFTIO decodes FTIO input from r, calling fn for every request; name
// appears in errors. Requests already passed to fn stay valid when a later
// part of the input is bad.
func ReadFTIO(r io.Reader, name string, fn func(FTIORequest) error) (FTIOFormat, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(512)
	switch DetectFTIO(head) {
	case FTIOJSON:
		return FTIOJSON, readFTIOJSON(br, name, fn)
	case FTIOMsgpack:
		return FTIOMsgpack, readFTIOMsgpack(br, name, fn)
	}
	return "", &FTIOError{File: name, Err: errors.New("not FTIO input: neither a JSON object nor a MessagePack array")}
}

// ftioMode is the part of a mode object the importer needs.
type ftioMode struct {
	Bandwidth *struct {
		Avr    []float64 `json:"b_rank_avr"`
		Sum    []float64 `json:"b_rank_sum"`
		Starts []float64 `json:"t_rank_s"`
		Ends   []float64 `json:"t_rank_e"`
	} `json:"bandwidth"`
}

func readFTIOJSON(r io.Reader, name string, fn func(FTIORequest) error) error {
	lr := &lineCounter{r: r}
	dec := json.NewDecoder(lr)
	for {
		var obj map[string]json.RawMessage
		err := dec.Decode(&obj)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			off := dec.InputOffset()
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				off = syn.Offset - 1
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				off = lr.read
			}
			return &FTIOError{File: name, Line: lr.lineAt(off), Err: err}
		}
		// The decoder stops at the end of the value: for JSON lines that is
		// the record's own line, for a JSON document its last line.
		line := lr.lineAt(dec.InputOffset())
		for mode, raw := range sortedKeys(obj) {
			if !strings.HasPrefix(mode, "read") && !strings.HasPrefix(mode, "write") {
				continue // io_time and other summaries carry no requests
			}
			var m ftioMode
			if err := json.Unmarshal(raw, &m); err != nil {
				return &FTIOError{File: name, Line: line, Field: mode, Err: err}
			}
			if m.Bandwidth == nil {
				continue
			}
			bw := m.Bandwidth.Avr
			field := mode + ".bandwidth.b_rank_avr"
			if bw == nil {
				bw, field = m.Bandwidth.Sum, mode+".bandwidth.b_rank_sum"
			}
			n := len(m.Bandwidth.Starts)
			if len(m.Bandwidth.Ends) != n || len(bw) != n {
				return &FTIOError{File: name, Line: line, Field: mode + ".bandwidth",
					Err: fmt.Errorf("arrays differ in length: t_rank_s %d, t_rank_e %d, %s %d",
						n, len(m.Bandwidth.Ends), field[len(mode)+11:], len(bw))}
			}
			for i := 0; i < n; i++ {
				req := FTIORequest{Mode: mode, Start: m.Bandwidth.Starts[i], End: m.Bandwidth.Ends[i], Bandwidth: bw[i]}
				if err := checkRequest(req); err != nil {
					return &FTIOError{File: name, Line: line, Field: fmt.Sprintf("%s.bandwidth[%d]", mode, i), Err: err}
				}
				if err := fn(req); err != nil {
					return err
				}
			}
		}
	}
}

// sortedKeys iterates a mode map in a fixed order so that output does not
// depend on map iteration.
func sortedKeys(m map[string]json.RawMessage) func(func(string, json.RawMessage) bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return func(yield func(string, json.RawMessage) bool) {
		for _, k := range keys {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}

func checkRequest(r FTIORequest) error {
	for _, v := range [...]float64{r.Start, r.End, r.Bandwidth} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("value is not a finite number")
		}
	}
	if r.End < r.Start {
		return fmt.Errorf("request ends (%g s) before it starts (%g s)", r.End, r.Start)
	}
	if r.Bandwidth < 0 {
		return fmt.Errorf("negative bandwidth %g", r.Bandwidth)
	}
	return nil
}

// lineCounter counts the newlines of everything read through it so that
// a byte offset can be turned into a line number.
type lineCounter struct {
	r        io.Reader
	newlines []int64 // offsets of the newlines seen, bounded by pruning below
	base     int     // newlines dropped from the front of newlines
	read     int64
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			c.newlines = append(c.newlines, c.read+int64(i))
		}
	}
	c.read += int64(n)
	return n, err
}

// lineAt returns the 1-based line holding byte offset off. Offsets only
// grow, so newlines well before off are dropped to bound memory.
func (c *lineCounter) lineAt(off int64) int {
	i := 0
	for i < len(c.newlines) && c.newlines[i] < off {
		i++
	}
	if i > 4096 {
		c.base += i - 1
		c.newlines = append(c.newlines[:0], c.newlines[i-1:]...)
		i = 1
	}
	return c.base + i + 1
}

func readFTIOMsgpack(r io.Reader, name string, fn func(FTIORequest) error) error {
	dec := msgpack.NewDecoder(r)
	for record := 1; ; record++ {
		if _, err := dec.PeekCode(); err == io.EOF {
			return nil
		}
		fail := func(field string, err error) error {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return &FTIOError{File: name, Record: record, Field: field, Err: err}
		}
		n, err := dec.DecodeArrayLen()
		if err != nil {
			return fail("", fmt.Errorf("expected an array: %w", err))
		}
		if n < 1 {
			return fail("0", errors.New("empty record, expected the mode name first"))
		}
		mode, err := dec.DecodeString()
		if err != nil {
			return fail("0 (mode)", err)
		}
		isIO := strings.HasPrefix(mode, "read") || strings.HasPrefix(mode, "write")
		async := strings.Contains(mode, "async")
		for i := 1; i < n; i++ {
			if i != 13 || !isIO {
				if err := dec.Skip(); err != nil {
					return fail(fmt.Sprint(i), err)
				}
				continue
			}
			code, err := dec.PeekCode()
			if err != nil {
				return fail("13 (requests)", err)
			}
			if code == 0xc0 { // nil: no requests
				if err := dec.Skip(); err != nil {
					return fail("13 (requests)", err)
				}
				continue
			}
			count, err := dec.DecodeArrayLen()
			if err != nil {
				return fail("13 (requests)", err)
			}
			for j := 0; j < count; j++ {
				field := fmt.Sprintf("13[%d]", j)
				m, err := dec.DecodeArrayLen()
				if err != nil {
					return fail(field, err)
				}
				need := 6
				if async {
					need = 8
				}
				if m < need {
					return fail(field, fmt.Errorf("request has %d elements, need %d", m, need))
				}
				var v [8]float64
				for k := 0; k < m; k++ {
					if k >= len(v) {
						if err := dec.Skip(); err != nil {
							return fail(fmt.Sprintf("%s[%d]", field, k), err)
						}
						continue
					}
					if v[k], err = dec.DecodeFloat64(); err != nil {
						return fail(fmt.Sprintf("%s[%d]", field, k), err)
					}
				}
				reqs := [2]FTIORequest{{Mode: mode, Start: v[1], End: v[2], Bandwidth: v[5]}}
				nreq := 1
				if async {
					reqs[0].Mode = mode + "_t"
					reqs[1] = FTIORequest{Mode: mode + "_b", Start: v[1], End: v[3], Bandwidth: v[7]}
					nreq = 2
				}
				for _, req := range reqs[:nreq] {
					if err := checkRequest(req); err != nil {
						return fail(field, err)
					}
					if err := fn(req); err != nil {
						return err
					}
				}
			}
		}
	}
}

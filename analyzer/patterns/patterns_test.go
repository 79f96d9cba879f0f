package patterns

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// access is one data call of a synthetic process.
type access struct {
	op          string
	offset, len int64
}

// writeTrace writes a trace with the tracefmt writer for one process that
// makes the given calls on path.
func writeTrace(t *testing.T, dir string, pid int, rank *int, path string, calls []access) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := tracefmt.NewWriter(&buf, tracefmt.Header{Program: "/bin/app", Host: "node", PID: pid, Rank: rank}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.File(tracefmt.File{ID: 1, Path: path}); err != nil {
		t.Fatal(err)
	}
	for i, c := range calls {
		e := &tracefmt.Event{Op: c.op, FileID: 1, Offset: c.offset, Size: c.len, Ret: c.len, Bytes: c.len,
			StartNs: int64(i) * 100, EndNs: int64(i)*100 + 50, Tid: int32(pid)}
		if err := w.Event(e); err != nil {
			t.Fatal(err)
		}
	}
	// A call without data must not count.
	if err := w.Event(&tracefmt.Event{Op: "fsync", FileID: 1, Offset: tracefmt.NoOffset, StartNs: 1e9, EndNs: 1e9 + 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit", Events: uint64(len(calls) + 1)}); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "app.node."+itoa(pid)+tracefmt.FileSuffix)
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func itoa(i int) string { return strconv.Itoa(i) }

// twoD is the 2-D strided N-1 layout of LANL App 3 or MILC (A): a matrix of
// rows x (procs*cols) records of size rec; rank r owns a block of cols
// records in each row and writes (op) them row by row.
func twoD(op string, rank, procs, rows, cols, rec int64) []access {
	var out []access
	for i := int64(0); i < rows; i++ {
		for j := int64(0); j < cols; j++ {
			out = append(out, access{op, (i*procs*cols + rank*cols + j) * rec, rec})
		}
	}
	return out
}

// A 2-D strided workload of 100,000 records over 4 processes gives one
// pattern entry per process and stream, a compression ratio of at least 1000,
// and full coverage; reads and writes are reported apart.
func TestTwoDStrided(t *testing.T) {
	dir := t.TempDir()
	var traces []string
	for r := 0; r < 4; r++ {
		rank := r
		calls := twoD("pwrite", int64(r), 4, 250, 100, 16)
		calls = append(calls, twoD("pread", int64(r), 4, 250, 100, 16)...)
		traces = append(traces, writeTrace(t, dir, 100+r, &rank, "/scratch/matrix", calls))
	}
	rep, err := Analyze(traces, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 1 {
		t.Fatalf("%d files, want 1", len(rep.Files))
	}
	f := rep.Files[0]
	if f.Requests != 200000 || len(f.Local) != 8 {
		t.Fatalf("%d requests, %d local streams; want 200000, 8", f.Requests, len(f.Local))
	}
	for _, l := range f.Local {
		if len(l.Entries) != 1 || l.Requests != 25000 {
			t.Errorf("%s of id %d: %d entries for %d requests, want 1 for 25000: %v", l.Kind, l.ID, len(l.Entries), l.Requests, l.Patterns)
		}
	}
	t.Logf("2-D, 100,000 records written and read back by 4 processes: index %d -> %d bytes (%s), ratio %.0f",
		f.RawIndexBytes, f.EncodedIndexBytes, f.IndexForm, f.CompressionRatio)
	if f.CompressionRatio < 1000 || f.Coverage != 1 {
		t.Fatalf("ratio %.1f (%d -> %d bytes), coverage %.3f; want >= 1000 and 1", f.CompressionRatio, f.RawIndexBytes, f.EncodedIndexBytes, f.Coverage)
	}
	var out bytes.Buffer
	if err := WriteText(&out, rep); err != nil || !strings.Contains(out.String(), "compression ratio") {
		t.Fatalf("text report: %v\n%s", err, out.String())
	}
}

// Six processes writing the layout of Figure 10 merge into one global
// pattern per kind, with the ids in file order.
func TestGlobalPattern(t *testing.T) {
	dir := t.TempDir()
	groups := [][]int{{4, 7, 6}, {2, 8, 9}, {4, 7, 6}, {2, 8, 9}}
	calls := map[int][]access{}
	for g, ids := range groups {
		for col, id := range ids {
			for row := int64(0); row < 4; row++ {
				calls[id] = append(calls[id], access{"write", 1000 + int64(g)*120 + row*30 + int64(col)*10, 10})
			}
		}
	}
	order := []int{2, 4, 6, 7, 8, 9}
	var traces []string
	for _, id := range order {
		traces = append(traces, writeTrace(t, dir, id, nil, "/scratch/ckpt", calls[id]))
	}
	rep, err := Analyze(traces, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Files[0]
	if len(f.Global) != 1 || f.Global[0].Kind != "write" {
		t.Fatalf("globals = %+v", f.Global)
	}
	// Ids are positions in the trace list: pid 4 is id 1, 7 is 3, 6 is 2, ...
	pos := map[int]int64{}
	for i, id := range order {
		pos[id] = int64(i)
	}
	var want []int64
	for _, ids := range groups {
		for _, id := range ids {
			want = append(want, pos[id])
		}
	}
	g := f.Global[0].Entry
	if len(g.IDs) != len(want) {
		t.Fatalf("ids %v, want %v", g.IDs, want)
	}
	for i := range want {
		if g.IDs[i] != want[i] {
			t.Fatalf("ids %v, want %v", g.IDs, want)
		}
	}
	h, ok := g.Lookup(1250)
	if !ok || h.ID != pos[7] || h.Physical != 40 {
		t.Fatalf("lookup 1250 = %+v %v, want pid 7's id and physical 40", h, ok)
	}
	if f.IndexForm != "global" {
		t.Fatalf("index form %s, want global (%d bytes)", f.IndexForm, f.EncodedIndexBytes)
	}
}

// A truncated trace still counts with the records before the cut, and the
// report says so.
func TestTruncatedTrace(t *testing.T) {
	dir := t.TempDir()
	var calls []access
	for i := int64(0); i < 50000; i++ {
		calls = append(calls, access{"write", i * 8192, 4096})
	}
	name := writeTrace(t, dir, 1, nil, "/f", calls)
	data, _ := os.ReadFile(name)
	if err := os.WriteFile(name, data[:len(data)*3/4], 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze([]string{name}, 0)
	if err != nil {
		t.Fatalf("truncation reported as error: %v", err)
	}
	if len(rep.Warnings) != 1 || len(rep.Files) != 1 || rep.Files[0].Requests == 0 {
		t.Fatalf("warnings %v, files %v", rep.Warnings, rep.Files)
	}
	if _, err := Analyze([]string{filepath.Join(dir, "missing"+tracefmt.FileSuffix)}, 0); err == nil {
		t.Fatal("missing trace: no error")
	}
}

// The JSON form has the fields the output contract names.
func TestJSONContract(t *testing.T) {
	dir := t.TempDir()
	name := writeTrace(t, dir, 3, nil, "/data", twoD("write", 0, 2, 10, 10, 8))
	rep, err := Analyze([]string{name}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []map[string]json.RawMessage `json:"files"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Files) != 1 {
		t.Fatalf("%v: %s", err, b)
	}
	for _, k := range []string{"path", "compression_ratio", "coverage", "local", "global"} {
		if _, ok := doc.Files[0][k]; !ok {
			t.Errorf("file object lacks %q: %s", k, b)
		}
	}
	if string(doc.Files[0]["path"]) != `"/data"` || string(doc.Files[0]["global"]) != "[]" {
		t.Errorf("path %s, global %s", doc.Files[0]["path"], doc.Files[0]["global"])
	}
}

package tracefmt

import (
	"bytes"
	"errors"
	"iopred/tests/interop"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func collectFTIO(t testing.TB, in []byte) ([]FTIORequest, FTIOFormat, error) {
	var got []FTIORequest
	format, err := ReadFTIO(bytes.NewReader(in), "in", func(r FTIORequest) error {
		got = append(got, r)
		return nil
	})
	return got, format, err
}

func tmioMsgpack(t testing.TB, records ...[]any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// tmioRecord builds a TMIO MessagePack record with the given requests at
// position 13, as the TMIO library lays it out.
func tmioRecord(mode string, reqs ...[]any) []any {
	rec := []any{mode, false, false, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, reqs}
	return rec
}

// TestReadFTIO proves each encoding yields its requests in file order,
// with modes, times and bandwidths as written, and that JSON lines of the
// same mode are concatenated.
func TestReadFTIO(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		format FTIOFormat
		want   []FTIORequest
	}{
		{"json lines, two flushes", []byte(
			`{"write_sync":{"bandwidth":{"b_rank_avr":[10,20],"t_rank_s":[0,1],"t_rank_e":[0.5,1.5]}}}` + "\n" +
				`{"io_time":{"delta_t_agg":3}}` + "\n" +
				`{"write_sync":{"bandwidth":{"b_rank_avr":[30],"t_rank_s":[2],"t_rank_e":[2.5]}}}` + "\n"),
			FTIOJSON, []FTIORequest{{"write_sync", 0, 0.5, 10}, {"write_sync", 1, 1.5, 20}, {"write_sync", 2, 2.5, 30}}},
		{"custom json, several modes, b_rank_sum fallback", []byte(`{
  "write_sync": {"total_bytes": 5, "bandwidth": {"b_rank_avr": [1], "t_rank_s": [0.1], "t_rank_e": [0.2]}},
  "read_sync": {"bandwidth": {"b_rank_sum": [7], "t_rank_s": [0.3], "t_rank_e": [0.4]}}
}`), FTIOJSON, []FTIORequest{{"read_sync", 0.3, 0.4, 7}, {"write_sync", 0.1, 0.2, 1}}},
		{"msgpack sync and async", tmioMsgpack(t,
			tmioRecord("write_sync", []any{2048, 1.0, 2.0, 0.0, 4096.0, 2048.0, 0, 0, 1}),
			[]any{"io_time", 1.0, 2.0},
			tmioRecord("read_async", []any{8, 3, 4.5, 5.0, 16.0, 8.0, 9.0, 4.5, 1})),
			FTIOMsgpack, []FTIORequest{{"write_sync", 1, 2, 2048}, {"read_async_t", 3, 4.5, 8}, {"read_async_b", 3, 5, 4.5}}},
		{"msgpack record without requests", tmioMsgpack(t, []any{"read_async", true, false, 0, 384, []any{}}),
			FTIOMsgpack, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, format, err := collectFTIO(t, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if format != tc.format {
				t.Errorf("format %q, want %q", format, tc.format)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("request %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestReadFTIOErrors proves bad input gives an FTIOError naming the place
// and field, after the good requests before it were delivered.
func TestReadFTIOErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        []byte
		goodFirst int
		wantInErr []string
	}{
		{"not ftio", []byte("hello"), 0, []string{"in: ", "not FTIO input"}},
		{"broken second line", []byte(`{"write_sync":{"bandwidth":{"b_rank_avr":[1],"t_rank_s":[0],"t_rank_e":[1]}}}` + "\n{\"write_sync\": [}\n"), 1, []string{"in:2"}},
		{"arrays of different lengths", []byte(`{"read_sync":{"bandwidth":{"b_rank_avr":[1,2],"t_rank_s":[0],"t_rank_e":[1]}}}`), 0, []string{"in:1", "read_sync.bandwidth", "differ in length"}},
		{"end before start", []byte(`{"read_sync":{"bandwidth":{"b_rank_avr":[1],"t_rank_s":[2],"t_rank_e":[1]}}}`), 0, []string{"read_sync.bandwidth[0]", "before it starts"}},
		{"wrong type", []byte(`{"read_sync":{"bandwidth":{"b_rank_avr":"x","t_rank_s":[2],"t_rank_e":[1]}}}`), 0, []string{"field read_sync"}},
		{"msgpack truncated", tmioMsgpack(t, tmioRecord("write_sync", []any{1, 0.0, 1.0, 0, 1.0, 1.0, 0, 0, 1}))[:40], 0, []string{"record 1", "field 13"}},
		{"msgpack short request", tmioMsgpack(t, tmioRecord("write_sync", []any{1, 0.0, 1.0, 0, 1.0, 1.0, 0, 0, 1}), tmioRecord("write_sync", []any{1, 2.0})), 1, []string{"record 2", "field 13[0]", "has 2 elements"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := collectFTIO(t, tc.in)
			if err == nil {
				t.Fatal("no error")
			}
			var fe *FTIOError
			if !errors.As(err, &fe) {
				t.Errorf("error %T %v is not an *FTIOError", err, err)
			}
			for _, s := range tc.wantInErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if len(got) != tc.goodFirst {
				t.Errorf("%d requests before the error, want %d", len(got), tc.goodFirst)
			}
		})
	}
}

func ftioExampleDir(t testing.TB) string { return interop.Path(t, "ftio") }

// TestFTIOExampleCounts proves the importers read every request of FTIO's
// example traces (counts from the traces' README).
func TestFTIOExampleCounts(t *testing.T) {
	dir := ftioExampleDir(t)
	tests := []struct {
		file   string
		format FTIOFormat
		counts map[string]int
	}{
		{"tmio-8ranks.jsonl", FTIOJSON, map[string]int{"write_sync": 1095, "read_sync": 1095}},
		{"tmio-ior-384ranks.msgpack", FTIOMsgpack, map[string]int{"write_sync": 30720, "read_sync": 30720}},
		{"custom-4ranks.json", FTIOJSON, map[string]int{"write_sync": 32}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			if f, err := IsFTIOFile(path); err != nil || f != tc.format {
				t.Errorf("IsFTIOFile = %q, %v; want %q", f, err, tc.format)
			}
			got := map[string]int{}
			format, err := ReadFTIOFile(path, func(r FTIORequest) error { got[r.Mode]++; return nil })
			if err != nil || format != tc.format {
				t.Fatalf("ReadFTIOFile: %q, %v", format, err)
			}
			for m, n := range tc.counts {
				if got[m] != n {
					t.Errorf("%s: %d requests, want %d", m, got[m], n)
				}
			}
		})
	}
}

// TestFTIORequestEvent proves the conversion to an iopred event keeps the
// direction, the times in nanoseconds and the bytes moved.
func TestFTIORequestEvent(t *testing.T) {
	e := FTIORequest{Mode: "write_async_t", Start: 1.5, End: 2, Bandwidth: 1000}.Event()
	if e.Op != "write" || e.StartNs != 1_500_000_000 || e.EndNs != 2_000_000_000 || e.Bytes != 500 || e.Size != 500 {
		t.Errorf("event %+v", e)
	}
	if (FTIORequest{Mode: "read_sync"}).Event().Op != "read" {
		t.Error("read mode did not give a read event")
	}
}

// FuzzReadFTIO proves no input makes the importers panic or hang, and
// that every delivered request is well-formed.
func FuzzReadFTIO(f *testing.F) {
	f.Add([]byte(`{"write_sync":{"bandwidth":{"b_rank_avr":[10,20],"t_rank_s":[0,1],"t_rank_e":[0.5,1.5]}}}` + "\n"))
	f.Add([]byte(`{"read_sync":{"bandwidth":{"b_rank_sum":[7],"t_rank_s":[0.3],"t_rank_e":[0.4]}}}`))
	f.Add(tmioMsgpack(f, tmioRecord("write_sync", []any{2048, 1.0, 2.0, 0.0, 4096.0, 2048.0, 0, 0, 1})))
	f.Add(tmioMsgpack(f, tmioRecord("read_async", []any{8, 3, 4.5, 5.0, 16.0, 8.0, 9.0, 4.5, 1})))
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		ReadFTIO(bytes.NewReader(in), "fuzz", func(r FTIORequest) error {
			if r.End < r.Start || r.Bandwidth < 0 {
				t.Fatalf("malformed request delivered: %+v", r)
			}
			return nil
		})
	})
}

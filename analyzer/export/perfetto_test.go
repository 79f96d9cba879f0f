package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The Perfetto document of a small MPI-IO job follows the trace-event
// rules, holds one slice per event the summary counts and the same bytes,
// names the processes by rank, puts times on the job's clock, nests the
// POSIX calls ROMIO made in their MPI-IO call, keeps every argument, and
// scores a prediction after each call.
func TestPerfettoJob(t *testing.T) {
	_, traces := jobTraces(t)
	var buf bytes.Buffer
	st, err := Perfetto(&buf, traces, PerfettoOptions{Predict: true, Command: "iopred export"})
	if err != nil {
		t.Fatal(err)
	}
	byPh := checkTraceEvents(t, buf.Bytes())
	checkLayers(t, traces, st)
	events, read, written := summaryCounts(t, traces)
	if uint64(len(byPh["X"])) != events || st.Events != events || st.BytesRead != read || st.BytesWritten != written {
		t.Errorf("%d slices, stats %+v; the summary counts %d events, %d bytes read, %d written", len(byPh["X"]), st, events, read, written)
	}
	if events != 7+2+3 { // the third trace's last frame (its last write and footer) is cut off
		t.Errorf("the summary counts %d events, want 12", events)
	}
	if st.Traces != 3 || len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "app.node.300.rx") {
		t.Errorf("traces %d, problems %q: want the logger's cut trace named", st.Traces, st.Problems)
	}
	names := map[string]bool{}
	for _, m := range byPh["M"] {
		var a struct{ Name string }
		json.Unmarshal(m.Args, &a)
		names[a.Name] = true
	}
	for _, want := range []string{"rank 0: /bin/ior (pid 100 on n1)", "rank 1: /bin/ior (pid 100 on n2)", "/bin/logger (pid 300 on n1)",
		"main thread 100", "thread 101", "thread 200"} {
		if !names[want] {
			t.Errorf("no process or thread named %q in %v", want, names)
		}
	}
	// Rank 1 started the job; rank 0's anchor is 1 ms later.
	slices := map[string]traceEvent{}
	for _, s := range byPh["X"] {
		slices[s.Name+"@"+string(s.Ts)] = s
	}
	for _, want := range []string{"MPI_File_write_at_all@0.500", "MPI_File_write_at_all@1001", "pwrite@1002", "stat@1013", "write@2000.100"} {
		if _, ok := slices[want]; !ok {
			t.Errorf("no slice %s; have %v", want, keys(slices))
		}
	}
	var args struct {
		File   string `json:"file"`
		Offset *int64 `json:"offset"`
		Size   int64  `json:"size"`
		Bytes  int64  `json:"bytes"`
		Parent int64  `json:"parent"`
		Errno  int32  `json:"errno"`
	}
	json.Unmarshal(slices["pwrite@1002"].Args, &args)
	if args.File != "/scratch/ckpt.dat" || args.Offset == nil || *args.Offset != 0 || args.Size != 4096 || args.Bytes != 4096 || args.Parent != 1 {
		t.Errorf("pwrite's arguments %s", slices["pwrite@1002"].Args)
	}
	if s := slices["pwrite@1002"]; s.Dur != "1" || s.Cat != "posix" {
		t.Errorf("pwrite: dur %q cat %q", s.Dur, s.Cat)
	}
	args.Offset = nil
	json.Unmarshal(slices["stat@1013"].Args, &args)
	if args.Offset != nil {
		t.Errorf("stat has offset %d, want null", *args.Offset)
	}
	for _, s := range byPh["X"] {
		if s.Name == "open" {
			json.Unmarshal(s.Args, &args)
			if args.File != "/scratch/bad\ufffd\"name" || args.Errno != 2 {
				t.Errorf("failed open: %s", s.Args)
			}
		}
	}
	var predictions, forks int
	for _, i := range byPh["i"] {
		switch i.Cat {
		case "prediction":
			predictions++
			var a struct{ Outcome string }
			json.Unmarshal(i.Args, &a)
			if a.Outcome != "hit" && !strings.HasPrefix(a.Outcome, "miss: ") && a.Outcome != "the trace ended" {
				t.Errorf("prediction outcome %q", a.Outcome)
			}
		case "process":
			if i.Name == "fork 555" && string(i.Ts) == "1012.500" {
				forks++
			}
		}
	}
	if uint64(predictions) != st.Predictions || predictions == 0 || st.Hits > st.Predictions || forks != 1 {
		t.Errorf("%d predictions (stats %d, %d hits), %d forks at 1012.5 µs", predictions, st.Predictions, st.Hits, forks)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Without --predict the document has no prediction events, and the same
// slices.
func TestPerfettoWithoutPredictions(t *testing.T) {
	_, traces := jobTraces(t)
	var with, without bytes.Buffer
	if _, err := Perfetto(&with, traces, PerfettoOptions{Predict: true}); err != nil {
		t.Fatal(err)
	}
	st, err := Perfetto(&without, traces, PerfettoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := checkTraceEvents(t, with.Bytes()), checkTraceEvents(t, without.Bytes())
	if st.Predictions != 0 || len(b["X"]) != len(a["X"]) {
		t.Errorf("%d predictions, %d slices against %d", st.Predictions, len(b["X"]), len(a["X"]))
	}
	for _, i := range b["i"] {
		if i.Cat == "prediction" {
			t.Fatalf("prediction without --predict: %+v", i)
		}
	}
}

// A write error stops the export with that error.
func TestPerfettoWriteError(t *testing.T) {
	_, traces := jobTraces(t)
	if _, err := Perfetto(failingWriter{}, traces, PerfettoOptions{Predict: true}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("error %v, want the writer's", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

var errDiskFull = &json.UnsupportedValueError{Str: "disk full"}

func TestAppendJSONString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain/path", `"plain/path"`},
		{`quote " and \ slash`, `"quote \" and \\ slash"`},
		{"tab\tnl\n\x00", `"tab\u0009nl\u000a\u0000"`},
		{"bad \xff byte", "\"bad \ufffd byte\""},
		{"été", `"été"`},
	}
	for _, c := range cases {
		got := string(appendJSONString(nil, c.in))
		if got != c.want {
			t.Errorf("%q: %s, want %s", c.in, got, c.want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%q: %s is not JSON: %v", c.in, got, err)
		}
	}
}

func TestAppendMicros(t *testing.T) {
	cases := []struct {
		ns   int64
		want string
	}{{0, "0"}, {1, "0.001"}, {999, "0.999"}, {1000, "1"}, {1234567, "1234.567"}, {1000050, "1000.050"}, {-1500, "-1.500"}}
	for _, c := range cases {
		if got := string(appendMicros(nil, c.ns)); got != c.want {
			t.Errorf("%d ns: %s, want %s", c.ns, got, c.want)
		}
	}
}

package replay

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/predictor"
	"iopred/tracefmt"
)

// TestHit proves equation (3) on segments whose overlap is computed by
// hand.
func TestHit(t *testing.T) {
	cases := []struct {
		name           string
		xs, xe, ys, ye int64
		want           float64
	}{
		{"identical", 0, 100, 0, 100, 100},
		{"disjoint", 0, 100, 200, 300, 0},
		{"touching", 0, 100, 100, 200, 0},
		{"half overlap", 0, 100, 50, 150, 100 * 50.0 / 150},
		{"inside", 25, 75, 0, 100, 50},
		{"both empty, same place", 10, 10, 10, 10, 100},
		{"both empty, elsewhere", 10, 10, 20, 20, 0},
		{"predicted empty", 10, 10, 0, 100, 0},
	}
	for _, c := range cases {
		if got := hit(c.xs, c.xe, c.ys, c.ye); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: hit = %g, want %g", c.name, got, c.want)
		}
	}
}

// stream builds the test programs' events.
type stream struct {
	now    int64
	events []*tracefmt.Event
}

func (s *stream) add(ctx uint64, op, path string, off, size, gap int64) {
	s.now += gap
	e := &tracefmt.Event{Op: op, Path: path, FileID: 1, Offset: off, Size: size, Ctx: ctx,
		StartNs: s.now, EndNs: s.now + 1000}
	if off != tracefmt.NoOffset {
		e.Ret, e.Bytes = size, size
	}
	s.events = append(s.events, e)
	s.now += 1000
}

// jumpProgram writes, n times, a file "f": open, 100 bytes at 0, 100 at
// 1000, 100 at 1100, close. Calls of one checkpoint are 1 ms apart,
// checkpoints 1 s apart. Of its three writes, the contiguous baseline gets
// the first (at 0 right after open) and the third right.
func jumpProgram(n int) []*tracefmt.Event {
	var s stream
	for i := 0; i < n; i++ {
		s.add(1, "open", "f", tracefmt.NoOffset, 0, 1_000_000_000)
		s.add(2, "pwrite", "f", 0, 100, 1_000_000)
		s.add(3, "pwrite", "f", 1000, 100, 1_000_000)
		s.add(4, "pwrite", "f", 1100, 100, 1_000_000)
		s.add(5, "close", "f", tracefmt.NoOffset, 0, 1_000_000)
	}
	return s.events
}

// sequentialProgram appends n records of 4 KiB to one file.
func sequentialProgram(n int) []*tracefmt.Event {
	var s stream
	for i := 0; i < n; i++ {
		s.add(7, "write", "seq", int64(i)*4096, 4096, 50_000)
	}
	return s.events
}

// trained returns a model that has seen events, as a second run would load
// it.
func trained(t *testing.T, events []*tracefmt.Event) *predictor.Model {
	t.Helper()
	_, m := Events(events, Options{})
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	m2, err := predictor.Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return m2
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestKnownAnswers proves the metrics on a program whose answers follow
// from its definition: the contiguous baseline is right on 2 of 3 writes,
// the immediate re-access error is the mean gap, and a model trained on a
// first run predicts everything of the second run exactly.
func TestKnownAnswers(t *testing.T) {
	const n = 20
	run := jumpProgram(n)
	r, _ := Events(run, Options{Model: trained(t, jumpProgram(5))})

	if r.Events != 5*n || r.Offset.Scored != 3*n || r.Size.Scored != 3*n {
		t.Fatalf("counted %d events, %d offsets, %d sizes; want %d, %d, %d", r.Events, r.Offset.Scored, r.Size.Scored, 5*n, 3*n, 3*n)
	}
	if !near(r.Offset.Contiguous, 2.0/3) {
		t.Errorf("contiguous baseline %g, want 2/3", r.Offset.Contiguous)
	}
	// Gaps: per checkpoint four of 1 ms, and n-1 of 1 s between checkpoints.
	wantImmediate := (4*n*1e-3 + (n-1)*1.0) / (5*n - 1)
	if r.InterArrival.Scored != 5*n-1 || !near(r.InterArrival.ImmediateReaccess, wantImmediate) {
		t.Errorf("immediate re-access %g s over %d gaps, want %g s over %d", r.InterArrival.ImmediateReaccess, r.InterArrival.Scored, wantImmediate, 5*n-1)
	}
	want := Report{
		Context:      Accuracy{Steps: 5 * n, Paper: 1, PaperLastHalf: 1, Weighted: 1, WeightedLastHalf: 1},
		Size:         SizeReport{Scored: 3 * n, MeanError: 0, Exact: 1},
		Offset:       OffsetReport{Scored: 3 * n, Model: 1, Weighted: 1, GivenFile: 1, Contiguous: r.Offset.Contiguous},
		HitRatio:     HitReport{Scored: 3 * n, Paper: 100, Weighted: 100},
		InterArrival: TimeReport{Scored: 5*n - 1, MeanAbsErrorSec: 0, ImmediateReaccess: r.InterArrival.ImmediateReaccess},
	}
	if r.Context != want.Context || r.Size != want.Size || r.Offset != want.Offset || r.HitRatio != want.HitRatio || r.InterArrival != want.InterArrival {
		t.Errorf("second run:\n got %+v %+v %+v %+v %+v\nwant %+v %+v %+v %+v %+v",
			r.Context, r.Size, r.Offset, r.HitRatio, r.InterArrival,
			want.Context, want.Size, want.Offset, want.HitRatio, want.InterArrival)
	}
}

// TestSequentialMatchesContiguous proves that on a purely sequential
// stream the model's offsets are right as often as the contiguous
// baseline's: always, on a second run.
func TestSequentialMatchesContiguous(t *testing.T) {
	r, _ := Events(sequentialProgram(200), Options{Model: trained(t, sequentialProgram(50))})
	if r.Offset.Model != 1 || r.Offset.Contiguous != 1 {
		t.Errorf("offsets: model %g, contiguous %g; want both 1", r.Offset.Model, r.Offset.Contiguous)
	}
	// A first run learns within a few calls.
	r, _ = Events(sequentialProgram(200), Options{})
	if r.Offset.Model < 0.97 || r.Offset.Contiguous != 1 || r.Offset.GivenFile != 1 {
		t.Errorf("first run offsets: model %g, given the file %g, contiguous %g; want at least 0.97, 1 and 1",
			r.Offset.Model, r.Offset.GivenFile, r.Offset.Contiguous)
	}
}

// TestGrowthAndText proves that the grammar-size series covers the run
// with a bounded number of points, and that the text report names every
// metric.
func TestGrowthAndText(t *testing.T) {
	r, _ := Events(jumpProgram(200), Options{GrowthPoints: 8})
	g := r.Growth
	if len(g) == 0 || len(g) > 17 || g[len(g)-1].Event != r.Events {
		t.Fatalf("growth %v: want at most 17 points ending at event %d", g, r.Events)
	}
	for i := 1; i < len(g); i++ {
		if g[i].Event <= g[i-1].Event {
			t.Fatalf("growth not increasing at %d: %v", i, g)
		}
	}
	var b strings.Builder
	if err := WriteText(&b, []Report{r}); err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"context accuracy", "last half", "relative error", "contiguous", "hit ratio", "immediate re-access", "grammar size", "model memory"} {
		if !strings.Contains(b.String(), word) {
			t.Errorf("text report lacks %q:\n%s", word, b.String())
		}
	}
}

// writeTrace records events as the library would, in dir/name.
func writeTrace(t *testing.T, path string, pid int, events []*tracefmt.Event) {
	t.Helper()
	var buf bytes.Buffer
	w, err := tracefmt.NewWriter(&buf, tracefmt.Header{Program: "/bin/prog", Host: "h", PID: pid}, tracefmt.WriterOptions{FrameBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	ctxs := map[uint64]bool{}
	files := map[uint32]bool{}
	for _, e := range events {
		if !ctxs[e.Ctx] {
			ctxs[e.Ctx] = true
			if err := w.Context(tracefmt.Context{ID: e.Ctx, Frames: []tracefmt.Frame{{Module: "/bin/prog", Offset: e.Ctx}}}); err != nil {
				t.Fatal(err)
			}
		}
		if !files[e.FileID] {
			files[e.FileID] = true
			if err := w.File(tracefmt.File{ID: e.FileID, Path: e.Path}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Event(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit", Events: uint64(len(events))}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameMetrics compares everything but the timing.
func sameMetrics(a, b Report) bool {
	return a.Events == b.Events && a.Context == b.Context && a.Size == b.Size && a.Offset == b.Offset &&
		a.HitRatio == b.HitRatio && a.InterArrival == b.InterArrival && a.GrammarSize == b.GrammarSize
}

// TestFileMatchesEvents proves that replaying a trace file scores exactly
// what replaying its events in memory does, and fills in the process.
func TestFileMatchesEvents(t *testing.T) {
	events := jumpProgram(30)
	path := filepath.Join(t.TempDir(), "prog.h.42"+tracefmt.FileSuffix)
	writeTrace(t, path, 42, events)
	got, _, err := File(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Events(jumpProgram(30), Options{})
	if !sameMetrics(got, want) {
		t.Errorf("from the file:\n%+v\nfrom memory:\n%+v", got, want)
	}
	if got.Program != "/bin/prog" || got.PID != 42 || got.Trace != path || got.Truncated != "" {
		t.Errorf("process fields: program %q pid %d trace %q truncated %q", got.Program, got.PID, got.Trace, got.Truncated)
	}
}

// TestFileTruncatedAndCorrupt proves that a trace cut short is evaluated
// up to its last complete record and says so, and that a file that is not
// a trace is an error naming it.
func TestFileTruncatedAndCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a"+tracefmt.FileSuffix)
	writeTrace(t, path, 1, jumpProgram(200))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	r, _, err := File(path, Options{})
	if err != nil {
		t.Fatalf("truncated trace: %v", err)
	}
	if r.Truncated == "" || r.Events == 0 || r.Events >= 1000 {
		t.Errorf("truncated trace: %d events, truncated %q; want some events and a reason", r.Events, r.Truncated)
	}
	bad := filepath.Join(dir, "b"+tracefmt.FileSuffix)
	if err := os.WriteFile(bad, []byte("not a trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := File(bad, Options{}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("foreign file: err = %v, want an error naming %s", err, bad)
	}
}

// TestThin proves that the text report's series keeps at most n points,
// evenly spread, ending with the last.
func TestThin(t *testing.T) {
	var ps []Point
	for i := 1; i <= 100; i++ {
		ps = append(ps, Point{Event: i})
	}
	got := thin(ps, 4)
	if len(got) != 4 || got[0].Event != 25 || got[1].Event != 50 || got[3].Event != 100 {
		t.Errorf("thin = %v", got)
	}
	if got := thin(ps[:3], 4); len(got) != 3 {
		t.Errorf("short series changed: %v", got)
	}
}

// A trace evaluated by File (its steps counted first, scores summed as
// they come) reports exactly what the evaluation that keeps every step's
// score reports, on real traces: the bounded form changes no figure.
func TestFileSumsMatchKeptScores(t *testing.T) {
	for _, dir := range []string{"fio", "lammps", "ior"} {
		traces, err := tracefmt.Discover(filepath.Join("..", "centersim", "traces", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range traces {
			got, _, err := File(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := tracefmt.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			var events []*tracefmt.Event
			r.Each(func(rec tracefmt.Record) error {
				if rec.Kind == tracefmt.KindEvent && rec.Event != nil {
					events = append(events, rec.Event)
				}
				return nil
			})
			r.Close()
			want, _ := Events(events, Options{})
			if got.Context != want.Context || got.Context.Steps == 0 {
				t.Errorf("%s: File %+v, kept scores %+v", path, got.Context, want.Context)
			}
		}
	}
}

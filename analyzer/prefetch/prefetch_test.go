package prefetch

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"iopred/tracefmt"
)

// writeReads writes, with the tracefmt writer, a trace of one process that
// reads the given ranges of path (and writes one block, which must not
// count).
func writeReads(t *testing.T, dir string, pid int, path string, reads []read) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := tracefmt.NewWriter(&buf, tracefmt.Header{Program: "/bin/reader", Host: "n", PID: pid}, tracefmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.File(tracefmt.File{ID: 1, Path: path}); err != nil {
		t.Fatal(err)
	}
	if err := w.Event(&tracefmt.Event{Op: "pwrite", FileID: 1, Offset: 1 << 40, Size: 4096, Ret: 4096, Bytes: 4096}); err != nil {
		t.Fatal(err)
	}
	for i, r := range reads {
		if err := w.Event(&tracefmt.Event{Op: "pread", FileID: 1, Offset: r.off, Size: r.n, Ret: r.n, Bytes: r.n,
			StartNs: int64(i+1) * 1000, EndNs: int64(i+1)*1000 + 10, Tid: int32(pid)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(tracefmt.Footer{Reason: "exit"}); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "reader.n."+strconv.Itoa(pid)+tracefmt.FileSuffix)
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// stridedReads is a 2-D strided read of a matrix: rows of cols records of
// rec bytes, one record in every stride bytes.
func stridedReads(rows, cols, rec, stride, rowGap int64) []read {
	var out []read
	for i := int64(0); i < rows; i++ {
		for j := int64(0); j < cols; j++ {
			out = append(out, read{i*rowGap + j*stride, rec})
		}
	}
	return out
}

func byName(rep *Report) map[string]Result {
	m := map[string]Result{}
	for _, r := range rep.Results {
		m[r.Predictor] = r
	}
	return m
}

// On a strided read trace the pattern predictor predicts at least 95% of
// the reads; a Markov model predicts few on a first run and many once
// trained on the first run; read-ahead, whose window ends before the next
// record, predicts none and wastes most of what it fetches.
func TestStridedTwoRuns(t *testing.T) {
	dir := t.TempDir()
	run1, run2 := filepath.Join(dir, "run1"), filepath.Join(dir, "run2")
	os.Mkdir(run1, 0o755)
	os.Mkdir(run2, 0o755)
	reads := stridedReads(40, 50, 4096, 256<<10, 50*256<<10+12345)
	writeReads(t, run1, 10, "/data/in", reads)
	writeReads(t, run2, 20, "/data/in", reads)
	tr, _ := tracefmt.Discover(run1)
	ev, _ := tracefmt.Discover(run2)
	rep, err := Evaluate(tr, ev, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := byName(rep)
	for _, r := range rep.Results {
		t.Logf("%-15s predicted %.3f unused %.3f", r.Predictor, r.PredictedFraction, r.UnusedFraction)
	}
	if rep.Mode != "runs" || res[Pattern].Reads != int64(len(reads)) {
		t.Fatalf("mode %s, %d reads", rep.Mode, res[Pattern].Reads)
	}
	if res[Pattern].PredictedFraction < 0.95 {
		t.Errorf("pattern predicted %.3f, want >= 0.95", res[Pattern].PredictedFraction)
	}
	if res[Pattern].UnusedFraction > 0.01 {
		t.Errorf("pattern wasted %.3f of its prefetches", res[Pattern].UnusedFraction)
	}
	if res[MarkovInitial].PredictedFraction >= res[Pattern].PredictedFraction || res[MarkovInitial].PredictedFraction > 0.05 {
		t.Errorf("untrained Markov predicted %.3f", res[MarkovInitial].PredictedFraction)
	}
	if res[Markov].PredictedFraction < 0.95 {
		t.Errorf("trained Markov predicted %.3f, want >= 0.95 on a repeated run", res[Markov].PredictedFraction)
	}
	if res[ReadAhead].Predicted != 0 || res[ReadAhead].UnusedFraction < 0.9 {
		t.Errorf("read-ahead: %+v", res[ReadAhead])
	}
	var out bytes.Buffer
	if err := WriteText(&out, rep); err != nil || !strings.Contains(out.String(), "trained on the first run") {
		t.Fatalf("%v\n%s", err, out.String())
	}
}

// With one run, training uses the first half of each stream and says so;
// sequential reads are what read-ahead predicts.
func TestOneRunHalves(t *testing.T) {
	dir := t.TempDir()
	var seq []read
	for i := int64(0); i < 1000; i++ {
		seq = append(seq, read{i * 4096, 4096})
	}
	name := writeReads(t, dir, 1, "/data/seq", seq)
	rep, err := Evaluate(nil, []string{name}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := byName(rep)
	if rep.Mode != "halves" || res[ReadAhead].Reads != 500 {
		t.Fatalf("mode %s, %d reads scored, want halves and 500", rep.Mode, res[ReadAhead].Reads)
	}
	if res[ReadAhead].PredictedFraction < 0.99 || res[Pattern].PredictedFraction < 0.99 {
		t.Errorf("sequential: read-ahead %.3f, pattern %.3f", res[ReadAhead].PredictedFraction, res[Pattern].PredictedFraction)
	}
	// The second half reads new blocks: a Markov model of the first half
	// cannot predict them (it never saw their blocks).
	if res[Markov].PredictedFraction > 0.01 {
		t.Errorf("Markov predicted %.3f of unseen blocks", res[Markov].PredictedFraction)
	}
	var out bytes.Buffer
	WriteText(&out, rep)
	if !strings.Contains(out.String(), "first half") {
		t.Fatalf("text does not say how it trained:\n%s", out.String())
	}
}

// Random reads: nobody predicts much and the pattern predictor, which only
// prefetches when certain, wastes little.
func TestRandomReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var rs []read
	for i := 0; i < 2000; i++ {
		rs = append(rs, read{rng.Int64N(1<<30) &^ 4095, 4096})
	}
	name := writeReads(t, t.TempDir(), 1, "/r", rs)
	rep, err := Evaluate(nil, []string{name}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := byName(rep)
	if res[Pattern].PredictedFraction > 0.01 || res[Pattern].PrefetchedBytes > 64*4096 {
		t.Errorf("pattern on random reads: %+v", res[Pattern])
	}
}

// The interval set merges, covers and intersects exactly.
func TestIntervals(t *testing.T) {
	var v intervals
	v.add(10, 20)
	v.add(30, 40)
	v.add(0, 5)
	v.add(18, 31)
	v.add(50, 50)
	if len(v.s) != 2 || v.s[0] != (span{0, 5}) || v.s[1] != (span{10, 40}) || v.size() != 35 {
		t.Fatalf("%v", v.s)
	}
	if !v.covers(12, 40) || v.covers(4, 11) || !v.covers(3, 3) || v.covers(39, 41) {
		t.Fatal("covers")
	}
	if v.overlapRange(3, 12) != 4 || v.overlapRange(35, 60) != 5 || v.overlapRange(5, 10) != 0 {
		t.Fatal("overlapRange")
	}
	// Against a byte map on random operations.
	rng := rand.New(rand.NewPCG(3, 4))
	var x intervals
	bytesIn := map[int64]bool{}
	for i := 0; i < 500; i++ {
		lo := rng.Int64N(1000)
		hi := lo + rng.Int64N(30)
		if rng.IntN(4) == 0 {
			x.remove(lo, hi)
			for b := lo; b < hi; b++ {
				delete(bytesIn, b)
			}
		} else {
			x.add(lo, hi)
			for b := lo; b < hi; b++ {
				bytesIn[b] = true
			}
		}
		q := rng.Int64N(1000)
		qh := q + rng.Int64N(10)
		want := true
		for b := q; b < qh; b++ {
			want = want && bytesIn[b]
		}
		if x.covers(q, qh) != want {
			t.Fatalf("covers(%d,%d) = %v", q, qh, !want)
		}
	}
	if x.size() != int64(len(bytesIn)) {
		t.Fatalf("size %d, want %d", x.size(), len(bytesIn))
	}
}

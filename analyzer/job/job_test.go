package job

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"iopred/tests/fuzzinput"
	"iopred/tracefmt"
	"iopred/tracefmt/tracetest"
)

// Bytes added to a histogram are kept whole whatever the coarsening, and
// each request lands in the bins it covers in proportion to its time.
func TestHistogramAdd(t *testing.T) {
	var h Histogram
	h.Add(10*MinBinNs, 12*MinBinNs, 2000) // two bins, 1000 each
	h.Add(11*MinBinNs+MinBinNs/2, 11*MinBinNs+MinBinNs/2, 7)
	if h.WidthNs != MinBinNs || h.First != 10 || !reflect.DeepEqual(h.Bins, []float64{1000, 1007}) {
		t.Fatalf("histogram %+v", h)
	}
	// A request far away coarsens the grid until both fit.
	far := int64(10+3*MaxBins) * MinBinNs
	h.Add(far, far+1, 5)
	if got := len(h.Bins); got > MaxBins {
		t.Fatalf("%d bins, bound %d", got, MaxBins)
	}
	if h.WidthNs != 4*MinBinNs {
		t.Fatalf("width %d after a request 3*MaxBins bins away, want %d", h.WidthNs, 4*MinBinNs)
	}
	if sum := total(&h); sum != 2012 {
		t.Fatalf("total %v bytes, want 2012", sum)
	}
}

func total(h *Histogram) float64 {
	var s float64
	for _, v := range h.Bins {
		s += v
	}
	return s
}

// Merging histograms in any order gives the same bins: the power-of-two
// grids nest, so the width is the finest one that holds the union.
func TestHistogramMergeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	hs := make([]Histogram, 6)
	for i := range hs {
		base := int64(1e12) + rng.Int64N(1e9)
		for k := 0; k < 200; k++ {
			s := base + rng.Int64N(int64(1+i)*1e8)
			hs[i].Add(s, s+rng.Int64N(1e6), 1+rng.Int64N(1<<20))
		}
	}
	merge := func(order []int) Histogram {
		var out Histogram
		for _, i := range order {
			if err := out.Merge(&hs[i]); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	a := merge([]int{0, 1, 2, 3, 4, 5})
	b := merge([]int{5, 3, 1, 0, 4, 2})
	if a.WidthNs != b.WidthNs || a.First != b.First || len(a.Bins) != len(b.Bins) {
		t.Fatalf("grids differ: %d/%d/%d and %d/%d/%d", a.WidthNs, a.First, len(a.Bins), b.WidthNs, b.First, len(b.Bins))
	}
	for i := range a.Bins {
		if math.Abs(a.Bins[i]-b.Bins[i]) > 1e-6*math.Max(1, a.Bins[i]) {
			t.Fatalf("bin %d: %v and %v", i, a.Bins[i], b.Bins[i])
		}
	}
	var want float64
	for i := range hs {
		want += total(&hs[i])
	}
	if got := total(&a); math.Abs(got-want) > 1e-6*want {
		t.Fatalf("merged total %v, want %v", got, want)
	}
}

// ranks builds the partials of an N-1 strided job: every rank writes
// segs segments of block bytes in xfer-byte calls, at s*N*block +
// r*block, one checkpoint every period.
func ranks(n, segs, block, xfer, ckpts int, period int64) []*Partial {
	parts := make([]*Partial, n)
	for r := 0; r < n; r++ {
		rank := r
		b := NewBuilder(tracefmt.Header{Program: "ior", StartUnixNs: 1e18, Rank: &rank})
		t := int64(0)
		for c := 0; c < ckpts; c++ {
			t = int64(c) * period
			for s := 0; s < segs; s++ {
				for j := 0; j < block/xfer; j++ {
					off := int64(c*segs*n*block + s*n*block + r*block + j*xfer)
					b.Add(&tracefmt.Event{Layer: tracefmt.LayerMPIIO, Op: "MPI_File_write_at", Path: "/d/ckpt",
						Offset: off, Size: int64(xfer), Bytes: int64(xfer), StartNs: t, EndNs: t + 20000})
					t += 25000
				}
			}
		}
		parts[r] = b.Partial(r, true, 10, 7.5)
	}
	return parts
}

// The job's partials merged along the tree describe an N-1 strided job
// as one global pattern listing the ranks in order once per segment, the
// checkpoints' period from the merged signal, and the totals.
func TestMergeTreeStrided(t *testing.T) {
	const n, segs, block, xfer, ckpts = 5, 3, 8192, 2048, 20
	const period = int64(150e6)
	merged, err := MergeTree(ranks(n, segs, block, xfer, ckpts, period))
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(merged)
	if s.Ranks != n || s.Counts.Writes != n*segs*ckpts*block/xfer || s.Counts.BytesWritten != n*segs*ckpts*block {
		t.Fatalf("ranks %d, counts %+v", s.Ranks, s.Counts)
	}
	if len(s.Patterns) != 1 || len(s.Patterns[0].Globals) != 1 {
		t.Fatalf("patterns %+v, want one global", s.Patterns)
	}
	g := s.Patterns[0].Globals[0]
	if len(g.IDs) != n*segs*ckpts {
		t.Fatalf("global ids %v, want the %d ranks once per segment", g.IDs, n)
	}
	for i, id := range g.IDs {
		if id != int64(i%n) {
			t.Fatalf("global ids %v not the ranks in order", g.IDs)
		}
	}
	if s.Patterns[0].InGlobals != int64(s.Counts.Writes) {
		t.Fatalf("global pattern holds %d of %d requests", s.Patterns[0].InGlobals, s.Counts.Writes)
	}
	if s.Period.Write == nil || s.Period.Write.PeriodS == nil {
		t.Fatalf("no period: %+v", s.Period.Write)
	}
	if got := *s.Period.Write.PeriodS; math.Abs(got-0.15)/0.15 > 0.02 {
		t.Fatalf("period %.4f s, want 0.15 s", got)
	}
	if s.Accuracy.Mean == nil || *s.Accuracy.Mean != 0.75 || len(s.Accuracy.PerRank) != n {
		t.Fatalf("accuracy %+v", s.Accuracy)
	}
}

// A tree merge equals a left-to-right merge of the same partials (the
// same job seen two ways), and the encoding carries a partial whole.
func TestMergeTreeMatchesLinear(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8} {
		parts := ranks(n, 2, 4096, 1024, 3, 1e8)
		tree, err := MergeTree(parts)
		if err != nil {
			t.Fatal(err)
		}
		lin := parts[0]
		for _, p := range parts[1:] {
			if lin, err = Merge(lin, p); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(Summarize(tree).Patterns, Summarize(lin).Patterns) || tree.Counts != lin.Counts {
			t.Fatalf("n=%d: tree and linear merges differ", n)
		}
		b, err := tree.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, tree) {
			t.Fatalf("n=%d: decoded partial differs from the encoded one", n)
		}
	}
}

// Partials that do not abut cannot merge, and a message that is not a
// partial is rejected with a reason.
func TestRejects(t *testing.T) {
	parts := ranks(3, 1, 1024, 1024, 1, 1e8)
	if _, err := Merge(parts[0], parts[2]); err == nil {
		t.Fatal("ranks 0 and 2 merged")
	}
	good, _ := parts[1].Encode()
	bad := []struct {
		name string
		edit func(p *Partial)
	}{
		{"no ranks", func(p *Partial) { p.Ranks = 0 }},
		{"accuracies", func(p *Partial) { p.Accuracy = nil }},
		{"width", func(p *Partial) { p.Write.WidthNs = 3000 }},
		{"bins", func(p *Partial) { p.Write.Bins = make([]float64, MaxBins+1) }},
		{"negative bin", func(p *Partial) { p.Write.Bins[0] = -1 }},
		{"run rank", func(p *Partial) { p.Streams[0].Runs[0].ID = 7 }},
		{"empty run", func(p *Partial) { p.Streams[0].Runs[0].Length = 0 }},
		{"score", func(p *Partial) { p.Score = 1e9 }},
	}
	for _, c := range bad {
		p, err := Decode(good)
		if err != nil {
			t.Fatal(err)
		}
		c.edit(p)
		b, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	for _, b := range [][]byte{nil, {0xc1}, good[:len(good)/2]} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%x: accepted", b)
		}
	}
}

// FuzzDecode: no input makes Decode panic or accept a partial that
// Merge and Summarize cannot use. The seeds are two ranks' partials of a
// few calls, with what Decode can do without left out, and small edits of
// them (tests/fuzzinput says why small).
func FuzzDecode(f *testing.F) {
	for _, p := range ranks(2, 1, 2048, 1024, 2, 1e6) {
		b, err := p.Encode()
		if err != nil {
			f.Fatal(err)
		}
		small := fuzzinput.ShrinkMsgpack(b, func(b []byte) bool {
			q, err := Decode(b)
			return err == nil && q.Ranks == p.Ranks && len(q.Streams) == len(p.Streams) && !q.Write.Empty()
		})
		for _, in := range fuzzinput.Edits(small, 10) {
			f.Add(in)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			return
		}
		next := &Partial{FirstRank: p.FirstRank + p.Ranks, Ranks: 1, Accuracy: []float32{-1}}
		if p.FirstRank+p.Ranks >= MaxRanks {
			return
		}
		m, err := Merge(p, next)
		if err != nil {
			return
		}
		Summarize(m)
	})
}

// The time-domain check finds the fundamental of a burst train whose
// period FTIO may report a harmonic of, and keeps a period that is one.
func TestFundamental(t *testing.T) {
	const fs, period, n = 1000.0, 0.150, 9000 // 60 bursts
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, n)
	for k := 0; float64(k)*period*fs < n-10; k++ {
		at := int(float64(k)*period*fs) + rng.IntN(5) // a few ms of jitter
		for i := at; i < at+3; i++ {
			x[i] += 1e6
		}
	}
	cases := []struct {
		reported float64
		want     int
	}{{period, 1}, {period / 2, 2}, {period / 3, 3}}
	for _, c := range cases {
		m, r := fundamental(x, fs, c.reported)
		if m != c.want {
			t.Errorf("period %.4f reported: multiple %d (autocorrelations %v), want %d", c.reported, m, r, c.want)
		}
	}
	// Bursts every 75 ms are a period of 75 ms, not of 150.
	y := append([]float64(nil), x...)
	for i := 0; i+75 < n; i++ {
		y[i+75] += x[i]
	}
	if m, r := fundamental(y, fs, period/2); m != 1 {
		t.Errorf("bursts every 75 ms: multiple %d (autocorrelations %v), want 1", m, r)
	}
}

// A period that falls between whole bins, as a checkpoint every 0.5 s
// does in a Darshan heatmap of 0.2 s bins (bursts in bins 0, 2, 5, 7,
// 10, ...: only twice the period lands on a whole lag), stays the period
// and is not taken for a harmonic of 1 s; PeriodsOf finds it from the
// bins alone, and a signal with no bytes read has no read period.
func TestPeriodsOfBetweenBins(t *testing.T) {
	const width, period = int64(200e6), 0.5
	writes := make([]int64, 100)
	for k := 0; float64(k)*period < 20; k++ {
		writes[int(float64(k)*period/0.2)] += 4 << 20
	}
	per := PeriodsOf(Signal{StartUnixNs: 1.7e18, WidthNs: width, Write: writes})
	if per.Read != nil || per.Write == nil || per.Both != per.Write {
		t.Fatalf("periods %+v", per)
	}
	if p := per.Write.PeriodS; p == nil || math.Abs(*p-period) > 0.2/2 || per.Write.Multiple > 1 {
		t.Errorf("period %v (multiple %d), want %v s within half a bin", p, per.Write.Multiple, period)
	}
	if m, r := fundamental(float64sOf(writes), 5, period); m != 1 {
		t.Errorf("fundamental of a 2.5-bin period: multiple %d (autocorrelations %v), want 1", m, r)
	}
	if per := PeriodsOf(Signal{WidthNs: 0, Write: writes}); per.Write != nil {
		t.Errorf("a signal without a bin width: %+v", per)
	}
}

func float64sOf(x []int64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// The builder leaves the system's and the MPI runtime's files out of the
// counts, the signal and the patterns, and counts them apart; a filtered
// builder given no filter keeps them. A nonblocking read on a kept file
// is still completed by its wait after calls on excluded files.
func TestBuilderExcludes(t *testing.T) {
	rank := 0
	h := tracefmt.Header{Program: "app", StartUnixNs: 1e18, Rank: &rank}
	events := []*tracefmt.Event{
		{Layer: tracefmt.LayerMPIIO, Op: "MPI_File_iread_at", Path: "/d/data", Offset: 0, Size: 100, Seq: 1, StartNs: 0, EndNs: 10},
		{Op: "read", Path: "/proc/cpuinfo", Offset: 0, Size: 4096, Ret: 900, Bytes: 900, StartNs: 20, EndNs: 30},
		{Op: "open", Path: "/tmp/ompi.vm.0/pid.1/x.sm", Offset: tracefmt.NoOffset, Ret: -1, Errno: 2, StartNs: 40, EndNs: 50},
		{Layer: tracefmt.LayerMPIIO, Op: "MPI_Wait", Path: "/d/data", Offset: 0, Bytes: 100, Parent: 1, StartNs: 60, EndNs: 70},
		{Op: "pwrite", Path: "/d/data", Offset: 100, Size: 50, Ret: 50, Bytes: 50, StartNs: 80, EndNs: 90},
	}
	for _, c := range []struct {
		name             string
		b                *Builder
		events, excl     uint64
		reads, failed    uint64
		bytesRead, exclB int64
		streams          int
	}{
		{"default", NewBuilder(h), 3, 2, 1, 0, 100, 900, 2},
		{"all paths", NewFilteredBuilder(h, nil), 5, 0, 2, 1, 1000, 0, 3},
	} {
		for _, e := range events {
			e.Layer = tracefmt.LayerOf(e.Op)
			c.b.Add(e)
		}
		p := c.b.Partial(0, false, 0, 0)
		k := p.Counts
		if k.Events != c.events || k.ExcludedEvents != c.excl || k.Reads != c.reads || k.Failed != c.failed ||
			k.BytesRead != c.bytesRead || k.ExcludedBytes != c.exclB || len(p.Streams) != c.streams {
			t.Errorf("%s: counts %+v, %d streams", c.name, k, len(p.Streams))
		}
		if total(&p.Read) != float64(c.bytesRead) {
			t.Errorf("%s: read signal holds %v bytes, want %d", c.name, total(&p.Read), c.bytesRead)
		}
		if p.StartUnixNs != 1e18 {
			t.Errorf("%s: start %d", c.name, p.StartUnixNs)
		}
	}
}

// The job's start is the earliest rank's, whatever the merge order, and
// unknown starts (0) do not count.
func TestMergeStart(t *testing.T) {
	part := func(r int, start int64) *Partial {
		return &Partial{FirstRank: r, Ranks: 1, StartUnixNs: start, Accuracy: []float32{-1}}
	}
	m, err := MergeTree([]*Partial{part(0, 0), part(1, 5e17), part(2, 3e17), part(3, 4e17)})
	if err != nil {
		t.Fatal(err)
	}
	if s := Summarize(m); s.StartUnixNs != 3e17 {
		t.Errorf("job start %d, want the earliest rank's 3e17", s.StartUnixNs)
	}
	if _, err := Decode(mustEncode(t, part(0, -1))); err == nil {
		t.Error("a partial with a negative start decoded")
	}
}

func mustEncode(t *testing.T, p *Partial) []byte {
	t.Helper()
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Limit coarsens a histogram to at most the bins asked, keeping every
// byte.
func TestHistogramLimit(t *testing.T) {
	var h Histogram
	for i := int64(0); i < 5000; i++ {
		h.Add(1e12+i*MinBinNs, 1e12+i*MinBinNs+10, 3)
	}
	for _, n := range []int{4096, 300, 7, 1, 0} {
		h.Limit(n)
		if len(h.Bins) > max(n, 1) || total(&h) != 15000 {
			t.Errorf("Limit(%d): %d bins, %v bytes", n, len(h.Bins), total(&h))
		}
	}
}

// periodic returns a job's signal in bins of width ns: a start-up burst of
// startup bytes in the first 50 ms (when startup > 0), then bursts of
// burst bins every period seconds from first on, each moving 1 MB, with
// up to jitter bins of random delay, until end seconds.
func periodic(width int64, startup float64, first, period, end float64, burst, jitter int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	bin := float64(width) / 1e9
	x := make([]float64, int(end/bin))
	for i := 0; float64(i)*bin < 0.05 && startup > 0; i++ {
		x[i] += startup / (0.05 / bin)
	}
	for at := first; at < end; at += period {
		i := int(at/bin) + rng.IntN(jitter+1)
		for j := i; j < i+burst && j < len(x); j++ {
			x[j] += 1e6 / float64(burst)
		}
	}
	return x
}

// The job's period on synthetic signals as `iopred period` sees them by
// default: the ladder from the finest resolution down to 64 samples, the
// period most agree on, repeated at least twice, checked against its
// multiples. A train of short bursts (harmonics as strong as the
// fundamental), one that starts after a long start-up, one with jitter,
// and a job whose only I/O is its start-up, which has no period.
func TestPeriodOfSynthetic(t *testing.T) {
	const width = 1 << 20 // about 1 ms
	cases := []struct {
		name string
		x    []float64
		want float64 // 0: no period
	}{
		{"burst train", periodic(width, 0, 0.01, 0.09, 7.5, 1, 0, 1), 0.09},
		{"jittered bursts", periodic(width, 0, 0.01, 0.33, 27, 3, 8, 2), 0.33},
		{"late start", periodic(width, 50e6, 2.5, 0.3, 8.5, 4, 2, 3), 0.3},
		{"slow checkpoints", periodic(width, 0, 0.2, 0.7, 7.2, 40, 5, 4), 0.7},
		{"start-up and end", startEnd(width, 8), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.x {
				c.x[i] *= 1e9 / width // bytes per bin to bytes per second
			}
			p := periodOf(c.x, nil, 0, width)
			if p == nil {
				t.Fatal("no analysis")
			}
			var res []string
			for _, r := range p.Resolutions {
				res = append(res, fmt.Sprintf("%.4g Hz: %v", r.Fs, fmtPeriod(r.PeriodS)))
			}
			t.Logf("period %s, %d agree, multiple %d; %v; autocorrelation %v", fmtPeriod(p.PeriodS), p.Agreeing, p.Multiple, res, fmtCorr(p.Autocorrelation))
			if len(p.Resolutions) < 2 || p.Resolutions[len(p.Resolutions)-1].Fs*(p.TEnd-p.TStart) >= 2*MinLadderSamples {
				t.Errorf("resolutions %v: the ladder must go down to %d samples", res, MinLadderSamples)
			}
			switch {
			case c.want == 0 && p.PeriodS != nil && *p.PeriodS > (p.TEnd-p.TStart)/MinCycles:
				t.Errorf("period %.4f s repeats less than %d times in %.4f s", *p.PeriodS, MinCycles, p.TEnd-p.TStart)
			case c.want > 0 && p.PeriodS == nil:
				t.Errorf("no period, want %.4f s", c.want)
			case c.want > 0 && math.Abs(1 / *p.PeriodS - 1/c.want)*(p.TEnd-p.TStart) > 1:
				// A DFT over the span resolves frequencies to 1/span.
				t.Errorf("period %.4f s, want %.4f s within one frequency bin", *p.PeriodS, c.want)
			}
		})
	}
}

// startEnd is the signal of a job that writes only at its start (its
// input staged, 50 MB in 50 ms) and at its end (its result), end seconds
// later.
func startEnd(width int64, end float64) []float64 {
	bin := float64(width) / 1e9
	x := make([]float64, int(end/bin))
	for i := 0; float64(i)*bin < 0.05; i++ {
		x[i] = 1e6
	}
	x[len(x)-1] = 1e6
	return x
}

func fmtPeriod(p *float64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%.4f s", *p)
}

func fmtCorr(r []*float64) string {
	var b strings.Builder
	for _, c := range r {
		if c == nil {
			b.WriteString(" -")
		} else {
			fmt.Fprintf(&b, " %.2f", *c)
		}
	}
	return b.String()
}

// TestCopyFileRangeWrites proves that a copy_file_range (how cp and cat
// copy) counts as a write of the file it copied into as well as a read of
// the file it copied from, through the whole reading of a trace (the
// output's path comes from the trace's file record: the event holds only
// its id, in Aux). A copy into a descriptor iopred does not know (Aux 0,
// a pipe) or into a path the filter leaves out writes nothing.
func TestCopyFileRangeWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp"+tracefmt.FileSuffix)
	var events []*tracefmt.Event
	for i, out := range []int64{2, 0, 3, 2} {
		start := int64(i) * 1e8
		events = append(events, &tracefmt.Event{Op: "copy_file_range", FileID: 1, Aux: out, Offset: int64(i) << 20, Size: 1 << 20,
			Ret: 1 << 20, Bytes: 1 << 20, StartNs: start, EndNs: start + 1e6})
	}
	rank := 0
	tracetest.Write(t, path, tracefmt.Header{Program: "/bin/cp", PID: 9, Rank: &rank, StartUnixNs: 1e18},
		tracetest.Files("/data/in", "/data/out", "/proc/self/fd/9"), events, tracefmt.Footer{Reason: "exit", EndNs: 1e9})

	s, _, err := FromTraces([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Counts; k.Reads != 4 || k.BytesRead != 4<<20 || k.Writes != 2 || k.BytesWritten != 2<<20 {
		t.Errorf("counts %+v: want 4 reads of 4 MiB and 2 writes of 2 MiB", k)
	}
}

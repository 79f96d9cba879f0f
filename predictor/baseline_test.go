package predictor

import (
	"math"
	"testing"

	"iopred/tracefmt"
)

func TestFieldString(t *testing.T) {
	for _, c := range []struct {
		f    Field
		want string
	}{
		{0, ""},
		{FieldContext, "context"},
		{FieldOffset | FieldSize, "offset+size"},
		{FieldContext | FieldFile | FieldOffset | FieldSize | FieldDelay, "context+file+offset+size+delay"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%d: %q, want %q", c.f, got, c.want)
		}
	}
}

// TestArbiter proves an arbiter follows the rule that has been right more
// often, ignores outcomes that tell the two apart in nothing, and forgets
// the distant past: after 40 wins of the model, 40 of the baseline win
// the choice back.
func TestArbiter(t *testing.T) {
	var a arbiter
	if a.useBase() || !a.preferBase(false) || a.preferBase(true) {
		t.Fatalf("empty arbiter: useBase %v, preferBase(unsure) %v, preferBase(sure) %v", a.useBase(), a.preferBase(false), a.preferBase(true))
	}
	for range 40 {
		a.record(true, false)
		a.record(true, true)
		a.record(false, false)
	}
	if a.useBase() {
		t.Fatalf("%+v: baseline chosen after the model's wins", a)
	}
	for range 40 {
		a.record(false, true)
	}
	if !a.useBase() {
		t.Fatalf("%+v: model kept after 40 wins of the baseline", a)
	}
	if a.Model+a.Base >= arbiterWindow {
		t.Fatalf("%+v: counts not bounded by the window %d", a, arbiterWindow)
	}
}

// TestSeekSetsPosition proves a seek's position is where the model expects
// the next call on the file: a file read to its end, rewound and read
// again (as programs read /proc/cpuinfo) is predicted at 0, and after an
// lseek to 5000 at 5000.
func TestSeekSetsPosition(t *testing.T) {
	m := New(Options{})
	var now int64
	add := func(ctx uint64, op string, off, size int64) {
		now += 1000
		e := &tracefmt.Event{Op: op, Path: "f", FileID: 1, Offset: off, Size: size, Ctx: ctx, StartNs: now, EndNs: now + 100}
		if tracefmt.IsData(op) {
			e.Ret, e.Bytes = size, size
		}
		m.Observe(e)
	}
	add(1, "open", tracefmt.NoOffset, 0)
	add(2, "read", 0, 100)
	add(2, "read", 100, 100)
	add(3, "rewind", 0, 0)
	if got := m.NextOffset("f"); got != 0 {
		t.Errorf("after rewind: next offset %d, want 0", got)
	}
	add(2, "read", 0, 100)
	add(4, "lseek", 5000, 0)
	if got := m.NextOffset("f"); got != 5000 {
		t.Errorf("after lseek: next offset %d, want 5000", got)
	}
}

// TestSizeDriftFollowed proves the size tournament on a context whose size
// steps up every 4 calls (a record that grows as a run goes on): its
// latest size is right 3 times in 4, more often than its size table,
// which looks for a cycle among values that never come back. With the
// baselines the model misses little more than the first call of each of
// the 12 sizes; its table alone misses nearly twice as many.
func TestSizeDriftFollowed(t *testing.T) {
	for _, c := range []struct {
		name                 string
		opt                  Options
		minMisses, maxMisses int
	}{
		{"with baselines", Options{}, 12, 14},
		{"table alone", Options{NoFallback: true}, 20, 48},
	} {
		m := New(c.opt)
		var now, off int64
		add := func(ctx uint64, size int64) {
			now += 1000
			e := &tracefmt.Event{Op: "fprintf", Path: "dump", FileID: 1, Offset: off, Size: size, Ret: size, Bytes: size, Ctx: ctx, StartNs: now, EndNs: now + 100}
			m.Observe(e)
			off += size
		}
		misses := 0
		for step := range 48 {
			add(1, 15)
			size := int64(4 + step/4)
			if got := m.NextSize("dump"); got != size {
				misses++
			}
			add(2, size)
			add(3, 1000)
		}
		if misses > c.maxMisses || misses < c.minMisses {
			t.Errorf("%s: %d of 48 sizes missed, want %d to %d", c.name, misses, c.minMisses, c.maxMisses)
		}
	}
}

// TestNextSizeOfFreshFile proves the guess for a file opened but not yet
// read: the size the first read of the latest newly opened file asked
// for (a library reading small files with one buffer size), and the
// guess is no baseline's to make without them.
func TestNextSizeOfFreshFile(t *testing.T) {
	for _, c := range []struct {
		opt  Options
		want int64
	}{{Options{}, 4097}, {Options{NoFallback: true}, 0}} {
		m := New(c.opt)
		var now int64
		add := func(ctx uint64, op, path string, off, size int64) {
			now += 1000
			e := &tracefmt.Event{Op: op, Path: path, Offset: off, Size: size, Ctx: ctx, StartNs: now, EndNs: now + 100}
			if tracefmt.IsData(op) {
				e.Ret, e.Bytes = 10, 10
			}
			m.Observe(e)
		}
		add(1, "openat", "/sys/a", tracefmt.NoOffset, 0)
		add(2, "read", "/sys/a", 0, 4097)
		add(3, "read", "/sys/a", 10, 4097)
		add(4, "close", "/sys/a", tracefmt.NoOffset, 0)
		add(5, "openat", "/sys/b", tracefmt.NoOffset, 0)
		if got := m.NextSize("/sys/b"); got != c.want {
			t.Errorf("NoFallback %v: next size of a fresh file %d, want %d", c.opt.NoFallback, got, c.want)
		}
		for _, p := range m.Candidates() {
			// (The model alone keeps its earlier guess, pinned.)
			if !c.opt.NoFallback && !tracefmt.IsData(p.Op) && p.Offset != tracefmt.NoOffset {
				t.Errorf("NoFallback %v: candidate %s has offset %d", c.opt.NoFallback, p.Op, p.Offset)
			}
		}
	}
}

// TestDelayNotWorseThanLastGap proves, on the synthetic streams, that the
// first prediction's delay is on average no farther from the real gap
// than the last gap is, beyond a learning margin of 2%. Single-threaded
// streams only: a thread's gaps are counted from its own previous call,
// the last gap from the process's.
func TestDelayNotWorseThanLastGap(t *testing.T) {
	hdf5, _ := hdf5Run(150, 3, 8)
	for _, c := range []struct {
		name   string
		events []*tracefmt.Event
	}{
		{"periodic", periodicStream(6000)},
		{"noisy", noisyStream(6000, 0.05, 1)},
		{"hdf5", hdf5},
	} {
		m := New(Options{})
		var modelErr, lastErr float64
		var prevEnd, lastGap int64
		for i, e := range c.events {
			if i >= 2 {
				gap := float64(max(e.StartNs-prevEnd, 0))
				if p := m.Predict(1); len(p) > 0 {
					modelErr += math.Abs(float64(p[0].Delay) - gap)
					lastErr += math.Abs(float64(lastGap) - gap)
				}
			}
			if i >= 1 {
				lastGap = max(e.StartNs-prevEnd, 0)
			}
			prevEnd = e.EndNs
			m.Observe(e)
		}
		if modelErr > 1.02*lastErr {
			t.Errorf("%s: delay error %.4g ns in all, the last gap's %.4g", c.name, modelErr, lastErr)
		}
	}
}

// TestDelayErrorsChoose proves the delay arbiter's choice: the last gap
// once its recent errors are smaller than those of the model's answers,
// the model's again once they are not, and never without a last gap or
// with the baselines off.
func TestDelayErrorsChoose(t *testing.T) {
	m := New(Options{})
	m.prev = 0
	m.syms = []*symbol{{}}
	if m.lastGapBetter() {
		t.Fatal("last gap chosen before any gap")
	}
	m.haveGap = true
	for range 10 {
		m.delayArb.record(500, 100)
	}
	if !m.lastGapBetter() {
		t.Fatalf("%+v: model kept with five times the error", m.delayArb)
	}
	// One long pause the last gap misses by far outweighs its small wins.
	m.delayArb.record(0, 1e6)
	if m.lastGapBetter() {
		t.Fatalf("%+v: last gap kept after its large miss", m.delayArb)
	}
	m.UseBaselines(false)
	m.delayArb = delayErrors{Model: 1, Last: 0}
	if m.lastGapBetter() {
		t.Fatal("last gap chosen with the baselines off")
	}
}

// TestThreadFileFallback proves the file baseline across threads: a busy
// writer thread leads the merged candidates, while a second thread reads
// a status file in bursts of three calls; after a few bursts the first
// candidate names the status file while the reader's burst goes on, and
// never without the baselines.
func TestThreadFileFallback(t *testing.T) {
	for _, c := range []struct {
		opt     Options
		minHits int
	}{{Options{}, 40}, {Options{NoFallback: true}, 0}} {
		m := New(c.opt)
		var now, off int64
		hits := 0
		add := func(tid int32, ctx uint64, op, path string, offset, size int64) {
			now += 1000
			e := &tracefmt.Event{Op: op, Tid: tid, Ctx: ctx, Path: path, Offset: offset, Size: size, StartNs: now, EndNs: now + 100}
			if tracefmt.IsData(op) {
				e.Ret, e.Bytes = size, size
			}
			m.Observe(e)
		}
		for burst := range 30 {
			for range 10 {
				add(1, 1, "pwrite", "data", off, 4096)
				off += 4096
			}
			add(2, 2, "fopen", "stat", tracefmt.NoOffset, 0)
			for i := range 2 {
				p := m.Candidates()
				if burst >= 10 && len(p) > 0 && p[0].Path == "stat" {
					hits++
				}
				add(2, uint64(3+i), "fgets", "stat", int64(i*64), 64)
			}
		}
		if c.opt.NoFallback && hits != 0 || hits < c.minHits {
			t.Errorf("NoFallback %v: %d of 40 status calls named, want at least %d", c.opt.NoFallback, hits, c.minHits)
		}
	}
}

package predictor

import (
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

package posix

import (
	"fmt"
	"path/filepath"
	"testing"

	"iopred/tracefmt"
)

// want is one expected event.
type want struct {
	op     string
	path   string
	offset int64 // tracefmt.NoOffset for none
	size   int64
}

// nestedEvents computes, from the workload's parameters, every event the
// trace of testdata/nested.c must hold, in order.
func nestedEvents(dir string, outer, inner int, rec int64) []want {
	var w []want
	none := tracefmt.NoOffset
	for o := 0; o < outer; o++ {
		p := filepath.Join(dir, fmt.Sprintf("posix.%d", o%4))
		w = append(w, want{"open", p, none, 0})
		for i := 0; i < inner; i++ {
			w = append(w, want{"write", p, int64(i) * rec, rec})
			w = append(w, want{"pwrite", p, int64(inner+i) * rec, rec})
		}
		w = append(w, want{"lseek", p, 0, 0})
		for i := 0; i < inner; i++ {
			w = append(w, want{"read", p, int64(i) * rec, rec})
		}
		w = append(w, want{"close", p, none, 0})
		s := filepath.Join(dir, fmt.Sprintf("stdio.%d", o%4))
		w = append(w, want{"fopen", s, none, 0})
		for i := 0; i < inner; i++ {
			w = append(w, want{"fwrite", s, int64(i) * rec, rec})
		}
		w = append(w, want{"rewind", s, 0, 0})
		for i := 0; i < inner; i++ {
			w = append(w, want{"fread", s, int64(i) * rec, rec})
		}
		w = append(w, want{"fclose", s, int64(inner) * rec, 0})
	}
	return w
}

// The trace holds exactly the calls the program made, in order, with their
// files, offsets and sizes; every data call moved what it asked for.
func TestNestedWorkloadExact(t *testing.T) {
	prog := compileC(t, "nested.c")
	data := t.TempDir()
	const outer, inner, rec = 6, 40, 1000
	res, dir := traced(t, nil, "", prog, data, fmt.Sprint(outer), fmt.Sprint(inner), fmt.Sprint(rec))
	if res.code != 0 || res.stdout != "done\n" {
		t.Fatalf("workload failed: %+v", res)
	}
	tr := onlyTrace(t, dir)
	complete(t, tr)
	got := eventsOn(tr, data)
	exp := nestedEvents(data, outer, inner, rec)
	if len(got) != len(exp) {
		t.Fatalf("%d events on the workload's files, want %d", len(got), len(exp))
	}
	for i, w := range exp {
		e := got[i]
		if e.Op != w.op || e.Path != w.path || e.Offset != w.offset || e.Size != w.size {
			t.Fatalf("event %d: %s %s offset %d size %d; want %s %s offset %d size %d",
				i, e.Op, e.Path, e.Offset, e.Size, w.op, w.path, w.offset, w.size)
		}
		if tracefmt.IsData(e.Op) && (e.Bytes != w.size || e.Errno != 0) {
			t.Fatalf("event %d (%s): moved %d bytes, errno %d; want %d, 0", i, e.Op, e.Bytes, e.Errno, w.size)
		}
		if e.EndNs < e.StartNs || e.Tid == 0 || e.PID != tr.header.PID {
			t.Fatalf("event %d: times %d..%d tid %d pid %d", i, e.StartNs, e.EndNs, e.Tid, e.PID)
		}
	}
	if tr.footer.Events < uint64(len(exp)) {
		t.Errorf("footer counts %d events, fewer than the %d seen", tr.footer.Events, len(exp))
	}
}

// Each call site has its own context, the same call site always the same
// one, and a second run of the same binary gives the same ids despite
// address randomisation.
func TestNestedContextsStable(t *testing.T) {
	prog := compileC(t, "nested.c")
	ctxOf := func() map[string]uint64 {
		data := t.TempDir()
		_, dir := traced(t, nil, "", prog, data, "3", "5", "100")
		tr := onlyTrace(t, dir)
		sites := map[string]uint64{}
		for _, e := range eventsOn(tr, data) {
			if e.Ctx == 0 {
				t.Fatalf("%s event without a context", e.Op)
			}
			if prev, ok := sites[e.Op]; ok && prev != e.Ctx {
				t.Fatalf("%s: one call site gave contexts %d and %d", e.Op, prev, e.Ctx)
			}
			sites[e.Op] = e.Ctx
			if _, ok := tr.contexts[e.Ctx]; !ok {
				t.Fatalf("context %d used but never defined", e.Ctx)
			}
		}
		return sites
	}
	first, second := ctxOf(), ctxOf()
	seen := map[uint64]string{}
	for op, id := range first {
		if other, dup := seen[id]; dup {
			t.Errorf("%s and %s share context %d", op, other, id)
		}
		seen[id] = op
		if second[op] != id {
			t.Errorf("%s: context %d in the first run, %d in the second", op, id, second[op])
		}
	}
}

// With IOPRED_CONTEXT_DEPTH=0 no stack is captured and events carry no
// context.
func TestContextCaptureOff(t *testing.T) {
	prog := compileC(t, "nested.c")
	data := t.TempDir()
	_, dir := traced(t, []string{"IOPRED_CONTEXT_DEPTH=0"}, "", prog, data, "1", "3", "10")
	for _, e := range eventsOn(onlyTrace(t, dir), data) {
		if e.Ctx != 0 {
			t.Fatalf("%s has context %d with capture off", e.Op, e.Ctx)
		}
	}
}

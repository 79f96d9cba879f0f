package export

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tracefmt"
	_ "iopred/tracefmt/dftracer"
)

// TestPerfettoRegions proves that the regions of a DFTracer trace (the
// application's functions, epochs and steps) are slices of their thread,
// category "region,<source category>", with their arguments, that the
// calls made during one nest under it (checkTraceEvents checks the
// nesting of every track), and that the stats count them apart from the
// calls.
func TestPerfettoRegions(t *testing.T) {
	dir := filepath.Join("..", "..", "tracefmt", "dftracer", "testdata")
	traces, err := tracefmt.Discover(filepath.Join(dir, "v2-8100.pfw"), filepath.Join(dir, "pool-1.0-7000.pfw"))
	if err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	st, err := Perfetto(&doc, traces, PerfettoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // region name -> category and args
	calls := 0
	for _, e := range checkTraceEvents(t, doc.Bytes())["X"] {
		if cat, ok := strings.CutPrefix(e.Cat, "region,"); ok {
			got[e.Name] = cat + " " + string(e.Args)
		} else {
			calls++
		}
	}
	want := map[string]string{
		"epoch":    `PyTorch {"epoch":"1"}`,
		"step":     `PyTorch {"epoch":"1","image_idx":"[3,9]","step":"1"}`,
		"pool.map": `PYTHON_APP {"tasks":"2"}`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("region %s: %q, want %q", name, got[name], w)
		}
	}
	if st.Regions != 3 || len(got) != 3 || st.Events != uint64(calls) || calls != 5+10 || st.Traces != 4 {
		t.Errorf("stats %+v; %d region slices, %d call slices", st, len(got), calls)
	}
}

package insights

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"iopred/analyzer/summary"
	"iopred/tests/interop"
	"iopred/tracefmt"
)

// collectorJSON is everything a collector's user reads: the processes,
// the files, the common sizes with the rest, the totals and the findings.
func collectorJSON(t *testing.T, c *Collector) []byte {
	t.Helper()
	read, write := c.Total()
	b, err := json.Marshal(struct {
		Procs        []*Proc
		Files        []*File
		Reads        []SizeCount
		Writes       []SizeCount
		Other        [2]uint64
		Read, Write  Access
		Findings     []Finding
		DistinctSize [2]int
	}{c.Procs, c.SortedFiles(), c.CommonSizes(false, 1<<20), c.CommonSizes(true, 1<<20), c.OtherSizes, read, write, c.Findings(),
		[2]int{len(c.Sizes[0]), len(c.Sizes[1])}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sharesOf fills a share collector from each of k contiguous shares of
// traces and passes it through its wire form (Encode, DecodeCollector).
func sharesOf(t *testing.T, traces []string, k int) []*Collector {
	t.Helper()
	var shares []*Collector
	for r := range k {
		lo, hi := r*len(traces)/k, (r+1)*len(traces)/k
		c := NewShareCollector(Thresholds{})
		summary.Read(traces, lo, hi, summary.Options{Observer: c})
		b, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if c, err = DecodeCollector(b); err != nil {
			t.Fatal(err)
		}
		shares = append(shares, c)
	}
	return shares
}

// Collectors filled from shares of the traces (NewShareCollector, each
// through its wire form) and combined equal the collector filled from all
// of them, findings included, for every split; also when the job has more
// distinct request sizes than the collector keeps (4,096), which the
// combination must cut where one collector reading every trace in order
// cuts them.
func TestCombineSharesIdentical(t *testing.T) {
	var procs []proc
	for p := range 4 {
		c := &clock{}
		var evs []tracefmt.Event
		evs = append(evs, c.call("open", "/scratch/shared", 0, 0, 10))
		for i := range 2500 {
			// overlapping and new sizes, in an order of their own per process
			size := int64(1 + (i*7+p*1100)%6000)
			evs = append(evs, c.call("pwrite", "/scratch/shared", int64(i)*4096, size, 100))
		}
		evs = append(evs, writes(c, fmt.Sprintf("/scratch/own.%d", p), 50, 4096, 8192, 300)...)
		evs = append(evs, c.call("pread", "/scratch/shared", 100, 64<<10, 1000))
		procs = append(procs, proc{rank: p, events: evs})
	}
	traces := write(t, procs)
	want := NewCollector(Thresholds{})
	if rep, err := summary.Summarize(traces, summary.Options{Observer: want}); rep == nil {
		t.Fatal(err)
	}
	if want.OtherSizes[1] == 0 || len(want.Sizes[1]) != maxSizes {
		t.Fatalf("the job's %d distinct write sizes do not overflow the collector: the cut is not checked", len(want.Sizes[1]))
	}
	wantJSON := collectorJSON(t, want)
	for _, k := range []int{1, 2, 3, 4, 6} {
		got := collectorJSON(t, Combine(Thresholds{}, sharesOf(t, traces, k)))
		if !bytes.Equal(got, wantJSON) {
			i := 0
			for i < len(got) && i < len(wantJSON) && got[i] == wantJSON[i] {
				i++
			}
			t.Errorf("%d shares: the combined collector differs from one collector's at byte %d:\n%.300s\nwant\n%.300s", k, i, got[max(i-100, 0):], wantJSON[max(i-100, 0):])
		}
	}
}

// A share's collector that is not one is refused with a message.
func TestDecodeCollectorBad(t *testing.T) {
	for _, b := range [][]byte{nil, {0xc1}, {0x81, 0xa5, 'p', 'r', 'o', 'c', 's', 0x91, 0xc0}} {
		if _, err := DecodeCollector(b); err == nil {
			t.Errorf("% x: decoded", b)
		}
	}
}

// The Darshan heatmaps' job signal, and the period from it, come out of
// combined shares as out of one collector, split every way: a log with
// heatmaps and no DXT beside one without heatmaps; a log with DXT and
// heatmaps read twice (two ranks' bins on one grid, added) beside it.
// (Logs of different years would make one signal spanning years: each
// set keeps to one run.)
func TestCombineSharesHeatmap(t *testing.T) {
	path := func(l string) string { return interop.Path(t, "darshan/"+l+".darshan") }
	plain := path("darshan-logs/mpi-io-test-x86_64-3.2.1")
	ckpt, err := os.ReadFile(path("iopred/ckpt-dxt-heatmap"))
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "ckpt-again.darshan")
	if err := os.WriteFile(again, ckpt, 0o600); err != nil {
		t.Fatal(err)
	}
	heatmapJSON := func(c *Collector) []byte {
		b, err := json.Marshal(struct {
			Signal  any
			Bin     int64
			DXT     bool
			Skipped int
			Periods any
		}{c.Heatmap, c.HeatmapBinNs, c.HeatmapWithDXT, c.HeatmapSkipped, c.HeatmapPeriods()})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, set := range [][]string{
		{path("darshan-logs/snyder_python3_id3116902-2110365_12-19-66957-188958432683465822_1"), plain},
		{path("iopred/ckpt-dxt-heatmap"), again, plain},
	} {
		traces, err := tracefmt.Discover(set...)
		if err != nil {
			t.Fatal(err)
		}
		want := NewCollector(Thresholds{})
		if rep, err := summary.Summarize(traces, summary.Options{Observer: want}); rep == nil {
			t.Fatal(err)
		}
		if want.Heatmap == nil || want.HeatmapBinNs == 0 && !want.HeatmapWithDXT {
			t.Fatalf("%v: no heatmap signal: the logs do not exercise its merge", set)
		}
		wantJSON := heatmapJSON(want)
		for k := 1; k <= len(traces); k++ {
			if got := heatmapJSON(Combine(Thresholds{}, sharesOf(t, traces, k))); !bytes.Equal(got, wantJSON) {
				t.Errorf("%v in %d shares: the heatmap differs:\n%.400s\nwant\n%.400s", set, k, got, wantJSON)
			}
		}
	}
}

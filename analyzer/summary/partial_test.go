package summary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"iopred/tests/interop"
	"iopred/tracefmt"
	_ "iopred/tracefmt/dftracer" // registers DFTracer's traces with tracefmt
)

// sharesOf splits n traces into k contiguous shares, as the ranks of an
// MPI job take them.
func sharesOf(n, k int) [][2]int {
	var out [][2]int
	for r := range k {
		out = append(out, [2]int{r * n / k, (r + 1) * n / k})
	}
	return out
}

// Summarizing the traces in shares (Read), sending each share's Partial
// through its wire form (Encode, DecodePartial) and joining them
// (Combine) gives the report and the error Summarize gives, byte for byte
// in JSON, whatever the number of shares, empty shares included: the
// traces of every kind parallelTraceSet writes (MPI ranks, excluded
// system files, contexts, a truncated trace, a file that is no trace)
// and Darshan logs (per-file counters, DXT, a shared-record trace).
func TestCombineSharesIdentical(t *testing.T) {
	dir := parallelTraceSet(t)
	darshan := interop.Path(t, "darshan/darshan-logs/mpi-io-test-x86_64-3.4.7.darshan")
	dxt := interop.Path(t, "darshan/darshan-logs/hdf5_diagonal_write_1_byte_dxt.darshan")
	lustre := interop.Path(t, "darshan/pytokio/sample.darshan")
	// DFTracer traces with regions (application events) of one name in
	// several traces, and forked workers.
	dft := filepath.Join("..", "..", "tracefmt", "dftracer", "testdata")
	regions := []string{filepath.Join(dft, "app-1234.pfw"), filepath.Join(dft, "pool-1.0-7000.pfw"), filepath.Join(dft, "v2-8100.pfw"), filepath.Join(dft, "forked-9000.pfw")}
	sets := [][]string{{dir}, {filepath.Join(dir, "other")}, {darshan, dxt, lustre, filepath.Join(dir, "other")}, regions}
	for _, set := range sets {
		traces, err := tracefmt.Discover(set...)
		if err != nil {
			t.Fatal(err)
		}
		for _, allPaths := range []bool{false, true} {
			opt := Options{Top: 5, AllPaths: allPaths}
			rep, wantErr := Summarize(traces, opt)
			if len(set) > 2 && set[0] != regions[0] && (len(rep.Modules) == 0 || rep.OSTs == nil || len(rep.Contexts) == 0) {
				t.Fatalf("%v: no module totals, OSTs or contexts: the counters' and contexts' merge would go unchecked", set)
			}
			if len(set) == len(regions) && set[0] == regions[0] && len(rep.Regions) < 3 {
				t.Fatalf("DFTracer set: %d regions, want 3 or more: their merge would go unchecked", len(rep.Regions))
			}
			want, _ := json.MarshalIndent(rep, "", " ")
			for _, k := range []int{1, 2, 3, len(traces) + 2} {
				var parts []*Partial
				for _, sh := range sharesOf(len(traces), k) {
					b, err := Read(traces, sh[0], sh[1], opt).Encode()
					if err != nil {
						t.Fatal(err)
					}
					p, err := DecodePartial(b, opt)
					if err != nil {
						t.Fatal(err)
					}
					parts = append(parts, p)
				}
				rep, err := Combine(traces, parts, opt)
				if rep == nil {
					t.Fatalf("%v in %d shares: %v", set, k, err)
				}
				got, _ := json.MarshalIndent(rep, "", " ")
				if !bytes.Equal(got, want) {
					t.Errorf("%v, all paths %v, in %d shares: the report differs:\n%s\nwant\n%s", set, allPaths, k, got, want)
				}
				if fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Errorf("%v in %d shares: error %v, want %v", set, k, err, wantErr)
				}
			}
		}
	}
}

// Shares that do not cover the traces exactly are refused.
func TestCombineRefusesGaps(t *testing.T) {
	traces, err := tracefmt.Discover(filepath.Join(parallelTraceSet(t), "other"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(traces)
	for _, c := range [][][2]int{{{0, 1}, {2, n}}, {{0, n - 1}}, {{1, n}}} {
		var parts []*Partial
		for _, sh := range c {
			parts = append(parts, Read(traces, sh[0], sh[1], Options{}))
		}
		if rep, err := Combine(traces, parts, Options{}); rep != nil || err == nil {
			t.Errorf("shares %v of %d traces: combined without error", c, n)
		}
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var timing = regexp.MustCompile(`"update_predict_ns_per_event": [0-9.e+-]+`)

// summary, period, report, replay and patterns print the same bytes whatever --jobs: the
// traces are read in parallel, the results reduced in the order given.
func TestJobsIdenticalOutput(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"synth", "--procs", "6", "--iterations", "6", "--compute", "1", "--noise-rate", "300", "-o", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("synth: %s", stderr.String())
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"summary", []string{"summary", "--json", dir}},
		{"summary-text", []string{"summary", dir}},
		{"period", []string{"period", "--json", dir}},
		{"report", []string{"report", dir}},
		{"replay", []string{"replay", "--json", dir}},
		{"patterns", []string{"patterns", "--json", dir}},
		{"patterns-text", []string{"patterns", dir}},
	} {
		var want []byte
		for _, jobs := range []string{"1", "2", "4"} {
			args := append([]string{c.args[0], "--jobs", jobs}, c.args[1:]...)
			page := filepath.Join(t.TempDir(), "r.html")
			if c.name == "report" {
				args = append([]string{c.args[0], "--jobs", jobs, "-o", page}, c.args[1:]...)
			}
			var out, errOut bytes.Buffer
			if code := runMain(args, &out, &errOut); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
			}
			got := out.Bytes()
			if c.name == "report" {
				b, err := os.ReadFile(page)
				if err != nil {
					t.Fatal(err)
				}
				// The page names its own command line, which differs.
				got = []byte(strings.ReplaceAll(string(b), strings.Join(args[1:], " "), "ARGS"))
			}
			// replay times its model: the one figure no two runs share.
			got = timing.ReplaceAll(got, []byte(`"update_predict_ns_per_event": T`))
			if len(got) == 0 {
				t.Fatalf("%v: no output", args)
			}
			if want == nil {
				want = got
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: --jobs %s output differs from --jobs 1", c.name, jobs)
			}
		}
	}
}

// --jobs below 1 is refused with a message naming the flag.
func TestJobsFlagBad(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := runMain([]string{"summary", "--jobs", "0", t.TempDir()}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "--jobs 0") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

// shareBounds cuts the traces into contiguous, non-empty shares of about
// equal bytes, as many as asked when there are traces enough.
func TestShareBounds(t *testing.T) {
	dir := t.TempDir()
	var traces []string
	for i, size := range []int{100, 100, 100, 100, 400, 10, 10, 10} {
		p := filepath.Join(dir, string(rune('a'+i)))
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		traces = append(traces, p)
	}
	for _, c := range []struct {
		traces []string
		n      int
		want   []int
	}{
		{traces, 1, []int{0, 8}},
		{traces, 2, []int{0, 4, 8}},    // 400 bytes, then 430
		{traces, 3, []int{0, 3, 4, 8}}, // 300, 100, 430: the 400-byte trace cannot be split
		{traces, 8, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{traces, 20, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{traces[:2], 2, []int{0, 1, 2}},
		{[]string{filepath.Join(dir, "missing"), traces[0], traces[1]}, 2, []int{0, 2, 3}},
	} {
		if got := shareBounds(c.traces, c.n); !slices.Equal(got, c.want) {
			t.Errorf("%d traces in %d shares: %v, want %v", len(c.traces), c.n, got, c.want)
		}
	}
}

// FTIO's sampling over several traces (period --fs HZ, not per process)
// prints the same bytes run after run and whatever --jobs: every trace's
// samples are summed into the signal in the traces' order. The traces'
// sums used to meet in per-goroutine arrays in the order the goroutines
// took them, which moved the last digits from one run to the next.
func TestPeriodSamplingDeterministic(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"synth", "--procs", "16", "--iterations", "20", "--noise-rate", "50", "-o", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("synth: %s", stderr.String())
	}
	for _, flags := range [][]string{{"--fs", "10"}, {"--fs", "25", "--average"}, {"--fs", "5", "--mode", "both"}} {
		var want []byte
		for _, jobs := range []string{"1", "2", "4", "8", "2", "4", "8", "2", "4", "8"} {
			args := append(append([]string{"period", "--json", "--jobs", jobs}, flags...), dir)
			var out, errOut bytes.Buffer
			if code := runMain(args, &out, &errOut); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
			}
			if want == nil {
				want = bytes.Clone(out.Bytes())
				continue
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%v: output differs from --jobs 1:\n%s\n%s", args, out.Bytes(), want)
				break
			}
		}
	}
}

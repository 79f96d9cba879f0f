package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"iopred/analyzer/synth"
	"iopred/tracefmt"
)

// FromTracesWith gives the same summary, warnings and error whatever Jobs,
// for ranked traces (with the models' accuracy), for traces taken as
// processes, and with a corrupt trace among them: the JSON is compared
// byte for byte.
func TestFromTracesJobsIdentical(t *testing.T) {
	dir := t.TempDir()
	set := &synth.TraceSet{Dir: dir}
	_, err := synth.Generate(synth.Config{Iterations: 5, ComputeMean: 1, Phase: synth.Burst(6, 10, 1<<16, 1e8, true),
		NoiseRate: 300, NoiseBytes: 4096, NoiseBandwidth: 1e6, Seed: 5}, set)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	traces, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad"+tracefmt.FileSuffix)
	os.WriteFile(bad, []byte("no trace"), 0o644)
	cases := []struct {
		name   string
		traces []string
		opt    Options
	}{
		{"ranks", traces, Options{}},
		{"ranks-no-accuracy", traces, Options{NoAccuracy: true, AllPaths: true}},
		{"processes", traces, Options{Processes: true}},
		{"corrupt", append(append([]string{}, traces...), bad), Options{}},
	}
	for _, c := range cases {
		var want string
		for _, jobs := range []int{1, 2, 4, 16} {
			c.opt.Jobs = jobs
			sum, warnings, err := FromTracesWith(c.traces, c.opt)
			if sum == nil {
				t.Fatalf("%s: jobs %d: %v", c.name, jobs, err)
			}
			b, jerr := json.Marshal(sum)
			if jerr != nil {
				t.Fatal(jerr)
			}
			got := fmt.Sprintf("%s\n%q\n%v", b, warnings, err)
			if jobs == 1 {
				want = got
				if sum.Ranks != len(traces) {
					t.Fatalf("%s: %d ranks, want %d", c.name, sum.Ranks, len(traces))
				}
				continue
			}
			if !bytes.Equal([]byte(got), []byte(want)) {
				t.Errorf("%s: jobs %d differs from jobs 1:\n%s\nwant\n%s", c.name, jobs, got, want)
			}
		}
	}
}

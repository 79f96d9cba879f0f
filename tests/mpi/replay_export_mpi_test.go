package mpi

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"iopred/tests/testenv"
	"iopred/tracefmt"
)

// nsPerEvent matches replay's measured cost per event, the one figure no
// two runs share, in its JSON and text forms.
var nsPerEvent = regexp.MustCompile(`"update_predict_ns_per_event": [-+0-9.e]+|[0-9]+ ns per event`)

// `mpirun -n R iopred replay --mpi DIR` prints what `iopred replay DIR`
// prints, byte for byte but the measured ns per event, with the same
// standard error and exit status; `mpirun -n R iopred export --mpi
// --format perfetto -o FILE DIR` writes the same document and the same
// figures: under Debian's Open MPI and MPICH at 1, 2 and 4 ranks, on a
// synthetic job (replay from a saved model too, and with the model alone),
// a real MPI program's traces, processes without ranks, and Darshan logs
// beside a truncated trace and a file that is no trace. That last set
// fails alone and under MPI alike: replay's unreadable trace is read by
// the last rank only, whose error reaches rank 0 and names the file;
// export's stops every rank before any output file is written. No run
// may hang (runAnalysis fails one that takes 3 minutes).
func TestReplayExportUnderMPI(t *testing.T) {
	bin := filepath.Join(testenv.RepoRoot(), "build", "iopred")
	library(t)
	sets := analysisSets(t, bin)
	syn, err := tracefmt.Discover(sets["synthetic"])
	if err != nil || len(syn) < 4 {
		t.Fatalf("synthetic traces: %v", err)
	}
	model := filepath.Join(t.TempDir(), "model.bin")
	if out, err := exec.Command(bin, "replay", "--save", model, syn[0]).CombinedOutput(); err != nil {
		t.Fatalf("replay --save: %v\n%s", err, out)
	}
	perfetto := []string{"export", "--format", "perfetto", "-o", "PAGE"}
	analyses := map[string][][]string{
		"synthetic": {{"replay", "--json"}, {"replay"}, {"replay", "--json", "--model", model, "--model-alone"},
			perfetto, {"export", "--format", "perfetto", "--predict=false", "-o", "PAGE"}},
		"ior":               {{"replay", "--json"}, perfetto},
		"processes":         {{"replay", "--json"}, perfetto},
		"darshan+truncated": {{"replay", "--json"}, perfetto},
	}
	noTrace := filepath.Join(sets["darshan+truncated"], "zz"+tracefmt.FileSuffix)
	for _, name := range []string{"synthetic", "ior", "processes", "darshan+truncated"} {
		dir := sets[name]
		for _, a := range analyses[name] {
			args := append(append([]string(nil), a...), dir)
			want := runAnalysis(t, bin, nil, 0, args)
			failing := name == "darshan+truncated"
			if failing != (want.code != 0) {
				t.Fatalf("%s: %v exited %d: %s", name, args, want.code, want.stderr)
			}
			wantOut := nsPerEvent.ReplaceAll(want.stdout, []byte("NS"))
			switch {
			case failing && !bytes.Contains(want.stderr, []byte(noTrace)):
				t.Fatalf("%s: %v: the error does not name %s: %s", name, args, noTrace, want.stderr)
			case failing && want.page != nil:
				t.Fatalf("%s: %v: a failed export left its file", name, args)
			case !failing && a[0] == "replay" && !nsPerEvent.Match(want.stdout):
				t.Fatalf("%s: %v printed no replay:\n%s", name, args, head(want.stdout))
			case !failing && a[0] == "export" && len(want.page) < 1000:
				t.Fatalf("%s: %v wrote %d bytes", name, args, len(want.page))
			}
			for i := range impls {
				m := &impls[i]
				need(t, m.run)
				for _, np := range []int{1, 2, 4} {
					got := runAnalysis(t, bin, m, np, args)
					what := fmt.Sprintf("%s: %s at %d ranks: %s", name, m.name, np, strings.Join(a, " "))
					if got.code != want.code {
						t.Errorf("%s: exit %d, alone %d: %s", what, got.code, want.code, got.stderr)
					}
					if out := nsPerEvent.ReplaceAll(got.stdout, []byte("NS")); !bytes.Equal(out, wantOut) {
						t.Errorf("%s: output differs from one process's:\n%s\nwant\n%s", what, head(out), head(wantOut))
					}
					if !bytes.Equal(got.page, want.page) {
						t.Errorf("%s: the document differs from one process's (%d bytes, want %d)", what, len(got.page), len(want.page))
					}
					switch {
					case failing && !bytes.Contains(got.stderr, []byte(noTrace)):
						t.Errorf("%s: the error does not name %s: %s", what, noTrace, got.stderr)
					case !failing && !bytes.Contains(got.stderr, want.stderr):
						// The export's figures, replay's truncation notes.
						t.Errorf("%s: standard error %q, want %q", what, got.stderr, want.stderr)
					}
				}
			}
		}
	}
}

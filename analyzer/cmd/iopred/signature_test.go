package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSignature runs `iopred signature` on a simulated center (the small
// scenario: one day, 16 OSTs at 5 s, an LMT database and a sacct file):
// --list-apps lists applications most runs first; --app --json prints the
// issue's object (exactly its keys, times from the run's start, bursts
// whose bytes are the rates' integral); --plot writes SVG, PNG and HTML;
// --all writes a file per application and scores the targets against the
// truth; bad requests are clear errors.
func TestSignature(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := runMain(args, &out, &errb)
		return out.String(), errb.String(), code
	}
	if out, errs, code := run("simulate", "center", "--scenario", "small", "--seed", "2", "--out", sim, "-q"); code != 0 {
		t.Fatalf("simulate: %d %s %s", code, out, errs)
	}
	logArgs := []string{"--lmt", filepath.Join(sim, "lmt.sqlite3"), "--jobs", filepath.Join(sim, "sacct.txt"), "--tz", "UTC"}
	sig := func(args ...string) (string, string, int) {
		return run(append(append([]string{"signature"}, logArgs...), args...)...)
	}

	out, errs, code := sig("--list-apps")
	if code != 0 {
		t.Fatalf("--list-apps: %s", errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var counts []int
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		n, err := strconv.Atoi(f[0])
		if err != nil || len(f) != 2 {
			t.Fatalf("--list-apps line %q", l)
		}
		counts = append(counts, n)
	}
	if !slices.IsSortedFunc(counts, func(a, b int) int { return b - a }) || !strings.Contains(out, "eve/lammps/16") {
		t.Errorf("--list-apps not most runs first or without eve/lammps/16:\n%s", out)
	}

	out, errs, code = sig("--app", "eve/lammps/16", "--json")
	if code != 0 {
		t.Fatalf("--json: %s", errs)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"app", "bursts", "read_bytes_per_s", "runs_found", "runs_used", "step_s", "t_s", "write_bytes_per_s"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	var o struct {
		App struct {
			User  string `json:"user"`
			Name  string `json:"name"`
			Nodes int    `json:"nodes"`
		} `json:"app"`
		RunsFound int       `json:"runs_found"`
		RunsUsed  int       `json:"runs_used"`
		StepS     float64   `json:"step_s"`
		TS        []float64 `json:"t_s"`
		Write     []float64 `json:"write_bytes_per_s"`
		Read      []float64 `json:"read_bytes_per_s"`
		Bursts    []struct {
			StartS float64 `json:"start_s"`
			EndS   float64 `json:"end_s"`
			Write  float64 `json:"write_bytes"`
			Read   float64 `json:"read_bytes"`
			Peak   float64 `json:"peak_bytes_per_s"`
		} `json:"bursts"`
	}
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatal(err)
	}
	if o.App.User != "eve" || o.App.Name != "lammps" || o.App.Nodes != 16 || o.RunsFound != 3 || o.RunsUsed < 2 || o.RunsUsed > o.RunsFound {
		t.Errorf("app %+v, runs %d/%d", o.App, o.RunsUsed, o.RunsFound)
	}
	if o.StepS != 2.5 || len(o.TS) != len(o.Write) || len(o.Read) != len(o.Write) || o.TS[0] != 0 || o.TS[1] != o.StepS {
		t.Errorf("grid: step %g, %d times, %d write, %d read", o.StepS, len(o.TS), len(o.Write), len(o.Read))
	}
	// The truth has 21 bursts of about 19.6 GB.
	if len(o.Bursts) < 18 || len(o.Bursts) > 24 {
		t.Errorf("%d bursts, the truth has 21", len(o.Bursts))
	}
	for _, b := range o.Bursts {
		sum, peak := 0.0, 0.0
		for i, ts := range o.TS {
			if ts >= b.StartS-1e-9 && ts < b.EndS-1e-9 {
				sum += (o.Write[i] + o.Read[i]) * o.StepS
				peak = max(peak, o.Write[i]+o.Read[i])
			}
		}
		if d := sum - (b.Write + b.Read); d > 1e-6*sum || -d > 1e-6*sum || peak != b.Peak {
			t.Fatalf("burst %+v: rates sum to %g bytes with peak %g", b, sum, peak)
		}
		if b.Write+b.Read < 10e9 || b.Write+b.Read > 30e9 {
			t.Errorf("burst %+v: %.1f GB, the truth's are 19.6 GB", b, (b.Write+b.Read)/1e9)
		}
	}

	out, errs, code = sig("--app", "eve/lammps/16")
	if code != 0 || !strings.Contains(out, "START s") || !strings.Contains(out, "█") {
		t.Errorf("table and chart: exit %d %s\n%s", code, errs, out)
	}
	if _, errs, code = sig("--app", "eve/lammps/16", "--method", "dtw", "--json"); code != 0 {
		t.Errorf("--method dtw: %s", errs)
	}
	for _, ext := range []string{".svg", ".png", ".html"} {
		p := filepath.Join(dir, "sig"+ext)
		if _, errs, code := sig("--app", "eve/lammps/16", "--plot", p); code != 0 {
			t.Fatalf("--plot %s: %s", ext, errs)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if ext == ".png" && !bytes.HasPrefix(b, []byte("\x89PNG")) || ext != ".png" && !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("%s: not the format", p)
		}
	}

	all := filepath.Join(dir, "all")
	out, errs, code = sig("--all", all, "--truth", filepath.Join(sim, "truth.json"), "--min-runs", "3")
	if code != 0 {
		t.Fatalf("--all: %s", errs)
	}
	if !strings.Contains(out, "eve/lammps/16") || !strings.Contains(out, "median over 2 targets") {
		t.Errorf("--all output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(all, "eve_lammps_16.json")); err != nil {
		t.Error(err)
	}

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--app", "nobody/x/1"}, "no completed run of nobody/x/1"},
		{[]string{"--app", "eve/lammps"}, "USER/NAME/NODES"},
		{[]string{"--app", "eve/lammps/16", "--method", "fft"}, "--method"},
		{[]string{"--app", "eve/lammps/16", "--truth", "x.json"}, "--truth goes with --all"},
		{[]string{"--app", "eve/lammps/16", "--plot", filepath.Join(dir, "x.gif")}, "unknown format"},
	} {
		_, errs, code := sig(bad.args...)
		if code == 0 || !strings.Contains(errs, bad.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", bad.args, code, errs, bad.want)
		}
	}
	if _, _, code := run("signature", "--jobs", filepath.Join(sim, "sacct.txt")); code != 2 {
		t.Errorf("no mode: exit %d, want 2 (usage)", code)
	}
}

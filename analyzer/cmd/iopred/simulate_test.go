package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/analyzer/centersim"
)

// `iopred simulate center` writes the LMT database, the sacct file, the
// truth and the per-job CSV; the scenario it prints with --print-config,
// given back with --config, produces the same files byte for byte (the
// same seed, the same center); a --trace-app application is listed in
// the truth with the bursts of its traces.
func TestSimulateCenter(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := runMain(append([]string{"simulate", "center"}, args...), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	a := filepath.Join(dir, "a")
	out := run("--scenario", "small", "--days", "0.3", "--seed", "3", "--trace-app", "me/fio_ckpt/8=builtin:fio", "--out", a)
	if !strings.Contains(out, "ana/ckpt/64") || !strings.Contains(out, "me/fio_ckpt/8") {
		t.Errorf("summary lacks the applications:\n%s", out)
	}
	for _, f := range []string{"lmt.sqlite3", "sacct.txt", "truth.json", "jobs.csv"} {
		if fi, err := os.Stat(filepath.Join(a, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	cfg := filepath.Join(dir, "scenario.json")
	os.WriteFile(cfg, []byte(run("--scenario", "small", "--days", "0.3", "--trace-app", "me/fio_ckpt/8=builtin:fio", "--print-config")), 0o644)
	b := filepath.Join(dir, "b")
	run("--config", cfg, "--seed", "3", "--out", b, "-q")
	for _, f := range []string{"sacct.txt", "truth.json", "jobs.csv"} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between --scenario and --config", f)
		}
	}
	tf, err := os.Open(filepath.Join(a, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	truth, err := centersim.ReadTruth(tf)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, app := range truth.Apps {
		if app.App.Name == "fio_ckpt" {
			found = app.Signature != nil && len(app.Signature.Bursts) >= 12
		}
	}
	if !found {
		t.Error("the --trace-app application has no signature of 12 or more bursts")
	}
}

// Bad options are errors that name them.
func TestSimulateCenterErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"center", "--scenario", "nope", "--out", t.TempDir()}, "nope"},
		{[]string{"center", "--tz", "Mars/Olympus", "--out", t.TempDir()}, "--tz"},
		{[]string{"center", "--start", "yesterday", "--out", t.TempDir()}, "--start"},
		{[]string{"center", "--trace-app", "x=builtin:ior", "--out", t.TempDir()}, "USER/NAME/NODES"},
		{[]string{"orbit"}, "orbit"},
	} {
		var out, errb bytes.Buffer
		if code := runMain(append([]string{"simulate"}, c.args...), &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error naming %q", c.args, code, errb.String(), c.want)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tests/interop"
)

// The aid commands end to end on a simulated day: learn from the LMT
// database and the sacct file (and again: unchanged), report as text,
// JSON (the fields) and HTML, advise for a learnt application
// and for an unknown one, check against the truth, train on
// measurements.
func TestAIDCommands(t *testing.T) {
	dir := t.TempDir()
	run := func(want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := runMain(args, &out, &errb); code != want {
			t.Fatalf("%v: exit %d, want %d: %s%s", args, code, want, out.String(), errb.String())
		}
		return out.String()
	}
	sim := filepath.Join(dir, "sim")
	run(0, "simulate", "center", "--scenario", "small", "--seed", "2", "--trace-app", "me/fio_ckpt/8=builtin:fio", "--trace-runs", "7",
		"--store", filepath.Join(sim, "store"), "--out", sim, "-q")
	kb := filepath.Join(dir, "kb")
	learnArgs := []string{"aid", "learn", "--lmt", filepath.Join(sim, "lmt.sqlite3"), "--jobs", filepath.Join(sim, "sacct.txt"), "--tz", "UTC", "--kb", kb}
	// The first half day, then the rest: an increment without --tz.
	run(0, "aid", "learn", "--lmt", filepath.Join(sim, "lmt.sqlite3"), "--jobs", filepath.Join(sim, "sacct.txt"), "--kb", kb,
		"--to", "2024-01-01T12:00:00Z", "-q")
	out := run(0, learnArgs...)
	if !strings.Contains(out, "generation 2") || !strings.Contains(out, "I/O-intensive") {
		t.Errorf("learn said:\n%s", out)
	}
	if out := run(0, learnArgs...); !strings.Contains(out, "unchanged") {
		t.Errorf("the same learn again said:\n%s", out)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(run(0, "aid", "report", "--kb", kb, "--json", "--html", filepath.Join(dir, "r.html"))), &rows); err != nil {
		t.Fatal(err)
	}
	var found map[string]any
	for _, r := range rows {
		for _, f := range []string{"user", "name", "nodes", "runs", "class", "bursts_per_run", "burst_bytes", "interval_s", "burst_s",
			"throughput_bytes_per_s", "ost_footprint"} {
			if _, ok := r[f]; !ok {
				t.Fatalf("report row without %s: %v", f, r)
			}
		}
		if r["name"] == "fio_ckpt" {
			found = r
		}
	}
	if found == nil || found["class"] != "io-intensive" || found["ost_footprint"].(float64) < 1 {
		t.Fatalf("me/fio_ckpt/8 is %v", found)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "r.html")); !bytes.Contains(b, []byte("fio_ckpt")) {
		t.Error("the HTML report lacks the application")
	}
	if out := run(0, "aid", "report", "--kb", kb); !strings.Contains(out, "me/fio_ckpt/8") {
		t.Errorf("text report:\n%s", out)
	}
	var adv map[string]any
	json.Unmarshal([]byte(run(0, "aid", "advise", "--kb", kb, "--store", filepath.Join(sim, "store"), "--app", "me/fio_ckpt/8",
		"--at", "2024-01-01 12:00:00", "--tz", "UTC", "--json")), &adv)
	if (adv["advice"] != "run" && adv["advice"] != "delay") || adv["ost_footprint"].(float64) < 1 || len(adv["osts"].([]any)) < 1 {
		t.Errorf("advice: %v", adv)
	}
	for _, f := range []string{"score", "threshold", "reason"} {
		if _, ok := adv[f]; !ok {
			t.Errorf("advice without %s: %v", f, adv)
		}
	}
	// The placement hint: κ distinct OST indices, and the lfs line.
	seen := map[float64]bool{}
	for _, o := range adv["osts"].([]any) {
		x, ok := o.(float64)
		if !ok || x < 0 || x != float64(int(x)) || seen[x] {
			t.Errorf("osts: %v is not a list of distinct OST indices", adv["osts"])
			break
		}
		seen[x] = true
	}
	if k := adv["ost_footprint"].(float64); float64(len(seen)) != k || len(adv["ost_names"].([]any)) != int(k) ||
		!strings.HasPrefix(adv["lfs_setstripe"].(string), fmt.Sprintf("lfs setstripe -c %d -o ", int(k))) {
		t.Errorf("placement hint for %g OSTs: %v, %v, %v", k, adv["osts"], adv["ost_names"], adv["lfs_setstripe"])
	}
	if out := run(0, "aid", "advise", "--kb", kb, "--store", filepath.Join(sim, "store"), "--app", "me/fio_ckpt/8",
		"--at", "2024-01-01 12:00:00", "--tz", "UTC"); !strings.Contains(out, "place its files on OSTs ") || !strings.Contains(out, adv["lfs_setstripe"].(string)) {
		t.Errorf("text advice without the placement hint:\n%s", out)
	}
	// An earlier run's Darshan log names the OSTs its files lie on
	// (pytokio's sample: OSTs 0 to 23, of which the simulated center has
	// 0 to 15): those are scored, no placement is hinted; a log without
	// LUSTRE records is refused with why.
	var own map[string]any
	json.Unmarshal([]byte(run(0, "aid", "advise", "--kb", kb, "--store", filepath.Join(sim, "store"), "--app", "me/fio_ckpt/8",
		"--at", "2024-01-01 12:00:00", "--tz", "UTC", "--json", "--darshan", interop.Path(t, "darshan/pytokio/sample.darshan"))), &own)
	if own["ost_footprint"] != 16.0 || len(own["osts"].([]any)) != 16 || own["lfs_setstripe"] != nil || !strings.Contains(own["reason"].(string), "the job's 16 OSTs in the log (8 of its 24 are not)") {
		t.Errorf("advice on the OSTs of a Darshan log: %v", own)
	}
	var o, e bytes.Buffer
	if code := runMain([]string{"aid", "advise", "--kb", kb, "--store", filepath.Join(sim, "store"), "--app", "me/fio_ckpt/8",
		"--at", "2024-01-01 12:00:00", "--tz", "UTC", "--darshan", interop.Path(t, "darshan/darshan-logs/mpi-io-test-x86_64-3.2.1.darshan")}, &o, &e); code != 1 ||
		!strings.Contains(e.String(), "mpi-io-test-x86_64-3.2.1.darshan: no LUSTRE records") {
		t.Errorf("a Darshan log without LUSTRE records: exit %d: %s%s", code, o.String(), e.String())
	}
	var unk map[string]any
	json.Unmarshal([]byte(run(0, "aid", "advise", "--kb", kb, "--store", filepath.Join(sim, "store"), "--app", "zed/unknown/4",
		"--at", "2024-01-01T12:00:00Z", "--json")), &unk)
	if unk["advice"] != "run" || !strings.Contains(unk["reason"].(string), "nothing is known") || len(unk["osts"].([]any)) != 0 || unk["lfs_setstripe"] != nil {
		t.Errorf("unknown application (no hint): %v", unk)
	}
	if out := run(0, "aid", "check", "--kb", kb, "--truth", filepath.Join(sim, "truth.json")); !strings.Contains(out, "false positives: none") {
		t.Errorf("check:\n%s", out)
	}
	m := filepath.Join(dir, "m.csv")
	os.WriteFile(m, []byte("io_time_s,f0,f1\n90,1,0\n180,0,1\n135,0.5,0.5\n"), 0o644)
	var w struct{ W []float64 }
	json.Unmarshal([]byte(run(0, "aid", "train", m)), &w)
	if len(w.W) != 2 || w.W[0] < 0.99 || w.W[0] > 1.01 || w.W[1] < 1.99 || w.W[1] > 2.01 {
		t.Errorf("weights %v, want [1 2]", w.W)
	}
	run(2, "aid", "advise", "--kb", kb)
	run(1, "aid", "advise", "--kb", kb, "--app", "x", "--at", "2024-01-01")
}

// Every command that reads a knowledge base says so when --kb names a
// directory that holds none (a mistyped path), instead of advising from
// an empty one.
func TestAIDCommandsWithoutKnowledge(t *testing.T) {
	empty := t.TempDir()
	for _, args := range [][]string{
		{"aid", "report", "--kb", empty},
		{"aid", "advise", "--kb", empty, "--store", t.TempDir(), "--app", "u/app/8", "--at", "2024-01-01T00:00:00Z"},
		{"aid", "check", "--kb", empty, "--truth", filepath.Join(empty, "truth.json")},
		{"aid", "replay", "--kb", empty},
	} {
		code, _, errOut := run(args...)
		if code == 0 || !strings.Contains(errOut, "no knowledge base here") {
			t.Errorf("%v: exit %d, stderr %q; want an error naming the missing knowledge base", args, code, errOut)
		}
	}
}

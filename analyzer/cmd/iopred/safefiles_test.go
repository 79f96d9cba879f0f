package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iopred/tracefmt"
	"iopred/tracefmt/anonymize"
)

// Every file a command writes is written beside a link planted at its
// name, never through it: the link's target keeps its content, and the
// name ends as the command's own regular file (or, for a lock or a file
// the command reads before it writes, the command refuses).
func TestOutputsIgnorePlantedLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	const content = "the victim's own content\n"
	os.WriteFile(victim, []byte(content), 0o644)
	ior := filepath.Join("..", "..", "centersim", "traces", "ior")
	lmp := filepath.Join("..", "..", "centersim", "traces", "lammps", "lmp.vm.5773.iopred.zst")
	out := func(p ...string) string { return filepath.Join(append([]string{dir}, p...)...) }
	key := out("key")
	k, err := anonymize.LoadKey(key)
	if err != nil {
		t.Fatal(err)
	}
	a := anonymize.New(k)
	anonName := a.TraceName("lmp.vm.5773.iopred.zst", tracefmt.Header{Program: "/x/lmp", Host: "vm"})
	sim := out("sim")
	for _, c := range []struct {
		name    string
		args    []string
		planted []string
		refused bool
	}{
		{"report", []string{"report", ior, "-o", out("r.html")}, []string{out("r.html")}, false},
		{"perfetto", []string{"export", "--format", "perfetto", ior, "-o", out("t.json")}, []string{out("t.json")}, false},
		{"parquet", []string{"export", "--format", "parquet", ior, "-o", out("e.parquet")}, []string{out("e.parquet")}, false},
		{"replay model", []string{"replay", "--save", out("model"), lmp}, []string{out("model")}, false},
		{"synth ftio", []string{"synth", "--iterations", "3", "--compute", "0.1", "--format", "ftio", "-o", out("f.jsonl")}, []string{out("f.jsonl")}, false},
		{"synth traces", []string{"synth", "--iterations", "3", "--procs", "2", "-o", out("syn")}, []string{out("syn", "synth.synth.10000.r0"+tracefmt.FileSuffix)}, false},
		{"anonymize", []string{"anonymize", filepath.Dir(lmp), "-o", out("anon"), "--key", key}, []string{out("anon", anonName)}, false},
		{"simulate", []string{"simulate", "center", "--scenario", "small", "--days", "0.3", "--seed", "3", "--out", sim},
			[]string{filepath.Join(sim, "lmt.sqlite3"), filepath.Join(sim, "sacct.txt"), filepath.Join(sim, "truth.json"), filepath.Join(sim, "jobs.csv")}, false},
		{"store", []string{"serverlog", "import", filepath.Join(sim, "lmt.sqlite3"), "--into", out("store"), "--tz", "UTC"},
			[]string{out("store", "index.json")}, true}, // read first: not a store index
		{"store lock", []string{"serverlog", "import", filepath.Join(sim, "lmt.sqlite3"), "--into", out("store2"), "--tz", "UTC"},
			[]string{out("store2", ".lock")}, true},
		{"rates", []string{"serverlog", "rates", filepath.Join(sim, "lmt.sqlite3"), "--tz", "UTC", "--format", "csv", "-o", out("rates.csv")},
			[]string{out("rates.csv")}, false},
		{"rates plot", []string{"serverlog", "rates", filepath.Join(sim, "lmt.sqlite3"), "--tz", "UTC", "--format", "csv", "-o", out("rates2.csv"), "--plot", out("rates.html")},
			[]string{out("rates.html")}, false},
		{"knowledge base", []string{"aid", "learn", "--lmt", filepath.Join(sim, "lmt.sqlite3"), "--jobs", filepath.Join(sim, "sacct.txt"), "--tz", "UTC", "--kb", out("kb"), "-q"},
			[]string{out("kb", "state.1.json"), out("kb", "apps.1.json")}, false},
		{"knowledge base manifest", []string{"aid", "learn", "--lmt", filepath.Join(sim, "lmt.sqlite3"), "--jobs", filepath.Join(sim, "sacct.txt"), "--tz", "UTC", "--kb", out("kb3"), "-q"},
			[]string{out("kb3", "kb.json")}, true}, // read first: not a knowledge base
		{"knowledge base lock", []string{"aid", "learn", "--lmt", filepath.Join(sim, "lmt.sqlite3"), "--jobs", filepath.Join(sim, "sacct.txt"), "--tz", "UTC", "--kb", out("kb2"), "-q"},
			[]string{out("kb2", "lock")}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range c.planted {
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.Symlink(victim, p); err != nil {
					t.Fatal(err)
				}
			}
			code, _, stderr := run(c.args...)
			if b, _ := os.ReadFile(victim); string(b) != content {
				t.Fatalf("the planted link's target was written (%d bytes)", len(b))
			}
			if c.refused {
				if code == 0 {
					t.Errorf("exit 0 with a link at the lock")
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, p := range c.planted {
				if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
					t.Errorf("%s: %v %v, want the command's regular file", p, st.Mode(), err)
				}
			}
			ents, _ := os.ReadDir(filepath.Dir(c.planted[0]))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".tmp.") {
					t.Errorf("temporary file left: %s", e.Name())
				}
			}
		})
	}
}

// A password given in a mysql:// address shows in no message of the
// commands that read LMT databases, even when the connection fails.
func TestNoPasswordInMessages(t *testing.T) {
	const pw = "hunter2pw"
	dsn := "mysql://lmt:" + pw + "@127.0.0.1:1/lmt"
	dir := t.TempDir()
	t.Setenv("HOME", dir) // no ~/.my.cnf of this machine's
	for _, args := range [][]string{
		{"serverlog", "import", dsn, "--into", filepath.Join(dir, "store")},
		{"serverlog", "info", dsn},
		{"aid", "learn", "--lmt", dsn, "--jobs", filepath.Join(dir, "none.txt"), "--kb", filepath.Join(dir, "kb")},
		{"aid", "learn", "--lmt", dsn, "--store", filepath.Join(dir, "store"), "--kb", filepath.Join(dir, "kb")},
	} {
		code, stdout, stderr := run(args...)
		if code == 0 {
			t.Errorf("%v: exit 0 without a server", args)
		}
		if strings.Contains(stdout+stderr, pw) {
			t.Errorf("%v shows the password:\n%s%s", args[:2], stdout, stderr)
		}
	}
}

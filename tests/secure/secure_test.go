// Package secure tests that the files libiopred.so writes let no one in:
// a link planted at any name the library writes is never followed (its
// target stays as it was), and traces, spills and models are private by
// default (0600 in a 0700 directory), group-readable only on request.
package secure

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"iopred/tests/testenv"
	"iopred/tracefmt"
	"iopred/tracefmt/anonymize"
	_ "iopred/tracefmt/spill" // a spill left over reads as a trace
)

const victimText = "the victim's own content\n"

func newVictim(t *testing.T) string {
	t.Helper()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte(victimText), 0o644); err != nil {
		t.Fatal(err)
	}
	return victim
}

func checkVictim(t *testing.T, victim string) {
	t.Helper()
	b, err := os.ReadFile(victim)
	if err != nil || string(b) != victimText {
		t.Fatalf("the planted link's target was written: %q (%v)", b, err)
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		t.Fatalf("%s is not a regular file or directory: %v", path, st.Mode())
	}
	return st.Mode().Perm()
}

// The repro: a link at "<IOPRED_MODEL>.<pid>.tmp", the name the
// model used to be saved through, and one at the model's own name.
func TestModelPlantedLinks(t *testing.T) {
	lib := testenv.Library(t)
	for name, at := range map[string]string{"pid-temp": "model.$$.tmp", "final": "model"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			victim := newVictim(t)
			in := filepath.Join(dir, "in")
			os.WriteFile(in, []byte("input\n"), 0o644)
			// The copy is Python's, not cp's: cp closes its standard error
			// at exit, before the library's last words (the model is loaded
			// at the first event the model sees, often at exit), so none
			// of the checks of what it says below could fail with cp.
			copyIn := fmt.Sprintf("python3 -c 'import shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2])' %s", in)
			script := fmt.Sprintf("ln -s %s %s/%s; exec env IOPRED_MODEL=%s/model IOPRED_DIR=%s/traces LD_PRELOAD=%s %s %s/out",
				victim, dir, at, dir, dir, lib, copyIn, dir)
			r := testenv.Run(t, nil, dir, "sh", "-c", script)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			checkVictim(t, victim)
			if m := mode(t, filepath.Join(dir, "model")); m != 0o600 {
				t.Errorf("model mode %03o, want 600", m)
			}
			if strings.Contains(r.Stderr, "iopred: IOPRED_MODEL: ") {
				t.Errorf("model not saved: %s", r.Stderr)
			}
			// A link at the model's own name is not read either: the
			// victim's text would have been taken for a broken model.
			refused := strings.Contains(r.Stderr, "is a symbolic link, not followed")
			if strings.Contains(r.Stderr, "msgpack") || refused != (name == "final") {
				t.Errorf("the link at the model's name was followed on load, or a warning is wrong: %q", r.Stderr)
			}
			// The model saved in its place loads cleanly on the next run.
			again := fmt.Sprintf("exec env IOPRED_MODEL=%s/model IOPRED_DIR=%s/traces LD_PRELOAD=%s %s %s/out2", dir, dir, lib, copyIn, dir)
			if r := testenv.Run(t, nil, dir, "sh", "-c", again); r.Code != 0 || strings.Contains(r.Stderr, "iopred:") {
				t.Errorf("second run with the saved model: exit %d: %s", r.Code, r.Stderr)
			}
		})
	}
}

// Links planted at the trace's and a forked child's spill's names are
// refused (the library takes the next name), and the modes follow
// IOPRED_GROUP_READABLE, whatever the umask.
func TestTraceAndSpillModes(t *testing.T) {
	testenv.Library(t)
	prog := testenv.CompileC(t, "plant.c")
	for _, c := range []struct {
		umask, group        string
		file, dir, spillOut os.FileMode
	}{
		{"022", "", 0o600, 0o700, 0o600},
		{"002", "", 0o600, 0o700, 0o600},
		{"022", "1", 0o640, 0o750, 0o640},
		{"002", "1", 0o640, 0o750, 0o640},
	} {
		t.Run("umask"+c.umask+"group"+c.group, func(t *testing.T) {
			work := t.TempDir()
			traces := filepath.Join(work, "traces", "new") // the library creates it
			if err := os.MkdirAll(filepath.Dir(traces), 0o755); err != nil {
				t.Fatal(err)
			}
			// The program plants its links in the trace directory before
			// its first call, so the directory must exist: make it as the
			// library would, then check the library's own mkdir on a
			// second, fresh directory below.
			os.Mkdir(traces, 0o700)
			victim := newVictim(t)
			env := []string{"IOPRED_MODEL=" + filepath.Join(work, "models", "m")}
			if c.group != "" {
				env = append(env, "IOPRED_GROUP_READABLE="+c.group)
			}
			r := testenv.Traced(t, traces, env, work, "sh", "-c", "umask "+c.umask+"; exec "+prog+" "+victim+" "+filepath.Join(work, "out"))
			if r.Code != 0 {
				t.Fatalf("exit %d: %s%s", r.Code, r.Stdout, r.Stderr)
			}
			checkVictim(t, victim)
			if !strings.Contains(r.Stdout, fmt.Sprintf("spill %o\n", c.spillOut)) {
				t.Errorf("child's spill: %q, want mode %03o", r.Stdout, c.spillOut)
			}
			ents, _ := os.ReadDir(traces)
			var traceFiles int
			for _, e := range ents {
				p := filepath.Join(traces, e.Name())
				if e.Type()&os.ModeSymlink != 0 {
					if target, _ := os.Readlink(p); target != victim {
						t.Errorf("%s: planted link changed to %s", e.Name(), target)
					}
					continue
				}
				traceFiles++
				if m := mode(t, p); m != c.file {
					t.Errorf("%s: mode %03o, want %03o", e.Name(), m, c.file)
				}
			}
			if traceFiles < 2 {
				t.Errorf("%d traces beside the planted links, want the parent's and the child's: %v", traceFiles, ents)
			}
			for _, p := range []string{filepath.Join(work, "models"), filepath.Join(work, "models", "m")} {
				want := c.file
				if p == filepath.Join(work, "models") {
					want = c.dir
				}
				if m := mode(t, p); m != want {
					t.Errorf("%s: mode %03o, want %03o", p, m, want)
				}
			}
			// The library's own trace directory.
			fresh := filepath.Join(work, "fresh", "traces")
			r = testenv.Traced(t, fresh, env, work, "sh", "-c", "umask "+c.umask+"; exec cp "+victim+" "+filepath.Join(work, "out2"))
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			for _, p := range []string{filepath.Join(work, "fresh"), fresh} {
				if m := mode(t, p); m != c.dir {
					t.Errorf("%s: mode %03o, want %03o", p, m, c.dir)
				}
			}
		})
	}
}

// With IOPRED_ANONYMIZE=1 no name reaches the trace directory: not the
// paths, arguments, host or program in the traces (a forked child's
// converted spill included), nor the traces' own names; the paths hash as
// `iopred anonymize` hashes them under the same key, and the key file is
// created 0600.
func TestAnonymizeMode(t *testing.T) {
	testenv.Library(t)
	work := t.TempDir()
	secretDir := filepath.Join(work, "alice-secret")
	os.Mkdir(secretDir, 0o700)
	in := filepath.Join(secretDir, "input.dat")
	os.WriteFile(in, []byte("data\n"), 0o600)
	traces := filepath.Join(work, "traces")
	key := filepath.Join(work, "keys", "k")
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	script := "(echo child > " + secretDir + "/from-child.txt); cp " + in + " " + secretDir + "/copy.dat; : --token=hunter2"
	r := testenv.Traced(t, traces, []string{"IOPRED_ANONYMIZE=1", anonymize.KeyEnv + "=" + key}, work, "sh", "-c", script)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if m := mode(t, key); m != 0o600 {
		t.Errorf("key mode %03o", m)
	}
	k, err := anonymize.LoadKey(key)
	if err != nil {
		t.Fatal(err)
	}
	a := anonymize.New(k)
	names, err := tracefmt.Discover(traces)
	if err != nil || len(names) < 3 { // sh, its subshell, cp
		t.Fatalf("traces %v (%v)", names, err)
	}
	var paths []string
	for _, name := range names {
		base := filepath.Base(name)
		if strings.Contains(base, "sh.") || strings.HasPrefix(base, "cp.") || strings.Contains(base, "."+host+".") {
			t.Errorf("trace name %s shows the program or host", base)
		}
		s, err := tracefmt.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if h := s.Header(); h.Host == host || strings.HasSuffix(h.Program, "sh") || strings.HasSuffix(h.Program, "cp") {
			t.Errorf("%s: header names host %s, program %s", base, h.Host, h.Program)
		}
		b, _ := json.Marshal(s.Header())
		text := string(b)
		s.Each(func(rec tracefmt.Record) error {
			b, _ := json.Marshal(rec)
			text += string(b)
			if rec.File != nil {
				paths = append(paths, rec.File.Path)
			}
			return nil
		})
		s.Close()
		// Function names stay (__libc_start_main, cp's copy_reg): they name
		// code; the modules' paths go.
		for _, secret := range []string{"alice-secret", "hunter2", "input.dat", "copy.dat", "from-child", "." + host + ".", "/bin/", "libc.so"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %q", base, secret)
			}
		}
	}
	for _, want := range []string{in, secretDir + "/copy.dat", secretDir + "/from-child.txt"} {
		if !slices.Contains(paths, a.Path(want)) {
			t.Errorf("no file %s (hashed %s) among %v", want, a.Path(want), paths)
		}
	}
}

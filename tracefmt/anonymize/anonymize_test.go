package anonymize

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"iopred/analyzer/pathfilter"
	"iopred/tracefmt"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// Paths keep their structure and what the analyses look at, and lose
// their names.
func TestPath(t *testing.T) {
	a := New(testKey)
	h := a.Token
	for _, c := range []struct{ in, want string }{
		{"/home/alice/run/out.h5", "/" + h("home") + "/" + h("alice") + "/" + h("run") + "/" + h("out") + ".h5"},
		{"rel/./../x", h("rel") + "/./../" + h("x")},
		{"/home/alice/.bashrc", "/" + h("home") + "/" + h("alice") + "/." + h("bashrc")},
		{"/usr/lib/libc.so.6", "/usr/" + h("lib") + "/" + h("libc.so") + ".6"},
		{"/tmp/ompi.node7.1000/jf.0/vader_segment.node7.3", "/" + h("tmp") + "/ompi." + h("node7.1000") + "/" + h("jf") + ".0/vader_segment." + h("node7.3")},
		{"/tmp/.shfp.1", "/" + h("tmp") + "/.shfp." + h("1")},
		{"/scratch/ckpt.locktest.3", "/" + h("scratch") + "/" + h("ckpt") + ".locktest." + h("3")},
		{"/data/run.dat.extension9", "/" + h("data") + "/" + h("run.dat.extension9")},
		{"", ""},
		{"/", "/"},
	} {
		if got := a.Path(c.in); got != c.want {
			t.Errorf("%s: %s, want %s", c.in, got, c.want)
		}
	}
	// Same name, same hash; another key, another hash.
	if a.Path("/p/q") != New(testKey).Path("/p/q") || a.Path("/p/q") == New([]byte("another key, 16+")).Path("/p/q") {
		t.Error("hashes do not follow the key")
	}
}

// pathfilter leaves out the same paths before and after: the analyses'
// exclusions (and so their figures) do not change.
func TestFilterDecisionsKept(t *testing.T) {
	a := New(testKey)
	f := pathfilter.Default()
	for _, p := range []string{
		"/etc/passwd", "/usr/lib/x86_64-linux-gnu/libmpi.so.40", "/proc/self/maps", "/dev/shm/x", "/lib64/ld.so",
		"/tmp/ompi.vm.0/jf.1/0/vader_segment.vm.1.2", "/tmp/prte.vm.0/x", "/dev/shm/sm_segment.vm.1", "/home/u/.openmpi/mca-params.conf",
		"/scratch/out.locktest.0", "/scratch/out.lockedfile", "/scratch/.out.shfp.123", "/dev/shm/mpich_shar_tmpAbC",
		"/dev/shm/ucx_shm_posix_1a2b", "/tmp/pmix-123/x", "/tmp/openmpi-sessions-1000@vm_0/x",
		"/scratch/alice/data.h5", "data/run.0001", "/home/alice/ompi/notruntime", "/var/tmp/x", "/run/user/1000/x",
	} {
		r1, ok1 := f.Match(p)
		r2, ok2 := f.Match(a.Path(p))
		if ok1 != ok2 || r1.Kind != r2.Kind {
			t.Errorf("%s (%s): excluded %v %v before, %v %v after", p, a.Path(p), ok1, r1.Kind, ok2, r2.Kind)
		}
	}
}

// The header's names go, its numbers stay; an argument that is a path
// hashes as the file table's path does.
func TestHeader(t *testing.T) {
	a := New(testKey)
	rank := 3
	h := a.Header(tracefmt.Header{Program: "/home/alice/bin/app", Args: []string{"/home/alice/bin/app", "--password=hunter2", "/home/alice/in.dat"},
		Host: "node17.cluster", PID: 42, Rank: &rank})
	all := h.Program + h.Host + strings.Join(h.Args, " ")
	for _, secret := range []string{"alice", "hunter2", "node17", "app"} {
		if strings.Contains(all, secret) {
			t.Errorf("header shows %q: %+v", secret, h)
		}
	}
	if h.PID != 42 || *h.Rank != 3 || h.Args[2] != a.Path("/home/alice/in.dat") || h.Args[0] != h.Program {
		t.Errorf("header %+v", h)
	}
	if got := a.TraceName("app.node17.cluster.42.r3.iopred.zst", tracefmt.Header{Program: "/x/app", Host: "node17.cluster"}); got != a.Token("app")+"."+a.Token("node17.cluster")+".42.r3.iopred.zst" {
		t.Errorf("trace name %s", got)
	}
}

// The key file is created 0600 in a 0700 directory, once, whoever races
// to create it; a link planted at its name is refused.
func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conf", "key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadKey(path)
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if string(k) != string(keys[0]) || len(k) != KeyBytes {
			t.Fatalf("processes got different keys")
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", st.Mode())
	}
	if st, _ := os.Stat(filepath.Dir(path)); st.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode %v", st.Mode())
	}
	link := filepath.Join(dir, "link")
	os.Symlink(path, link)
	if _, err := LoadKey(link); err == nil {
		t.Error("a key read through a link")
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abcd\n"), 0o600)
	if _, err := LoadKey(short); err == nil {
		t.Error("a 2-byte key accepted")
	}
}

// FuzzPath: any path keeps its separators and the analyses' decision to
// leave it out, and hashes the same twice.
func FuzzPath(f *testing.F) {
	for _, p := range []string{"/home/a/b.h5", "/tmp/.shfp.1", "/x/.out.shfp.2", "rel/ompi.x/y", "/etc", "a//b/./..", "/dev/shm/ucx_shm_posix_1", ".pmixfoo/x"} {
		f.Add(p)
	}
	a := New(testKey)
	filter := pathfilter.Default()
	f.Fuzz(func(t *testing.T, p string) {
		got := a.Path(p)
		if strings.Count(got, "/") != strings.Count(p, "/") || got != a.Path(p) {
			t.Fatalf("%q -> %q", p, got)
		}
		r1, ok1 := filter.Match(p)
		r2, ok2 := filter.Match(got)
		if ok1 != ok2 || r1.Kind != r2.Kind {
			t.Fatalf("%q (%q): excluded %v %v before, %v %v after", p, got, ok1, r1.Pattern, ok2, r2.Pattern)
		}
	})
}

// TestRegion proves that a region's name and argument values are hashed
// (a function's name or a step's file can say what the application is),
// the same way each time, while its category, argument keys, thread and
// times stay.
func TestRegion(t *testing.T) {
	a := New([]byte("k"))
	g := tracefmt.Region{Name: "load_checkpoint", Category: "PyTorch", StartNs: 5, EndNs: 9, Tid: 3,
		Args: map[string]string{"file": "/home/alice/ckpt.pt", "step": "4"}}
	got := a.Region(g)
	if got.Name == g.Name || got.Name != a.Token("load_checkpoint") || got.Category != "PyTorch" ||
		got.StartNs != 5 || got.EndNs != 9 || got.Tid != 3 || len(got.Args) != 2 ||
		got.Args["file"] != a.Token("/home/alice/ckpt.pt") || got.Args["step"] != a.Token("4") {
		t.Errorf("anonymized %+v", got)
	}
	if g.Args["file"] != "/home/alice/ckpt.pt" {
		t.Errorf("the region given was changed: %+v", g)
	}
}

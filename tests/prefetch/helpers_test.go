// Package prefetch tests the library's prefetching (IOPRED_PREFETCH=1) on
// real programs reading files on disk from a cold page cache: that the
// programs compute and return exactly what they do without it, that the
// detector follows strided, nested and repeated reads and leaves random
// ones alone, and that the trace's counters add up. Timings are in the
// benchmark (bench_test.go), never in the tests.
package prefetch

import (
	"crypto/rand"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"iopred/tests/testenv"
	"iopred/tracefmt"
)

// tmpfsMagic is statfs's f_type of tmpfs, whose pages never leave memory:
// a cold cache cannot be made there.
const tmpfsMagic = 0x01021994

// diskDir is a new directory on a disk file system: IOPRED_PREFETCH_TESTDIR,
// else /var/tmp, else the test's temporary directory.
func diskDir(t testing.TB) string {
	t.Helper()
	bases := []string{"/var/tmp", os.TempDir()}
	if d := os.Getenv("IOPRED_PREFETCH_TESTDIR"); d != "" {
		bases = []string{d}
	}
	for _, base := range bases {
		dir, err := os.MkdirTemp(base, "iopred-prefetch-")
		if err != nil {
			continue
		}
		var st syscall.Statfs_t
		if syscall.Statfs(dir, &st) == nil && st.Type != tmpfsMagic {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
		os.RemoveAll(dir)
	}
	t.Fatal("no directory on a disk file system (not tmpfs) for cold-cache reads: set IOPRED_PREFETCH_TESTDIR")
	return ""
}

// randomFile writes n random bytes to a new file in dir and syncs it, so
// that coldCache can drop its pages.
func randomFile(t testing.TB, dir, name string, n int64) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, n); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// coldCache empties the page cache of the files: posix_fadvise(DONTNEED)
// drops a file's clean pages without privileges.
func coldCache(t testing.TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		const dontNeed = 4
		if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, dontNeed, 0, 0); e != 0 {
			t.Fatalf("fadvise DONTNEED %s: %v", p, e)
		}
		f.Close()
	}
}

// run is one run of a program: plain (no library), or under the library
// with prefetching off or on; extra is more environment.
type mode int

const (
	plain mode = iota
	tracedOff
	tracedOn
)

// baselineOn is the benchmark's fourth mode: prefetching on under another
// build of the library (IOPRED_PREFETCH_BENCH_BASELINE).
const baselineOn = tracedOn + 1

func (m mode) String() string {
	return [...]string{"plain", "prefetch off", "prefetch on", "baseline library, prefetch on"}[m]
}

// runProgram runs prog cold (after coldCache of files) in mode m, and
// returns its result and the directory of its traces.
func runProgram(t testing.TB, m mode, files []string, extra []string, prog string, args ...string) (testenv.Result, string) {
	t.Helper()
	coldCache(t, files...)
	traces := t.TempDir()
	var env []string
	switch m {
	case tracedOff:
		env = []string{"LD_PRELOAD=" + testenv.Library(t), "IOPRED_DIR=" + traces}
	case tracedOn:
		env = []string{"LD_PRELOAD=" + testenv.Library(t), "IOPRED_DIR=" + traces, "IOPRED_PREFETCH=1"}
	}
	res := testenv.Run(t, append(env, extra...), "", prog, args...)
	if res.Code != 0 {
		t.Fatalf("%s %v (%v): exit %d\n%s", prog, args, m, res.Code, res.Stderr)
	}
	return res, traces
}

// footers reads the footer of every trace in dir, failing on a trace that
// did not end cleanly.
func footers(t testing.TB, dir string) []*tracefmt.Footer {
	t.Helper()
	files, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []*tracefmt.Footer
	for _, f := range files {
		r, err := tracefmt.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
		if r.Footer() == nil {
			t.Fatalf("%s: no footer", f)
		}
		out = append(out, r.Footer())
		r.Close()
	}
	if len(out) == 0 {
		t.Fatalf("no trace in %s", dir)
	}
	return out
}

// onlyFooter is the footer of the single trace in dir.
func onlyFooter(t testing.TB, dir string) *tracefmt.Footer {
	t.Helper()
	fs := footers(t, dir)
	if len(fs) != 1 {
		t.Fatalf("want one trace in %s, found %d", dir, len(fs))
	}
	return fs[0]
}

// sum adds the prefetch counters of several processes.
func sum(fs []*tracefmt.Footer) tracefmt.Prefetch {
	var s tracefmt.Prefetch
	for _, f := range fs {
		if p := f.Prefetch; p != nil {
			s.Reads += p.Reads
			s.Covered += p.Covered
			s.PrefetchedBytes += p.PrefetchedBytes
			s.UsedBytes += p.UsedBytes
			s.WastedBytes += p.WastedBytes
			s.Calls += p.Calls
			s.Misses += p.Misses
			s.Capped += p.Capped
			s.TableFiles += p.TableFiles
		}
	}
	return s
}

// balanced fails unless every prefetched byte was either used or wasted:
// at exit no range is left unaccounted for.
func balanced(t testing.TB, p tracefmt.Prefetch) {
	t.Helper()
	if p.PrefetchedBytes != p.UsedBytes+p.WastedBytes {
		t.Errorf("prefetched %d bytes, but used %d + wasted %d = %d", p.PrefetchedBytes, p.UsedBytes, p.WastedBytes, p.UsedBytes+p.WastedBytes)
	}
}

// compileH5 builds a C program of testdata with Debian's h5cc.
func compileH5(t testing.TB, src string) string {
	t.Helper()
	h5cc := testenv.Tool(t, "h5cc")
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(src, ".c"))
	abs, err := filepath.Abs(filepath.Join("testdata", src))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(h5cc, "-O2", "-o", out, abs)
	cmd.Dir = filepath.Dir(out) // h5cc leaves its object file in the working directory
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("h5cc %s: %v\n%s", src, err, b)
	}
	return out
}

// python3 finds a Python 3 that has NumPy (Debian's python3-numpy).
func python3(t testing.TB) string {
	t.Helper()
	cands := []string{}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/python3")
	for _, p := range cands {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			return p
		}
	}
	if os.Getenv("IOPRED_SKIP_MISSING_TOOLS") == "1" {
		t.Skip("no python3 with numpy")
	}
	t.Fatal("no python3 with numpy (.ci/run installs python3-numpy)")
	return ""
}

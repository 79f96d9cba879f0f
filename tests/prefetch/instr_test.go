package prefetch

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"iopred/tests/testenv"
)

// callgrindCosts runs prog under callgrind, one profile per thread, and
// returns the instructions inside the program's pread calls (the
// interposer, inclusive: the real call's user-space part, recording and
// prefetching), and those of the library's fadvise thread.
func callgrindCosts(b *testing.B, env []string, prog string, args ...string) (wrapper, helper float64) {
	b.Helper()
	dir := b.TempDir()
	out := filepath.Join(dir, "cg.out")
	cmd := exec.Command("valgrind", append([]string{"--tool=callgrind", "--separate-threads=yes",
		"--callgrind-out-file=" + out, prog}, args...)...)
	// valgrind 3.19 cannot decode RDTSCP, which the Go runtime uses.
	cmd.Env = append(append(os.Environ(), env...), "GODEBUG=cpu.rdtscp=off")
	if o, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("callgrind %s: %v\n%s", prog, err, o)
	}
	files, _ := filepath.Glob(out + "-*")
	if len(files) == 0 {
		b.Fatalf("no callgrind profile in %s", dir)
	}
	for _, f := range files {
		o, err := exec.Command("callgrind_annotate", "--inclusive=yes", "--threshold=100", f).Output()
		if err != nil {
			b.Fatalf("callgrind_annotate %s: %v", f, err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(o)))
		for sc.Scan() {
			line := sc.Text()
			fields := strings.Fields(line)
			if len(fields) < 3 {
				continue
			}
			n, err := strconv.ParseFloat(strings.ReplaceAll(fields[0], ",", ""), 64)
			if err != nil {
				continue
			}
			switch {
			case strings.HasSuffix(fields[len(fields)-2], "calls.def.h:pread"):
				wrapper += n
			case strings.HasSuffix(fields[len(fields)-2], "prefetch.c:pf_thread"):
				helper += n
			}
		}
	}
	return wrapper, helper
}

// BenchmarkPrefetchInstructions counts with callgrind what prefetching
// costs per read, on the reading thread (inside the interposed pread) and
// on the library's fadvise thread (user space only: callgrind does not see
// the kernel's part of the calls): the strided
// reader (64 KiB at a 256 KiB stride, file in the page cache, no compute) of
// 1,000 and 2,000 reads, whose difference over 1,000 reads takes start-up
// out; prefetch on against prefetch off. The same for random reads, which
// prefetching must leave alone.
//
//	nice go test -run '^$' -bench PrefetchInstructions -benchtime 1x ./tests/prefetch
func BenchmarkPrefetchInstructions(b *testing.B) {
	testenv.Tool(b, "valgrind")
	dir := diskDir(b)
	data := randomFile(b, dir, "data", 512*mib)
	warmCache(b, data)
	prog := testenv.CompileC(b, "strided.c")
	lib := testenv.Library(b)
	perRead := func(pf string, mode string) (caller, helper float64) {
		env := []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + b.TempDir(), "IOPRED_PREFETCH=" + pf}
		args := func(n int) []string {
			return []string{data, strconv.Itoa(n), fmt.Sprint(64 * kib), fmt.Sprint(mib / 4), "0", mode, "3"}
		}
		wLo, hLo := callgrindCosts(b, env, prog, args(1000)...)
		wHi, hHi := callgrindCosts(b, env, prog, args(2000)...)
		return (wHi - wLo) / 1000, (hHi - hLo) / 1000
	}
	for i := 0; i < b.N; i++ {
		for _, mode := range []string{"pread", "random"} {
			offCaller, _ := perRead("0", mode)
			onCaller, onHelper := perRead("1", mode)
			b.ReportMetric(onCaller-offCaller, mode+"-caller-instr/read")
			b.ReportMetric(onHelper, mode+"-fadvise-thread-instr/read")
			fmt.Printf("%s reads: a traced pread costs %.0f instructions with prefetching off, %.0f with it on (%+.0f); the fadvise thread %.0f per read\n",
				mode, offCaller, onCaller, onCaller-offCaller, onHelper)
		}
	}
}

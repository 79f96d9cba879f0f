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

// callgrindTotals runs prog under callgrind, one profile per thread, and
// returns the instructions of the main thread and of all threads.
func callgrindTotals(b *testing.B, env []string, prog string, args ...string) (main, all float64) {
	b.Helper()
	dir := b.TempDir()
	out := filepath.Join(dir, "cg.out")
	cmd := exec.Command("valgrind", append([]string{"--tool=callgrind", "--separate-threads=yes",
		"--callgrind-out-file=" + out, prog}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if o, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("callgrind %s: %v\n%s", prog, err, o)
	}
	files, _ := filepath.Glob(out + "*")
	if len(files) == 0 {
		b.Fatalf("no callgrind profile in %s", dir)
	}
	for _, f := range files {
		n := profileTotal(b, f)
		all += n
		if strings.HasSuffix(f, "-01") {
			main = n
		}
	}
	return main, all
}

// profileTotal is the "summary:" (or "totals:") instruction count of a
// callgrind profile.
func profileTotal(b *testing.B, path string) float64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		for _, key := range []string{"summary:", "totals:"} {
			if rest, ok := strings.CutPrefix(line, key); ok {
				fields := strings.Fields(rest)
				if len(fields) > 0 {
					if n, err := strconv.ParseFloat(fields[0], 64); err == nil {
						return n
					}
				}
			}
		}
	}
	b.Fatalf("%s: no summary line", path)
	return 0
}

// BenchmarkPrefetchInstructions counts with callgrind what prefetching
// costs per read, on the reading thread and over all threads: the strided
// reader (64 KiB at a 256 KiB stride, file in the page cache, no compute) of
// 1,000 and 2,000 reads, whose difference over 1,000 reads takes start-up
// and exit out; prefetch on minus prefetch off. The same for random reads,
// which prefetching must leave alone.
//
//	nice go test -run '^$' -bench PrefetchInstructions -benchtime 1x ./tests/prefetch
func BenchmarkPrefetchInstructions(b *testing.B) {
	testenv.Tool(b, "valgrind")
	dir := diskDir(b)
	data := randomFile(b, dir, "data", 512*mib)
	warmCache(b, data)
	prog := testenv.CompileC(b, "strided.c")
	lib := testenv.Library(b)
	perRead := func(pf string, mode string) (caller, all float64) {
		env := []string{"LD_PRELOAD=" + lib, "IOPRED_DIR=" + b.TempDir(), "IOPRED_PREFETCH=" + pf}
		args := func(n int) []string {
			return []string{data, strconv.Itoa(n), fmt.Sprint(64 * kib), fmt.Sprint(mib / 4), "0", mode, "3"}
		}
		mLo, aLo := callgrindTotals(b, env, prog, args(1000)...)
		mHi, aHi := callgrindTotals(b, env, prog, args(2000)...)
		return (mHi - mLo) / 1000, (aHi - aLo) / 1000
	}
	for i := 0; i < b.N; i++ {
		for _, mode := range []string{"pread", "random"} {
			offCaller, offAll := perRead("0", mode)
			onCaller, onAll := perRead("1", mode)
			b.ReportMetric(onCaller-offCaller, mode+"-caller-instr/read")
			b.ReportMetric(onAll-offAll, mode+"-all-instr/read")
			fmt.Printf("%s reads: prefetching costs %.0f instructions per read on the reading thread, %.0f over all threads (prefetch off: %.0f, %.0f)\n",
				mode, onCaller-offCaller, onAll-offAll, offCaller, offAll)
		}
	}
}

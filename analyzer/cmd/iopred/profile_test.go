package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The profiling variables write pprof files (gzip-compressed protocol
// buffers) and the CPU statistics, and summary --jobs 2 with
// IOPRED_CPUSTATS prints each share's clock and the critical path.
func TestProfilingVariables(t *testing.T) {
	dir := t.TempDir()
	cpu, mem, block := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof"), filepath.Join(dir, "block.prof")
	t.Setenv("IOPRED_CPUPROFILE", cpu)
	t.Setenv("IOPRED_MEMPROFILE", mem)
	t.Setenv("IOPRED_BLOCKPROFILE", block)
	t.Setenv("IOPRED_CPUSTATS", "1")
	traces := filepath.Join(dir, "set")
	var out, errs bytes.Buffer
	if code := runMain([]string{"synth", "--procs", "3", "--iterations", "3", "--noise-rate", "5", "-o", traces}, &out, &errs); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errs.String())
	}
	errs.Reset()
	stop := startProfiles(&errs)
	code := runMain([]string{"summary", "--jobs", "2", "--json", traces}, &out, &errs)
	stop()
	shareStats.clocks = nil // later tests start afresh
	if code != 0 {
		t.Fatalf("summary: exit %d: %s", code, errs.String())
	}
	for _, f := range []string{cpu, mem, block} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s is not a pprof file (%d bytes)", filepath.Base(f), len(b))
		}
	}
	text := errs.String()
	for _, re := range []string{
		`share 0 \(traces 0-[01]\): busy [0-9.]+ s CPU`,
		`share 1 \(traces [12]-2\): busy [0-9.]+ s CPU`,
		`critical path on [0-9]+ cores [0-9.]+ s`,
		`process [0-9.]+ s CPU \(user\+sys\).* gc-cycles=[0-9]+ alloc-bytes=[1-9][0-9]*`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("stderr lacks %q:\n%s", re, text)
		}
	}
	if strings.Count(text, "iopred cpustats: share") != 2 {
		t.Errorf("want two shares' clocks:\n%s", text)
	}
}

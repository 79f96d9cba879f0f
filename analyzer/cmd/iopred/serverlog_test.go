package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"iopred/analyzer/serverlog"
	"iopred/tests/interop"
)

// TestServerlogImportInfo proves `iopred serverlog import` and `info` end
// to end: the real LMT file imported into a store, info on the store
// (span, step, OSTs) and on the job SQLite, --json with the documented
// fields, and usage errors.
func TestServerlogImportInfo(t *testing.T) {
	lmt := interop.Path(t, "lmt/snx11025_2018-01-28.sqlite3")
	store := filepath.Join(t.TempDir(), "store")
	var out, errb bytes.Buffer
	if code := runMain([]string{"serverlog", "import", "--tz", "UTC", "--into", store, lmt}, &out, &errb); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "1 days written (1440 OST samples, 1440 known)") ||
		!strings.Contains(errb.String(), "2018-01-28 imported (1/1 days") {
		t.Errorf("import printed %q and %q", out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	jobs := interop.Path(t, "jobs/sample_nersc_jobsdb.sqlite3")
	if code := runMain([]string{"serverlog", "info", "--tz", "UTC", store, jobs}, &out, &errb); code != 0 {
		t.Fatalf("info: exit %d: %s", code, errb.String())
	}
	for _, w := range []string{"(store)", "span   2018-01-28 00:00:00 UTC .. 2018-01-28 00:05:00 UTC", "step   5s",
		"OSTs   24 (snx11025-OST0000 .. snx11025-OST0017)", "(job log)", "jobs   485"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("info output lacks %q:\n%s", w, out.String())
		}
	}
	out.Reset()
	if code := runMain([]string{"serverlog", "info", "--json", "lmt:" + lmt}, &out, &errb); code != 0 {
		t.Fatalf("info --json: exit %d: %s", code, errb.String())
	}
	var s map[string]any
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "path", "from", "to", "step_s", "osts", "ost_samples", "size_bytes"} {
		if _, ok := s[k]; !ok {
			t.Errorf("info --json lacks %s: %s", k, out.String())
		}
	}
	if code := runMain([]string{"serverlog", "import", lmt}, &out, &errb); code != 2 {
		t.Errorf("import without --into: exit %d, want 2", code)
	}
}

// buildIopred builds the command for tests that must signal a process.
func buildIopred(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "iopred")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// longCSV writes 40 days of 8 OSTs at one sample a minute as a plain CSV
// of cumulative counters: enough days for a signal to land mid-import.
func longCSV(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("time,ost,read_bytes,write_bytes\n")
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	cum := make([]uint64, 8)
	for k := range 40 * 1440 {
		for i := range cum {
			cum[i] += uint64((k*31 + i*7919) % 100000 * 4096)
			fmt.Fprintf(&b, "%d,OST%04d,%d,%d\n", t0+int64(k)*60, i, cum[i]/3, cum[i])
		}
	}
	p := filepath.Join(t.TempDir(), "long.csv")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// importUntil runs an import and sends sig after its third progress
// line; it returns whether the import ended by itself first.
func importUntil(t *testing.T, bin, csv, store string, sig syscall.Signal) (finished bool, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, "serverlog", "import", "--into", store, csv)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(pipe)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) == 3 {
			cmd.Process.Signal(sig)
		}
	}
	err = cmd.Wait()
	return err == nil, strings.Join(lines, "\n")
}

// checkPrefix proves that every sample a store holds equals the
// source's, and returns how many it holds.
func checkPrefix(t *testing.T, store, csv string) int {
	t.Helper()
	st, err := serverlog.OpenStore(store, serverlog.Options{})
	if err != nil {
		t.Fatalf("store after the signal: %v", err)
	}
	defer st.Close()
	got, err := st.Window(time.Time{}, time.Time{})
	if err != nil {
		t.Fatalf("reading the store after the signal: %v", err)
	}
	src, err := serverlog.OpenCSV(csv, serverlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	want, err := src.Window(got.Start, got.End())
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.OSTs {
		for k := range got.Len() {
			if got.Write[i][k] != want.Write[i][k] || got.Read[i][k] != want.Read[i][k] {
				t.Fatalf("%s sample %d: store %v/%v, source %v/%v", want.OSTs[i], k,
					got.Read[i][k], got.Write[i][k], want.Read[i][k], want.Write[i][k])
			}
		}
	}
	return got.Len()
}

// TestServerlogImportSignals proves that an import stopped by Ctrl-C
// (SIGINT) or killed outright (SIGKILL) mid-way leaves a store that reads
// back, day for day, to exactly the source, and that the next import
// completes it.
func TestServerlogImportSignals(t *testing.T) {
	bin := buildIopred(t)
	csv := longCSV(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		store := filepath.Join(t.TempDir(), "store")
		finished, stderr := importUntil(t, bin, csv, store, sig)
		if finished {
			t.Logf("%v: the import ended before the signal took effect", sig)
		} else if sig == syscall.SIGINT && !strings.Contains(stderr, "interrupted:") {
			t.Errorf("SIGINT: stderr does not say it was interrupted:\n%s", stderr)
		}
		n := checkPrefix(t, store, csv)
		t.Logf("%v: %d samples (%.1f days) in the store after the signal", sig, n, float64(n)/1440)
		if out, err := exec.Command(bin, "serverlog", "import", "--quiet", "--into", store, csv).CombinedOutput(); err != nil {
			t.Fatalf("resuming: %v\n%s", err, out)
		}
		// 40 days of readings a minute apart close 40*1440-1 intervals.
		if n := checkPrefix(t, store, csv); n != 40*1440-1 {
			t.Errorf("%v: %d samples after resuming, want %d", sig, n, 40*1440-1)
		}
	}
}

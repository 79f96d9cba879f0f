package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// iopred report DIR -o FILE writes one HTML page and lists the problems
// it found on stdout; --align changes the misalignment check (512-byte
// writes are misaligned against 4 KiB, not against 512 bytes).
func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	writeEventsTrace(t, dir, 2000, true)
	for _, c := range []struct {
		args       []string
		misaligned bool
	}{{nil, true}, {[]string{"--align", "512"}, false}} {
		out := filepath.Join(t.TempDir(), "r.html")
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"report", "-o", out}, c.args...), dir)
		if code := runMain(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		page, err := os.ReadFile(out)
		if err != nil || !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) || !bytes.Contains(page, []byte("/data/out.bin")) {
			t.Fatalf("%v: page %d bytes, %v", args, len(page), err)
		}
		if !strings.HasPrefix(stdout.String(), "wrote "+out+": ") || !strings.Contains(stdout.String(), "Small write requests: 2,000 of 2,000") {
			t.Errorf("%v: stdout %q", args, stdout.String())
		}
		if got := strings.Contains(stdout.String(), "Misaligned requests"); got != c.misaligned {
			t.Errorf("%v: misaligned reported %v, want %v:\n%s", args, got, c.misaligned, stdout.String())
		}
	}
}

// Bad input is an error naming the flag or the path.
func TestReportCommandErrors(t *testing.T) {
	dir := t.TempDir()
	writeEventsTrace(t, dir, 10, true)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"report"}, 2, "usage: iopred report"},
		{[]string{"report", "--align", "4 furlongs", dir}, 1, "--align"},
		{[]string{"report", "--small", "-3", dir}, 1, "--small"},
		{[]string{"report", filepath.Join(dir, "missing")}, 1, "missing"},
		{[]string{"report", "-o", filepath.Join(dir, "no", "such", "dir.html"), dir}, 1, "dir.html"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runMain(c.args, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr.String(), c.code, c.msg)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "4KiB": 4096, "64 KiB": 65536, "1MiB": 1 << 20, "1M": 1 << 20, "2GB": 2 << 30, "512B": 512} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "1.5M", "lots", "1TiB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

// iopred summary ends with the findings' problems (text) or carries them
// beside the summary's fields (JSON), and takes --all-paths.
func TestSummaryFindings(t *testing.T) {
	dir := t.TempDir()
	writeEventsTrace(t, dir, 2000, true)
	var out, errb bytes.Buffer
	if code := runMain([]string{"summary", "--all-paths", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "\nFINDINGS (2 problems") || !strings.Contains(out.String(), "high    Small write requests: 2,000 of 2,000") ||
		!strings.Contains(out.String(), "excluded: nothing (--all-paths") {
		t.Errorf("text:\n%s", out.String())
	}
	out.Reset()
	if code := runMain([]string{"summary", "--json", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got struct {
		Processes []map[string]any `json:"processes"`
		Findings  []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Processes) != 1 || len(got.Findings) < 10 {
		t.Errorf("json: %v, %d processes, %d findings", err, len(got.Processes), len(got.Findings))
	}
}

package serverlog

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iopred/tests/interop"
)

// TestFlags proves the flags every command shares: one source opened
// through them in the --tz zone, --jobs read, and clear errors for no
// source, two sources, a zone that does not exist, and a file of no
// known kind given without a kind flag.
func TestFlags(t *testing.T) {
	parse := func(args ...string) (*Flags, error) {
		var f Flags
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.Register(fs, true)
		return &f, fs.Parse(args)
	}
	lmt := interop.Path(t, snx)
	f, err := parse("--lmt", lmt, "--tz", "UTC", "--jobs", interop.Path(t, "jobs/sample_nersc_jobsdb.sqlite3"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	from, _, _, _ := src.Span()
	src.Close()
	if !from.Equal(time.Date(2018, 1, 28, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("span from %v with --tz UTC", from)
	}
	if jobs, err := f.ReadJobs(); err != nil || len(jobs) != 485 {
		t.Errorf("--jobs: %v, %d jobs", err, len(jobs))
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no throughput log"},
		{[]string{"--lmt", lmt, "--lmt", lmt}, ""}, // the last one wins, as for any flag
		{[]string{"--lmt", lmt, "--csv", lmt}, "several throughput logs"},
		{[]string{"--lmt", lmt, "--tz", "Mars/Olympus"}, "--tz Mars/Olympus"},
	} {
		f, err := parse(c.args...)
		if err != nil {
			t.Fatal(err)
		}
		src, err := f.Open()
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.args, err)
			} else {
				src.Close()
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	junk := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(junk, []byte("hello\n"), 0o644)
	if _, err := OpenSource(Spec{Path: junk}, Options{}); err == nil || !strings.Contains(err.Error(), "name its kind with a flag") {
		t.Errorf("unknown content: %v", err)
	}
	if _, err := OpenSource(Spec{Kind: "parquet", Path: junk}, Options{}); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("unknown kind: %v", err)
	}
}

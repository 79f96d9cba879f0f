package centersim

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The job log is sacct --parsable2: the header, then per job its line
// and, when it ran, its batch and srun steps; a job cancelled while
// waiting has no start and the user's uid in its state; fields never
// hold the separator.
func TestSacct(t *testing.T) {
	s, _ := Preset("small")
	s.Foreign.Cancelled, s.Foreign.Failed = 0.2, 0.2
	res, _ := runQuiet(t, s, Options{Seed: 9})
	var b bytes.Buffer
	if err := WriteSacct(&b, res.Jobs, time.UTC); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if lines[0] != SacctHeader {
		t.Fatalf("header %q", lines[0])
	}
	nf := len(strings.Split(SacctHeader, "|"))
	var jobs, steps, cancelled, failed int
	for i, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != nf {
			t.Fatalf("line %d: %d fields, want %d: %q", i+2, len(f), nf, l)
		}
		switch {
		case strings.Contains(f[0], "."):
			steps++
		default:
			jobs++
			if strings.HasPrefix(f[10], "CANCELLED by ") {
				cancelled++
				if f[6] != "None" {
					t.Errorf("line %d: cancelled job started at %s", i+2, f[6])
				}
			}
			if f[10] == "FAILED" {
				failed++
			}
			if _, err := time.Parse("2006-01-02T15:04:05", f[5]); err != nil {
				t.Errorf("line %d: submit %q", i+2, f[5])
			}
		}
	}
	if jobs != len(res.Jobs) || steps != 2*(jobs-cancelled) || cancelled == 0 || failed == 0 {
		t.Errorf("%d jobs (%d records), %d steps, %d cancelled, %d failed", jobs, len(res.Jobs), steps, cancelled, failed)
	}
}

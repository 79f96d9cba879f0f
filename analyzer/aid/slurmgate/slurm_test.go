package slurmgate

import (
	"testing"
	"time"
)

// TestParseLimit reads Slurm's time limits in each of their forms.
func TestParseLimit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"UNLIMITED", 0}, {"5", 5 * time.Minute}, {"10:30", 10*time.Minute + 30*time.Second},
		{"1:00:00", time.Hour}, {"2-03:04:05", 51*time.Hour + 4*time.Minute + 5*time.Second},
	} {
		got, err := ParseLimit(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseLimit(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if _, err := ParseLimit("x:1"); err == nil {
		t.Error("ParseLimit(x:1): no error")
	}
}

// TestParseSqueue reads the gate's squeue format: a job name with the
// separator in it stays whole, a running job has its start and limit, a
// bad node count is an error naming the line.
func TestParseSqueue(t *testing.T) {
	out := "12|PENDING|ana|4|BeginTime|N/A|1:00:00|iopred-gate|ckpt|a\n13|RUNNING|ben|1|None|2026-01-02T03:04:05|UNLIMITED|(null)|sim\n"
	jobs, err := ParseSqueue(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].App.String() != "ana/ckpt|a/4" || jobs[0].Reason != "BeginTime" || jobs[0].Held() || !jobs[0].Waiting() || jobs[1].Comment != "" {
		t.Fatalf("%+v", jobs)
	}
	if !jobs[1].Start.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || jobs[1].Limit != 0 {
		t.Fatalf("%+v", jobs[1])
	}
	if _, err := ParseSqueue("1|PENDING|u|x|r|N/A|5||n\n"); err == nil {
		t.Fatal("bad node count: no error")
	}
	if j := (Job{Reason: "JobHeldAdmin"}); !j.Held() {
		t.Fatal("JobHeldAdmin is not held")
	}
}

// Job ids sort in submission order, numbers compared as numbers: as text
// "10" would come before "9" and the gate would decide for a later job
// first.
func TestJobIDLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"9", "10", true},
		{"10", "9", false},
		{"99", "100", true},
		{"7_2", "7_10", true},
		{"7_10", "8", true},
		{"7", "7_1", true},
		{"7+0", "7+1", true},
		{"007", "7", false},
		{"12", "12", false},
		{"123456789012345678901234567890", "123456789012345678901234567891", true},
		{"abc", "abd", true},
	} {
		if got := jobIDLess(c.a, c.b); got != c.less {
			t.Errorf("jobIDLess(%q, %q) = %v, want %v", c.a, c.b, got, c.less)
		}
	}
}

package mpi

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"iopred/analyzer/job"
)

// checkJobSummary: rank 0 wrote the job summary beside its trace at
// MPI_Finalize; it covers every rank, finds the N-1 strided file's single
// global pattern and the checkpoints' period (within 2% of the interval
// measured from rank 0's trace), holds each rank's prediction score and
// its cost, and is what the traces give offline (job.FromTraces), field
// for field.
func checkJobSummary(t *testing.T, trs []*trace, dir string, np int, strided string, interval float64) *job.Summary {
	t.Helper()
	paths, err := job.Discover(dir)
	if err != nil || len(paths) != 1 {
		t.Fatalf("job summaries %v (%v), want one", paths, err)
	}
	if want := job.SummaryPath(trs[0].path); paths[0] != want {
		t.Errorf("job summary at %s, want beside rank 0's trace: %s", paths[0], want)
	}
	raw, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var online job.Summary
	if err := json.Unmarshal(raw, &online); err != nil {
		t.Fatalf("%s: %v", paths[0], err)
	}
	if online.Ranks != np || len(online.Accuracy.PerRank) != np {
		t.Fatalf("summary of %d ranks (%d scores), want %d", online.Ranks, len(online.Accuracy.PerRank), np)
	}
	for r, a := range online.Accuracy.PerRank {
		if a == nil || *a <= 0 || *a > 1 {
			t.Errorf("rank %d: context score %v", r, a)
		}
	}
	if c := online.Cost; c == nil || c.FinalizeNs <= 0 || (np > 1 && c.ReceivedBytes <= 0) {
		t.Errorf("cost %+v", c)
	} else {
		t.Logf("finalize step on rank 0: %.1f ms, merges %.1f ms, received %d bytes", float64(c.FinalizeNs)/1e6, float64(c.MergeNs)/1e6, c.ReceivedBytes)
	}
	// The application's writes: its MPI-IO writes and the POSIX write
	// of preinit.<pid> before MPI_Init, each once (not the pwrites the
	// MPI library made for them).
	var writes uint64
	for _, tr := range trs {
		for _, e := range tr.events {
			if (e.Op == "MPI_File_write_at" || e.Op == "MPI_File_write_all" || e.Op == "MPI_File_write" ||
				e.Op == "write" && e.Parent == 0 && strings.Contains(e.Path, "/preinit.")) && e.Bytes > 0 {
				writes++
			}
		}
	}
	if online.Counts.Writes != writes {
		t.Errorf("summary counts %d writes, the traces hold %d application writes", online.Counts.Writes, writes)
	}
	found := false
	for _, f := range online.Patterns {
		if f.Path != strided || f.Kind != "write" {
			continue
		}
		found = true
		if len(f.Globals) != 1 || len(f.Globals[0].IDs) != np*iorSegments || f.InGlobals != f.Requests {
			t.Errorf("%s writes: globals %v, %d of %d requests in them; want one pattern of every request", strided, f.Strings, f.InGlobals, f.Requests)
		}
	}
	if !found {
		t.Errorf("no job pattern of %s", strided)
	}
	p := online.Period.Write
	if p == nil || p.PeriodS == nil {
		t.Fatalf("job summary: no write period: %+v", p)
	}
	t.Logf("job period %.5f s (%d of %d resolutions agree), measured %.5f s", *p.PeriodS, p.Agreeing, len(p.Resolutions), interval)
	if math.Abs(*p.PeriodS-interval)/interval > 0.02 {
		t.Errorf("job period %.5f s, checkpoints every %.5f s", *p.PeriodS, interval)
	}

	tracePaths := make([]string, len(trs))
	for i, tr := range trs {
		tracePaths[i] = tr.path
	}
	offline, warnings, err := job.FromTraces(tracePaths)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("offline job view: %v %v", err, warnings)
	}
	online.Cost = nil
	a, _ := json.Marshal(&online)
	b, _ := json.Marshal(offline)
	if !bytes.Equal(a, b) {
		diffAt := 0
		for diffAt < len(a) && diffAt < len(b) && a[diffAt] == b[diffAt] {
			diffAt++
		}
		lo := max(diffAt-200, 0)
		t.Errorf("the summary rebuilt from the traces differs from the job's at byte %d:\njob:     %s\ntraces:  %s", diffAt,
			a[lo:min(diffAt+200, len(a))], b[lo:min(diffAt+200, len(b))])
	}
	return &online
}

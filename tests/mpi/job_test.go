package mpi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iopred/analyzer/job"
	"iopred/tests/testenv"
)

// readJobSummary reads the one job summary in dir.
func readJobSummary(t *testing.T, dir string) (*job.Summary, string) {
	t.Helper()
	paths, err := job.Discover(dir)
	if err != nil || len(paths) != 1 {
		t.Fatalf("job summaries %v (%v), want one", paths, err)
	}
	raw, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var s job.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", paths[0], err)
	}
	return &s, paths[0]
}

// checkJobCounts: the job summary in dir covers np ranks and counts the
// application's writes and reads.
func checkJobCounts(t *testing.T, dir string, np, writes, reads int) {
	t.Helper()
	s, path := readJobSummary(t, dir)
	if s.Ranks != np || s.Counts.Writes != uint64(writes) || s.Counts.Reads != uint64(reads) {
		t.Errorf("%s: %d ranks, %d writes, %d reads; want %d, %d, %d", path, s.Ranks, s.Counts.Writes, s.Counts.Reads, np, writes, reads)
	}
}

// checkJobSummary: rank 0 wrote the job summary beside its trace at
// MPI_Finalize; it covers every rank, finds the N-1 strided file's single
// global pattern and the checkpoints' period (within the spread of the
// intervals measured from rank 0's trace, widened by one frequency bin), holds each rank's prediction score and
// its cost, and is what the traces give offline (job.FromTraces), field
// for field.
func checkJobSummary(t *testing.T, trs []*trace, dir string, np int, strided string, interval testenv.Intervals) *job.Summary {
	t.Helper()
	summary, path := readJobSummary(t, dir)
	if want := job.SummaryPath(trs[0].path); path != want {
		t.Errorf("job summary at %s, want beside rank 0's trace: %s", path, want)
	}
	online := *summary
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
	if p == nil {
		t.Fatalf("job summary: no write signal")
	}
	var ac []float64
	for _, c := range p.Autocorrelation {
		if c != nil {
			ac = append(ac, math.Round(*c*1000)/1000)
		}
	}
	t.Logf("job period %s (%d of %d resolutions agree, multiple %d, autocorrelations %v), measured %.5f s",
		fmtPeriod(p.PeriodS), p.Agreeing, len(p.Resolutions), p.Multiple, ac, interval.Median)
	testenv.CheckJobPeriod(t, "job summary", p, interval)

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
	return summary
}

// A job whose library is preloaded in rank 0 only (a launcher wrapper that
// sets LD_PRELOAD for some ranks) must not wait forever in MPI_Finalize
// for ranks that will never join the job summary: rank 0 gives up after
// IOPRED_JOB_WAIT_MS, says so, keeps its complete trace, and the job
// exits 0 under both implementations.
func TestJobPartlyTraced(t *testing.T) {
	lib := library(t)
	for _, m := range impls {
		t.Run(m.name, func(t *testing.T) {
			need(t, m.cc, m.run)
			prog := compile(t, m.cc, "ior.c")
			data, traces := t.TempDir(), t.TempDir()
			args := []string{data, "1", "4096", "1024", "0"}
			var launch []string
			if m.name == "openmpi" {
				launch = append(launch, "--oversubscribe")
			}
			launch = append(launch, "-np", "1", "env", "LD_PRELOAD="+lib, "IOPRED_DIR="+traces, "IOPRED_JOB_WAIT_MS=2000", prog)
			launch = append(append(launch, args...), ":", "-np", "1", prog)
			launch = append(launch, args...)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, m.run, launch...)
			cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
			cmd.WaitDelay = 5 * time.Second
			start := time.Now()
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("the job hung in MPI_Finalize:\n%s", out)
			}
			if err != nil {
				t.Fatalf("job failed: %v\n%s", err, out)
			}
			t.Logf("job took %v", time.Since(start).Round(time.Millisecond))
			if !bytes.Contains(out, []byte("job summary skipped")) {
				t.Errorf("rank 0 did not say why it wrote no job summary:\n%s", out)
			}
			if paths, _ := job.Discover(traces); len(paths) != 0 {
				t.Errorf("job summaries %v from a partly traced job", paths)
			}
			trs := readTraces(t, traces, "ior")
			if len(trs) != 1 || !trs[0].clean || rank(trs[0]) != 0 {
				t.Fatalf("traces %v, want rank 0's, complete", trs)
			}
		})
	}
}

// IOPRED_JOB=0 turns the job summary off: the ranks are traced as usual
// and nothing else is written.
func TestJobOff(t *testing.T) {
	m := impls[0]
	need(t, m.cc, m.run)
	prog := compile(t, m.cc, "ior.c")
	data, traces := t.TempDir(), t.TempDir()
	out, err := mpirun(t, m, 2, 2*time.Minute, []string{"LD_PRELOAD=" + library(t), "IOPRED_DIR=" + traces, "IOPRED_JOB=0"},
		prog, data, "1", "4096", "1024", "0")
	if err != nil {
		t.Fatalf("job failed: %v\n%s", err, out)
	}
	byRank(t, readTraces(t, traces, "ior"), 2)
	if paths, _ := job.Discover(traces); len(paths) != 0 {
		t.Errorf("job summaries %v with IOPRED_JOB=0", paths)
	}
}

// fmtPeriod prints a period found, or that none was.
func fmtPeriod(p *float64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%.5f s", *p)
}

// Links planted at the name rank 0's job summary will have and at its old
// temporary name (the pid is known to whoever starts the program: here a
// shell that execs it) are not followed: their target keeps its content,
// and the summary is the library's own file, 0600 like the traces.
func TestJobSummaryPlantedLink(t *testing.T) {
	m := impls[0]
	need(t, m.cc, m.run)
	prog := compile(t, m.cc, "ior.c")
	data, traces := t.TempDir(), t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("victim\n"), 0o644)
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	// At the summary's name, and at the temporary name it was once written
	// through (<summary>.<pid>.tmp).
	name := fmt.Sprintf("%s/ior.%s.$$.r0%s", traces, host, job.FileSuffix)
	script := fmt.Sprintf(`if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then ln -s %s %s; ln -s %s %s.$$.tmp; fi; exec %s %s 1 4096 1024 0`,
		victim, name, victim, name, prog, data)
	out, err := mpirun(t, m, 2, 2*time.Minute, []string{"LD_PRELOAD=" + library(t), "IOPRED_DIR=" + traces}, "sh", "-c", script)
	if err != nil {
		t.Fatalf("job failed: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
		t.Fatalf("the planted link's target was overwritten: %.200s", b)
	}
	// The link was at the summary's name: the rename replaced it.
	ents, _ := os.ReadDir(traces)
	for _, e := range ents {
		if e.Type()&os.ModeSymlink != 0 && !strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("link %s left: planted at another name than the summary's", e.Name())
		}
	}
	s, path := readJobSummary(t, traces)
	if s.Ranks != 2 {
		t.Errorf("summary of %d ranks", s.Ranks)
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v %v, want a regular file 0600", path, st.Mode(), err)
	}
}

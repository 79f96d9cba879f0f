package aid

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iopred/analyzer/centersim"
	"iopred/analyzer/serverlog"
)

// testRanks are ranks of one process, joined by channels as MPI joins
// processes.
type testRanks struct {
	rank, size int
	gather     chan rankBytes
	decide     []chan bool
}

type rankBytes struct {
	rank int
	b    []byte
}

func (r *testRanks) Rank() int { return r.rank }
func (r *testRanks) Size() int { return r.size }

func (r *testRanks) Gather(b []byte) ([][]byte, error) {
	if r.rank != 0 {
		r.gather <- rankBytes{r.rank, b}
		return nil, nil
	}
	out := make([][]byte, r.size)
	out[0] = b
	for range r.size - 1 {
		m := <-r.gather
		out[m.rank] = m.b
	}
	return out, nil
}

func (r *testRanks) Decide(v bool) (bool, error) {
	if r.rank == 0 {
		for i := 1; i < r.size; i++ {
			r.decide[i] <- v
		}
		return v, nil
	}
	return <-r.decide[r.rank], nil
}

// learnRanks runs one learn as size ranks and returns rank 0's outcome;
// every other rank must end without error and with empty stats.
func learnRanks(t *testing.T, dir string, in LearnInput, size int) (LearnStats, error) {
	t.Helper()
	gather := make(chan rankBytes, size)
	decide := make([]chan bool, size)
	for i := range decide {
		decide[i] = make(chan bool, 1)
	}
	type outcome struct {
		st  LearnStats
		err error
	}
	done := make(chan outcome, size)
	for r := range size {
		in := in
		in.Ranks = &testRanks{rank: r, size: size, gather: gather, decide: decide}
		go func() {
			st, err := Learn(context.Background(), dir, in)
			if r != 0 && (err != nil || st.Knowledge != nil || st.DaysRead != 0) {
				err = fmt.Errorf("rank %d of %d ended with %v, %d days, knowledge %v", r, size, err, st.DaysRead, st.Knowledge != nil)
				t.Error(err)
			}
			if r == 0 {
				done <- outcome{st, err}
			} else {
				done <- outcome{}
			}
		}()
	}
	var root outcome
	for range size {
		o := <-done
		if o.st.Knowledge != nil || o.err != nil {
			root = o
		}
	}
	return root.st, root.err
}

// failingSource fails to read the window of one day.
type failingSource struct {
	serverlog.Source
	day time.Time
}

func (f failingSource) Window(from, to time.Time) (*serverlog.Rates, error) {
	if from.Add(margin).Equal(f.day) {
		return nil, errors.New("disk on fire")
	}
	return f.Source.Window(from, to)
}

// A learn spread over ranks writes the knowledge base one process
// writes, file for file and byte for byte: on a whole month's first
// learn, on an increment whose days to read have a gap (the ranks on
// each side of it must not take each other's days as neighbours), and at
// more ranks than days; the error of a day that cannot be read is the
// one a single process gives.
func TestLearnRanksIdentical(t *testing.T) {
	s := testCenter()
	// Interactive bursts every few minutes put bursts next to every midnight,
	// where a day's detection sees the days on each side.
	s.Days, s.OSTs, s.Interactive.PerHour = 6, 16, 12
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	m, _, jobs, err := centersim.RunInMemory(s, 5)
	if err != nil {
		t.Fatal(err)
	}
	day := func(n int) time.Time { return dayStart(s.Start).AddDate(0, 0, n) }
	in := LearnInput{Source: m, SourceName: "sim", Jobs: jobs, Now: time.Unix(0, 0)}
	part := in
	part.From, part.To = day(2), day(4)
	for _, c := range []struct {
		name  string
		steps []LearnInput
	}{
		{"whole", []LearnInput{in}},
		{"gap", []LearnInput{part, in}},
	} {
		want := t.TempDir()
		var wantStats LearnStats
		for _, step := range c.steps {
			if wantStats, err = Learn(context.Background(), want, step); err != nil {
				t.Fatal(err)
			}
		}
		if wantStats.DaysRead < 4 || wantStats.Knowledge == nil || len(wantStats.Knowledge.Apps) == 0 {
			t.Fatalf("%s: one process read %d days: too little to check", c.name, wantStats.DaysRead)
		}
		wantFiles := files(t, want)
		for _, size := range []int{1, 2, 3, 4, 9} {
			dir := t.TempDir()
			var got LearnStats
			for _, step := range c.steps {
				if got, err = learnRanks(t, dir, step, size); err != nil {
					t.Fatalf("%s, %d ranks: %v", c.name, size, err)
				}
			}
			if got.DaysRead != wantStats.DaysRead || got.DaysSkipped != wantStats.DaysSkipped || got.Cells != wantStats.Cells ||
				got.NewJobs != wantStats.NewJobs || got.Generation != wantStats.Generation {
				t.Errorf("%s, %d ranks: stats %+v, one process %+v", c.name, size, got, wantStats)
			}
			gotFiles := files(t, dir)
			if len(gotFiles) != len(wantFiles) {
				t.Errorf("%s, %d ranks: files %v, one process %v", c.name, size, keys(gotFiles), keys(wantFiles))
			}
			for name, b := range wantFiles {
				if gotFiles[name] != b {
					t.Errorf("%s, %d ranks: %s differs from one process's", c.name, size, name)
				}
			}
		}
	}
	bad := in
	bad.Source = failingSource{Source: m, day: day(3)}
	_, wantErr := Learn(context.Background(), t.TempDir(), bad)
	if wantErr == nil || !strings.Contains(wantErr.Error(), "disk on fire") {
		t.Fatalf("one process: %v", wantErr)
	}
	for _, size := range []int{2, 4, 9} {
		if _, err := learnRanks(t, t.TempDir(), bad, size); err == nil || err.Error() != wantErr.Error() {
			t.Errorf("%d ranks: error %v, one process %v", size, err, wantErr)
		}
	}
}

// files reads every file under dir but the lock, by path relative to dir.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() || info.Name() == lockName {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A day that another rank reads and stores is seen, around the days next
// to it, bit for bit as its stored file shows it: the same cells, the
// same float32 rounding, the same start.
func TestNeighbourAggregateAsFile(t *testing.T) {
	sl := simulate(t)
	dir := t.TempDir()
	learn(t, dir, sl, time.Time{}, time.Time{})
	kb, err := OpenKB(dir)
	if err != nil {
		t.Fatal(err)
	}
	fromFiles, err := kb.State()
	if err != nil {
		t.Fatal(err)
	}
	noFiles, _ := kb.State()
	for i := range noFiles.Days {
		noFiles.Days[i].File = ""
	}
	files := &learner{dir: dir, st: fromFiles}
	mem := &learner{dir: dir, st: noFiles, src: sl.log}
	for _, d := range fromFiles.Days {
		day, _ := time.Parse(time.DateOnly, d.Day)
		if err := mem.readNeighbour(day); err != nil {
			t.Fatal(err)
		}
	}
	if len(fromFiles.Days) < 2 {
		t.Fatalf("%d days: too few to check", len(fromFiles.Days))
	}
	for _, d := range fromFiles.Days {
		day, _ := time.Parse(time.DateOnly, d.Day)
		want, err := files.seriesAround(day)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mem.seriesAround(day)
		if err != nil {
			t.Fatal(err)
		}
		if got.startNS != want.startNS || len(got.write) != len(want.write) {
			t.Fatalf("%s: series from %d, %d cells; from the files %d, %d", d.Day, got.startNS, len(got.write), want.startNS, len(want.write))
		}
		for k := range want.write {
			for _, p := range [][2]float64{{got.read[k], want.read[k]}, {got.write[k], want.write[k]}} {
				if math.Float64bits(p[0]) != math.Float64bits(p[1]) && !(math.IsNaN(p[0]) && math.IsNaN(p[1])) {
					t.Fatalf("%s: cell %d is %g, %g in the files", d.Day, k, p[0], p[1])
				}
			}
		}
	}
}

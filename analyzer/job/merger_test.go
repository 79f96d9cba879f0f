package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"iopred/tracefmt"
)

// randomPartial is rank r's partial of a few writes at times of its own,
// so that the ranks' histograms have different grids and merging them
// coarsens.
func randomPartial(rng *rand.Rand, r int) *Partial {
	b := NewBuilder(tracefmt.Header{Program: "/opt/app", StartUnixNs: 1e18 + rng.Int64N(1e9)})
	start := rng.Int64N(1e6)
	for i := range 1 + rng.IntN(20) {
		n := int64(1+rng.IntN(8)) << 12
		d := int64(1 + rng.IntN(1e5))
		b.Add(&tracefmt.Event{Op: "pwrite", Path: "/d/f" + fmt.Sprint(rng.IntN(3)), Offset: int64(i) * n, Size: n, Ret: n, Bytes: n,
			StartNs: start, EndNs: start + d})
		start += d + rng.Int64N(int64(1)<<uint(10+rng.IntN(25)))
	}
	return b.Partial(r, false, 0, 0)
}

// The tree that merges partials as they come gives MergeTree's partial,
// byte for byte, whatever the order the ranks come in and whichever ranks
// are missing (filled with ranks without I/O, as MergeTree's callers do).
func TestRankTreeIsMergeTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 7, 8, 13, 16, 31, 33, 100} {
		for trial := range 3 {
			parts := make([]*Partial, n)
			for r := range parts {
				parts[r] = randomPartial(rng, r)
			}
			var tree rankTree
			order := rng.Perm(n)
			if trial == 1 {
				order = order[:0]
				for r := range n {
					order = append(order, r) // in order
				}
			}
			given := parts
			if trial == 2 {
				// every third rank left no trace
				given = make([]*Partial, n)
				for r := range n {
					if r%3 == 1 {
						given[r] = emptyPartial(r)
						continue
					}
					given[r] = parts[r]
				}
			}
			for _, r := range order {
				if trial == 2 && r%3 == 1 {
					continue
				}
				if err := tree.add(given[r]); err != nil {
					t.Fatal(err)
				}
			}
			got, err := tree.finish(n)
			if err != nil {
				t.Fatal(err)
			}
			want, err := MergeTree(given)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := got.Encode()
			b, _ := want.Encode()
			if !bytes.Equal(a, b) {
				t.Fatalf("%d ranks, trial %d: the tree's merge differs from MergeTree's", n, trial)
			}
		}
	}
}

// A rank given twice, or a block that is not one of the tree's, is an
// error, not a silent merge.
func TestRankTreeRefuses(t *testing.T) {
	var tree rankTree
	if err := tree.add(emptyPartial(2)); err != nil {
		t.Fatal(err)
	}
	if err := tree.add(emptyPartial(2)); err == nil {
		t.Error("rank 2 added twice without error")
	}
	bad := &Partial{FirstRank: 1, Ranks: 2, Accuracy: []float32{-1, -1}}
	if err := tree.add(bad); err == nil {
		t.Error("ranks 1..2 (not aligned) added without error")
	}
}

// The job view read in shares (Plan.Read, each share through its wire
// form) and merged (Plan.Summarize) is FromTracesWith's, summary,
// warnings and error, for every split of the traces, when a rank has two
// traces in different shares (the launcher script's and the program's,
// in either order), a rank is missing, a trace is corrupt, and for
// traces taken as processes.
func TestPlanSharesIdentical(t *testing.T) {
	dir := t.TempDir()
	var traces []string
	traces = append(traces, writeRank(t, dir, "bash0", 0, 1, 0, false))
	for r := range 9 {
		if r == 4 {
			continue // missing
		}
		traces = append(traces, writeRank(t, dir, fmt.Sprintf("app%d", r), r, 3+r, 0, true))
	}
	traces = append(traces, writeRank(t, dir, "bash7", 7, 2, 0, false)) // after rank 7's program
	bad := filepath.Join(dir, "bad"+tracefmt.FileSuffix)
	os.WriteFile(bad, []byte("no trace"), 0o644)
	withBad := append(append([]string(nil), traces[:5]...), append([]string{bad}, traces[5:]...)...)
	plain := []string{writePlain(t, dir, 1, 5), writePlain(t, dir, 2, 9), writePlain(t, dir, 3, 2)}
	twins := []string{traces[1], writeRank(t, dir, "twin0", 0, 3, 0, true)}
	for _, c := range []struct {
		name   string
		traces []string
		opt    Options
	}{
		{"ranks", traces, Options{}},
		{"corrupt", withBad, Options{NoAccuracy: true}},
		{"processes", plain, Options{Processes: true}},
		{"twins", twins, Options{}},
	} {
		sum, warnings, err := FromTracesWith(c.traces, c.opt)
		if c.name == "ranks" {
			// The programs' writes, not the scripts': 3+r for each rank but 4.
			if sum == nil || sum.Counts.Writes != 3*8+(0+1+2+3+5+6+7+8) || sum.Ranks != 9 || len(warnings) != 1 {
				t.Fatalf("ranks: %v, warnings %q, error %v", sum, warnings, err)
			}
		}
		b, _ := json.Marshal(sum)
		want := fmt.Sprintf("%s\n%q\n%v", b, warnings, err)
		for k := 1; k <= len(c.traces)+1; k++ {
			for _, jobs := range []int{1, 3} {
				c.opt.Jobs = jobs
				plan, perr := NewPlan(c.traces, c.opt)
				if perr != nil {
					t.Fatal(perr)
				}
				var shares []*Results
				for s := range k {
					r := plan.Read(s*len(c.traces)/k, (s+1)*len(c.traces)/k)
					enc, err := r.Encode()
					if err != nil {
						t.Fatal(err)
					}
					if r, err = DecodeResults(enc); err != nil {
						t.Fatal(err)
					}
					shares = append(shares, r)
				}
				sum, warnings, err := plan.Summarize(shares)
				b, _ := json.Marshal(sum)
				if got := fmt.Sprintf("%s\n%q\n%v", b, warnings, err); got != want {
					t.Errorf("%s in %d shares, jobs %d:\n%s\nwant\n%s", c.name, k, jobs, got, want)
				}
			}
		}
	}
}

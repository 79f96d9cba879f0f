package periodcorpus

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// ftioAnswer is FTIO's own answer on one run at one sampling frequency
// (ftio_answers.tsv, written by ftio/side_by_side.sh running FTIO
// v0.0.9): the period it reports as dominant, or none.
type ftioAnswer struct {
	fs         float64
	period     float64 // 0: no dominant frequency
	confidence float64 // %
}

// readFTIOAnswers reads ftio_answers.tsv: run name to its answers by
// sampling frequency, and the frequencies in increasing order (nil when
// the file is absent).
func readFTIOAnswers(t testing.TB) (map[string]map[float64]ftioAnswer, []float64) {
	t.Helper()
	f, err := os.Open("ftio_answers.tsv")
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	answers := map[string]map[float64]ftioAnswer{}
	seen := map[float64]bool{}
	var freqs []float64
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 4 {
			t.Fatalf("ftio_answers.tsv:%d: %d fields, want 4", line, len(c))
		}
		var a ftioAnswer
		if a.fs, err = strconv.ParseFloat(c[1], 64); err != nil {
			t.Fatalf("ftio_answers.tsv:%d: fs_hz: %v", line, err)
		}
		if c[2] != "-" {
			if a.period, err = strconv.ParseFloat(c[2], 64); err != nil {
				t.Fatalf("ftio_answers.tsv:%d: ftio_period_s: %v", line, err)
			}
			if a.confidence, err = strconv.ParseFloat(c[3], 64); err != nil {
				t.Fatalf("ftio_answers.tsv:%d: ftio_confidence_pct: %v", line, err)
			}
		}
		if answers[c[0]] == nil {
			answers[c[0]] = map[float64]ftioAnswer{}
		}
		answers[c[0]][a.fs] = a
		if !seen[a.fs] {
			seen[a.fs] = true
			freqs = append(freqs, a.fs)
		}
	}
	sort.Float64s(freqs)
	return answers, freqs
}

// ftioTable is FTIO's own confusion table on the rows of c, at sampling
// frequency fs: any dominant frequency FTIO reports is its claim.
func ftioTable(c table, answers map[string]map[float64]ftioAnswer, fs float64) table {
	var f table
	for _, o := range c.rows {
		a := answers[o.name][fs]
		claimed, right := a.period > 0, math.Abs(a.period-o.want) <= 0.05*o.want
		switch {
		case o.periodic && claimed && right:
			f.tp++
		case o.periodic && claimed:
			f.wrong++
		case o.periodic:
			f.fn++
		case claimed:
			f.fp++
		default:
			f.tn++
		}
	}
	return f
}

// sideBySide prints FTIO's answers beside the rows of c and FTIO's own
// precision and recall at each sampling frequency it was run at.
func sideBySide(c table, answers map[string]map[float64]ftioAnswer, freqs []float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %-9s %9s %9s", "run", "class", "want s", "iopred s")
	for _, fs := range freqs {
		fmt.Fprintf(&b, " %20s", fmt.Sprintf("FTIO at %g Hz (conf)", fs))
	}
	b.WriteString("\n")
	for _, o := range c.rows {
		class, want, found := "aperiodic", "-", "-"
		if o.periodic {
			class, want = "periodic", fmt.Sprintf("%.4f", o.want)
		}
		if o.claimed {
			found = fmt.Sprintf("%.4f", o.found)
			if o.periodic && !o.right() {
				found += "!"
			}
		}
		fmt.Fprintf(&b, "%-14s %-9s %9s %9s", o.name, class, want, found)
		for _, fs := range freqs {
			a, ok := answers[o.name][fs]
			cell := "(not run)"
			switch {
			case ok && a.period > 0:
				cell = fmt.Sprintf("%.4f (%.0f%%)", a.period, a.confidence)
				if o.periodic && math.Abs(a.period-o.want) > 0.05*o.want || !o.periodic {
					cell = "!" + cell
				}
			case ok:
				cell = "none"
			}
			fmt.Fprintf(&b, " %20s", cell)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "iopred: precision %.3f  recall %.3f\n", c.precision(), c.recall())
	for _, fs := range freqs {
		f := ftioTable(c, answers, fs)
		fmt.Fprintf(&b, "FTIO at %g Hz: precision %.3f  recall %.3f (%d right, %d wrong, %d missed; %d claimed of %d aperiodic)\n",
			fs, f.precision(), f.recall(), f.tp, f.wrong, f.fn, f.fp, f.fp+f.tn)
	}
	return b.String()
}

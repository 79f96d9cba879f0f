package replay

import (
	"fmt"
	"io"
	"strings"
)

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// WriteText prints the reports for people, one block per process.
func WriteText(w io.Writer, reports []Report) error {
	var b strings.Builder
	for i, r := range reports {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "trace %s", r.Trace)
		if r.Program != "" {
			fmt.Fprintf(&b, " (%s, pid %d", r.Program, r.PID)
			if r.Rank != nil {
				fmt.Fprintf(&b, ", rank %d", *r.Rank)
			}
			b.WriteString(")")
		}
		b.WriteString("\n")
		if r.Truncated != "" {
			fmt.Fprintf(&b, "  truncated: %s\n", r.Truncated)
		}
		fmt.Fprintf(&b, "  events %d (ignored %d), contexts %d, grammar size %d, model memory %d bytes, %.0f ns per event (update + predict)\n",
			r.Events, r.Ignored, r.Contexts, r.GrammarSize, r.MemoryBytes, r.NsPerEvent)
		c := r.Context
		fmt.Fprintf(&b, "  context accuracy  paper (1/k) %s, last half %s; weighted %s, last half %s\n",
			pct(c.Paper), pct(c.PaperLastHalf), pct(c.Weighted), pct(c.WeightedLastHalf))
		s := r.Size
		fmt.Fprintf(&b, "  size              mean relative error %.4f, exact %s over %d data calls (%d unpredicted)\n",
			s.MeanError, pct(s.Exact), s.Scored, s.Unpredicted)
		o := r.Offset
		fmt.Fprintf(&b, "  offset            model %s (weighted %s; given the file %s), contiguous baseline %s over %d data calls\n",
			pct(o.Model), pct(o.Weighted), pct(o.GivenFile), pct(o.Contiguous), o.Scored)
		h := r.HitRatio
		fmt.Fprintf(&b, "  hit ratio         %.1f%% (weighted %.1f%%) over %d data calls\n", h.Paper, h.Weighted, h.Scored)
		t := r.InterArrival
		fmt.Fprintf(&b, "  inter-arrival     mean |error| %.6f s, immediate re-access baseline %.6f s over %d gaps\n",
			t.MeanAbsErrorSec, t.ImmediateReaccess, t.Scored)
		if st := r.Steady; st != nil {
			fmt.Fprintf(&b, "  steady phase      from step %d (%d steps): context first candidate %s, paper (1/k) %s\n",
				st.From, st.Steps, pct(st.Context), pct(st.Paper))
		} else {
			b.WriteString("  steady phase      none (new contexts until the run's last tenth)\n")
		}
		writeFields(&b, r)
		b.WriteString("  grammar size      ")
		for i, p := range thin(r.Growth, textGrowthPoints) {
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%d:%d", p.Event, p.GrammarSize)
		}
		b.WriteString("  (event:size)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// textGrowthPoints is how many points of the grammar-size series the text
// report shows; --json has them all.
const textGrowthPoints = 12

// thin picks at most n points spread evenly over ps, keeping the last.
func thin(ps []Point, n int) []Point {
	if len(ps) <= n {
		return ps
	}
	out := make([]Point, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, ps[i*len(ps)/n-1])
	}
	return out
}

// writeFields prints the per-field table: the model (with its baselines),
// the model alone when evaluated, and the baseline, over the run and over
// the steady phase.
func writeFields(b *strings.Builder, r Report) {
	if len(r.Fields) == 0 {
		return
	}
	value := func(f FieldScore, x float64) string {
		if f.HigherIsBetter {
			return pct(x)
		}
		return fmt.Sprintf("%.6f", x)
	}
	opt := func(f FieldScore, x *float64) string {
		if x == nil {
			return "-"
		}
		return value(f, *x)
	}
	fmt.Fprintf(b, "  %-8s %-29s %7s %10s", "field", "metric", "scored", "model")
	if r.ModelAlone != nil {
		fmt.Fprintf(b, " %11s", "model alone")
	}
	fmt.Fprintf(b, " %10s  %-27s %10s %10s %9s\n", "baseline", "(rule)", "steady", "(baseline)", "from rule")
	for i, f := range r.Fields {
		mark := " "
		if !f.AtLeastBaseline() {
			mark = "<"
		}
		fmt.Fprintf(b, "%s %-8s %-29s %7d %10s", mark, f.Field, f.Metric, f.Scored, value(f, f.Model))
		if r.ModelAlone != nil && i < len(r.ModelAlone) {
			fmt.Fprintf(b, " %11s", value(f, r.ModelAlone[i].Model))
		}
		fmt.Fprintf(b, " %10s  %-27s %10s %10s %9s\n", value(f, f.BaselineValue), f.Baseline,
			opt(f, f.Steady), opt(f, f.SteadyBaseline), pct(f.FromBaseline))
	}
}

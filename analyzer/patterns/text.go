package patterns

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"iopred/predictor/pattern"
)

// maxShownDeltas bounds the deltas printed per unit in the text report; the
// JSON report has them all.
const maxShownDeltas = 8

// shortUnit prints a unit in the paper's notation, eliding long delta lists.
func shortUnit(u pattern.Unit) string {
	if len(u.Deltas) <= maxShownDeltas {
		return u.String()
	}
	parts := make([]string, maxShownDeltas)
	for i := range parts {
		parts[i] = strconv.FormatInt(u.Deltas[i], 10)
	}
	s := fmt.Sprintf("[%d,(%s,...%d more)^%d", u.Init, strings.Join(parts, ","), len(u.Deltas)-maxShownDeltas, u.Reps)
	if u.Tail > 1 {
		s += "+" + strconv.FormatInt(u.Tail-1, 10)
	}
	return s + "]"
}

func shortUnits(us []pattern.Unit) string {
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = shortUnit(u)
	}
	return strings.Join(parts, ", ")
}

// maxShownEntries bounds the entries printed per process in the text report.
const maxShownEntries = 10

// WriteText prints the report for people.
func WriteText(w io.Writer, rep *Report) error {
	ew := &errWriter{w: w}
	for _, warn := range rep.Warnings {
		ew.printf("warning: %s\n", warn)
	}
	if len(rep.Files) == 0 {
		ew.printf("no data events\n")
	}
	for _, f := range rep.Files {
		ew.printf("%s\n  %d requests; index %d -> %d bytes (%s patterns), compression ratio %.1f; %.1f%% of requests in patterns with r >= 2\n",
			f.Path, f.Requests, f.RawIndexBytes, f.EncodedIndexBytes, f.IndexForm, f.CompressionRatio, 100*f.Coverage)
		for _, l := range f.Local {
			who := fmt.Sprintf("pid %d", l.PID)
			if l.Rank != nil {
				who = fmt.Sprintf("rank %d pid %d", *l.Rank, l.PID)
			}
			ew.printf("  local id %d (%s) %s: %d requests, %d pattern entries\n", l.ID, who, l.Kind, l.Requests, len(l.Entries))
			if l.Tree != "" {
				ew.printf("    nested: %s\n", l.Tree)
			}
			for i, e := range l.Entries {
				if i == maxShownEntries {
					ew.printf("    ... %d more entries\n", len(l.Entries)-maxShownEntries)
					break
				}
				ew.printf("    %s len %s phys %s\n", shortUnit(e.Logical), shortUnits(e.Length), shortUnits(e.Physical))
			}
		}
		for _, g := range f.Global {
			ew.printf("  global %s: %s\n", g.Kind, g.Pattern)
		}
	}
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

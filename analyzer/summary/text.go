package summary

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText prints the report as three aligned tables: processes, files,
// top contexts.
func WriteText(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROCESS\tPID\tRANK\tEVENTS\tDURATION\tIO TIME\tREAD\tWRITTEN\tFAILED\tSTATUS")
	for _, p := range rep.Processes {
		rank := "-"
		if p.Rank != nil {
			rank = strconv.Itoa(*p.Rank)
		}
		status := "complete"
		switch {
		case p.Problem != "":
			status = p.Problem
		case p.Dropped > 0:
			status = fmt.Sprintf("complete, %d events dropped", p.Dropped)
		}
		prog := filepath.Base(p.Program)
		if p.Program == "" {
			prog = filepath.Base(p.Trace)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\n", prog, p.PID, rank, p.Events,
			duration(p.DurationNs), duration(p.IONs), size(p.BytesRead), size(p.BytesWritten), p.Errors, status)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "FILE\tPROCS\tEVENTS\tIO TIME\tREAD\tWRITTEN\tCALLS")
	for _, f := range rep.Files {
		path := f.Path
		if path == "" {
			path = "(no file)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\n", path, f.Processes, f.Events, duration(f.IONs),
			size(f.BytesRead), size(f.BytesWritten), calls(f.Calls))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "CONTEXT\tPROCS\tEVENTS\tIO TIME\tBYTES\tCALLS\tWHERE")
	for _, c := range rep.Contexts {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%s\n", c.ID, c.Processes, c.Events, duration(c.IONs),
			size(c.Bytes), calls(c.Calls), c.Where)
	}
	return tw.Flush()
}

// calls prints op counts as "write=10 read=4", most frequent first.
func calls(m map[string]uint64) string {
	ops := make([]string, 0, len(m))
	for op := range m {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool {
		if m[ops[i]] != m[ops[j]] {
			return m[ops[i]] > m[ops[j]]
		}
		return ops[i] < ops[j]
	})
	var b strings.Builder
	for i, op := range ops {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", op, m[op])
	}
	return b.String()
}

func duration(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Microsecond).String()
	}
	return d.String()
}

// size prints a byte count in binary units.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

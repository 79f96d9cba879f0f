package summary

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"iopred/analyzer/job"
	"iopred/analyzer/pathfilter"
	"iopred/tracefmt"
)

// WriteText prints the report as three aligned tables: processes, files,
// top contexts, after the job's start (the one absolute time; the others
// count from it) and what the path filter left out.
func WriteText(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	writeSource(tw, rep.Source)
	if rep.StartUnixNs > 0 {
		fmt.Fprintf(tw, "job started %s; times are seconds since then\n", FormatDate(rep.StartUnixNs))
	}
	fmt.Fprintln(tw, ExcludedLine(rep))
	fmt.Fprintln(tw)
	mpi := false
	for _, p := range rep.Processes {
		mpi = mpi || p.MPIStartNs > 0 || p.MPIEndNs > 0
	}
	head := "PROCESS\tPID\tRANK\tSTART\tEND\tEVENTS\tIO TIME\t"
	if mpi {
		head += "MPI START-UP\tMPI SHUT-DOWN\t"
	}
	procLayers := false
	for _, p := range rep.Processes {
		procLayers = procLayers || len(p.Layers) > 1
	}
	head += "READ\tWRITTEN\tFAILED\tSTATUS"
	if procLayers {
		head += "\tBY LAYER (READ/WRITTEN)"
	}
	fmt.Fprintln(tw, head)
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
		pid := strconv.Itoa(p.PID)
		if p.Shared {
			prog, pid, rank = "(shared files)", "-", "all"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t", prog, pid, rank, Seconds(p.StartNs),
			Seconds(p.StartNs+p.DurationNs), p.Events, duration(p.IONs))
		if mpi {
			fmt.Fprintf(tw, "%s\t%s\t", duration(p.MPIStartNs), duration(p.MPIEndNs))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s", size(p.BytesRead), size(p.BytesWritten), p.Errors, status)
		if procLayers {
			fmt.Fprintf(tw, "\t%s", LayerCell(p.Layers))
		}
		fmt.Fprintln(tw)
	}
	writeTree(tw, rep)
	writePrefetch(tw, rep)
	fmt.Fprintln(tw)
	fileLayers := false
	for _, f := range rep.Files {
		fileLayers = fileLayers || len(f.Layers) > 1
	}
	if fileLayers {
		fmt.Fprintln(tw, "FILE\tPROCS\tEVENTS\tIO TIME\tREAD\tWRITTEN\tBY LAYER (READ/WRITTEN)\tCALLS")
	} else {
		fmt.Fprintln(tw, "FILE\tPROCS\tEVENTS\tIO TIME\tREAD\tWRITTEN\tCALLS")
	}
	for _, f := range rep.Files {
		path := f.Path
		if path == "" {
			path = "(no file)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t", path, f.Processes, f.Events, duration(f.IONs),
			size(f.BytesRead), size(f.BytesWritten))
		if fileLayers {
			fmt.Fprintf(tw, "%s\t", LayerCell(f.Layers))
		}
		fmt.Fprintln(tw, calls(f.Calls))
	}
	writeLayers(tw, rep)
	writeLustre(tw, rep)
	writeRegions(tw, rep)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "CONTEXT\tPROCS\tEVENTS\tIO TIME\tBYTES\tCALLS\tWHERE")
	for _, c := range rep.Contexts {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%s\n", c.ID, c.Processes, c.Events, duration(c.IONs),
			size(c.Bytes), calls(c.Calls), c.Where)
	}
	writeModules(tw, rep)
	if rep.Job != nil {
		writeJob(tw, rep.Job)
	}
	for _, w := range rep.JobWarnings {
		fmt.Fprintf(tw, "\njob: warning: %s\n", w)
	}
	return tw.Flush()
}

// writeSource prints the job as its source recorded it (a Darshan log's
// job record), before everything else.
func writeSource(w io.Writer, j *SourceJob) {
	if j == nil {
		return
	}
	fmt.Fprintf(w, "JOB\t%s\n", j.JobID)
	fmt.Fprintf(w, "processes\t%d\n", j.Procs)
	fmt.Fprintf(w, "uid\t%d\n", j.UID)
	fmt.Fprintf(w, "executable\t%s\n", j.Program)
	if len(j.Args) > 0 {
		fmt.Fprintf(w, "arguments\t%s\n", strings.Join(j.Args, " "))
	}
	fmt.Fprintf(w, "start\t%s (%d)\n", FormatDate(j.StartUnixNs), j.StartUnixNs/1e9)
	fmt.Fprintf(w, "end\t%s (%d)\n", FormatDate(j.EndUnixNs), j.EndUnixNs/1e9)
	fmt.Fprintf(w, "run time\t%.4f s\n", float64(j.RunNs)/1e9)
	fmt.Fprintf(w, "log\t%s\n", j.Source)
	fmt.Fprintf(w, "modules\t%s\n", strings.Join(j.Modules, ", "))
	if j.Partial != "" {
		fmt.Fprintf(w, "partial\tyes: %s\n", j.Partial)
	} else {
		fmt.Fprintf(w, "partial\tno\n")
	}
	fmt.Fprintln(w)
}

// LayerCell writes a per-layer view on one line: "mpiio 1.0 MiB/2.0 MiB,
// posix ...", from the application's layer down.
func LayerCell(ls Layers) string {
	names := make([]string, 0, len(ls))
	for l := range ls {
		names = append(names, l)
	}
	sort.Slice(names, func(i, j int) bool { return layerOrder(names[i]) < layerOrder(names[j]) })
	var b strings.Builder
	for i, l := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s/%s", l, size(ls[l].BytesRead), size(ls[l].BytesWritten))
	}
	return b.String()
}

// writeLustre prints the files' Lustre layouts and the OSTs the job used.
func writeLustre(w io.Writer, rep *Report) {
	if len(rep.OSTs) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "LUSTRE FILE\tSTRIPE SIZE\tSTRIPE COUNT\tOSTS")
	for _, f := range rep.Files {
		if l := f.Lustre; l != nil {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", f.Path, size(l.StripeSize), l.StripeCount, ostList(l.OSTs))
		}
	}
	for _, f := range rep.LustreOnly {
		fmt.Fprintf(w, "%s (no I/O record)\t%s\t%d\t%s\n", f.Path, size(f.StripeSize), f.StripeCount, ostList(f.OSTs))
	}
	fmt.Fprintf(w, "job's OST footprint\t\t%d\t%s\n", len(rep.OSTs), ostList(rep.OSTs))
}

// writeRegions prints the spans of the application's own work (a
// DFTracer trace's functions, epochs, steps), longest in total first.
func writeRegions(w io.Writer, rep *Report) {
	if len(rep.Regions) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "REGION\tCATEGORY\tPROCS\tCOUNT\tTOTAL\tLONGEST\tFIRST\tLAST END")
	for _, g := range rep.Regions {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", g.Name, g.Category, g.Processes, g.Count, duration(g.TotalNs),
			duration(g.MaxNs), Seconds(g.FirstNs), Seconds(g.LastEndNs))
	}
}

// ostList writes OST indices, the first 16 of a long list.
func ostList(osts []int64) string {
	var b strings.Builder
	for i, o := range osts {
		if i == 16 {
			fmt.Fprintf(&b, " and %d more", len(osts)-16)
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(o, 10))
	}
	return b.String()
}

// writeLayers prints the application's totals, each byte once, above each
// layer's own view.
func writeLayers(w io.Writer, rep *Report) {
	if len(rep.Layers) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "LAYER\tCALLS\tREAD\tWRITTEN")
	a := rep.Application
	fmt.Fprintf(w, "application (each byte once)\t%d\t%s\t%s\n", a.Calls, size(a.BytesRead), size(a.BytesWritten))
	for _, l := range rep.Layers {
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", l.Layer, l.Calls, size(l.BytesRead), size(l.BytesWritten))
	}
}

// writeJob prints the whole-job view: totals, periods, prediction score,
// global patterns.
func writeJob(w io.Writer, j *job.Summary) {
	c := &j.Counts
	fmt.Fprintf(w, "\nJOB\t%s, %d ranks\n", filepath.Base(j.Program), j.Ranks)
	fmt.Fprintf(w, "calls\t%d (posix %d, stdio %d, mpiio %d), %d failed", c.Events, c.POSIX, c.Stdio, c.MPIIO, c.Failed)
	if c.ExcludedEvents > 0 {
		fmt.Fprintf(w, "; %d more on excluded paths", c.ExcludedEvents)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "data\t%d writes (%s), %d reads (%s)\n", c.Writes, size(c.BytesWritten), c.Reads, size(c.BytesRead))
	fmt.Fprintf(w, "io time\t%s summed over ranks; longest rank %d: %s\n", duration(c.IONs), c.MaxIORank, duration(c.MaxRankIONs))
	for _, d := range []struct {
		name string
		p    *job.Period
	}{{"write", j.Period.Write}, {"read", j.Period.Read}, {"read+write", j.Period.Both}} {
		switch {
		case d.p == nil:
			fmt.Fprintf(w, "%s period\tno I/O\n", d.name)
		case d.p.PeriodS == nil:
			fmt.Fprintf(w, "%s period\tnone found (%s)\n", d.name, d.p.Verdict)
		default:
			note := ""
			if d.p.Multiple > 1 {
				note = fmt.Sprintf("; %d times FTIO's, by autocorrelation", d.p.Multiple)
			}
			fmt.Fprintf(w, "%s period\t%.6g s (%.6g Hz), confidence %.3f (%s), %d of %d resolutions agree%s; FTIO at %.4g Hz as iopred period --average --fs %.4g\n",
				d.name, *d.p.PeriodS, *d.p.FreqHz, d.p.Confidence, d.p.Verdict, d.p.Agreeing, len(d.p.Resolutions), note, d.p.Fs, d.p.Fs)
		}
	}
	if a := &j.Accuracy; a.Mean != nil {
		fmt.Fprintf(w, "prediction\tcontext score %.3f over %d calls; lowest rank %d (%.3f), highest rank %d (%.3f)\n",
			*a.Mean, a.Steps, a.MinRank, *a.Min, a.MaxRank, *a.Max)
	} else {
		fmt.Fprintf(w, "prediction\tno model ran\n")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "JOB FILE\tKIND\tREQUESTS\tIN GLOBALS\tLOCAL RUNS\tGLOBAL PATTERNS")
	for _, f := range j.Patterns {
		pat := "-"
		if len(f.Strings) > 0 {
			pat = f.Strings[0]
			if len(f.Strings) > 1 {
				pat += fmt.Sprintf(" (and %d more)", len(f.Strings)-1)
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%s\n", f.Path, f.Kind, f.Requests, f.InGlobals, f.LocalRuns, pat)
	}
	if j.DroppedRequests > 0 {
		fmt.Fprintf(w, "(%d requests on files past the per-rank bound of %d streams are not in the patterns)\n", j.DroppedRequests, job.MaxStreams)
	}
}

// FormatDate prints a wall-clock time (ns since the Unix epoch) as a
// date to the millisecond, in the local time zone, named.
func FormatDate(unixNs int64) string {
	return time.Unix(0, unixNs).Format("2006-01-02 15:04:05.000 MST (-07:00)")
}

// Seconds prints a time since the job's start, in seconds to the
// microsecond below 10 s and to the millisecond above.
func Seconds(ns int64) string {
	if ns < 10e9 && ns > -10e9 {
		return strconv.FormatFloat(float64(ns)/1e9, 'f', 6, 64)
	}
	return strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64)
}

// ExcludedLine says on one line what the path filter left out, or that
// nothing was, and how to see it.
func ExcludedLine(rep *Report) string {
	x := &rep.Excluded
	switch {
	case rep.AllPaths:
		return "excluded: nothing (--all-paths: the system's and the MPI runtime's files are listed)"
	case x.Files == 0:
		return "excluded: nothing (no system or MPI runtime file was used)"
	}
	var kinds []string
	for _, k := range []pathfilter.Kind{pathfilter.System, pathfilter.MPIRuntime} {
		if n := x.ByKind[k.String()]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	return fmt.Sprintf("excluded: %d files, %s (%d calls, %s) on system and MPI runtime paths (%s); --all-paths shows them",
		x.Files, size(x.Bytes), x.Events, duration(x.IONs), strings.Join(kinds, ", "))
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

// writeTree prints the process tree when some traced process is the
// parent of another (a program that forks workers, a shell): each process
// under its parent, with how it started and what it moved. The programs
// one pid ran in turn (a launcher that execs the next, as pyenv's shims
// do) are listed together, in order, each with its own children: a child
// hangs under the program its parent pid was running when it started.
func writeTree(w io.Writer, rep *Report) {
	type key struct {
		host string
		pid  int
	}
	images := map[key][]int{}
	for i, p := range rep.Processes {
		k := key{p.Host, p.PID}
		images[k] = append(images[k], i)
	}
	byStart := func(a, b int) int { return cmp.Compare(rep.Processes[a].StartNs, rep.Processes[b].StartNs) }
	for _, imgs := range images {
		slices.SortStableFunc(imgs, byStart)
	}
	children := map[int][]int{}
	var roots []int
	nested := false
	for i, p := range rep.Processes {
		own := images[key{p.Host, p.PID}]
		if own[0] != i {
			continue // printed with the first program of its pid
		}
		parents := images[key{p.Host, p.PPID}]
		if p.PPID == 0 || p.PPID == p.PID || len(parents) == 0 {
			roots = append(roots, i)
			continue
		}
		parent := parents[0]
		for _, c := range parents {
			if rep.Processes[c].StartNs <= p.StartNs {
				parent = c
			}
		}
		children[parent] = append(children[parent], i)
		nested = true
	}
	if !nested {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "PROCESS TREE")
	var walk func(i, depth int)
	walk = func(i, depth int) {
		p := rep.Processes[i]
		for n, img := range images[key{p.Host, p.PID}] {
			q := rep.Processes[img]
			how := "started"
			switch {
			case n > 0:
				how = "exec'd"
			case q.ForkUnixNs != 0:
				how = "forked"
			}
			fmt.Fprintf(w, "%s%d %s (%s at %s, read %s, written %s)\n", strings.Repeat("  ", depth), q.PID,
				filepath.Base(q.Program), how, Seconds(q.StartNs), size(q.BytesRead), size(q.BytesWritten))
			for _, c := range children[img] {
				walk(c, depth+1)
			}
		}
	}
	slices.SortStableFunc(roots, byStart)
	for _, c := range children {
		slices.SortStableFunc(c, byStart)
	}
	for _, r := range roots {
		walk(r, 0)
	}
}

// writePrefetch prints what the library's prefetching did, per process and
// in total, when any process prefetched.
func writePrefetch(w io.Writer, rep *Report) {
	if rep.Prefetch == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "PREFETCH\tPID\tREADS\tCOVERED\tPREFETCHED\tUSED\tWASTED\tFADVISE CALLS\tMISSES")
	line := func(name, pid string, p *tracefmt.Prefetch) {
		share := func(a, b uint64) string {
			if b == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d (%s)\t%s\t%s\t%s (%s)\t%d\t%d\n", name, pid, p.Reads, p.Covered, share(p.Covered, p.Reads),
			size(int64(p.PrefetchedBytes)), size(int64(p.UsedBytes)), size(int64(p.WastedBytes)), share(p.WastedBytes, p.PrefetchedBytes), p.Calls, p.Misses)
	}
	n := 0
	for _, p := range rep.Processes {
		if p.Prefetch != nil {
			line(filepath.Base(p.Program), strconv.Itoa(p.PID), p.Prefetch)
			n++
		}
	}
	if n > 1 {
		line("(all)", "-", rep.Prefetch)
	}
}

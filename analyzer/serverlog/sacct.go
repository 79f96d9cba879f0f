package serverlog

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// sacctNeed are the fields a sacct header must have (JobID may stand in
// for JobIDRaw).
var sacctNeed = []string{"JobIDRaw", "User", "JobName", "NNodes", "Start", "End", "State"}

// ReadSacct reads `sacct --parsable2` output (fields separated by '|',
// the header line first; --parsable's trailing '|' is accepted) with at
// least the fields JobIDRaw (or JobID), User, JobName, NNodes, Start, End
// and State in any order; Submit and Timelimit are read when present.
// Job steps (123.batch, 123.extern, 123.0) are folded into their job:
// they are not jobs of their own. Jobs that never started (Start Unknown
// or None) are left out, and so are jobs still running (End Unknown)
// unless opts.Running. "CANCELLED by 1234" is the state CANCELLED.
func ReadSacct(r io.Reader, name string, opts Options) ([]Job, error) {
	jobs, err := readSacct(name, r, &opts)
	if err != nil {
		return nil, err
	}
	return sortJobs(jobs), nil
}

func readSacct(path string, r io.Reader, opts *Options) ([]Job, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	s := &lineScanner{br: br}
	var col map[string]int
	var width int
	for s.next() {
		if len(strings.TrimSpace(string(s.line))) == 0 {
			continue
		}
		hdr := strings.Split(string(s.line), "|")
		if hdr[len(hdr)-1] == "" {
			hdr = hdr[:len(hdr)-1]
		}
		col = map[string]int{}
		for i, h := range hdr {
			col[strings.TrimSpace(h)] = i
		}
		if _, ok := col["JobIDRaw"]; !ok {
			if i, ok := col["JobID"]; ok {
				col["JobIDRaw"] = i
			}
		}
		var missing []string
		for _, f := range sacctNeed {
			if _, ok := col[f]; !ok {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s: line %d: sacct header lacks %s (run sacct --parsable2 --format=JobIDRaw,User,JobName,NNodes,Start,End,State)",
				path, s.n, strings.Join(missing, ", "))
		}
		width = len(hdr)
		break
	}
	if col == nil {
		if s.err != nil {
			return nil, fmt.Errorf("%s: %v", path, s.err)
		}
		return nil, fmt.Errorf("%s: no sacct header", path)
	}
	loc := opts.loc()
	var jobs []Job
	for s.next() {
		line := string(s.line)
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) == width+1 && f[width] == "" {
			f = f[:width]
		}
		if len(f) != width {
			if err := opts.badLine(fmt.Errorf("%s: line %d: %d fields, the header has %d", path, s.n, len(f), width), s.partial); err != nil {
				return nil, err
			}
			continue
		}
		j, keep, err := sacctJob(f, col, loc, opts.Running)
		if err != nil {
			if err := opts.badLine(fmt.Errorf("%s: line %d: %v", path, s.n, err), s.partial); err != nil {
				return nil, err
			}
			continue
		}
		if keep {
			jobs = append(jobs, j)
		}
	}
	if s.err != nil {
		return nil, fmt.Errorf("%s: line %d: %v", path, s.n+1, s.err)
	}
	return jobs, nil
}

// sacctJob reads one line; keep is false for a step, a job that never
// started, and a running job unless running.
func sacctJob(f []string, col map[string]int, loc *time.Location, running bool) (Job, bool, error) {
	get := func(k string) string { return strings.TrimSpace(f[col[k]]) }
	id := get("JobIDRaw")
	if id == "" {
		return Job{}, false, fmt.Errorf("field JobIDRaw empty")
	}
	if strings.Contains(id, ".") {
		return Job{}, false, nil // a step: the job's own line holds the allocation
	}
	j := Job{ID: id, User: get("User"), Name: get("JobName")}
	state := get("State")
	if i := strings.IndexByte(state, ' '); i > 0 {
		state = state[:i] // "CANCELLED by 1234"
	}
	j.State = state
	start, started, err := jobTime(get("Start"), loc)
	if err != nil {
		return Job{}, false, fmt.Errorf("field Start: %v", err)
	}
	if !started {
		return Job{}, false, nil
	}
	j.Start = start
	end, ended, err := jobTime(get("End"), loc)
	if err != nil {
		return Job{}, false, fmt.Errorf("field End: %v", err)
	}
	if ended {
		if end.Before(start) {
			return Job{}, false, fmt.Errorf("field End %s before Start %s", get("End"), get("Start"))
		}
		j.End = end
	} else if !running {
		return Job{}, false, nil
	}
	n, err := parseCount(get("NNodes"))
	if err != nil {
		return Job{}, false, fmt.Errorf("field NNodes: %v", err)
	}
	j.Nodes = n
	if j.User == "" {
		return Job{}, false, fmt.Errorf("field User empty on a job line")
	}
	if i, ok := col["Submit"]; ok {
		if t, ok, err := jobTime(f[i], loc); err == nil && ok {
			j.Submit = t
		}
	}
	if i, ok := col["Timelimit"]; ok {
		if d, err := parseSlurmDuration(f[i]); err == nil {
			j.Limit = d
		}
	}
	return j, true, nil
}

// parseCount reads a node count, with Slurm's K and M suffixes.
func parseCount(s string) (int, error) {
	mul := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mul, s = 1024*1024, s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 1<<40/mul {
		return 0, fmt.Errorf("%q is not a positive count", s)
	}
	return n * mul, nil
}

// parseSlurmDuration reads [DD-][HH:]MM:SS, as Slurm writes Elapsed and
// Timelimit; UNLIMITED and Partition_Limit are errors (no limit known).
func parseSlurmDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var days int
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("duration %q", s)
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("duration %q", s)
	}
	var secs int
	for _, p := range parts {
		p, _, _ = strings.Cut(p, ".")
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("duration %q", s)
		}
		secs = secs*60 + n
	}
	return time.Duration(days*86400+secs) * time.Second, nil
}

// formatSlurmDuration writes [DD-]HH:MM:SS.
func formatSlurmDuration(d time.Duration) string {
	s := int64(d / time.Second)
	days, s := s/86400, s%86400
	hms := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if days > 0 {
		return fmt.Sprintf("%d-%s", days, hms)
	}
	return hms
}

// SacctWriterOptions describe the output of a SacctWriter.
type SacctWriterOptions struct {
	// TZ is the zone times are written in, without a zone as sacct
	// writes them; nil means time.Local, the zone readers assume.
	TZ *time.Location
	// Steps adds each job's batch step and one job step after it, as
	// sacct lists them without -X: readers must fold them.
	Steps bool
}

// SacctWriter writes jobs as `sacct --parsable2 --format=JobID,JobIDRaw,
// User,JobName,NNodes,Submit,Start,End,Elapsed,Timelimit,State` prints
// them.
type SacctWriter struct {
	w    *bufio.Writer
	opts SacctWriterOptions
	head bool
}

// SacctHeader is the header line SacctWriter writes.
const SacctHeader = "JobID|JobIDRaw|User|JobName|NNodes|Submit|Start|End|Elapsed|Timelimit|State"

// NewSacctWriter writes to w; call Flush at the end.
func NewSacctWriter(w io.Writer, opts SacctWriterOptions) *SacctWriter {
	if opts.TZ == nil {
		opts.TZ = time.Local
	}
	return &SacctWriter{w: bufio.NewWriter(w), opts: opts}
}

// Write writes one job (and its steps, with Steps). A zero Start is
// written Unknown (a job that never ran), a zero End Unknown (a job still
// running), a zero Limit UNLIMITED.
func (s *SacctWriter) Write(j Job) error {
	for _, f := range []string{j.ID, j.User, j.Name, j.State} {
		if strings.ContainsAny(f, "|\n\r") {
			return fmt.Errorf("sacct: job %q: field %q holds a '|' or a newline", j.ID, f)
		}
	}
	if !s.head {
		s.head = true
		if _, err := s.w.WriteString(SacctHeader + "\n"); err != nil {
			return err
		}
	}
	tm := func(t time.Time) string {
		if t.IsZero() {
			return "Unknown"
		}
		return formatLocal(t.Truncate(time.Second), s.opts.TZ, 'T')
	}
	elapsed := "00:00:00"
	if !j.Start.IsZero() && !j.End.IsZero() {
		elapsed = formatSlurmDuration(j.End.Sub(j.Start))
	}
	limit := "UNLIMITED"
	if j.Limit > 0 {
		limit = formatSlurmDuration(j.Limit)
	}
	line := func(id, user, name string, nodes int) error {
		_, err := fmt.Fprintf(s.w, "%s|%s|%s|%s|%d|%s|%s|%s|%s|%s|%s\n", id, id, user, name, nodes,
			tm(j.Submit), tm(j.Start), tm(j.End), elapsed, limit, j.State)
		return err
	}
	if err := line(j.ID, j.User, j.Name, j.Nodes); err != nil {
		return err
	}
	if s.opts.Steps && !j.Start.IsZero() {
		limit = ""
		if err := line(j.ID+".batch", "", "batch", 1); err != nil {
			return err
		}
		if err := line(j.ID+".0", "", j.Name, j.Nodes); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes what is buffered.
func (s *SacctWriter) Flush() error { return s.w.Flush() }

// WriteSacct writes jobs as sacct --parsable2 output.
func WriteSacct(w io.Writer, jobs []Job, opts SacctWriterOptions) error {
	sw := NewSacctWriter(w, opts)
	for _, j := range jobs {
		if err := sw.Write(j); err != nil {
			return err
		}
	}
	return sw.Flush()
}

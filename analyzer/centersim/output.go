package centersim

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// SacctHeader is the header line WriteSacct writes.
const SacctHeader = "JobIDRaw|JobID|JobName|User|NNodes|Submit|Start|End|Elapsed|Timelimit|State|ExitCode"

// WriteSacct writes the job log as `sacct --parsable2
// --format=JobIDRaw,JobID,JobName,User,NNodes,Submit,Start,End,Elapsed,Timelimit,State,ExitCode`
// prints it, times without zone in loc: one line per job, then its batch
// step and its srun step (".0", named after the program) for jobs that
// ran. A job cancelled while waiting has Start "None"; a job still
// running at the end of the period has End "Unknown".
func WriteSacct(w io.Writer, jobs []JobRecord, loc *time.Location) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, SacctHeader)
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "Unknown"
		}
		return t.In(loc).Format("2006-01-02T15:04:05")
	}
	for i := range jobs {
		j := &jobs[i]
		start, end, elapsed := "None", ts(j.End), "00:00:00"
		if j.Started() {
			start = ts(j.Start)
			stop := j.End
			if stop.IsZero() {
				stop = j.Start // running: sacct shows the time so far; the period's end is not known here
			}
			elapsed = clock(stop.Sub(j.Start))
		}
		state, exit := j.State, "0:0"
		switch state {
		case "FAILED":
			exit = "1:0"
		case "TIMEOUT":
			exit = "0:15"
		case "CANCELLED":
			state = "CANCELLED by " + strconv.Itoa(uid(j.User))
		}
		fmt.Fprintf(bw, "%s|%s|%s|%s|%d|%s|%s|%s|%s|%s|%s|%s\n", j.ID, j.ID, j.Name, j.User, j.Nodes,
			ts(j.Submit), start, end, elapsed, clock(j.Limit), state, exit)
		if !j.Started() {
			continue
		}
		stepState := j.State
		if stepState == "TIMEOUT" {
			stepState = "CANCELLED"
		}
		fmt.Fprintf(bw, "%s.batch|%s.batch|batch||1|%s|%s|%s|%s||%s|%s\n", j.ID, j.ID, ts(j.Start), start, end, elapsed, stepState, exit)
		fmt.Fprintf(bw, "%s.0|%s.0|%s||%d|%s|%s|%s|%s||%s|%s\n", j.ID, j.ID, program(j.Name), j.Nodes, ts(j.Start), start, end, elapsed, stepState, exit)
	}
	return bw.Flush()
}

// program is the executable a job's srun step runs.
func program(name string) string {
	if i := strings.IndexAny(name, "_."); i > 0 {
		return name[:i] + ".x"
	}
	return name + ".x"
}

// uid is a stable numeric id for a user name.
func uid(user string) int {
	h := 0
	for _, c := range user {
		h = (h*31 + int(c)) % 50000
	}
	return 10000 + h
}

// clock formats a duration as sacct does: [D-]HH:MM:SS.
func clock(d time.Duration) string {
	s := int64(math.Round(d.Seconds()))
	days, s := s/86400, s%86400
	out := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if days > 0 {
		out = fmt.Sprintf("%d-%s", days, out)
	}
	return out
}

// WriteTruth writes the ground truth as indented JSON.
func WriteTruth(w io.Writer, t *Truth) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(t)
}

// ReadTruth reads what WriteTruth wrote.
func ReadTruth(r io.Reader) (*Truth, error) {
	var t Truth
	if err := json.NewDecoder(r).Decode(&t); err != nil {
		return nil, err
	}
	return &t, nil
}

// JobsHeader is the columns of WriteJobs.
var JobsHeader = []string{"job_id", "user", "name", "nodes", "class", "foreign", "with_io", "iterations", "state",
	"submit", "start", "end", "wait_s", "io_s", "io_alone_s", "slowdown", "advice", "held", "reason"}

// WriteJobs writes every job with what the simulator knows of it (class,
// wait, I/O time against the same I/O alone, advice) as CSV, times in
// RFC 3339.
func WriteJobs(w io.Writer, jobs []JobRecord) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(JobsHeader); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	ts := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format(time.RFC3339)
	}
	for i := range jobs {
		j := &jobs[i]
		wait := ""
		if j.Started() {
			wait = f(j.WaitS())
		}
		rec := []string{j.ID, j.User, j.Name, strconv.Itoa(j.Nodes), j.Class, strconv.FormatBool(j.Foreign),
			strconv.FormatBool(j.WithIO), strconv.Itoa(j.Iterations), j.State, ts(j.Submit), ts(j.Start), ts(j.End),
			wait, f(j.IOTimeS), f(j.IOAloneS), f(j.Slowdown()), j.Advice, strconv.Itoa(j.Held), j.Reason}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

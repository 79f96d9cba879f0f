package serverlog

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// isTorqueLine tells an accounting record: "MM/DD/YYYY HH:MM:SS;X;".
func isTorqueLine(b []byte) bool {
	if len(b) < 22 || b[2] != '/' || b[5] != '/' || b[10] != ' ' || b[13] != ':' || b[19] != ';' || b[21] != ';' {
		return false
	}
	for _, i := range []int{0, 1, 3, 4, 6, 7, 8, 9, 11, 12, 14, 15, 17, 18} {
		if b[i] < '0' || b[i] > '9' {
			return false
		}
	}
	return true
}

// ReadTorque reads Torque/PBS accounting records
// ("MM/DD/YYYY HH:MM:SS;E;ID;key=value ..."). Only E (exit) records are
// jobs: they carry user, jobname, start and end (Unix seconds), the node
// count (Resource_List.nodect, else the distinct hosts of exec_host, else
// Resource_List.nodes) and Exit_status (0 is COMPLETED, anything else
// FAILED). Other records are passed over.
func ReadTorque(r io.Reader, name string, opts Options) ([]Job, error) {
	jobs, err := readTorque(name, r, &opts)
	if err != nil {
		return nil, err
	}
	return sortJobs(jobs), nil
}

func readTorque(path string, r io.Reader, opts *Options) ([]Job, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	s := &lineScanner{br: br}
	loc := opts.loc()
	var jobs []Job
	for s.next() {
		if len(strings.TrimSpace(string(s.line))) == 0 {
			continue
		}
		j, keep, err := torqueRecord(string(s.line), loc)
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

func torqueRecord(line string, loc *time.Location) (Job, bool, error) {
	f := strings.SplitN(line, ";", 4)
	if len(f) < 3 || !isTorqueLine([]byte(line)) {
		return Job{}, false, fmt.Errorf("not an accounting record (MM/DD/YYYY HH:MM:SS;TYPE;ID;...)")
	}
	if _, err := ParseTime(f[0], loc); err != nil {
		return Job{}, false, err
	}
	if f[1] != "E" {
		return Job{}, false, nil
	}
	if len(f) < 4 {
		return Job{}, false, fmt.Errorf("exit record of job %s without attributes", f[2])
	}
	kv := map[string]string{}
	for _, w := range strings.Fields(f[3]) {
		if k, v, ok := strings.Cut(w, "="); ok {
			kv[k] = v
		}
	}
	j := Job{ID: f[2], User: kv["user"], Name: kv["jobname"]}
	if j.User == "" || j.Name == "" {
		return Job{}, false, fmt.Errorf("job %s: user or jobname missing", j.ID)
	}
	unix := func(k string) (time.Time, error) {
		n, err := strconv.ParseInt(kv[k], 10, 64)
		if err != nil || n < 0 {
			return time.Time{}, fmt.Errorf("job %s: %s=%q is not Unix seconds", j.ID, k, kv[k])
		}
		return time.Unix(n, 0), nil
	}
	var err error
	if j.Start, err = unix("start"); err != nil {
		return Job{}, false, err
	}
	if j.End, err = unix("end"); err != nil {
		return Job{}, false, err
	}
	if j.Start.Unix() == 0 {
		return Job{}, false, nil // deleted before it ran
	}
	if j.End.Before(j.Start) {
		return Job{}, false, fmt.Errorf("job %s: end before start", j.ID)
	}
	if q, ok := kv["qtime"]; ok {
		if n, err := strconv.ParseInt(q, 10, 64); err == nil {
			j.Submit = time.Unix(n, 0)
		}
	}
	if w, ok := kv["Resource_List.walltime"]; ok {
		if d, err := parseSlurmDuration(w); err == nil {
			j.Limit = d
		}
	}
	if j.Nodes, err = torqueNodes(kv); err != nil {
		return Job{}, false, fmt.Errorf("job %s: %v", j.ID, err)
	}
	switch kv["Exit_status"] {
	case "0":
		j.State = "COMPLETED"
	case "":
		j.State = ""
	default:
		j.State = "FAILED"
	}
	return j, true, nil
}

func torqueNodes(kv map[string]string) (int, error) {
	if v, ok := kv["Resource_List.nodect"]; ok {
		return parseCount(v)
	}
	if v := kv["exec_host"]; v != "" {
		hosts := map[string]bool{}
		for _, h := range strings.Split(v, "+") {
			h, _, _ = strings.Cut(h, "/")
			hosts[h] = true
		}
		return len(hosts), nil
	}
	if v, ok := kv["Resource_List.nodes"]; ok {
		v, _, _ = strings.Cut(v, ":")
		return parseCount(v)
	}
	return 0, fmt.Errorf("no node count (Resource_List.nodect, exec_host or Resource_List.nodes)")
}

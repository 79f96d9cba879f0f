package serverlog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ReadJobs reads a batch scheduler's job log and returns the jobs that ran
// (and ended, unless opts.Running), sorted by start time. The format is
// found from the content: Slurm `sacct --parsable2` (or --parsable) output
// with its header line, Torque/PBS accounting records (their E records),
// or a jobs SQLite database with pytokio's summary table (see
// ReadJobsDB). A gzip-compressed file is read through; a directory is read
// file by file (a Torque accounting directory, daily sacct dumps) with the
// jobs two files both hold kept once. "sacct:" runs sacct instead
// (ReadSacctCommand).
func ReadJobs(path string, opts Options) ([]Job, error) {
	if IsSacctCommand(path) {
		return ReadSacctCommand(path, opts)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var jobs []Job
	if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		files := 0
		for _, e := range ents {
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			files++
			js, err := readJobsFile(filepath.Join(path, e.Name()), &opts)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, js...)
		}
		if files == 0 {
			return nil, unknownJobLog{fmt.Errorf("%s: empty directory: no job log in it", path)}
		}
	} else if jobs, err = readJobsFile(path, &opts); err != nil {
		return nil, err
	}
	return sortJobs(jobs), nil
}

// sortJobs orders jobs by start, then id, and drops exact repeats (the
// same id starting at the same time) that overlapping dumps hold twice.
func sortJobs(jobs []Job) []Job {
	slices.SortStableFunc(jobs, func(a, b Job) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return slices.CompactFunc(jobs, func(a, b Job) bool { return a.ID == b.ID && a.Start.Equal(b.Start) })
}

const sqliteMagic = "SQLite format 3\x00"

// unknownJobLog is the error of a file that is not a job log of any
// format ReadJobs knows, as opposed to a job log with a bad record.
type unknownJobLog struct{ error }

func (u unknownJobLog) Unwrap() error { return u.error }

// IsUnknownJobLog tells whether ReadJobs failed because the file is not
// a job log at all (no format recognised, an empty directory), rather
// than because a job log it recognised has a bad record: a command that
// tries a path as a job log reports the latter error.
func IsUnknownJobLog(err error) bool {
	var u unknownJobLog
	return errors.As(err, &u)
}

func readJobsFile(path string, opts *Options) ([]Job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	head, _ := br.Peek(len(sqliteMagic))
	if string(head) == sqliteMagic {
		return ReadJobsDB(path, *opts)
	}
	var r io.Reader = br
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		defer gz.Close()
		r = gz
	}
	return readJobsText(path, r, opts)
}

// readJobsText finds the text format from the first line that is not
// empty.
func readJobsText(path string, r io.Reader, opts *Options) ([]Job, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := br.Peek(1)
		if err != nil {
			return nil, unknownJobLog{fmt.Errorf("%s: empty job log", path)}
		}
		if line[0] == '\n' || line[0] == '\r' {
			br.ReadByte()
			continue
		}
		break
	}
	first, _ := br.Peek(br.Buffered())
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	switch {
	case isTorqueLine(first):
		return readTorque(path, br, opts)
	case bytes.IndexByte(first, '|') >= 0:
		return readSacct(path, br, opts)
	}
	return nil, unknownJobLog{fmt.Errorf("%s: line 1: not a sacct --parsable2 header, a Torque accounting record or a jobs SQLite database", path)}
}

// lineScanner reads lines of any length, counting them, and keeps the
// last line even without its newline (a truncated log still gives every
// complete record before it).
type lineScanner struct {
	br      *bufio.Reader
	line    []byte
	n       int
	err     error
	partial bool // the line had no newline: the file was cut there
}

func (s *lineScanner) next() bool {
	s.line = s.line[:0]
	for {
		chunk, err := s.br.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			s.err = err
			return false
		}
		if len(s.line) == 0 {
			return false
		}
		s.n++
		s.partial = s.line[len(s.line)-1] != '\n'
		s.line = bytes.TrimRight(s.line, "\r\n")
		return true
	}
}

// ReadJobsDB reads a jobs SQLite database in the layout of pytokio's
// NERSC jobs cache: table summary with stepid, start and completion (Unix
// seconds) and numnodes. The application is taken from the executable
// (column exe, executable or command: its base name) or else the job
// name (jobname, job_name or name), and the user from user, username or
// uid, when the table has such columns. pytokio's own cache has none
// (its columns are stepid, hostname, start, completion, numnodes):
// the user and the name are then "unknown". The host name is never taken
// as the application: it names the system every job ran on, so that it
// would make all jobs of a node count one application.
func ReadJobsDB(path string, opts Options) ([]Job, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", sqliteURI(path, true))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	defer db.Close()
	cols, err := tableColumns(db, "summary")
	if err != nil {
		return nil, fmt.Errorf("%s: table summary: %v", path, err)
	}
	if len(cols) == 0 {
		return nil, unknownJobLog{fmt.Errorf("%s: no table summary: not a jobs database", path)}
	}
	pick := func(names ...string) string {
		for _, n := range names {
			for _, c := range cols {
				if strings.EqualFold(c, n) {
					return `"` + c + `"`
				}
			}
		}
		return "NULL"
	}
	exe, jobName, user := pick("exe", "executable", "command"), pick("jobname", "job_name", "name"), pick("user", "username", "uid")
	rows, err := db.Query("SELECT stepid, start, completion, numnodes, " + exe + ", " + jobName + ", " + user + " FROM summary")
	if err != nil {
		return nil, fmt.Errorf("%s: table summary: %v", path, err)
	}
	defer rows.Close()
	var jobs []Job
	for row := 1; rows.Next(); row++ {
		var id, ex, jn, us sql.NullString
		var start, end, nodes sql.NullInt64
		err := rows.Scan(&id, &start, &end, &nodes, &ex, &jn, &us)
		if err == nil {
			switch {
			case !id.Valid || id.String == "":
				err = errors.New("stepid missing")
			case !start.Valid || !end.Valid:
				err = errors.New("start or completion missing")
			case end.Int64 < start.Int64:
				err = fmt.Errorf("completion %d before start %d", end.Int64, start.Int64)
			case !nodes.Valid || nodes.Int64 <= 0:
				err = errors.New("numnodes missing or not positive")
			}
		}
		if err != nil {
			if err := opts.bad(fmt.Errorf("%s: table summary, row %d: %v", path, row, err)); err != nil {
				return nil, err
			}
			continue
		}
		name := "unknown"
		if e := strings.TrimSpace(ex.String); e != "" {
			name = filepath.Base(strings.Fields(e)[0])
		} else if n := strings.TrimSpace(jn.String); n != "" {
			name = n
		}
		owner := "unknown"
		if u := strings.TrimSpace(us.String); u != "" {
			owner = u
		}
		jobs = append(jobs, Job{ID: id.String, User: owner, Name: name, Nodes: int(nodes.Int64),
			Start: time.Unix(start.Int64, 0), End: time.Unix(end.Int64, 0)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: table summary: %v", path, err)
	}
	return sortJobs(jobs), nil
}

// tableColumns lists a SQLite table's columns; none when it does not
// exist.
func tableColumns(db *sql.DB, table string) ([]string, error) {
	rows, err := db.Query("SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// jobTime reads a job log's time, where "Unknown", "None" and an empty
// field mean that the event did not happen (yet): ok is false for those.
func jobTime(s string, loc *time.Location) (t time.Time, ok bool, err error) {
	switch strings.TrimSpace(s) {
	case "", "Unknown", "None", "N/A":
		return time.Time{}, false, nil
	}
	t, err = ParseTime(s, loc)
	return t, err == nil, err
}

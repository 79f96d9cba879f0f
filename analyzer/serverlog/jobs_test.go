package serverlog

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"iopred/tests/fuzzinput"
	"iopred/tests/interop"
)

// sacctSample is sacct --parsable2 output as Slurm prints it without -X:
// fields in an order of the user's choosing, job steps after their job,
// a cancelled job, a failed one, a timeout, a pending job (Unknown start),
// a running job (Unknown end), an array task (JobID 200_3, JobIDRaw 203).
const sacctSample = `State|JobIDRaw|JobID|JobName|User|NNodes|Submit|Start|End|Timelimit
COMPLETED|100|100|s3d|alice|128|2018-01-27T23:50:00|2018-01-28T00:00:05|2018-01-28T01:00:05|02:00:00
COMPLETED|100.batch|100.batch|batch||1|2018-01-28T00:00:05|2018-01-28T00:00:05|2018-01-28T01:00:05|
COMPLETED|100.extern|100.extern|extern||128|2018-01-28T00:00:05|2018-01-28T00:00:05|2018-01-28T01:00:05|
COMPLETED|100.0|100.0|s3d||128|2018-01-28T00:00:10|2018-01-28T00:00:10|2018-01-28T01:00:00|
CANCELLED by 12345|101|101|vpic|bob|64|2018-01-28T00:10:00|2018-01-28T00:20:00|2018-01-28T00:25:00|1-00:00:00
FAILED|102|102|a job|carol|1|2018-01-28T00:00:00|2018-01-28T00:30:00|2018-01-28T00:30:01|00:10:00
TIMEOUT|103|103|gtc|dave|2K|2018-01-28T00:00:00|2018-01-28T02:00:00|2018-01-28T04:00:02|02:00:00
PENDING|104|104|wait|erin|4|2018-01-28T03:00:00|Unknown|Unknown|01:00:00
RUNNING|105|105|live|frank|8|2018-01-28T03:00:00|2018-01-28T03:10:00|Unknown|UNLIMITED
COMPLETED|203|200_3|array|gina|2|2018-01-28T00:00:00|2018-01-28T00:40:00|2018-01-28T00:50:00|00:30:00
`

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02T15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestReadSacct proves the sacct reader on output as Slurm prints it:
// steps are folded into their job, "CANCELLED by UID" is CANCELLED, a
// pending job is left out, a running job only with Running, K suffixes
// of node counts, the array task's raw id, Submit and Timelimit read,
// jobs sorted by start.
func TestReadSacct(t *testing.T) {
	jobs, err := ReadSacct(strings.NewReader(sacctSample), "sample", Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: "100", User: "alice", Name: "s3d", Nodes: 128, Start: utc("2018-01-28T00:00:05"), End: utc("2018-01-28T01:00:05"),
			State: "COMPLETED", Submit: utc("2018-01-27T23:50:00"), Limit: 2 * time.Hour},
		{ID: "101", User: "bob", Name: "vpic", Nodes: 64, Start: utc("2018-01-28T00:20:00"), End: utc("2018-01-28T00:25:00"),
			State: "CANCELLED", Submit: utc("2018-01-28T00:10:00"), Limit: 24 * time.Hour},
		{ID: "102", User: "carol", Name: "a job", Nodes: 1, Start: utc("2018-01-28T00:30:00"), End: utc("2018-01-28T00:30:01"),
			State: "FAILED", Submit: utc("2018-01-28T00:00:00"), Limit: 10 * time.Minute},
		{ID: "203", User: "gina", Name: "array", Nodes: 2, Start: utc("2018-01-28T00:40:00"), End: utc("2018-01-28T00:50:00"),
			State: "COMPLETED", Submit: utc("2018-01-28T00:00:00"), Limit: 30 * time.Minute},
		{ID: "103", User: "dave", Name: "gtc", Nodes: 2048, Start: utc("2018-01-28T02:00:00"), End: utc("2018-01-28T04:00:02"),
			State: "TIMEOUT", Submit: utc("2018-01-28T00:00:00"), Limit: 2 * time.Hour},
	}
	if !reflect.DeepEqual(jobs, want) {
		t.Errorf("got\n%+v\nwant\n%+v", jobs, want)
	}
	withRunning, err := ReadSacct(strings.NewReader(sacctSample), "sample", Options{TZ: time.UTC, Running: true})
	if err != nil {
		t.Fatal(err)
	}
	last := withRunning[len(withRunning)-1]
	if len(withRunning) != len(want)+1 || last.ID != "105" || !last.End.IsZero() || last.State != "RUNNING" {
		t.Errorf("with Running: %d jobs, last %+v", len(withRunning), last)
	}
	// --parsable ends every line with '|'.
	parsable := strings.ReplaceAll(sacctSample, "\n", "|\n")
	again, err := ReadSacct(strings.NewReader(parsable), "parsable", Options{TZ: time.UTC})
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("--parsable output: %v, %d jobs", err, len(again))
	}
}

// TestSacctZone proves that sacct's zoneless times are read in Options.TZ.
func TestSacctZone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := ReadSacct(strings.NewReader(sacctSample), "sample", Options{TZ: ny})
	if err != nil {
		t.Fatal(err)
	}
	// 00:00:05 in New York in January (EST, UTC-5) is 05:00:05 UTC.
	if got := jobs[0].Start.UTC(); !got.Equal(utc("2018-01-28T05:00:05")) {
		t.Errorf("start %v, want 05:00:05 UTC", got)
	}
}

// TestSacctRoundTrip proves that the sacct writer's output, with steps
// as sacct lists them, reads back to the same jobs.
func TestSacctRoundTrip(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 7, 1, 8, 0, 0, 0, berlin)
	var jobs []Job
	for i := range 50 {
		st := base.Add(time.Duration(i*7919) * time.Second)
		jobs = append(jobs, Job{ID: string(rune('1'+i%9)) + hex4(i), User: "u" + hex4(i%5), Name: "app/" + hex4(i%3),
			Nodes: 1 << (i % 8), Start: st, End: st.Add(time.Duration(60+i*37) * time.Second),
			State: []string{"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}[i%4], Submit: st.Add(-time.Minute),
			Limit: time.Duration(1+i%30) * time.Hour})
	}
	var buf bytes.Buffer
	if err := WriteSacct(&buf, jobs, SacctWriterOptions{TZ: berlin, Steps: true}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 1+3*len(jobs) {
		t.Fatalf("%d lines, want a header and 3 per job", n)
	}
	path := filepath.Join(t.TempDir(), "sacct.txt")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJobs(path, Options{TZ: berlin})
	if err != nil {
		t.Fatal(err)
	}
	want := sortJobs(append([]Job(nil), jobs...))
	if len(got) != len(want) {
		t.Fatalf("%d jobs back, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].App() != want[i].App() || !got[i].Start.Equal(want[i].Start) ||
			!got[i].End.Equal(want[i].End) || got[i].State != want[i].State || !got[i].Submit.Equal(want[i].Submit) ||
			got[i].Limit != want[i].Limit {
			t.Errorf("job %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	bad := Job{ID: "1", User: "x|y", Name: "n", Nodes: 1, Start: base, End: base}
	if err := WriteSacct(&buf, []Job{bad}, SacctWriterOptions{}); err == nil {
		t.Error("a '|' in a field was written")
	}
}

// TestSacctBadInput proves the errors of the sacct reader: a header
// without a needed field, a line with the wrong number of fields, an
// unparsable time; each names the file and line, and SkipBad keeps the
// good lines and counts the others.
func TestSacctBadInput(t *testing.T) {
	hdr := "JobIDRaw|User|JobName|NNodes|Start|End|State\n"
	good := "1|u|n|2|2018-01-28T00:00:00|2018-01-28T00:10:00|COMPLETED\n"
	good2 := "9|u|n|2|2018-01-28T00:00:00|2018-01-28T00:10:00|COMPLETED\n"
	cases := []struct {
		name, text, want string
		skipped          int
	}{
		{"missing field", "JobIDRaw|User|JobName|Start|End|State\n" + good, "line 1: sacct header lacks NNodes", -1},
		{"field count", hdr + good + "2|u|n|2|2018-01-28T00:00:00|COMPLETED\n" + good2, "line 3: 6 fields, the header has 7", 1},
		{"bad time", hdr + good + good2 + "3|u|n|2|28.01.2018|2018-01-28T00:10:00|COMPLETED\n", "line 4: field Start: time \"28.01.2018\"", 1},
		{"end before start", hdr + "3|u|n|2|2018-01-28T00:10:00|2018-01-28T00:00:00|COMPLETED\n" + good, "line 2: field End", 1},
		{"bad nodes", hdr + "3|u|n|two|2018-01-28T00:00:00|2018-01-28T00:10:00|COMPLETED\n", "line 2: field NNodes", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs.sacct")
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadJobs(path, Options{TZ: time.UTC})
			if err == nil || !strings.Contains(err.Error(), path+": "+c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			var bad BadRows
			jobs, err := ReadJobs(path, Options{TZ: time.UTC, SkipBad: true, Bad: &bad})
			if c.skipped < 0 {
				if err == nil {
					t.Error("SkipBad read a file without a usable header")
				}
				return
			}
			if err != nil || bad.Count() != c.skipped || len(jobs) != strings.Count(c.text, good)+strings.Count(c.text, good2) {
				t.Errorf("SkipBad: %v, %d jobs, %d skipped (want %d)", err, len(jobs), bad.Count(), c.skipped)
			}
		})
	}
}

// TestSacctTruncated proves that a sacct file cut in the middle of a line
// still gives every complete job before the cut, without an error even
// when reading strictly: the cut line is counted as left out.
func TestSacctTruncated(t *testing.T) {
	cut := sacctSample[:strings.Index(sacctSample, "FAILED|102")+20]
	var bad BadRows
	jobs, err := ReadSacct(strings.NewReader(cut), "cut", Options{TZ: time.UTC, Bad: &bad})
	if err != nil || len(jobs) != 2 || bad.Count() != 1 {
		t.Errorf("truncated: %v, %d jobs (want 100 and 101), %d bad", err, len(jobs), bad.Count())
	}
}

// torqueSample holds accounting records in the form Torque's manual shows
// them: Q, S, D and E records; an E record's node count from
// Resource_List.nodect, from exec_host, and from Resource_List.nodes; a
// job deleted before it ran (start=0).
const torqueSample = `06/06/2005 14:04:35;Q;409.ign1.zeta2.org;queue=batch
06/06/2005 14:06:06;S;407.ign1.zeta2.org;user=guest group=guest jobname=STDIN queue=batch ctime=1118087915 qtime=1118087915 etime=1118087915 start=1118088366 exec_host=ign1.zeta2.org/0 Resource_List.nodect=1 Resource_List.nodes=1 Resource_List.walltime=00:16:40
06/06/2005 14:07:17;E;407.ign1.zeta2.org;user=guest group=guest jobname=STDIN queue=batch ctime=1118087915 qtime=1118087915 etime=1118087915 start=1118088366 exec_host=ign1.zeta2.org/0 Resource_List.nodect=1 Resource_List.nodes=1 Resource_List.walltime=00:16:40 session=6365 end=1118088437 Exit_status=0 resources_used.walltime=00:01:11
08/26/2014 17:08:04;E;11923.napali;user=dbeer group=company jobname=lmp queue=batch ctime=1409094464 qtime=1409094464 etime=1409094464 start=1409094470 owner=dbeer@napali exec_host=napali/0+napali/1+torque-devtest-03/0+torque-devtest-03/1 Resource_List.neednodes=2:ppn=6 session=1 end=1409094484 Exit_status=271
08/26/2014 17:09:04;E;11924.napali;user=dbeer group=company jobname=ior queue=batch qtime=1409094464 start=1409094480 Resource_List.nodes=4:ppn=6 end=1409094544 Exit_status=0
08/26/2014 17:09:05;E;11925.napali;user=dbeer group=company jobname=gone queue=batch qtime=1409094464 start=0 Resource_List.nodes=4 end=1409094545 Exit_status=-1
08/26/2014 17:09:06;D;11926.napali;requestor=dbeer@napali
`

// TestReadTorque proves the Torque reader: only E records are jobs, the
// three sources of the node count, Exit_status to a state, qtime and
// walltime, and a job deleted before it started left out.
func TestReadTorque(t *testing.T) {
	jobs, err := ReadTorque(strings.NewReader(torqueSample), "acct", Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: "407.ign1.zeta2.org", User: "guest", Name: "STDIN", Nodes: 1, Start: time.Unix(1118088366, 0), End: time.Unix(1118088437, 0),
			State: "COMPLETED", Submit: time.Unix(1118087915, 0), Limit: 1000 * time.Second},
		{ID: "11923.napali", User: "dbeer", Name: "lmp", Nodes: 2, Start: time.Unix(1409094470, 0), End: time.Unix(1409094484, 0),
			State: "FAILED", Submit: time.Unix(1409094464, 0)},
		{ID: "11924.napali", User: "dbeer", Name: "ior", Nodes: 4, Start: time.Unix(1409094480, 0), End: time.Unix(1409094544, 0),
			State: "COMPLETED", Submit: time.Unix(1409094464, 0)},
	}
	if !reflect.DeepEqual(jobs, want) {
		t.Errorf("got\n%+v\nwant\n%+v", jobs, want)
	}
	broken := torqueSample + "08/26/2014 17:10:00;E;11927.napali;user=x jobname=y start=1409094600 end=soon\n"
	_, err = ReadTorque(strings.NewReader(broken), "acct", Options{})
	if err == nil || !strings.Contains(err.Error(), "acct: line 8: job 11927.napali: end=\"soon\"") {
		t.Errorf("bad end: %v", err)
	}
}

// TestReadJobsDB proves the reader of pytokio's jobs SQLite on the real
// file: all 485 jobs, their times and node counts as stored, and no
// application made up: the table (stepid, hostname, start, completion,
// numnodes, as pytokio's cache defines it) has no executable, job name or
// user, so they are "unknown", never the host name, which is the system
// every job ran on.
func TestReadJobsDB(t *testing.T) {
	path := interop.Path(t, "jobs/sample_nersc_jobsdb.sqlite3")
	jobs, err := ReadJobs(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 485 {
		t.Fatalf("%d jobs, want the table's 485", len(jobs))
	}
	// sqlite3 sample_nersc_jobsdb.sqlite3 "select * from summary order by start limit 1"
	// gives 4465993.edison|edison|1489872299|1489873053|1 ... checked through the
	// row the file lists first instead, whatever its rank by start:
	// 4472230.edison|edison|1490000045|1490000984|1.
	var found bool
	for _, j := range jobs {
		if j.ID == "4472230.edison" {
			found = true
			if j.Start.Unix() != 1490000045 || j.End.Unix() != 1490000984 || j.Nodes != 1 ||
				j.App() != (App{User: "unknown", Name: "unknown", Nodes: 1}) {
				t.Errorf("job 4472230.edison: %+v", j)
			}
		}
	}
	if !found {
		t.Error("job 4472230.edison missing")
	}
	if jobs[0].Start.Unix() != 1489872299 {
		t.Errorf("first start %d, want the table's min(start) 1489872299", jobs[0].Start.Unix())
	}
}

// TestReadJobsDetect proves that ReadJobs finds each format from the
// content alone, reads gzip-compressed logs, reads a directory of daily
// logs and keeps a job two overlapping dumps both hold once, and refuses
// a file of another kind with a message saying what it wanted.
func TestReadJobsDetect(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(torqueSample))
	zw.Close()
	write("20140826.gz", gz.Bytes())
	write("day1.txt", []byte(sacctSample))
	write("day2.txt", []byte(sacctSample)) // the same jobs again
	jobs, err := ReadJobs(dir, Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3+5 {
		t.Errorf("%d jobs from the directory, want 3 Torque + 5 sacct", len(jobs))
	}
	other := write("other.csv", []byte("time,ost,read_bytes,write_bytes\n"))
	if _, err := ReadJobs(other, Options{}); err == nil || !strings.Contains(err.Error(), "not a sacct --parsable2 header") {
		t.Errorf("a CSV as job log: %v", err)
	}
}

// FuzzReadSacct proves that no input makes the sacct reader panic or
// hang, and that every job it returns is well formed. The seeds are the
// sample's header and first job, and small edits of them: Go's fuzzer
// minimises each input that finds new code at a cost quadratic in its
// length (tests/fuzzinput).
func FuzzReadSacct(f *testing.F) {
	for _, in := range fuzzinput.Edits(fuzzinput.Lines([]byte(sacctSample), 2), 6) {
		f.Add(in)
	}
	f.Add([]byte("JobIDRaw|User|JobName|NNodes|Start|End|State\n1|u|n|2K|1|2|X\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		jobs, err := ReadSacct(bytes.NewReader(b), "fuzz", Options{TZ: time.UTC, SkipBad: true, Running: true})
		if err != nil {
			return
		}
		for _, j := range jobs {
			if j.ID == "" || j.User == "" || j.Nodes <= 0 || (!j.End.IsZero() && j.End.Before(j.Start)) {
				t.Fatalf("malformed job %+v", j)
			}
		}
	})
}

// FuzzReadTorque is FuzzReadSacct for Torque accounting records.
func FuzzReadTorque(f *testing.F) {
	lines := bytes.SplitAfter([]byte(torqueSample), []byte("\n"))
	for _, l := range lines {
		if len(l) > 0 {
			f.Add(l) // one record each: the sample whole is 1.3 KB
		}
	}
	f.Add(fuzzinput.Edits(lines[2], 1)[1])
	f.Fuzz(func(t *testing.T, b []byte) {
		jobs, err := ReadTorque(bytes.NewReader(b), "fuzz", Options{TZ: time.UTC, SkipBad: true})
		if err != nil {
			return
		}
		for _, j := range jobs {
			if j.User == "" || j.Nodes <= 0 || j.End.Before(j.Start) {
				t.Fatalf("malformed job %+v", j)
			}
		}
	})
}

// TestReadJobsDBBadRows proves the errors of the jobs SQLite reader on a
// table the test writes: a missing table, and a row whose completion is
// before its start, named by table and row; SkipBad keeps the good rows.
func TestReadJobsDBBadRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.sqlite3")
	db, err := sql.Open("sqlite", sqliteURI(path, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE other(x)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadJobs(path, Options{}); err == nil || err.Error() != path+": no table summary: not a jobs database" || !IsUnknownJobLog(err) {
		t.Errorf("missing table: %v", err)
	}
	for _, q := range []string{
		"CREATE TABLE summary(stepid primary key, hostname, start integer, completion integer, numnodes integer)",
		"INSERT INTO summary VALUES ('1.x', 'x', 100, 200, 2), ('2.x', 'x', 300, 250, 2), ('3.x', 'x', 400, 500, 4)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if _, err := ReadJobs(path, Options{}); err == nil || !strings.Contains(err.Error(), path+": table summary, row 2: completion 250 before start 300") {
		t.Errorf("bad row: %v", err)
	}
	var bad BadRows
	jobs, err := ReadJobs(path, Options{SkipBad: true, Bad: &bad})
	if err != nil || len(jobs) != 2 || bad.Count() != 1 || jobs[1].App() != (App{"unknown", "unknown", 4}) {
		t.Errorf("SkipBad: %v, %+v, %d bad", err, jobs, bad.Count())
	}
}

// TestReadJobsDBApplication proves that a jobs table with an executable,
// a job name or a user gives the application from them: the executable's
// base name first (its arguments dropped), the job name when there is no
// executable, never the host name.
func TestReadJobsDBApplication(t *testing.T) {
	for _, c := range []struct {
		schema, row string
		want        App
	}{
		{"stepid, hostname, start, completion, numnodes, exe, jobname, username",
			"'1.c', 'cori', 100, 200, 8, '/global/u/vasp/bin/vasp_std -n 4', 'relax', 'alice'", App{"alice", "vasp_std", 8}},
		{"stepid, hostname, start, completion, numnodes, JobName, uid",
			"'2.c', 'cori', 100, 200, 2, 'wrf-run', '1001'", App{"1001", "wrf-run", 2}},
		{"stepid, hostname, start, completion, numnodes, executable",
			"'3.c', 'cori', 100, 200, 1, '', ", App{"unknown", "unknown", 1}},
	} {
		path := filepath.Join(t.TempDir(), "jobs.sqlite3")
		db, err := sql.Open("sqlite", sqliteURI(path, false))
		if err != nil {
			t.Fatal(err)
		}
		row := strings.TrimSuffix(c.row, ", ")
		for _, q := range []string{"CREATE TABLE summary(" + c.schema + ")", "INSERT INTO summary VALUES (" + row + ")"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(q, err)
			}
		}
		db.Close()
		jobs, err := ReadJobs(path, Options{})
		if err != nil || len(jobs) != 1 || jobs[0].App() != c.want {
			t.Errorf("%s: %v %+v, want %v", c.schema, err, jobs, c.want)
		}
	}
}

// TestReadJobsEmptyDirectory proves that a directory without a file is
// not read as a job log of no jobs.
func TestReadJobsEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadJobs(dir, Options{})
	if err == nil || err.Error() != dir+": empty directory: no job log in it" || !IsUnknownJobLog(err) {
		t.Errorf("empty directory: %v", err)
	}
}

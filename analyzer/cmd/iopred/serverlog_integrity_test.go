package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"iopred/analyzer/serverlog"
	"iopred/tests/interop"
)

// runOut runs the command in-process and returns its status and outputs.
func runOut(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(args, &out, &errb)
	return code, out.String(), errb.String()
}

// lateSacct is a job log of 3 runs a year after the real LMT file.
func lateSacct(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "late.txt")
	os.WriteFile(p, []byte("JobID|User|JobName|NNodes|Start|End|State\n"+
		"1|u|a|1|2019-01-28T00:00:00|2019-01-28T00:03:00|COMPLETED\n"+
		"2|u|a|1|2019-01-28T00:01:00|2019-01-28T00:04:00|COMPLETED\n"+
		"3|u|a|1|2019-01-29T00:01:00|2019-01-29T00:04:00|COMPLETED\n"), 0o644)
	return p
}

// TestLogsThatDoNotOverlap proves that signature, signature --all and aid
// learn fail (status 1) on a job log and a throughput log of different
// times, naming both spans, instead of reporting 0 runs.
func TestLogsThatDoNotOverlap(t *testing.T) {
	lmt := interop.Path(t, "lmt/snx11025_2018-01-28.sqlite3")
	jobs := lateSacct(t)
	rates := "--lmt " + lmt + " holds rates from 2018-01-28 00:00:00 UTC to 2018-01-28 00:05:00 UTC"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"signature", "--tz", "UTC", "--lmt", lmt, "--jobs", jobs, "--app", "u/a/1"},
			"the logs do not overlap in time: " + jobs + " (the runs of u/a/1) holds jobs from 2019-01-28 00:00:00 UTC to 2019-01-29 00:04:00 UTC (3 jobs), " + rates},
		{[]string{"signature", "--tz", "UTC", "--lmt", lmt, "--jobs", jobs, "--all", t.TempDir(), "--min-runs", "2"},
			"the logs do not overlap in time: " + jobs + " holds jobs from 2019-01-28 00:00:00 UTC to 2019-01-29 00:04:00 UTC (3 jobs), " + rates},
		{[]string{"aid", "learn", "--tz", "UTC", "--lmt", lmt, "--jobs", jobs, "--kb", t.TempDir()},
			"the logs do not overlap in time: " + jobs + " holds jobs from 2019-01-28 00:00:00 UTC to 2019-01-29 00:04:00 UTC (3 jobs), " + rates},
	} {
		code, _, errOut := runOut(c.args...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, %q; want %q", c.args[0], code, errOut, c.want)
		}
	}
}

// TestServerlogInfoSaysWhatIsWrong proves the errors of info: an empty
// directory, a broken sacct file given as a bare path (its parse error,
// not "not a log iopred knows"), and that with --skip-bad its bad row is
// counted once.
func TestServerlogInfoSaysWhatIsWrong(t *testing.T) {
	empty := t.TempDir()
	if code, _, errOut := runOut("serverlog", "info", empty); code != 1 ||
		errOut != "iopred serverlog: "+empty+": empty directory: neither a throughput log, a store nor a job log\n" {
		t.Errorf("empty directory: exit %d, %q", code, errOut)
	}
	sacct := filepath.Join(t.TempDir(), "sacct.txt")
	os.WriteFile(sacct, []byte("JobID|User|JobName|NNodes|Start|End|State\n"+
		"1|u|a|1|2018-01-28T00:00:00|2018-01-28T00:03:00|COMPLETED\n"+
		"2|u|a|1|2018-01-28T00:01:00|2018-01-28T00:04:00|COMPLETED\n"+
		"broken\n"+
		"3|u|a|1|2018-01-28T00:01:00|2018-01-28T00:04:00|COMPLETED\n"), 0o644)
	if code, _, errOut := runOut("serverlog", "info", "--tz", "UTC", sacct); code != 1 ||
		errOut != "iopred serverlog: "+sacct+": line 4: 1 fields, the header has 7\n" {
		t.Errorf("broken sacct: exit %d, %q", code, errOut)
	}
	for _, args := range [][]string{{sacct}, {"--jobs", sacct}} {
		code, out, errOut := runOut(append([]string{"serverlog", "info", "--tz", "UTC", "--skip-bad"}, args...)...)
		if code != 0 || !strings.Contains(out, "jobs   3 by 1 users") ||
			errOut != "warning: 1 bad rows skipped (first: "+sacct+": line 4: 1 fields, the header has 7)\n" {
			t.Errorf("--skip-bad %v: exit %d, %q, %q", args, code, out, errOut)
		}
	}
}

// TestServerlogImportRefusals proves the import's messages and status on
// the real LMT file: the same file again changes nothing, another --tz is
// refused, a different source for the same OSTs is refused with the OSTs
// and range, --replace takes it and says how many samples it replaced;
// swapped timestamps are warned about; info lists the real reset.
func TestServerlogImportRefusals(t *testing.T) {
	lmt := interop.Path(t, "lmt/snx11025_2018-01-28.sqlite3")
	store := filepath.Join(t.TempDir(), "store")
	if code, _, errOut := runOut("serverlog", "import", "--quiet", "--tz", "UTC", "--into", store, lmt); code != 0 {
		t.Fatal(errOut)
	}
	if code, out, errOut := runOut("serverlog", "import", "--tz", "UTC", "--into", store, lmt); code != 0 ||
		!strings.HasPrefix(out, "0 days written (0 OST samples, 0 known), 0 already complete, 1 unchanged") ||
		!strings.Contains(errOut, ": 2018-01-28 unchanged (1/1 days") {
		t.Errorf("again: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runOut("serverlog", "import", "--quiet", "--tz", "Europe/Berlin", "--into", store, lmt); code != 1 ||
		!strings.Contains(errOut, "already in the store read in zone UTC, now in Europe/Berlin") {
		t.Errorf("other tz: %d %q", code, errOut)
	}
	other := copyTo(t, lmt)
	sqlite(t, other, "UPDATE OST_DATA SET WRITE_BYTES = WRITE_BYTES + 1500000000 WHERE TS_ID >= 8921950 AND OST_ID = (SELECT OST_ID FROM OST_INFO WHERE OST_NAME = 'snx11025-OST0003')")
	if code, _, errOut := runOut("serverlog", "import", "--tz", "UTC", "--into", store, other); code != 1 ||
		!strings.Contains(errOut, ": 2018-01-28 differs from the store (1/1 days") ||
		!strings.Contains(errOut, ": 1 OST samples differ from what the store holds from --lmt "+lmt+": 1 OSTs (snx11025-OST0003) from 2018-01-28 00:04:15 UTC to 2018-01-28 00:04:20 UTC; nothing was imported (--replace overwrites them with this source's)") {
		t.Errorf("other data: %d %q", code, errOut)
	}
	if code, out, errOut := runOut("serverlog", "import", "--quiet", "--replace", "--tz", "UTC", "--into", store, other); code != 0 ||
		!strings.Contains(out, "1 OST samples of other sources replaced (--replace)") {
		t.Errorf("--replace: %d %q %q", code, out, errOut)
	}
	swapped := copyTo(t, lmt)
	sqlite(t, swapped, "UPDATE TIMESTAMP_INFO SET TIMESTAMP = CASE TS_ID WHEN 8921910 THEN '2018-01-28 00:01:05' ELSE '2018-01-28 00:01:00' END WHERE TS_ID IN (8921910, 8921911)")
	if code, _, errOut := runOut("serverlog", "import", "--quiet", "--tz", "UTC", "--into", filepath.Join(t.TempDir(), "s2"), swapped); code != 0 ||
		!strings.Contains(errOut, "warning: "+swapped+": table TIMESTAMP_INFO: 1 timestamps out of time order or repeating an earlier time (TS_ID 8921910) left out") {
		t.Errorf("swapped: %d %q", code, errOut)
	}
	s3 := filepath.Join(t.TempDir(), "s3")
	code, out, _ := runOut("serverlog", "import", "--quiet", "--tz", "UTC", "--into", s3, interop.Path(t, "lmt/lmtdb-reset.sqlite3"))
	if code != 0 || !strings.Contains(out, "1 counter resets on 1 OSTs (the intervals across them are unknown):\n  snx11168-OST00ad between 2018-04-18 07:35:45 UTC and 2018-04-18 07:39:05 UTC") {
		t.Errorf("reset at import: %d %q", code, out)
	}
	if code, out, _ := runOut("serverlog", "info", "--tz", "UTC", s3); code != 0 || !strings.Contains(out, "resets 1 counter resets on 1 OSTs") {
		t.Errorf("reset in info: %d %q", code, out)
	}
}

func copyTo(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(path))
	os.WriteFile(p, b, 0o644)
	return p
}

func sqlite(t *testing.T, path, q string) {
	if out, err := exec.Command("sqlite3", path, q).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v %s", err, out)
	}
}

// TestServerlogRates proves `serverlog rates` on the real LMT file and a
// store of it: CSV with each OST's and the total's rates (the 00:04:15
// sample of OST0003 checked against its counters by hand), a store read
// to the same CSV, --step averaging, --ost and window errors, Parquet and
// the PNG figure written.
func TestServerlogRates(t *testing.T) {
	lmt := interop.Path(t, "lmt/snx11025_2018-01-28.sqlite3")
	code, out, errOut := runOut("serverlog", "rates", "--tz", "UTC", lmt, "--ost", "OST0003,OST0010", "--from", "2018-01-28 00:04:10", "--to", "2018-01-28 00:04:20")
	if code != 0 {
		t.Fatal(errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 1+2*3 {
		t.Fatalf("%v: %q", err, out)
	}
	// sqlite3 snx11025_2018-01-28.sqlite3: OST0003's WRITE_BYTES at TS_ID
	// 8921949 (00:04:15) 36920121422096 and 8921950 (00:04:20)
	// 36922038004581: 1916582485 bytes in 5 s.
	if strings.Join(recs[4], ",") != "2018-01-28T00:04:15Z,snx11025-OST0003,0,383316497" || recs[6][1] != "total" {
		t.Errorf("rows %q", recs)
	}
	store := filepath.Join(t.TempDir(), "store")
	runOut("serverlog", "import", "--quiet", "--tz", "UTC", "--into", store, lmt)
	_, fromStore, _ := runOut("serverlog", "rates", store, "--ost", "OST0003,OST0010", "--from", "2018-01-28T00:04:10Z", "--to", "2018-01-28T00:04:20Z")
	if fromStore != out {
		t.Errorf("store gives\n%s\nthe file\n%s", fromStore, out)
	}
	if code, out, _ := runOut("serverlog", "rates", store, "--step", "1m", "--format", "json"); code != 0 || !strings.Contains(out, `"step_s":60`) {
		t.Errorf("--step 1m: %d %.200s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{store, "--ost", "OST9999"}, "--ost OST9999: no such OST (the log has 24, snx11025-OST0000 .. snx11025-OST0017)"},
		{[]string{store, "--from", "2019-01-01T00:00:00Z"}, "holds rates from 2018-01-28 00:00:00 UTC to 2018-01-28 00:05:00 UTC, not in the window asked"},
		{[]string{store, "--format", "xml"}, `--format "xml": want csv, json or parquet`},
		{[]string{store, "--step", "7s"}, "--step 7s: want a whole multiple of the log's 5s"},
		{[]string{store, "--from", "2018-01-28T00:04:00Z", "--to", "2018-01-28T00:03:00Z"}, "--to 2018-01-28T00:03:00Z is not after --from 2018-01-28T00:04:00Z"},
	} {
		if code, _, errOut := runOut(append([]string{"serverlog", "rates"}, c.args...)...); code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: %d %q, want %q", c.args, code, errOut, c.want)
		}
	}
	dir := t.TempDir()
	pq, img := filepath.Join(dir, "r.parquet"), filepath.Join(dir, "r.png")
	if code, _, errOut := runOut("serverlog", "rates", store, "--format", "parquet", "-o", pq, "--plot", img); code != 0 {
		t.Fatal(errOut)
	}
	if b, _ := os.ReadFile(pq); !bytes.HasPrefix(b, []byte("PAR1")) {
		t.Error("no Parquet file")
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("PNG: %v", err)
	}
	// A bare format names the figure after the log, in the working
	// directory.
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	if code, _, errOut := runOut("serverlog", "rates", "--tz", "UTC", lmt, "--plot", "svg"); code != 0 || errOut != "figure written to snx11025_2018-01-28.rates.svg\n" {
		t.Errorf("--plot svg: %d %q", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "snx11025_2018-01-28.rates.svg")); err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("--plot svg wrote no SVG: %v", err)
	}
}

// TestServerlogImportKilledRefused proves that a kill during an import
// that will be refused (another source, other values from day 30 on)
// leaves the store readable and every sample as it was, and that a kill
// during the same import with --replace leaves it readable too, each
// sample the first source's or the second's.
func TestServerlogImportKilledRefused(t *testing.T) {
	bin := buildIopred(t)
	first := longCSV(t)
	b, _ := os.ReadFile(first)
	lines := strings.Split(string(b), "\n")
	// From day 30 on, OST0000 wrote 4096 bytes more per minute.
	for k := 1 + 30*1440*8; k < len(lines)-1; k += 8 {
		f := strings.Split(lines[k], ",")
		var w int64
		for _, c := range f[3] {
			w = w*10 + int64(c-'0')
		}
		w += int64((k-1-30*1440*8)/8+1) * 4096
		lines[k] = strings.Join(append(f[:3], strconv.FormatInt(w, 10)), ",")
	}
	second := filepath.Join(t.TempDir(), "second.csv")
	os.WriteFile(second, []byte(strings.Join(lines, "\n")), 0o644)

	store := filepath.Join(t.TempDir(), "store")
	if out, err := exec.Command(bin, "serverlog", "import", "--quiet", "--into", store, first).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	for _, replace := range []bool{false, true} {
		args := []string{"serverlog", "import", "--into", store, second}
		if replace {
			args = append(args, "--replace")
		}
		// Without --replace early, with it once it replaces days (day 30
		// is the 31st).
		after := 3
		if replace {
			after = 33
		}
		finished, stderr := importArgsUntil(t, bin, args, after, syscall.SIGKILL)
		t.Logf("replace %v: ended by itself %v: %s", replace, finished, stderr)
		if !replace {
			// Every sample is still the first source's.
			if n := checkPrefix(t, store, first); n != 40*1440-1 {
				t.Errorf("after the kill: %d samples", n)
			}
			continue
		}
		n := checkEither(t, store, first, second)
		if n != 40*1440-1 {
			t.Errorf("after the kill with --replace: %d samples", n)
		}
	}
}

// importArgsUntil runs iopred with args and sends sig after the given
// number of progress lines; it returns whether it ended by itself first,
// and its last lines.
func importArgsUntil(t *testing.T, bin string, args []string, after int, sig syscall.Signal) (finished bool, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(pipe)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) == after {
			cmd.Process.Signal(sig)
		}
	}
	err = cmd.Wait()
	return err == nil, strings.Join(lines[max(0, len(lines)-2):], "\n")
}

// checkEither proves that every sample of a store is one source's or the
// other's, and returns how many it holds.
func checkEither(t *testing.T, store, a, b string) int {
	t.Helper()
	st, err := serverlog.OpenStore(store, serverlog.Options{})
	if err != nil {
		t.Fatalf("store after the signal: %v", err)
	}
	defer st.Close()
	got, err := st.Window(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var want [2]*serverlog.Rates
	for i, p := range []string{a, b} {
		src, err := serverlog.OpenCSV(p, serverlog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want[i], err = src.Window(got.Start, got.End())
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	replaced := 0
	for i := range got.OSTs {
		for k := range got.Len() {
			g := got.Write[i][k]
			switch {
			case g == want[0].Write[i][k]:
			case g == want[1].Write[i][k]:
				replaced++
			default:
				t.Fatalf("%s sample %d: %v, neither source's (%v, %v)", got.OSTs[i], k, g, want[0].Write[i][k], want[1].Write[i][k])
			}
		}
	}
	t.Logf("%d samples of the second source", replaced)
	return got.Len()
}

// TestAIDLearnWindowToTheSecond proves that aid learn --from/--to read
// the rates and the runs of that window, not of whole UTC days: 2.5
// minutes of the real LMT file's 24 OSTs at 5 s are 720 OST samples (the
// whole file is 1440), and of the three runs only the two that started
// in the window are learnt.
func TestAIDLearnWindowToTheSecond(t *testing.T) {
	lmt := interop.Path(t, "lmt/snx11025_2018-01-28.sqlite3")
	jobs := filepath.Join(t.TempDir(), "sacct.txt")
	os.WriteFile(jobs, []byte("JobID|User|JobName|NNodes|Start|End|State\n"+
		"1|u|a|1|2018-01-28T00:00:00|2018-01-28T00:03:00|COMPLETED\n"+
		"2|u|a|1|2018-01-28T00:01:00|2018-01-28T00:04:00|COMPLETED\n"+
		"3|u|a|1|2018-01-28T00:01:30|2018-01-28T00:04:00|COMPLETED\n"), 0o644)
	code, out, errOut := runOut("aid", "learn", "--tz", "UTC", "--lmt", lmt, "--jobs", jobs, "--kb", t.TempDir(),
		"--from", "2018-01-28 00:01:00", "--to", "2018-01-28 00:03:30")
	if code != 0 || !strings.Contains(out, "720 OST samples, 2 new jobs") {
		t.Errorf("exit %d: %q %q", code, out, errOut)
	}
	code, _, errOut = runOut("aid", "learn", "--tz", "UTC", "--lmt", lmt, "--jobs", jobs, "--kb", t.TempDir(),
		"--from", "2018-01-28 00:04:00", "--to", "2018-01-28 00:05:00")
	if code != 1 || !strings.Contains(errOut, jobs+": none of its 3 jobs started between --from and --to") {
		t.Errorf("no run in the window: exit %d: %q", code, errOut)
	}
}

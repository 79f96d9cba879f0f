// Package report tests `iopred report` end to end: real programs traced
// by the library, the report built from their traces, and the page
// loaded in a real headless Chromium.
package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iopred/analyzer/report"
	"iopred/tests/browser"
	"iopred/tests/testenv"
	"iopred/tracefmt"
)

// build writes the report of the traces in dir to the test's artifact
// directory, as `iopred report DIR -o FILE` does.
func build(t *testing.T, dir string) string {
	t.Helper()
	traces, err := tracefmt.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(traces, report.Options{Command: "iopred report " + dir})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.ArtifactDir(), "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// page is what the checks read from the loaded page.
type page struct {
	Sections  map[string]int `json:"sections"` // id -> text length
	Findings  map[string]string
	Rows      map[string]int // table id -> rows
	Figures   int
	NarrowSVG []string // figures much narrower than the page's main column
	Overlaps  []string // pairs of texts of one figure that overlap
}

const inspect = `(() => {
  const out = {sections: {}, findings: {}, rows: {}, figures: 0, narrowSVG: [], overlaps: []};
  for (const s of document.querySelectorAll("main section")) out.sections[s.id] = s.innerText.length;
  for (const f of document.querySelectorAll("article.finding")) out.findings[f.id.replace("finding-", "")] = f.classList[1];
  for (const t of document.querySelectorAll("table")) out.rows[t.id.replace("table-", "")] = t.tBodies[0].rows.length;
  const main = document.querySelector("main section").getBoundingClientRect().width;
  document.querySelectorAll("details").forEach(d => d.open = true);
  document.querySelectorAll("figure svg").forEach((svg, i) => {
    out.figures++;
    const w = svg.getBoundingClientRect().width;
    if (w < 0.95 * main) out.narrowSVG.push(i + ": " + w + " of " + main);
    const boxes = [...svg.querySelectorAll("text")].map(t => [t.textContent, t.getBoundingClientRect()]).filter(b => b[1].width > 0);
    for (let a = 0; a < boxes.length; a++) for (let b = a + 1; b < boxes.length; b++) {
      const p = boxes[a][1], q = boxes[b][1];
      const ox = Math.min(p.right, q.right) - Math.max(p.left, q.left), oy = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (ox > 1 && oy > 1) out.overlaps.push("figure " + i + ": " + JSON.stringify(boxes[a][0]) + " and " + JSON.stringify(boxes[b][0]));
    }
  });
  return out;
})()`

// sortedBy returns the sort values of a table's column, top to bottom,
// after clicking its heading clicks times.
const sortJS = `((id, col, clicks) => {
  const t = document.getElementById("table-" + id);
  const th = t.tHead.rows[0].cells[col];
  for (let i = 0; i < clicks; i++) th.click();
  return {order: th.getAttribute("aria-sort"), values: [...t.tBodies[0].rows].map(r => r.cells[col].getAttribute("data-v") || r.cells[col].textContent)};
})`

type sorted struct {
	Order  string
	Values []string
}

// check loads the report in Chromium and checks that it loads without a
// console error or exception, fetches nothing but itself, holds every
// section with content, figures as wide as the page whose texts do not
// overlap, and tables that sort by a click; it saves a screenshot of
// the whole page beside the report. It returns what it read.
func check(t *testing.T, path string, procs int) page {
	t.Helper()
	b := browser.Start(t)
	url := "file://" + path
	b.Load(t, url)
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the page reported problems:\n%s", strings.Join(p, "\n"))
	}
	for _, u := range b.Requests() {
		if u != url && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page fetched %s: it must need nothing but itself", u)
		}
	}
	var pg page
	b.Eval(t, inspect, &pg)
	for _, id := range []string{"facts", "findings", "time", "bandwidth", "period", "patterns", "prediction", "files", "contexts", "about"} {
		if pg.Sections[id] < 40 {
			t.Errorf("section %q: %d characters", id, pg.Sections[id])
		}
	}
	if pg.Rows["ranks"] != procs {
		t.Errorf("process table of %d rows, want %d", pg.Rows["ranks"], procs)
	}
	if pg.Rows["files"] == 0 || pg.Rows["contexts"] == 0 {
		t.Errorf("table rows %v", pg.Rows)
	}
	if pg.Figures < 4 {
		t.Errorf("%d figures, want the time, bandwidth, period and size ones", pg.Figures)
	}
	for _, n := range pg.NarrowSVG {
		t.Errorf("figure %s wide: it does not fill the page", n)
	}
	for _, o := range pg.Overlaps {
		t.Errorf("texts overlap in %s", o)
	}

	// Sorting: the files by I/O time (numeric: largest first, then
	// smallest first), and by path (text: A to Z).
	var s sorted
	b.Eval(t, sortJS+`("files", 3, 1)`, &s)
	if s.Order != "descending" || !monotone(t, s.Values, true, true) {
		t.Errorf("files by I/O time, one click: %s %v", s.Order, s.Values)
	}
	b.Eval(t, sortJS+`("files", 3, 1)`, &s)
	if s.Order != "ascending" || !monotone(t, s.Values, true, false) {
		t.Errorf("files by I/O time, two clicks: %s %v", s.Order, s.Values)
	}
	b.Eval(t, sortJS+`("files", 0, 1)`, &s)
	if s.Order != "ascending" || !monotone(t, s.Values, false, false) {
		t.Errorf("files by path: %s %v", s.Order, s.Values)
	}
	b.Eval(t, sortJS+`("ranks", 5, 1)`, &s)
	if s.Order != "descending" || !monotone(t, s.Values, true, true) || len(s.Values) != procs {
		t.Errorf("processes by I/O time: %s %v", s.Order, s.Values)
	}
	shot := strings.TrimSuffix(path, ".html") + ".png"
	b.Screenshot(t, 1400, shot)
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 50_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
	t.Logf("report %s, screenshot %s", path, shot)
	if p := b.Problems(); len(p) > 0 {
		t.Errorf("the page reported problems after the clicks:\n%s", strings.Join(p, "\n"))
	}
	return pg
}

// monotone reports whether values are ordered (numbers or text).
func monotone(t *testing.T, values []string, numeric, desc bool) bool {
	t.Helper()
	for i := 1; i < len(values); i++ {
		var a, b float64
		var c int
		if numeric {
			fmt.Sscan(values[i-1], &a)
			fmt.Sscan(values[i], &b)
			c = map[bool]int{true: -1, false: 1}[a < b]
			if a == b {
				c = 0
			}
		} else {
			c = strings.Compare(strings.ToLower(values[i-1]), strings.ToLower(values[i]))
		}
		if (desc && c < 0) || (!desc && c > 0) {
			return false
		}
	}
	return true
}

// The report of the IOR-like MPI-IO job (tests/mpi) of 4 ranks under
// Open MPI with 100 checkpoints of 2 KiB writes: it loads cleanly in
// Chromium, shows every section, and finds the small and misaligned
// writes (more than 1,000 of them, all under 1 MiB, half off 4 KiB)
// while the system's and Open MPI's files are left out.
func TestReportMPIJob(t *testing.T) {
	lib := testenv.Library(t)
	cc := testenv.Tool(t, "mpicc.openmpi")
	run := testenv.Tool(t, "mpirun.openmpi")
	prog := filepath.Join(t.TempDir(), "ior")
	src := filepath.Join(testenv.RepoRoot(), "tests", "mpi", "testdata", "ior.c")
	if out, err := exec.Command(cc, "-O2", "-Wno-stringop-overflow", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	data, traces := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, run, "--oversubscribe", "-np", "4", "-x", "LD_PRELOAD="+lib, "-x", "IOPRED_DIR="+traces,
		prog, data, "3", "8192", "2048", "20", "ckpt=100")
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("job: %v\n%s", err, out)
	}
	path := build(t, traces)
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"/proc/cpuinfo", "/tmp/ompi.", "mca_io_ompio.so", ".dat.locktest."} {
		if strings.Contains(string(html), gone) {
			t.Errorf("the report shows %q, an excluded path", gone)
		}
	}
	pg := check(t, path, 4)
	for id, sev := range map[string]string{"small-writes": "high", "misaligned": "high", "io-time": "info"} {
		if pg.Findings[id] != sev {
			t.Errorf("finding %s: %q, want %q (findings %v)", id, pg.Findings[id], sev, pg.Findings)
		}
	}
}

// The report of one process (tests/posix nested.c: 48 rounds reopening
// four files, interleaved write and pwrite, stdio half the bytes) loads
// cleanly and finds the random writes, the repeated opens and the stdio
// use.
func TestReportProcess(t *testing.T) {
	testenv.Library(t)
	gcc := testenv.Tool(t, "gcc")
	prog := filepath.Join(t.TempDir(), "nested")
	src := filepath.Join(testenv.RepoRoot(), "tests", "posix", "testdata", "nested.c")
	if out, err := exec.Command(gcc, "-O2", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	data, traces := t.TempDir(), t.TempDir()
	if r := testenv.Traced(t, traces, nil, "", prog, data, "48", "50", "1000"); r.Code != 0 {
		t.Fatalf("nested: %+v", r)
	}
	pg := check(t, build(t, traces), 1)
	for id, sev := range map[string]string{"random-writes": "high", "repeated-opens": "warning", "stdio": "warning", "small-writes": "high"} {
		if pg.Findings[id] != sev {
			t.Errorf("finding %s: %q, want %q (findings %v)", id, pg.Findings[id], sev, pg.Findings)
		}
	}
}

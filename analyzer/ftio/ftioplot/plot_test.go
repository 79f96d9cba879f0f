package ftioplot

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"iopred/analyzer/ftio"
)

// jobResult is FTIO's result on a job signal in absolute (Unix) seconds,
// as the job summary analyses it: 40 MB/s bursts of 2 ms every 50 ms for
// 2 s, sampled at 1 kHz, starting t0.
func jobResult(t *testing.T, t0 float64) ftio.Result {
	t.Helper()
	x := make([]float64, 2000)
	for i := range x {
		if i%50 < 2 {
			x[i] = 4e7
		}
	}
	res, err := ftio.AnalyzeSignal(x, t0, 1000, ftio.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.PeriodS == nil || len(res.Candidates) == 0 {
		t.Fatalf("no period in the test signal: %+v", res)
	}
	return res
}

var svgTexts = regexp.MustCompile(`<text [^>]*>([^<]*)</text>`)

// A job signal in Unix seconds is drawn against seconds since the job's
// start, the start stated once as a date; bandwidth ticks read in MB/s
// with no exponent; the page's figure fills the window; each candidate's
// number and description appear once.
func TestPlotJobHTML(t *testing.T) {
	const t0 = 1795587700.25
	res := jobResult(t, t0)
	path := filepath.Join(t.TempDir(), "p.html")
	opt := Options{Origin: t0 - 0.5, Start: "2026-11-25 06:21:40.479 UTC (+00:00)", What: "the job's writes"}
	if err := PlotWith(path, res, opt); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`<svg width="100%"`, "from 0.500 s to 2.500 s after the job&#39;s start (2026-11-25",
		"bandwidth (MB/s)", "time since the job&#39;s start (s)", "Bandwidth of the job&#39;s writes", "1: 20 Hz, every 0.05 s"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "2026-11-25"); n != 1 {
		t.Errorf("the date appears %d times", n)
	}
	var xticks []float64
	for _, m := range svgTexts.FindAllStringSubmatch(page, -1) {
		s := m[1]
		if strings.Contains(s, "e+") || strings.Contains(s, "17955") {
			t.Errorf("text %q: exponent or absolute time", s)
		}
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			xticks = append(xticks, v)
		}
	}
	if len(xticks) < 10 {
		t.Errorf("only %d numeric tick labels: %v", len(xticks), xticks)
	}
}

// The .svg and .png outputs are written, and an unknown extension is an
// error naming the file.
func TestPlotFormats(t *testing.T) {
	res := jobResult(t, 0)
	dir := t.TempDir()
	for _, name := range []string{"p.svg", "p.png"} {
		if err := Plot(filepath.Join(dir, name), res); err != nil {
			t.Fatal(err)
		}
	}
	if err := Plot(filepath.Join(dir, "p.jpg"), res); err == nil || !strings.Contains(err.Error(), "p.jpg") {
		t.Errorf("jpg: %v", err)
	}
}

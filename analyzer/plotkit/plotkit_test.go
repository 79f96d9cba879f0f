package plotkit

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Ticks puts between 4 and 12 labelled ticks on any range, at round
// values that a label prints exactly, never in exponent notation (the
// old period plot's only bandwidth tick read "1e+07").
func TestTicks(t *testing.T) {
	for _, r := range [][2]float64{{0, 1}, {0, 1.3e7}, {0, 190}, {0.03, 1.28}, {-17, 190}, {0, 0.0107}, {1795587700.5, 1795587701.8}, {0, 7}, {3, 3}} {
		ticks := Ticks{N: 6}.Ticks(r[0], r[1])
		var labels []string
		for _, tk := range ticks {
			if tk.Value < r[0]-1e-9*math.Abs(r[0]) || tk.Value > r[1]+1e-9*math.Abs(r[1]) {
				t.Errorf("%v: tick %v outside the range", r, tk.Value)
			}
			if tk.Label == "" {
				continue
			}
			labels = append(labels, tk.Label)
			if strings.ContainsAny(tk.Label, "e+") {
				t.Errorf("%v: label %q in exponent notation", r, tk.Label)
			}
			if v := parse(t, tk.Label); math.Abs(v-tk.Value) > 1e-9*math.Max(1, math.Abs(tk.Value)) {
				t.Errorf("%v: label %q for tick %v", r, tk.Label, tk.Value)
			}
		}
		if r[0] == r[1] {
			if len(labels) != 1 {
				t.Errorf("%v: labels %q", r, labels)
			}
			continue
		}
		if len(labels) < 4 || len(labels) > 12 {
			t.Errorf("%v: %d labelled ticks %q, want 4 to 12", r, len(labels), labels)
		}
	}
}

func parse(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatalf("label %q: %v", s, err)
	}
	return v
}

// IntTicks labels integers only, however few the rows.
func TestIntTicks(t *testing.T) {
	for _, r := range [][2]float64{{-0.5, 0.5}, {-0.5, 3.5}, {-0.5, 127.5}} {
		ticks := IntTicks{}.Ticks(r[0], r[1])
		if len(ticks) == 0 {
			t.Errorf("%v: no tick", r)
		}
		for _, tk := range ticks {
			if tk.Value != math.Round(tk.Value) {
				t.Errorf("%v: tick at %v", r, tk.Value)
			}
		}
	}
}

// The units are the ones a person reads: decimal rates, binary sizes.
func TestUnits(t *testing.T) {
	for _, c := range []struct {
		max  float64
		rate string
		size string
	}{{0, "B/s", "B"}, {999, "B/s", "B"}, {1500, "kB/s", "KiB"}, {2.1e8, "MB/s", "MiB"}, {3e9, "GB/s", "GiB"}, {5e15, "TB/s", "TiB"}} {
		if u := RateUnit(c.max); u.Name != c.rate {
			t.Errorf("RateUnit(%g) = %s, want %s", c.max, u.Name, c.rate)
		}
		if u := SizeUnit(c.max); u.Name != c.size {
			t.Errorf("SizeUnit(%g) = %s, want %s", c.max, u.Name, c.size)
		}
	}
}

func linePlot(t *testing.T, ylabel string, peak float64) (*plot.Plot, *plotter.Line) {
	t.Helper()
	p := New("time since the job's start (s)", ylabel)
	pts := plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: peak}, {X: 2, Y: 0}}
	l, err := plotter.NewLine(pts)
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	return p, l
}

// The strips (title and legend) lie above their plots' data areas and
// never inside one, the data areas of stacked panels span the same x
// range even when their y labels differ in width, and a legend too long
// for one line wraps instead of running off the figure.
func TestLayout(t *testing.T) {
	a, la := linePlot(t, "bandwidth (MB/s)", 123456)
	b, lb := linePlot(t, "share", 0.01)
	var long []LegendEntry
	for i := range 8 {
		long = append(long, LegendEntry{Label: fmt.Sprintf("candidate %d: 19.21 Hz, every 0.05206 s, confidence 0.21", i), Thumbs: []plot.Thumbnailer{lb}})
	}
	panels := []Panel{
		{Plot: a, Title: "Bandwidth", Legend: []LegendEntry{{Label: "writes", Thumbs: []plot.Thumbnailer{la}}}},
		{Plot: b, Title: "Spectrum", Legend: long, Note: "a note"},
	}
	w, h := DefaultWidth, 18*vg.Centimeter
	c := draw.New(vgsvg.New(w, h))
	places := layout(c, panels)
	if lines := func() int { _, _, n := panels[1].stripLines(w); return n }(); lines < 3 {
		t.Errorf("8 long legend entries on %d lines, want wrapped", lines)
	}
	for i, p := range places {
		if p.strip.Min.Y < p.data.Max.Y {
			t.Errorf("panel %d: strip reaches down to %v, into the data area (top %v)", i, p.strip.Min.Y, p.data.Max.Y)
		}
		if p.data.Min.X != places[0].data.Min.X || p.data.Max.X != places[0].data.Max.X {
			t.Errorf("panel %d: data area x %v..%v, panel 0's %v..%v", i, p.data.Min.X, p.data.Max.X, places[0].data.Min.X, places[0].data.Max.X)
		}
		if i > 0 && p.strip.Max.Y > places[i-1].plot.Min.Y+1e-6 {
			t.Errorf("panel %d's strip overlaps panel %d", i, i-1)
		}
	}
	if d := places[0].data; d.Max.X-d.Min.X < 0.8*w {
		t.Errorf("data area %v wide in a figure of %v: the figure does not use its width", d.Max.X-d.Min.X, w)
	}
}

// Stacked marks never overlap, and stay within the data area.
func TestStack(t *testing.T) {
	xs := []vg.Length{100, 104, 110, 300, 5, 398}
	ws := []vg.Length{20, 20, 20, 20, 20, 20}
	boxes := stack(xs, ws, 0, 400)
	for i, a := range boxes {
		if a.x0 < 0 || a.x1 > 400 {
			t.Errorf("mark %d at %v..%v outside 0..400", i, a.x0, a.x1)
		}
		for j, b := range boxes[:i] {
			if a.row == b.row && a.x0 < b.x1 && b.x0 < a.x1 {
				t.Errorf("marks %d and %d overlap: %+v %+v", j, i, b, a)
			}
		}
	}
	if boxes[0].row != 0 || boxes[1].row != 1 || boxes[2].row != 2 || boxes[3].row != 0 {
		t.Errorf("rows %+v", boxes)
	}
}

// The SVG for a page is as wide as its container, and every text carries
// the length it had in the layout's font, so that the browser's font
// cannot make labels run into each other.
func TestFigureSVG(t *testing.T) {
	a, l := linePlot(t, "bandwidth (MB/s)", 150)
	f := &Figure{Panels: []Panel{{Plot: a, Title: "Bandwidth & more <of> it", Legend: []LegendEntry{{Label: "writes", Thumbs: []plot.Thumbnailer{l}}}}}}
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(svg, []byte(`<svg width="100%" viewBox="`)) {
		t.Errorf("SVG starts %q", svg[:min(80, len(svg))])
	}
	texts := regexp.MustCompile(`<text [^>]*>`).FindAll(svg, -1)
	if len(texts) < 5 {
		t.Fatalf("%d texts", len(texts))
	}
	for _, tx := range texts {
		if !bytes.Contains(tx, []byte(`textLength="`)) || !bytes.Contains(tx, []byte(`Arial`)) {
			t.Errorf("text without its length or fallback fonts: %s", tx)
		}
	}
	want := textWidth(titleSize, "Bandwidth & more <of> it").Points()
	if !bytes.Contains(svg, fmt.Appendf(nil, `textLength="%.2f"`, want)) {
		t.Errorf("the title's length (escaped text, %.2f) is missing", want)
	}
	dir := t.TempDir()
	for _, name := range []string{"f.svg", "f.png"} {
		if err := f.WriteFile(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() < 1000 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := f.WriteFile(filepath.Join(dir, "f.gif")); err == nil || !strings.Contains(err.Error(), "f.gif") {
		t.Errorf("unknown format: %v", err)
	}
}

// Envelope draws short series whole and long ones as per-group ranges
// that keep the highest and lowest sample.
func TestEnvelope(t *testing.T) {
	y := make([]float64, 10000)
	y[4321] = 99
	y[7000] = -5
	pts, per := Envelope(y, 1, 0.5)
	if per != 5 || len(pts) != 2*MaxDrawn {
		t.Fatalf("%d points, %d per group", len(pts), per)
	}
	hi, lo := 0.0, 0.0
	for _, p := range pts {
		hi, lo = math.Max(hi, p.Y), math.Min(lo, p.Y)
	}
	if hi != 99 || lo != -5 {
		t.Errorf("range %v..%v, want -5..99", lo, hi)
	}
	if pts, per := Envelope(y[:10], 1, 0.5); per != 1 || len(pts) != 10 || pts[9].X != 5.5 {
		t.Errorf("short series: %v %d", pts, per)
	}
}

// Num never prints an exponent and keeps four significant digits.
func TestNum(t *testing.T) {
	for v, want := range map[float64]string{15258.79: "15259", 19.2096: "19.21", 0.0520574: "0.05206", 0.05: "0.05", 1e-6: "0.000001", 0: "0", 1907.35: "1907", 3: "3"} {
		if got := Num(v); got != want {
			t.Errorf("Num(%v) = %q, want %q", v, got, want)
		}
	}
}

func ExampleTicks() {
	for _, tk := range (Ticks{N: 5}).Ticks(0, 1.3e7) {
		if tk.Label != "" {
			fmt.Print(tk.Label, " ")
		}
	}
	fmt.Println()
	// Output: 0 2500000 5000000 7500000 10000000 12500000
}

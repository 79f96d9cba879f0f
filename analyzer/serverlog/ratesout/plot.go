package ratesout

import (
	"fmt"
	"html"
	"image/color"
	"iopred/internal/safefile"
	"math"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"iopred/analyzer/plotkit"
	"iopred/analyzer/serverlog"
)

// The heat maps have at most heatColumns columns of time (each the mean
// of its samples) and the aggregate at most lineColumns points.
const (
	heatColumns = 600
	lineColumns = 2000
)

// Unknown is the colour of a heat map cell no sample of which is known
// (a gap, a counter reset); white is a known zero.
var Unknown = color.RGBA{R: 200, G: 200, B: 200, A: 255}

// timeAxis picks the unit of the x axis for a span: minutes, hours or
// days since the start.
func timeAxis(span time.Duration) (div float64, name string) {
	switch {
	case span <= 3*time.Hour:
		return 60, "minutes"
	case span <= 4*24*time.Hour:
		return 3600, "hours"
	}
	return 86400, "days"
}

// columns averages v into n columns, each the mean of the known samples
// in it (NaN when none is).
func columns(v []float64, n int) []float64 {
	out := make([]float64, n)
	for c := range out {
		lo, hi := c*len(v)/n, (c+1)*len(v)/n
		sum, known := 0.0, 0
		for _, x := range v[lo:hi] {
			if !math.IsNaN(x) {
				sum += x
				known++
			}
		}
		out[c] = math.NaN()
		if known > 0 {
			out[c] = sum / float64(known)
		}
	}
	return out
}

// heatGrid is a heat map's cells: rows of OSTs (the first at the top),
// columns of time.
type heatGrid struct {
	z      [][]float64
	x0, dx float64
}

func (g *heatGrid) Dims() (c, r int)   { return len(g.z[0]), len(g.z) }
func (g *heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g *heatGrid) X(c int) float64    { return g.x0 + float64(c)*g.dx }
func (g *heatGrid) Y(r int) float64    { return float64(len(g.z) - 1 - r) }

// rateMap is the colour scale: light for little, dark for much, so that
// bursts stand out on the white of no I/O.
func rateMap() palette.ColorMap {
	cm, err := moreland.NewLuminance([]color.Color{
		color.RGBA{R: 45, G: 0, B: 75, A: 255}, color.RGBA{R: 160, G: 20, B: 60, A: 255},
		color.RGBA{R: 230, G: 95, B: 30, A: 255}, color.RGBA{R: 252, G: 190, B: 80, A: 255},
		color.RGBA{R: 255, G: 245, B: 190, A: 255}})
	if err != nil {
		panic(err) // fixed control colours of rising luminance
	}
	return palette.Reverse(cm)
}

// Figure draws the rates: the aggregate read and write rates of the OSTs
// shown above, then the write and the read rates of each OST as heat
// maps (rows of OSTs, columns of time, one colour scale for both) and the
// scale. title names the log.
func Figure(r *serverlog.Rates, title string) (*plotkit.Figure, error) {
	n := r.Len()
	if n == 0 || len(r.OSTs) == 0 {
		return nil, fmt.Errorf("no samples to draw")
	}
	span := r.End().Sub(r.Start)
	div, unitName := timeAxis(span)
	xlabel := fmt.Sprintf("%s since %s", unitName, r.Start.UTC().Format("2006-01-02 15:04:05 MST"))
	sec := r.Step.Seconds()
	ar, aw := r.Aggregate()

	peak := 0.0
	for _, v := range [][]float64{ar, aw} {
		for _, x := range v {
			if !math.IsNaN(x) {
				peak = math.Max(peak, x)
			}
		}
	}
	unit := plotkit.RateUnit(peak)
	lc := min(n, lineColumns)
	p := plotkit.New(xlabel, "rate ("+unit.Name+")")
	panel := plotkit.Panel{Plot: p, Title: fmt.Sprintf("%s: aggregate of %d OSTs", title, len(r.OSTs))}
	for _, s := range []struct {
		name string
		v    []float64
		col  color.Color
	}{{"write", aw, plotkit.Orange}, {"read", ar, plotkit.Blue}} {
		cols := columns(s.v, lc)
		dx := float64(n) * sec / float64(lc) / div
		var first *plotter.Line
		for c := 0; c < lc; {
			if math.IsNaN(cols[c]) {
				c++
				continue
			}
			var pts plotter.XYs
			for ; c < lc && !math.IsNaN(cols[c]); c++ {
				pts = append(pts, plotter.XY{X: float64(c) * dx, Y: cols[c] / unit.Div}, plotter.XY{X: float64(c+1) * dx, Y: cols[c] / unit.Div})
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = s.col, vg.Points(1.2)
			p.Add(l)
			if first == nil {
				first = l
			}
		}
		if first != nil {
			panel.Legend = append(panel.Legend, plotkit.LegendEntry{Label: s.name, Thumbs: []plot.Thumbnailer{first}})
		}
	}
	p.X.Min, p.X.Max = 0, float64(n)*sec/div
	p.Y.Min, p.Y.Max = 0, math.Max(peak/unit.Div*1.05, 1e-9)
	panel.Note = fmt.Sprintf("%d samples of %v", n, r.Step)
	if lc < n {
		panel.Note += fmt.Sprintf(", drawn as the mean of every %.3g", float64(n)/float64(lc))
	}
	panel.Note += "; gaps: no OST known"
	panels := []plotkit.Panel{panel}

	// The heat maps share one scale, from the highest cell of either.
	hc := min(n, heatColumns)
	grids := map[string]*heatGrid{}
	hpeak := 0.0
	for _, dir := range []string{"write", "read"} {
		per := r.Write
		if dir == "read" {
			per = r.Read
		}
		g := &heatGrid{dx: float64(n) * sec / float64(hc) / div}
		g.x0 = g.dx / 2
		for i := range r.OSTs {
			row := columns(per[i], hc)
			for _, x := range row {
				if !math.IsNaN(x) {
					hpeak = math.Max(hpeak, x)
				}
			}
			g.z = append(g.z, row)
		}
		grids[dir] = g
	}
	hu := plotkit.RateUnit(hpeak)
	top := math.Max(hpeak/hu.Div, 1e-9)
	cm := rateMap()
	cm.SetMin(0)
	cm.SetMax(top)
	rows := len(r.OSTs)
	for _, dir := range []string{"write", "read"} {
		g := grids[dir]
		for _, row := range g.z {
			for c := range row {
				row[c] /= hu.Div
			}
		}
		hm := plotter.NewHeatMap(g, cm.Palette(256))
		hm.Min, hm.Max = math.SmallestNonzeroFloat64, top
		hm.Underflow, hm.NaN = color.White, Unknown
		hm.Rasterized = rows*hc > 4000
		hp := plotkit.New(xlabel, "")
		hp.Add(hm)
		hp.X.Min, hp.X.Max = 0, float64(n)*sec/div
		hp.Y.Min, hp.Y.Max = -0.5, float64(rows)-0.5
		if rows <= 24 {
			labels := make([]string, rows)
			for k, o := range r.OSTs {
				labels[rows-1-k] = o
			}
			hp.NominalY(labels...)
			hp.Y.Tick.Label.Font = hp.X.Tick.Label.Font
			hp.Y.Tick.Label.Font.Size = vg.Points(math.Min(10, 160/float64(rows)))
		} else {
			hp.Y.Tick.Marker = plotkit.TopDown{N: rows}
			hp.Y.Label.Text = "OST (row)"
		}
		note := fmt.Sprintf("%d columns of %v; white: no I/O; grey: unknown", hc, time.Duration(float64(n)/float64(hc)*float64(r.Step)).Round(time.Millisecond))
		if rows > 24 {
			note += fmt.Sprintf("; row 0 is %s, row %d %s", r.OSTs[0], rows-1, r.OSTs[rows-1])
		}
		panels = append(panels, plotkit.Panel{Plot: hp, Title: strings.ToUpper(dir[:1]) + dir[1:] + " rate per OST",
			Height: vg.Length(math.Min(12, 3.2+0.4*float64(rows))) * vg.Centimeter, Note: note})
	}
	panels = append(panels, plotkit.ColorBarPanel("rate per OST ("+hu.Name+")", cm))
	return &plotkit.Figure{Panels: panels}, nil
}

// WritePlot draws the rates to path: .svg, .png, or .html (a page with a
// line about the log and the figure as wide as the window).
func WritePlot(path string, r *serverlog.Rates, title string) error {
	fig, err := Figure(r, title)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".html", ".htm":
		svg, err := fig.SVG()
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		ar, aw := r.Aggregate()
		line := fmt.Sprintf("%s: %d OSTs from %s to %s at %v; %s read, %s written.", title, len(r.OSTs),
			r.Start.UTC().Format("2006-01-02 15:04:05 MST"), r.End().UTC().Format("2006-01-02 15:04:05 MST"), r.Step,
			gb(ar, r.Step), gb(aw, r.Step))
		page := "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iopred rates " + html.EscapeString(title) + "</title>\n" +
			"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
			"<style>body{font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;margin:1em 2%;}svg{display:block;width:100%;height:auto;}</style>\n" +
			"</head>\n<body>\n<p>" + html.EscapeString(line) + "</p>\n" + string(svg) + "\n</body></html>\n"
		return safefile.WriteFile(path, []byte(page), 0o666)
	case ".svg", ".png":
		return fig.WriteFile(path)
	}
	return fmt.Errorf("plot %s: unknown format %q (want .svg, .png or .html)", path, filepath.Ext(path))
}

// gb writes the bytes a series of rates moved, in GB.
func gb(v []float64, step time.Duration) string {
	sum := 0.0
	for _, x := range v {
		if !math.IsNaN(x) {
			sum += x * step.Seconds()
		}
	}
	return fmt.Sprintf("%.2f GB", sum/1e9)
}

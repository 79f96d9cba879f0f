package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"iopred/analyzer/ftio/ftioplot"
	"iopred/analyzer/insights"
	"iopred/analyzer/job"
	"iopred/analyzer/plotkit"
	"iopred/analyzer/summary"
)

// heatColumns is how many time bins the per-rank heat map has; maxRows
// bounds its rows (more processes are grouped, a row per group).
const (
	heatColumns = 240
	maxRows     = 128
	maxBars     = 48
)

// bandwidthMap is the heat map colour scale: light for little bandwidth,
// dark for much (rising luminance reversed), so that bursts stand out on
// the white of no I/O.
func bandwidthMap() palette.ColorMap {
	cm, err := moreland.NewLuminance([]color.Color{
		color.RGBA{R: 45, G: 0, B: 75, A: 255}, color.RGBA{R: 160, G: 20, B: 60, A: 255},
		color.RGBA{R: 230, G: 95, B: 30, A: 255}, color.RGBA{R: 252, G: 190, B: 80, A: 255},
		color.RGBA{R: 255, G: 245, B: 190, A: 255}})
	if err != nil {
		panic(err) // the control colours are fixed and rise in luminance
	}
	return palette.Reverse(cm)
}

// grid is the heat map's values: rows of processes (or groups), columns
// of time.
type grid struct {
	z        [][]float64 // [row][col], in the unit
	x0, dx   float64     // seconds since the job's start of column 0's centre, column width
	rowLabel []string
}

func (g *grid) Dims() (c, r int)   { return len(g.z[0]), len(g.z) }
func (g *grid) Z(c, r int) float64 { return g.z[r][c] }
func (g *grid) X(c int) float64    { return g.x0 + float64(c)*g.dx }
func (g *grid) Y(r int) float64    { return float64(len(g.z) - 1 - r) } // row 0 at the top

// spread adds the bytes of a histogram's bins to the columns of a grid
// row over [t0, t0+span) ns, each bin's bytes in proportion to its
// overlap with each column.
func spread(row []float64, h *job.Histogram, t0, span int64) {
	n := int64(len(row))
	for i, b := range h.Bins {
		if b == 0 {
			continue
		}
		lo := (h.First+int64(i))*h.WidthNs - t0
		hi := lo + h.WidthNs
		for c := max(0, lo*n/span); c < n && c*span/n < hi; c++ {
			cl, ch := c*span/n, (c+1)*span/n
			ov := min(hi, ch) - max(lo, cl)
			if ov > 0 {
				row[c] += b * float64(ov) / float64(h.WidthNs)
			}
		}
	}
}

// timeline draws the job's read and write bandwidth over time and, under
// it, each process's as a heat map, all against seconds since the job's
// start.
func (r *Report) timeline() (*plotkit.Figure, error) {
	span := r.end()
	if span <= 0 {
		return nil, nil
	}
	procs := r.procs()
	// Rows: one per process, or groups of consecutive processes.
	per := (len(procs) + maxRows - 1) / maxRows
	rows := (len(procs) + per - 1) / per
	g := &grid{z: make([][]float64, rows)}
	t0 := r.start()
	for k := range g.z {
		g.z[k] = make([]float64, heatColumns)
		grp := procs[k*per : min((k+1)*per, len(procs))]
		for _, p := range grp {
			spread(g.z[k], &p.ReadSignal, t0, span)
			spread(g.z[k], &p.WriteSignal, t0, span)
		}
		if len(grp) == 1 {
			g.rowLabel = append(g.rowLabel, grp[0].Label())
		} else {
			g.rowLabel = append(g.rowLabel, grp[0].Label()+" to "+grp[len(grp)-1].Label())
		}
	}
	colSec := float64(span) / 1e9 / heatColumns
	g.dx, g.x0 = colSec, colSec/2
	peak := 0.0
	for _, row := range g.z {
		for c := range row {
			row[c] /= colSec * float64(per) // bytes to bytes per second, per process
			peak = math.Max(peak, row[c])
		}
	}
	unit := plotkit.RateUnit(peak)
	for _, row := range g.z {
		for c := range row {
			row[c] /= unit.Div
		}
	}
	xlabel := "time since the job's start (s)"
	var panels []plotkit.Panel

	// The job's bandwidth, from the job view's signal (finer).
	if j := r.Job; j != nil && (j.Signal.Write != nil || j.Signal.Read != nil) {
		sig := j.Signal
		jpeak := 0.0
		for _, s := range [][]int64{sig.Write, sig.Read} {
			for _, v := range s {
				jpeak = math.Max(jpeak, float64(v)*sig.Fs)
			}
		}
		ju := plotkit.RateUnit(jpeak)
		p := plotkit.New(xlabel, "bandwidth ("+ju.Name+")")
		panel := plotkit.Panel{Plot: p, Title: "Bandwidth of the job", Height: 6.5 * vg.Centimeter}
		x0 := float64(sig.StartUnixNs-t0) / 1e9
		for _, s := range []struct {
			v    []int64
			name string
			col  color.Color
		}{{sig.Write, "writes", plotkit.Blue}, {sig.Read, "reads", plotkit.Orange}} {
			if s.v == nil {
				continue
			}
			y := make([]float64, len(s.v))
			for i, v := range s.v {
				y[i] = float64(v) * sig.Fs / ju.Div
			}
			pts, grp := plotkit.Envelope(y, x0, 1/sig.Fs)
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = s.col, vg.Points(1)
			if grp == 1 {
				l.StepStyle = plotter.PostStep
			}
			p.Add(l)
			label := s.name
			if grp > 1 {
				label += fmt.Sprintf(" (range of every %d bins of %s)", grp, insights.Dur(sig.WidthNs))
			} else {
				label += fmt.Sprintf(" (bins of %s)", insights.Dur(sig.WidthNs))
			}
			panel.Legend = append(panel.Legend, plotkit.LegendEntry{Label: label, Thumbs: []plot.Thumbnailer{l}})
		}
		p.X.Min, p.X.Max = 0, float64(span)/1e9
		p.Y.Min, p.Y.Max = 0, math.Max(jpeak/ju.Div*1.05, 1e-9)
		panels = append(panels, panel)
	}

	cm := bandwidthMap()
	cm.SetMin(0)
	cm.SetMax(math.Max(peak/unit.Div, 1e-9))
	hm := plotter.NewHeatMap(g, cm.Palette(256))
	hm.Min, hm.Max = math.SmallestNonzeroFloat64, math.Max(peak/unit.Div, 1e-9)
	hm.Underflow = color.White
	hm.Rasterized = rows*heatColumns > 4000
	p := plotkit.New(xlabel, "")
	p.Add(hm)
	p.X.Min, p.X.Max = 0, float64(span)/1e9
	p.Y.Min, p.Y.Max = -0.5, float64(rows)-0.5
	if rows <= 16 {
		labels := make([]string, rows)
		for k, l := range g.rowLabel {
			labels[rows-1-k] = l
		}
		p.NominalY(labels...)
		p.Y.Tick.Label.Font = p.X.Tick.Label.Font
	} else {
		p.Y.Tick.Marker = plotkit.TopDown{N: rows}
		p.Y.Label.Text = "process (row)"
	}
	what := "per process"
	if per > 1 {
		what = fmt.Sprintf("per group of %d processes (mean)", per)
	}
	heat := plotkit.Panel{Plot: p, Title: "Bandwidth " + what + ", reads and writes",
		Height: vg.Length(math.Min(14, 3.2+0.55*float64(rows))) * vg.Centimeter,
		Note:   fmt.Sprintf("%d columns of %s; white: no I/O", heatColumns, insights.Dur(int64(colSec*1e9)))}
	if rows > 16 {
		heat.Note += fmt.Sprintf("; row k is %s", describeRows(g.rowLabel))
	}
	if w := r.Stats.HeatmapBinNs; w > 0 {
		heat.Note += fmt.Sprintf("; from Darshan's HEATMAP records (no DXT): time resolution %s, a bin's bytes spread over it", insights.Dur(w))
	}
	panels = append(panels, heat)

	panels = append(panels, plotkit.ColorBarPanel("bandwidth ("+unit.Name+")", cm))
	return &plotkit.Figure{Panels: panels}, nil
}

// describeRows says what the first rows of a tall heat map are.
func describeRows(labels []string) string {
	s := ""
	for i, l := range labels[:min(3, len(labels))] {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d: %s", i, l)
	}
	return s + ", ..."
}

// timeShare draws each process's run time split into reads, writes,
// metadata, MPI start-up and shut-down, and the rest (computation,
// communication, waiting).
func (r *Report) timeShare() (*plotkit.Figure, error) {
	procs := r.procs()
	if len(procs) == 0 {
		return nil, nil
	}
	per := (len(procs) + maxBars - 1) / maxBars
	n := (len(procs) + per - 1) / per
	parts := [5]plotter.Values{}
	for i := range parts {
		parts[i] = make(plotter.Values, n)
	}
	labels := make([]string, n)
	for k := range n {
		// Bar n-1-k, so that the first process is at the top.
		grp := procs[k*per : min((k+1)*per, len(procs))]
		k := n - 1 - k
		for _, p := range grp {
			rest := p.DurationNs - p.IONs() - p.MPIStartNs - p.MPIEndNs
			for i, v := range []int64{p.ReadNs, p.WriteNs, p.MetaNs, p.MPIStartNs + p.MPIEndNs, max(rest, 0)} {
				parts[i][k] += float64(v) / 1e9 / float64(len(grp))
			}
		}
		labels[k] = grp[0].Label()
		if len(grp) > 1 {
			labels[k] += "+"
		}
	}
	p := plotkit.New("time (s)", "")
	names := []string{"reads", "writes", "metadata", "MPI start-up and shut-down", "the rest (computation, communication, waiting)"}
	colors := []color.Color{plotkit.Orange, plotkit.Blue, plotkit.Red, plotkit.Purple, color.RGBA{R: 215, G: 215, B: 215, A: 255}}
	height := vg.Length(math.Min(16, 2.8+0.5*float64(n))) * vg.Centimeter
	bw := (height - 3*vg.Centimeter) / vg.Length(n) * 0.7
	panel := plotkit.Panel{Plot: p, Title: "Run time of each process", Height: height}
	var prev *plotter.BarChart
	for i, v := range parts {
		b, err := plotter.NewBarChart(v, max(bw, vg.Points(2)))
		if err != nil {
			return nil, err
		}
		b.Horizontal = true
		b.Color = colors[i]
		b.LineStyle.Width = 0
		if prev != nil {
			b.StackOn(prev)
		}
		prev = b
		p.Add(b)
		panel.Legend = append(panel.Legend, plotkit.LegendEntry{Label: names[i], Thumbs: []plot.Thumbnailer{b}})
	}
	if n <= 24 {
		p.NominalY(labels...)
		p.Y.Tick.Label.Font = p.X.Tick.Label.Font
	} else {
		p.Y.Tick.Marker = plotkit.TopDown{N: n}
		p.Y.Label.Text = "process (bar)"
	}
	p.X.Min = 0
	if per > 1 {
		panel.Note = fmt.Sprintf("each bar is the mean of %d consecutive processes", per)
	}
	return &plotkit.Figure{Panels: []plotkit.Panel{panel}}, nil
}

// sizeLabels name the request-size bins briefly enough to sit under
// their bars.
var sizeLabels = []string{"<100", "<1K", "<10K", "<100K", "<1M", "<4M", "<10M", "<100M", "<1G", "≥1G"}

// sizes draws the file-system requests by size, reads and writes side by
// side.
func (r *Report) sizes() (*plotkit.Figure, error) {
	read, write := r.Stats.Total()
	if read.Requests+write.Requests == 0 {
		return nil, nil
	}
	p := plotkit.New("request size (bytes: K = KiB, M = MiB, G = GiB)", "requests")
	panel := plotkit.Panel{Plot: p, Title: "File-system requests by size", Height: 7 * vg.Centimeter}
	w := vg.Points(14)
	for i, s := range []struct {
		a    *insights.Access
		name string
		col  color.Color
	}{{&read, "reads", plotkit.Orange}, {&write, "writes", plotkit.Blue}} {
		v := make(plotter.Values, len(s.a.Sizes))
		for k, c := range s.a.Sizes {
			v[k] = float64(c)
		}
		b, err := plotter.NewBarChart(v, w)
		if err != nil {
			return nil, err
		}
		b.Color = s.col
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(2*i-1) / 2
		p.Add(b)
		panel.Legend = append(panel.Legend, plotkit.LegendEntry{Label: fmt.Sprintf("%s (%s)", s.name, insights.Count(s.a.Requests)), Thumbs: []plot.Thumbnailer{b}})
	}
	p.NominalX(sizeLabels...)
	p.X.Tick.Label.Font = p.Y.Tick.Label.Font
	p.Y.Min = 0
	panel.Note = "POSIX requests as the file system receives them, those an MPI library makes included; stdio's buffered calls are not"
	return &plotkit.Figure{Panels: []plotkit.Panel{panel}}, nil
}

// periodFigure draws the job signal FTIO analysed and its spectrum.
func (r *Report) periodFigure() (*plotkit.Figure, error) {
	p, what, fromHeatmap := r.period()
	if p == nil || len(p.Signal) == 0 {
		return nil, nil
	}
	what = "the job's " + what
	if fromHeatmap {
		what += fmt.Sprintf(" (Darshan HEATMAP, bins of %s)", insights.Dur(r.Stats.Heatmap.WidthNs))
	}
	opt := ftioplot.Options{Origin: float64(r.start()) / 1e9, Start: summary.FormatDate(r.start()), What: what}
	return ftioplot.Figure(p.Result, opt)
}

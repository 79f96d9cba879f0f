package plotkit

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Marks labels points with short texts in the band above the data (y
// above Above, which the caller leaves free by raising the axis' maximum),
// each joined to its point by a thin line. A label that would touch one
// already placed goes a row higher, so that labels cover neither the
// data nor each other.
type Marks struct {
	XYs    plotter.XYs
	Labels []string
	Above  float64
	Color  color.Color
}

// Plot implements plot.Plotter.
func (m *Marks) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	const size = legendSize - 1
	h := vg.Points(size * 1.3)
	base := ty(m.Above) + vg.Points(3)
	ts := draw.TextStyle{Color: m.Color, Font: fontOf(size), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter}
	ls := draw.LineStyle{Color: m.Color, Width: vg.Points(0.6)}
	n := min(len(m.XYs), len(m.Labels))
	xs, ws := make([]vg.Length, n), make([]vg.Length, n)
	for i := range n {
		xs[i] = tx(m.XYs[i].X)
		ws[i] = textWidth(size, m.Labels[i]) + vg.Points(4)
	}
	for i, b := range stack(xs, ws, c.Min.X, c.Max.X) {
		x, y := xs[i], ty(m.XYs[i].Y)
		ly := base + vg.Length(b.row)*h
		c.StrokeLine2(ls, x, y, x, ly)
		c.FillText(ts, vg.Point{X: (b.x0 + b.x1) / 2, Y: ly + vg.Points(1)}, m.Labels[i])
	}
}

// box is a label's place: its horizontal extent and its row.
type box struct {
	x0, x1 vg.Length
	row    int
}

// stack centres a label of width ws[i] on each xs[i], kept within
// [lo, hi], in the lowest row where it touches no label placed before it.
func stack(xs, ws []vg.Length, lo, hi vg.Length) []box {
	out := make([]box, len(xs))
	var rows [][]box
	for i, x := range xs {
		w := ws[i]
		b := box{x0: x - w/2, x1: x + w/2}
		if b.x0 < lo {
			b.x0, b.x1 = lo, lo+w
		}
		if b.x1 > hi {
			b.x0, b.x1 = hi-w, hi
		}
		for b.row = 0; b.row < len(rows); b.row++ {
			free := true
			for _, o := range rows[b.row] {
				if b.x0 < o.x1 && o.x0 < b.x1 {
					free = false
					break
				}
			}
			if free {
				break
			}
		}
		if b.row == len(rows) {
			rows = append(rows, nil)
		}
		rows[b.row] = append(rows[b.row], b)
		out[i] = b
	}
	return out
}

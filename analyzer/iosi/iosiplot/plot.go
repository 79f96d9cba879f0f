// Package iosiplot draws an IOSI signature: the preprocessed samples it
// was extracted from, the signature's write and read rates with its
// bursts shaded, and the ground truth when it is known.
package iosiplot

import (
	"fmt"
	"html"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"iopred/analyzer/iosi"
	"iopred/analyzer/plotkit"
	"iopred/internal/safefile"
)

// Options say what the figure is of.
type Options struct {
	// Title names the application ("user/name/nodes").
	Title string
	// Truth, when known, is drawn dashed over the signature (total rate).
	Truth *iosi.Truth
}

// Figure returns two panels: the samples with the signature over them,
// and the signature alone by direction with its bursts shaded.
func Figure(sig *iosi.Signature, opt Options) (*plotkit.Figure, error) {
	if len(sig.Write) == 0 {
		return nil, fmt.Errorf("plot: empty signature")
	}
	total := make([]float64, len(sig.Write))
	peak := 0.0
	for i := range total {
		total[i] = sig.Write[i] + sig.Read[i]
		peak = math.Max(peak, total[i])
	}
	for _, s := range sig.Samples {
		for _, v := range s {
			peak = math.Max(peak, v)
		}
	}
	if opt.Truth != nil {
		for i := range opt.Truth.Write {
			peak = math.Max(peak, opt.Truth.Write[i]+opt.Truth.Read[i])
		}
	}
	if peak <= 0 {
		peak = 1
	}
	unit := plotkit.RateUnit(peak)
	xlabel := "time since the run's start (s)"
	dur := sig.DurationS()

	// Panel 1: samples and signature.
	p1 := plotkit.New(xlabel, "throughput ("+unit.Name+")")
	top := plotkit.Panel{Plot: p1, Title: fmt.Sprintf("%s: %d runs after preprocessing, and the signature", opt.Title, len(sig.Samples)), Height: 8 * vg.Centimeter}
	if len(sig.Samples) == 0 {
		top.Note = "The samples were not kept."
	}
	var first *plotter.Line
	for _, s := range sig.Samples {
		l, err := line(s, 0, sig.StepS, unit, color.NRGBA{R: 120, G: 120, B: 120, A: 90}, 0.5)
		if err != nil {
			return nil, err
		}
		p1.Add(l)
		if first == nil {
			first = l
		}
	}
	if first != nil {
		top.Legend = append(top.Legend, plotkit.LegendEntry{Label: "runs (aggregate throughput, background removed)", Thumbs: []plot.Thumbnailer{first}})
	}
	sl, err := line(total, 0, sig.StepS, unit, plotkit.Blue, 1.4)
	if err != nil {
		return nil, err
	}
	p1.Add(sl)
	top.Legend = append(top.Legend, plotkit.LegendEntry{Label: "signature (" + sig.Method + ")", Thumbs: []plot.Thumbnailer{sl}})
	if opt.Truth != nil {
		gt := make([]float64, len(opt.Truth.Write))
		for i := range gt {
			gt[i] = opt.Truth.Write[i] + opt.Truth.Read[i]
		}
		tl, err := line(gt, 0, opt.Truth.StepS, unit, plotkit.Red, 1)
		if err != nil {
			return nil, err
		}
		tl.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p1.Add(tl)
		top.Legend = append(top.Legend, plotkit.LegendEntry{Label: "ground truth", Thumbs: []plot.Thumbnailer{tl}})
		dur = math.Max(dur, float64(len(gt))*opt.Truth.StepS)
	}
	p1.X.Min, p1.X.Max = 0, dur
	p1.Y.Min, p1.Y.Max = 0, peak/unit.Div*1.05

	// Panel 2: the signature by direction, bursts shaded.
	sp := 0.0
	for _, v := range total {
		sp = math.Max(sp, v)
	}
	if sp <= 0 {
		sp = 1
	}
	u2 := plotkit.RateUnit(sp)
	p2 := plotkit.New(xlabel, "throughput ("+u2.Name+")")
	bottom := plotkit.Panel{Plot: p2, Title: fmt.Sprintf("Signature: %d bursts, step %s s", len(sig.Bursts), plotkit.Num(sig.StepS)), Height: 7 * vg.Centimeter}
	shade := color.NRGBA{R: 0, G: 114, B: 178, A: 45}
	for _, b := range sig.Bursts {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: b.StartS, Y: 0}, {X: b.EndS, Y: 0}, {X: b.EndS, Y: sp / u2.Div * 1.05}, {X: b.StartS, Y: sp / u2.Div * 1.05}})
		if err != nil {
			return nil, err
		}
		poly.Color = shade
		poly.LineStyle.Width = 0
		p2.Add(poly)
	}
	wl, err := line(sig.Write, 0, sig.StepS, u2, plotkit.Blue, 1.2)
	if err != nil {
		return nil, err
	}
	rl, err := line(sig.Read, 0, sig.StepS, u2, plotkit.Orange, 1.2)
	if err != nil {
		return nil, err
	}
	p2.Add(wl, rl)
	bottom.Legend = []plotkit.LegendEntry{{Label: "write", Thumbs: []plot.Thumbnailer{wl}}, {Label: "read", Thumbs: []plot.Thumbnailer{rl}}}
	bottom.Note = "Shaded: the bursts of the table."
	p2.X.Min, p2.X.Max = 0, dur
	p2.Y.Min, p2.Y.Max = 0, sp/u2.Div*1.05
	return &plotkit.Figure{Panels: []plotkit.Panel{top, bottom}}, nil
}

func line(y []float64, x0, dx float64, u plotkit.Unit, c color.Color, width float64) (*plotter.Line, error) {
	scaled := make([]float64, len(y))
	for i, v := range y {
		scaled[i] = v / u.Div
	}
	pts, _ := plotkit.Envelope(scaled, x0, dx)
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.Color = c
	l.Width = vg.Points(width)
	return l, nil
}

// Write draws the figure to path: .svg, .png, or .html (a page with a
// line about the signature and the figure as wide as the window).
func Write(path string, sig *iosi.Signature, opt Options) error {
	fig, err := Figure(sig, opt)
	if err != nil {
		return err
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".html", ".htm":
		svg, err := fig.SVG()
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		w, r := sig.Volume()
		line := fmt.Sprintf("I/O signature of %s (%s): %d of %d runs used, %d bursts, %.1f GB written and %.1f GB read over %.0f s.",
			opt.Title, sig.Method, sig.RunsUsed, sig.RunsFound, len(sig.Bursts), w/1e9, r/1e9, sig.DurationS())
		page := "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iopred signature " + html.EscapeString(opt.Title) + "</title>\n" +
			"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
			"<style>body{font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;margin:1em 2%;}svg{display:block;width:100%;height:auto;}</style>\n" +
			"</head>\n<body>\n<p>" + html.EscapeString(line) + "</p>\n" + string(svg) + "\n</body></html>\n"
		return safefile.WriteFile(path, []byte(page), 0o666)
	case ".svg", ".png":
		return fig.WriteFile(path)
	default:
		return fmt.Errorf("plot %s: unknown format %q (want .svg, .png or .html)", path, ext)
	}
}

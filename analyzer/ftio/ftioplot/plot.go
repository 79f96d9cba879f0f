// Package ftioplot draws FTIO results: the bandwidth signal with its
// dominant wave and the spectrum with its candidates. It lives apart from
// package ftio so that the in-process library, which uses FTIO online,
// does not link the plotting stack and its fonts.
package ftioplot

import (
	"fmt"
	"html"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"iopred/analyzer/ftio"
	"iopred/analyzer/plotkit"
	"iopred/internal/safefile"
)

// Options tune a plot.
type Options struct {
	// Origin is the time, in the result's seconds, that the time axis
	// counts from: the job's start. The zero value keeps the result's own
	// times, which for iopred traces read by ftio.FileSources already
	// count from the earliest trace's start, and for FTIO's inputs from
	// the application's (TMIO's) start.
	Origin float64
	// Start, when set, is the job's start as a date (summary.FormatDate),
	// stated once on the HTML page.
	Start string
	// What names the signal in the titles ("the job's writes"); empty:
	// "the I/O".
	What string
}

// Plot draws the bandwidth signal with the dominant wave overlaid and the
// single-sided spectrum with the candidates and the z-score threshold
// marked, one above the other. The extension of path picks the format:
// .svg, .png, or .html (a page with the figure as wide as the window).
func Plot(path string, res ftio.Result) error { return PlotWith(path, res, Options{}) }

// PlotWith is Plot with options.
func PlotWith(path string, res ftio.Result, opt Options) error {
	fig, err := Figure(res, opt)
	if err != nil {
		return err
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".html", ".htm":
		svg, err := fig.SVG()
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		page := "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>iopred period</title>\n" +
			"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
			"<style>body{font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;margin:1em 2%;}svg{display:block;width:100%;height:auto;}</style>\n" +
			"</head>\n<body>\n<p>" + html.EscapeString(Summary(res, opt)) + "</p>\n" + string(svg) + "\n</body></html>\n"
		return safefile.WriteFile(path, []byte(page), 0o666)
	case ".svg", ".png":
		return fig.WriteFile(path)
	default:
		return fmt.Errorf("plot %s: unknown format %q (want .svg, .png or .html)", path, ext)
	}
}

// Summary says in a sentence what FTIO found, with times since the job's
// start (and the start as a date when known).
func Summary(res ftio.Result, opt Options) string {
	var b strings.Builder
	if res.PeriodS == nil {
		fmt.Fprintf(&b, "No period found (%s)", res.Verdict)
	} else {
		fmt.Fprintf(&b, "Period %s s (%s Hz), FTIO's confidence %.2f (%s)", plotkit.Num(*res.PeriodS), plotkit.Num(*res.FreqHz), res.Confidence, res.Verdict)
	}
	if sig := res.Significance; sig != nil {
		fmt.Fprintf(&b, "; verdict %s, p = %.3g against the signal's bursts at random times; FTIO's verdict %s", res.Verdict, sig.PValue, res.FTIOVerdict)
	}
	for i, ph := range res.Phases {
		fmt.Fprintf(&b, "; phase %d from %.3f s to %.3f s every %s s", i+1, ph.StartS-opt.Origin, ph.EndS-opt.Origin, plotkit.Num(ph.PeriodS))
	}
	fmt.Fprintf(&b, "; %d samples at %s Hz from %.3f s to %.3f s", res.NSamples, plotkit.Num(res.Fs), res.TStart-opt.Origin, res.TEnd-opt.Origin)
	if opt.Start != "" {
		fmt.Fprintf(&b, " after the job's start (%s)", opt.Start)
	} else {
		b.WriteString(" after the start")
	}
	b.WriteString(".")
	return b.String()
}

// Figure returns the signal and spectrum panels of a result.
func Figure(res ftio.Result, opt Options) (*plotkit.Figure, error) {
	sig, err := SignalPanel(res, opt)
	if err != nil {
		return nil, err
	}
	spec, err := SpectrumPanel(res, opt)
	if err != nil {
		return nil, err
	}
	return &plotkit.Figure{Panels: []plotkit.Panel{sig, spec}}, nil
}

func what(opt Options) string {
	if opt.What == "" {
		return "the I/O"
	}
	return opt.What
}

// SignalPanel draws the bandwidth signal, in the unit its peak reads best
// in, against seconds since the job's start, with FTIO's dominant wave.
func SignalPanel(res ftio.Result, opt Options) (plotkit.Panel, error) {
	peak := 0.0
	for _, v := range res.Signal {
		peak = math.Max(peak, v)
	}
	unit := plotkit.RateUnit(peak)
	p := plotkit.New("time since the job's start (s)", "bandwidth ("+unit.Name+")")
	scaled := make([]float64, len(res.Signal))
	for i, v := range res.Signal {
		scaled[i] = v / unit.Div
	}
	x0 := res.TStart - opt.Origin
	pts, per := plotkit.Envelope(scaled, x0, 1/res.Fs)
	panel := plotkit.Panel{Plot: p, Title: "Bandwidth of " + what(opt), Height: 8 * vg.Centimeter}
	if len(pts) == 0 {
		return panel, fmt.Errorf("plot: the result holds no signal")
	}
	sig, err := plotter.NewLine(pts)
	if err != nil {
		return panel, err
	}
	sig.Color = plotkit.Blue
	sig.Width = vg.Points(1)
	if per == 1 {
		sig.StepStyle = plotter.PostStep
	}
	p.Add(sig)
	label := fmt.Sprintf("bandwidth, %s samples/s", plotkit.Num(res.Fs))
	if per > 1 {
		label += fmt.Sprintf(" (drawn as the range of every %d)", per)
	}
	panel.Legend = append(panel.Legend, plotkit.LegendEntry{Label: label, Thumbs: []plot.Thumbnailer{sig}})
	p.X.Min, p.X.Max = x0, x0+float64(len(res.Signal))/res.Fs
	p.Y.Min, p.Y.Max = 0, peak/unit.Div*1.05
	// Phases: a bar over each one's time range above the signal, and a
	// dashed line at each change.
	for i, ph := range res.Phases {
		y := peak / unit.Div * (1.02 + 0.03*float64(i%2))
		bar, err := plotter.NewLine(plotter.XYs{{X: ph.StartS - opt.Origin, Y: y}, {X: ph.EndS - opt.Origin, Y: y}})
		if err != nil {
			return panel, err
		}
		bar.Color = []color.Color{plotkit.Red, plotkit.Green}[i%2]
		bar.Width = vg.Points(3)
		p.Add(bar)
		panel.Legend = append(panel.Legend, plotkit.LegendEntry{
			Label:  fmt.Sprintf("phase %d: every %s s from %s s to %s s", i+1, plotkit.Num(ph.PeriodS), plotkit.Num(ph.StartS-opt.Origin), plotkit.Num(ph.EndS-opt.Origin)),
			Thumbs: []plot.Thumbnailer{bar}})
		if i > 0 {
			change, err := plotter.NewLine(plotter.XYs{{X: ph.StartS - opt.Origin, Y: 0}, {X: ph.StartS - opt.Origin, Y: y}})
			if err != nil {
				return panel, err
			}
			change.Color = plotkit.Grey
			change.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
			p.Add(change)
		}
	}
	if len(res.Phases) > 0 {
		p.Y.Max = peak / unit.Div * 1.1
	}
	if res.FreqHz != nil {
		f := *res.FreqHz
		span := float64(len(res.Signal)) / res.Fs
		// Give the wave the signal's mean and variance.
		mean, std := stat.PopMeanStdDev(res.Signal, nil)
		amp := math.Sqrt2 * std
		if cycles := span * f; cycles <= plotkit.MaxDrawn/20 {
			n := int(math.Max(200, cycles*20))
			wave := make(plotter.XYs, n+1)
			for i := range wave {
				t := res.TStart + span*float64(i)/float64(n)
				wave[i] = plotter.XY{X: t - opt.Origin, Y: (mean + amp*math.Cos(2*math.Pi*f*t+res.Phase)) / unit.Div}
			}
			l, err := plotter.NewLine(wave)
			if err != nil {
				return panel, err
			}
			l.Color = plotkit.Red
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
			p.Add(l)
			panel.Legend = append(panel.Legend, plotkit.LegendEntry{
				Label: fmt.Sprintf("dominant wave, %s Hz (every %s s)", plotkit.Num(f), plotkit.Num(1/f)), Thumbs: []plot.Thumbnailer{l}})
			p.Y.Min = math.Min(0, (mean-amp)/unit.Div)
		} else {
			panel.Note = fmt.Sprintf("The dominant wave (%s Hz) makes %.0f cycles over the signal, too many to draw.", plotkit.Num(f), cycles)
		}
	}
	return panel, nil
}

// SpectrumPanel draws the single-sided spectrum, the z-score threshold
// on its scale, and the candidates numbered in the band above the peaks,
// the legend saying what each number is.
func SpectrumPanel(res ftio.Result, opt Options) (plotkit.Panel, error) {
	// kHz when the spectrum reaches 10 kHz (a finely sampled trace).
	fdiv, fname := 1.0, "Hz"
	if res.Fs/2 >= 1e4 {
		fdiv, fname = 1e3, "kHz"
	}
	p := plotkit.New("frequency ("+fname+")", "share of the signal's power")
	panel := plotkit.Panel{Plot: p, Title: "Spectrum of " + what(opt), Height: 8 * vg.Centimeter}
	df := res.Fs / float64(res.NSamples) / fdiv
	pts, per := plotkit.Envelope(res.Spectrum, df, df)
	if len(pts) == 0 {
		return panel, fmt.Errorf("plot: the result holds no spectrum")
	}
	stems, err := plotter.NewLine(pts)
	if err != nil {
		return panel, err
	}
	stems.Color = plotkit.Blue
	stems.Width = vg.Points(1)
	p.Add(stems)
	label := "power by frequency"
	if per > 1 {
		label += fmt.Sprintf(" (drawn as the range of every %d bins)", per)
	}
	panel.Legend = append(panel.Legend, plotkit.LegendEntry{Label: label, Thumbs: []plot.Thumbnailer{stems}})
	top := 0.0
	for _, v := range res.Spectrum {
		top = math.Max(top, v)
	}
	// The threshold in z-score terms, drawn on the spectrum's scale; the
	// other detectors (res.Detector) have none.
	if res.Detector == "" {
		mean, std := stat.PopMeanStdDev(res.Spectrum, nil)
		level := mean + res.Threshold*std
		th, err := plotter.NewLine(plotter.XYs{{X: pts[0].X, Y: level}, {X: pts[len(pts)-1].X, Y: level}})
		if err != nil {
			return panel, err
		}
		th.Color = plotkit.Grey
		th.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(th)
		panel.Legend = append(panel.Legend, plotkit.LegendEntry{Label: fmt.Sprintf("candidate threshold (z > %s)", plotkit.Num(res.Threshold)),
			Thumbs: []plot.Thumbnailer{th}})
		top = math.Max(top, level)
	} else {
		panel.Legend = append(panel.Legend, plotkit.LegendEntry{Label: fmt.Sprintf("candidates by FTIO's %s detector", res.Detector)})
	}
	p.Y.Min, p.X.Min = 0, 0
	if len(res.Candidates) > 0 {
		cands := make(plotter.XYs, len(res.Candidates))
		labels := make([]string, len(res.Candidates))
		for i, c := range res.Candidates {
			cands[i] = plotter.XY{X: c.FreqHz / fdiv, Y: c.Amplitude}
			labels[i] = fmt.Sprint(i + 1)
		}
		sc, err := plotter.NewScatter(cands)
		if err != nil {
			return panel, err
		}
		sc.Color = plotkit.Red
		sc.Shape = draw.CircleGlyph{}
		sc.Radius = vg.Points(3.5)
		p.Add(sc)
		// Rows of numbers above the highest peak.
		rows := math.Min(float64(len(cands)), 4)
		p.Y.Max = top * (1 + 0.12*rows + 0.05)
		p.Add(&plotkit.Marks{XYs: cands, Labels: labels, Above: top, Color: plotkit.Red})
		for i, c := range res.Candidates {
			e := plotkit.LegendEntry{Label: fmt.Sprintf("%d: %s Hz, every %s s, confidence %.2f", i+1, plotkit.Num(c.FreqHz), plotkit.Num(c.PeriodS), c.Confidence)}
			if i == 0 {
				e.Thumbs = []plot.Thumbnailer{sc}
			}
			panel.Legend = append(panel.Legend, e)
		}
	} else {
		p.Y.Max = top * 1.05
	}
	return panel, nil
}

// Package ftioplot draws FTIO results: the bandwidth signal with its
// dominant wave and the spectrum with its candidates. It lives apart from
// package ftio so that the in-process library, which uses FTIO online,
// does not link the plotting stack and its fonts.
package ftioplot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"iopred/analyzer/ftio"
)

// Plot draws the bandwidth signal with the dominant cosine overlaid and
// the single-sided spectrum with the candidates and the z-score threshold
// marked, one above the other. The extension of path picks the format:
// .svg, .png, or .html (the SVG inside a small page).
func Plot(path string, res ftio.Result) error {
	top, err := signalPlot(res)
	if err != nil {
		return err
	}
	bottom, err := spectrumPlot(res)
	if err != nil {
		return err
	}
	const w, h = 24 * vg.Centimeter, 18 * vg.Centimeter
	var canvas vg.CanvasWriterTo
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".svg", ".html", ".htm":
		canvas = vgsvg.New(w, h)
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110))}
	default:
		return fmt.Errorf("plot %s: unknown format %q (want .svg, .png or .html)", path, ext)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Centimeter / 2, PadTop: vg.Centimeter / 4, PadBottom: vg.Centimeter / 4, PadLeft: vg.Centimeter / 4, PadRight: vg.Centimeter / 2}
	plots := [][]*plot.Plot{{top}, {bottom}}
	canvases := plot.Align(plots, tiles, dc)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	out := buf.Bytes()
	if ext == ".html" || ext == ".htm" {
		out = []byte("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>iopred period</title></head>\n<body>\n" +
			"<p>" + htmlSummary(res) + "</p>\n" + string(out) + "\n</body></html>\n")
	}
	return os.WriteFile(path, out, 0o644)
}

func htmlSummary(res ftio.Result) string {
	if res.PeriodS == nil {
		return fmt.Sprintf("No period found (%s), %d samples at %g Hz.", res.Verdict, res.NSamples, res.Fs)
	}
	return fmt.Sprintf("Period %.6g s (%.6g Hz), confidence %.4f (%s), %d samples at %g Hz.",
		*res.PeriodS, *res.FreqHz, res.Confidence, res.Verdict, res.NSamples, res.Fs)
}

func signalPlot(res ftio.Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Bandwidth signal"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "bandwidth (B/s)"
	pts := make(plotter.XYs, len(res.Signal))
	for i, v := range res.Signal {
		pts[i] = plotter.XY{X: res.TStart + float64(i)/res.Fs, Y: v}
	}
	mean, _ := stat.PopMeanStdDev(res.Signal, nil)
	sig, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	sig.Color = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	sig.StepStyle = plotter.PostStep
	p.Add(sig)
	p.Legend.Add("signal", sig)
	if res.FreqHz != nil {
		// Give the cosine the signal's mean and variance.
		_, std := stat.PopMeanStdDev(res.Signal, nil)
		f, amp := *res.FreqHz, math.Sqrt2*std
		cos := make(plotter.XYs, len(pts))
		for i := range cos {
			t := pts[i].X
			cos[i] = plotter.XY{X: t, Y: mean + amp*math.Cos(2*math.Pi*f*t+res.Phase)}
		}
		l, err := plotter.NewLine(cos)
		if err != nil {
			return nil, err
		}
		l.Color = color.RGBA{R: 214, G: 39, B: 40, A: 255}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("dominant cosine %.4g Hz", f), l)
	}
	p.Legend.Top = true
	return p, nil
}

func spectrumPlot(res ftio.Result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Single-sided spectrum (normalised power)"
	p.X.Label.Text = "frequency (Hz)"
	p.Y.Label.Text = "share of power"
	pts := make(plotter.XYs, len(res.Spectrum))
	for i, v := range res.Spectrum {
		pts[i] = plotter.XY{X: float64(i+1) * res.Fs / float64(res.NSamples), Y: v}
	}
	stems, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	stems.Color = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	p.Add(stems)
	p.Legend.Add("spectrum", stems)
	// The threshold in z-score terms, drawn on the spectrum's scale.
	mean, std := stat.PopMeanStdDev(res.Spectrum, nil)
	level := mean + res.Threshold*std
	if len(pts) > 0 {
		th, err := plotter.NewLine(plotter.XYs{{X: pts[0].X, Y: level}, {X: pts[len(pts)-1].X, Y: level}})
		if err != nil {
			return nil, err
		}
		th.Color = color.RGBA{R: 127, G: 127, B: 127, A: 255}
		th.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(th)
		p.Legend.Add(fmt.Sprintf("threshold z > %.3g", res.Threshold), th)
	}
	if len(res.Candidates) > 0 {
		cands := make(plotter.XYs, len(res.Candidates))
		for i, c := range res.Candidates {
			cands[i] = plotter.XY{X: c.FreqHz, Y: c.Amplitude}
		}
		sc, err := plotter.NewScatter(cands)
		if err != nil {
			return nil, err
		}
		sc.Color = color.RGBA{R: 214, G: 39, B: 40, A: 255}
		sc.Shape = draw.CircleGlyph{}
		sc.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add("candidates", sc)
		labels := make([]string, len(res.Candidates))
		for i, c := range res.Candidates {
			labels[i] = fmt.Sprintf(" %.4g Hz (conf %.2f)", c.FreqHz, c.Confidence)
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: cands, Labels: labels})
		if err == nil {
			p.Add(lb)
		}
	}
	p.Legend.Top = true
	return p, nil
}

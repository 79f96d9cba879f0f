// Package plotkit makes gonum plots that a person can read: axes in
// human units (MB/s, GiB, seconds since the job's start) with enough
// ticks, a title and legend in a strip above the data where they cannot
// cover it, panels whose data areas line up, and SVG that fills the width
// of a web page and lays its text out the same in every browser.
package plotkit

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"iopred/internal/safefile"
)

// Colours of the series, in the order a figure uses them (a palette that
// colour-blind readers can tell apart).
var (
	Blue   = color.RGBA{R: 0, G: 114, B: 178, A: 255}
	Orange = color.RGBA{R: 230, G: 159, B: 0, A: 255}
	Red    = color.RGBA{R: 213, G: 94, B: 0, A: 255}
	Green  = color.RGBA{R: 0, G: 158, B: 115, A: 255}
	Purple = color.RGBA{R: 204, G: 121, B: 167, A: 255}
	Grey   = color.RGBA{R: 120, G: 120, B: 120, A: 255}
)

// Unit is a scale for an axis: values are divided by Div and labelled
// with Name.
type Unit struct {
	Div  float64
	Name string
}

// RateUnit returns the decimal unit in which a bandwidth of up to max
// bytes per second reads best: B/s, kB/s, MB/s, GB/s or TB/s.
func RateUnit(max float64) Unit {
	return unitFor(max, 1000, []string{"B/s", "kB/s", "MB/s", "GB/s", "TB/s"})
}

// SizeUnit returns the binary unit in which up to max bytes reads best:
// B, KiB, MiB, GiB or TiB.
func SizeUnit(max float64) Unit {
	return unitFor(max, 1024, []string{"B", "KiB", "MiB", "GiB", "TiB"})
}

// unitFor returns the largest of the units (each base times the one
// before) in which max is at least 1.
func unitFor(max, base float64, names []string) Unit {
	div := 1.0
	for i := range names {
		if max < div*base || i == len(names)-1 {
			return Unit{div, names[i]}
		}
		div *= base
	}
	return Unit{1, names[0]}
}

// Ticks places about N labelled ticks (6 when N is 0) at round values (1,
// 2, 2.5 or 5 times a power of ten) with unlabelled ticks between them,
// and labels each with as many decimals as the step needs and no more:
// "0.25", "1500", never "1e+07".
type Ticks struct{ N int }

// Ticks implements plot.Ticker.
func (t Ticks) Ticks(min, max float64) []plot.Tick {
	n := t.N
	if n <= 0 {
		n = 6
	}
	if !(max > min) || math.IsInf(min, 0) || math.IsInf(max, 0) {
		return []plot.Tick{{Value: min, Label: formatTick(min, 1)}}
	}
	step := stepFor(max-min, n)
	minor := step / 5
	if m := step / math.Pow(10, math.Floor(math.Log10(step))); m == 2.5 || m == 2 {
		minor = step / 2
		if m == 2 {
			minor = step / 4
		}
	}
	var ticks []plot.Tick
	for k := math.Ceil(min / minor); k*minor <= max*(1+1e-12)+1e-300; k++ {
		v := k * minor
		if math.Abs(v) < minor*1e-9 {
			v = 0
		}
		tk := plot.Tick{Value: v}
		if r := v / step; math.Abs(r-math.Round(r)) < 1e-6 {
			tk.Label = formatTick(v, step)
		}
		ticks = append(ticks, tk)
		if len(ticks) > 10*n+10 {
			break
		}
	}
	return ticks
}

// stepFor returns the round step that cuts span into the number of
// intervals closest to n (the larger step on a tie).
func stepFor(span float64, n int) float64 {
	raw := NiceStep(span / float64(n))
	best, bestErr := raw, math.Inf(1)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, e := range []float64{p / 10, p, p * 10} {
		for _, m := range []float64{1, 2, 2.5, 5} {
			s := m * e
			if d := math.Abs(span/s - float64(n)); d < bestErr-1e-9 || (math.Abs(d-bestErr) <= 1e-9 && s > best) {
				best, bestErr = s, d
			}
		}
	}
	return best
}

// NiceStep returns the round step (1, 2, 2.5 or 5 times a power of ten)
// at least raw.
func NiceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// Num prints v to four significant digits without an exponent: 15259,
// 19.21, 0.05206.
func Num(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	dec := max(0, 3-int(math.Floor(math.Log10(math.Abs(v)))))
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// formatTick prints v with the decimals a tick step needs.
func formatTick(v, step float64) string {
	dec := 0
	for s := step; dec < 12 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, math.Abs(s)); s *= 10 {
		dec++
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// New returns a plot with the package's style: axis labels and the
// round ticks of Ticks, no title or legend of its own (Panel draws them
// above it).
func New(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.X.Tick.Marker, p.Y.Tick.Marker = Ticks{N: 8}, Ticks{N: 5}
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = fontOf(11)
		a.Tick.Label.Font = fontOf(10)
	}
	p.Title.TextStyle.Font = fontOf(titleSize)
	p.X.Padding, p.Y.Padding = vg.Points(2), vg.Points(2)
	return p
}

// MaxDrawn bounds the points a curve is drawn with: a longer series is
// drawn as the range (lowest to highest value) of each of MaxDrawn groups
// of consecutive samples, which keeps every burst and peak visible.
const MaxDrawn = 2000

// Envelope returns the points to draw for samples y[i] at x0 + i*dx:
// every sample, or the range of each of MaxDrawn groups (per samples
// each; per is 1 when every sample is drawn).
func Envelope(y []float64, x0, dx float64) (pts plotter.XYs, per int) {
	n := len(y)
	if n <= MaxDrawn {
		pts := make(plotter.XYs, n)
		for i, v := range y {
			pts[i] = plotter.XY{X: x0 + float64(i)*dx, Y: v}
		}
		return pts, 1
	}
	per = (n + MaxDrawn - 1) / MaxDrawn
	pts = make(plotter.XYs, 0, 2*MaxDrawn)
	for i := 0; i < n; i += per {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range y[i:min(i+per, n)] {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		x := x0 + (float64(i)+float64(per)/2)*dx
		pts = append(pts, plotter.XY{X: x, Y: lo}, plotter.XY{X: x, Y: hi})
	}
	return pts, per
}

// IntTicks places labelled ticks at round integers only (1, 2, 5, 10,
// ... apart), about N of them (8 when N is 0): ranks, counts.
type IntTicks struct{ N int }

// Ticks implements plot.Ticker.
func (t IntTicks) Ticks(min, max float64) []plot.Tick {
	n := t.N
	if n <= 0 {
		n = 8
	}
	step := math.Max(1, NiceStep((max-min)/float64(n)))
	if step == 2.5 {
		step = 2
	}
	var ticks []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ticks
}

// LegendEntry names a series and how it is drawn.
type LegendEntry struct {
	Label  string
	Thumbs []plot.Thumbnailer
}

// Panel is one plot with its title and legend in a strip above it.
type Panel struct {
	Plot   *plot.Plot
	Title  string
	Legend []LegendEntry
	// Height is the panel's height, strip included; 0 means 7 cm.
	Height vg.Length
	// Note is a line of small grey text after the legend (what the plot
	// leaves out, how it was sampled).
	Note string
}

const (
	titleSize  = 13
	legendSize = 11
	noteSize   = 9.5
	thumbWidth = 22
	stripPad   = 4
)

// Sans is the figures' typeface, Liberation Sans, metric-compatible with
// Arial and Helvetica (gonum's default is a serif).
var Sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// fontOf is the figures' font at size points.
func fontOf(size float64) font.Font {
	return font.From(Sans, font.Length(size))
}

// textWidth is the width of s in the figures' font at size points.
func textWidth(size float64, s string) vg.Length {
	f := font.DefaultCache.Lookup(fontOf(size), font.Length(size))
	return f.Width(s)
}

// stripLines lays out the title, the legend entries and the note on
// lines no wider than width: the title first, then the entries left to
// right, wrapping. It returns, per entry, its line and x offset, and the
// number of lines.
func (p *Panel) stripLines(width vg.Length) (line []int, x []vg.Length, lines int) {
	cur := vg.Length(0)
	lines = 1
	if p.Title != "" {
		cur = textWidth(titleSize, p.Title) + 16
	}
	for _, e := range p.Legend {
		w := thumbWidth + 4 + textWidth(legendSize, e.Label) + 14
		if cur > 0 && cur+w > width {
			lines++
			cur = 0
		}
		line = append(line, lines-1)
		x = append(x, cur)
		cur += w
	}
	if p.Note != "" {
		lines++
	}
	return line, x, lines
}

func lineHeight() vg.Length { return vg.Points(legendSize * 1.45) }

// stripHeight is the height of the strip above the plot.
func (p *Panel) stripHeight(width vg.Length) vg.Length {
	_, _, n := p.stripLines(width)
	return vg.Length(n)*lineHeight() + stripPad
}

// drawStrip draws the title, legend and note in c's top strip.
func (p *Panel) drawStrip(c draw.Canvas) {
	width := c.Max.X - c.Min.X
	line, xs, _ := p.stripLines(width)
	lh := lineHeight()
	top := c.Max.Y - stripPad/2
	baseline := func(l int) vg.Length { return top - vg.Length(l+1)*lh + lh*0.3 }
	if p.Title != "" {
		c.FillText(draw.TextStyle{Color: color.Black, Font: fontOf(titleSize), Handler: plot.DefaultTextHandler},
			vg.Point{X: c.Min.X, Y: baseline(0)}, p.Title)
	}
	ls := draw.TextStyle{Color: color.Black, Font: fontOf(legendSize), Handler: plot.DefaultTextHandler}
	for i, e := range p.Legend {
		y := baseline(line[i])
		x := c.Min.X + xs[i]
		tc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: y - 1}, Max: vg.Point{X: x + thumbWidth, Y: y + vg.Points(legendSize*0.75)}}}
		for _, t := range e.Thumbs {
			t.Thumbnail(&tc)
		}
		c.FillText(ls, vg.Point{X: x + thumbWidth + 4, Y: y}, e.Label)
	}
	if p.Note != "" {
		_, _, n := p.stripLines(width)
		c.FillText(draw.TextStyle{Color: Grey, Font: fontOf(noteSize), Handler: plot.DefaultTextHandler},
			vg.Point{X: c.Min.X, Y: baseline(n - 1)}, p.Note)
	}
}

// Draw draws the panels one above the other on c, their data areas
// lined up, each with its strip above it.
func Draw(c draw.Canvas, panels []Panel) {
	for i, l := range layout(c, panels) {
		panels[i].Plot.Draw(l.plot)
		panels[i].drawStrip(l.strip)
	}
}

// placed is where a panel goes: its strip, the canvas its plot is drawn
// on, and the plot's data area there.
type placed struct{ strip, plot, data draw.Canvas }

// layout cuts c into the panels' strips and plot canvases, moving the
// plot canvases' sides so that every data area spans the same x range.
func layout(c draw.Canvas, panels []Panel) []placed {
	width := c.Max.X - c.Min.X
	var total vg.Length
	for i := range panels {
		total += panels[i].height()
	}
	scale := (c.Max.Y - c.Min.Y) / total
	places := make([]placed, len(panels))
	y := c.Max.Y
	var left, right vg.Length
	for i := range panels {
		p := &panels[i]
		h := p.height() * scale
		sh := p.stripHeight(width)
		rect := vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: y - h}, Max: vg.Point{X: c.Max.X, Y: y}}
		places[i].strip = draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: rect.Min.X, Y: rect.Max.Y - sh}, Max: rect.Max}}
		places[i].plot = draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: rect.Min, Max: vg.Point{X: rect.Max.X, Y: rect.Max.Y - sh}}}
		d := p.Plot.DataCanvas(places[i].plot)
		left = max(left, d.Min.X-places[i].plot.Min.X)
		right = max(right, places[i].plot.Max.X-d.Max.X)
		y -= h
	}
	for i := range panels {
		pc := &places[i].plot
		d := panels[i].Plot.DataCanvas(*pc)
		pc.Min.X += left - (d.Min.X - pc.Min.X)
		pc.Max.X -= right - (pc.Max.X - d.Max.X)
		places[i].data = panels[i].Plot.DataCanvas(*pc)
	}
	return places
}

func (p *Panel) height() vg.Length {
	if p.Height > 0 {
		return p.Height
	}
	return 7 * vg.Centimeter
}

// DefaultWidth is the width figures are laid out at: about that of a
// laptop's browser window, so that text keeps its size on the page.
const DefaultWidth = 26 * vg.Centimeter

// Figure is a column of panels.
type Figure struct {
	Panels []Panel
	// Width is the figure's width; 0 means DefaultWidth.
	Width vg.Length
}

func (f *Figure) size() (w, h vg.Length) {
	w = f.Width
	if w == 0 {
		w = DefaultWidth
	}
	for i := range f.Panels {
		h += f.Panels[i].height()
	}
	return w, h
}

const margin = 6

func (f *Figure) draw(cv vg.CanvasSizer) {
	dc := draw.New(cv)
	dc.Min.X += margin
	dc.Max.X -= margin
	dc.Min.Y += margin
	dc.Max.Y -= margin
	Draw(dc, f.Panels)
}

// SVG returns the figure as an SVG element for a web page: no XML header,
// as wide as its container (the height follows), each text given the
// length it has in the font the layout used, so that a browser with
// another font draws it in the same place.
func (f *Figure) SVG() ([]byte, error) {
	w, h := f.size()
	cv := vgsvg.New(w, h)
	f.draw(cv)
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return nil, err
	}
	out := buf.Bytes()
	if i := bytes.Index(out, []byte("<svg")); i > 0 {
		out = out[i:]
	}
	out = fitText(out)
	return svgRoot.ReplaceAll(out, []byte(`<svg width="100%" viewBox="$1" preserveAspectRatio="xMidYMin meet" role="img"`)), nil
}

// WriteFile writes the figure to path, as SVG (standalone) or PNG by its
// extension.
func (f *Figure) WriteFile(path string) error {
	w, h := f.size()
	var buf bytes.Buffer
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".svg":
		cv := vgsvg.New(w, h)
		f.draw(cv)
		if _, err := cv.WriteTo(&buf); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		b := fitText(buf.Bytes())
		buf.Reset()
		buf.Write(b)
	case ".png":
		cv := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(120))}
		f.draw(cv)
		if _, err := cv.WriteTo(&buf); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	default:
		return fmt.Errorf("%s: unknown figure format %q (want .svg or .png)", path, ext)
	}
	return safefile.WriteFile(path, buf.Bytes(), 0o666)
}

var (
	svgRoot = regexp.MustCompile(`<svg width="[^"]*" height="[^"]*" viewBox="([^"]*)"`)
	svgText = regexp.MustCompile(`(<text [^>]*?)(\s*style="[^"]*font-size:([0-9.]+)px[^"]*")>([^<]*)</text>`)
	family  = regexp.MustCompile(`font-family:Liberation Sans;`)
)

// fitText gives every text element of a gonum SVG its length in the font
// the layout measured (Liberation Sans), which browsers then keep with
// whatever font they have, and names metric-compatible fallbacks; and
// stretches images to their rectangles.
func fitText(svg []byte) []byte {
	svg = svgText.ReplaceAllFunc(svg, func(m []byte) []byte {
		g := svgText.FindSubmatch(m)
		size, err := strconv.ParseFloat(string(g[3]), 64)
		if err != nil || len(g[4]) == 0 {
			return m
		}
		w := textWidth(size, unescape(string(g[4])))
		return fmt.Appendf(nil, `%s textLength="%.2f" lengthAdjust="spacingAndGlyphs"%s>%s</text>`, g[1], w.Points(), g[2], g[4])
	})
	svg = family.ReplaceAll(svg, []byte(`font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;`))
	// A raster (heat map, colour bar) fills the rectangle it is given, as
	// it does in PNG output, instead of keeping its pixels' aspect ratio.
	return bytes.ReplaceAll(svg, []byte("<image "), []byte(`<image preserveAspectRatio="none" `))
}

var unescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&#34;", `"`, "&#39;", "'", "&quot;", `"`)

func unescape(s string) string { return unescaper.Replace(s) }

// WriteTo writes the figure as an SVG element (as SVG returns it).
func (f *Figure) WriteTo(w io.Writer) (int64, error) {
	b, err := f.SVG()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(b)
	return int64(n), err
}

// TopDown labels the rows of a heat map drawn from the top (row 0 at
// y = N-1) with their numbers.
type TopDown struct{ N int }

// Ticks implements plot.Ticker.
func (t TopDown) Ticks(min, max float64) []plot.Tick {
	ticks := IntTicks{N: 8}.Ticks(min, max)
	for i := range ticks {
		ticks[i].Label = strconv.Itoa(t.N - 1 - int(ticks[i].Value))
	}
	return ticks
}

// ColorBarPanel is the colour scale of a heat map, titled with what its
// colours measure, as the panel under the map.
func ColorBarPanel(title string, cm palette.ColorMap) Panel {
	bar := New(title, "")
	bar.Add(&plotter.ColorBar{ColorMap: cm})
	bar.HideY()
	bar.Y.Min, bar.Y.Max = 0, 1
	return Panel{Plot: bar, Height: 2.6 * vg.Centimeter}
}

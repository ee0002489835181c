package replay

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// Every crawltrace figure (replay, scenario, crawl orders) is drawn with
// the helpers of this file: the same size, resolution, ticks and line
// styles, so that the figures can go into a paper as they are.
const (
	// FigureWidth and FigureHeight are the size of one figure.
	FigureWidth, FigureHeight = 8 * vg.Inch, 16 * vg.Inch / 3
	// FigureDPI is the PNG resolution: 8 x 5.33 inches at 150 dpi is
	// 1200 x 800 pixels.
	FigureDPI = 150
)

// The look of a series is fixed by its name wherever it is drawn: a
// policy (or partitioner) has one colour, marker and dash pattern in every
// figure, Go's and the notebooks' (notebooks/setup.py holds the same table,
// and a test keeps the two equal). The colours are the Okabe-Ito palette,
// distinguishable with the common colour-vision deficiencies, with grey in
// place of its yellow (too pale on white); markers are hollow, so markers
// of coinciding series show through each other, and every line has the
// same width, so none hides another.
//
// A style is written with matplotlib's codes: the colour as #rrggbb, the
// marker as o s ^ v D x + p (circle, square, triangle up and down, diamond,
// cross, plus, pentagon) and the line as - -- : -. (solid, dashed, dotted,
// dash-dot).
type seriesStyle struct {
	color, marker, line string
}

// namedStyles are the styles of the series drawn under a known name. No
// two policies share both colour and marker; the eight policies of the
// demo have eight colours.
var namedStyles = map[string]seriesStyle{
	"infinite":       {"#000000", "o", ":"},
	"min":            {"#D55E00", "s", "--"},
	"lru":            {"#0072B2", "^", "-"},
	"clock":          {"#009E73", "v", "-."},
	"random":         {"#CC79A7", "D", "--"},
	"static":         {"#E69F00", "p", "-"},
	"sieve":          {"#56B4E9", "x", "-."},
	"s3fifo":         {"#787878", "+", "--"},
	"fifo":           {"#56B4E9", "s", ":"},
	"arc":            {"#CC79A7", "o", "-"},
	"2q":             {"#009E73", "D", ":"},
	"wtinylfu":       {"#D55E00", "p", "-."},
	"clock-scatter":  {"#009E73", "x", "--"},
	"random-scatter": {"#CC79A7", "+", "-."},
	"host":           {"#000000", "o", "-"},
	"url":            {"#D55E00", "s", "--"},
	"domain":         {"#0072B2", "^", ":"},
	"consistent":     {"#009E73", "x", "-."},
}

// indexStyles style series without a name of their own, by their place in
// the figure.
var indexStyles = []seriesStyle{
	{"#000000", "o", "-"}, {"#D55E00", "s", "--"}, {"#0072B2", "^", ":"}, {"#009E73", "v", "-."},
	{"#CC79A7", "D", "-"}, {"#E69F00", "p", "--"}, {"#56B4E9", "x", ":"}, {"#787878", "+", "-."},
}

// lineWidth and markerRadius are the same for every series.
const (
	lineWidth    = vg.Length(1.6)
	markerRadius = vg.Length(3.6)
)

var figureDashes = map[string][]vg.Length{
	"-":  nil,
	"--": {vg.Points(6), vg.Points(3)},
	":":  {vg.Points(1.6), vg.Points(2.4)},
	"-.": {vg.Points(7), vg.Points(2.5), vg.Points(1.6), vg.Points(2.5)},
}

// SeriesColor is the colour of the series named name (a policy or
// partitioner name), and false for a name without a fixed style.
func SeriesColor(name string) (color.Color, bool) {
	st, ok := namedStyles[name]
	if !ok {
		return nil, false
	}
	return st.rgba(), true
}

func (st seriesStyle) rgba() color.RGBA {
	v, _ := strconv.ParseUint(strings.TrimPrefix(st.color, "#"), 16, 32)
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}
}

// StyleSeries gives a series its look: the fixed style of name when it is
// a policy or partitioner, else the style of place i in the figure. l or s
// may be nil.
func StyleSeries(name string, i int, l *plotter.Line, s *plotter.Scatter) {
	st, ok := namedStyles[name]
	if !ok {
		st = indexStyles[i%len(indexStyles)]
	}
	st.apply(l, s)
}

// StyleLine gives line i of a figure whose series have no fixed style its
// colour, dash pattern and (when s is not nil) marker.
func StyleLine(i int, l *plotter.Line, s *plotter.Scatter) {
	indexStyles[i%len(indexStyles)].apply(l, s)
}

func (st seriesStyle) apply(l *plotter.Line, s *plotter.Scatter) {
	c := st.rgba()
	if l != nil {
		l.Color, l.Width, l.Dashes = c, lineWidth, figureDashes[st.line]
	}
	if s != nil {
		s.Color, s.Shape, s.Radius = c, marker(st.marker[0]), markerRadius
	}
}

// marker is a hollow glyph drawn with a line 1 point wide, named by its
// matplotlib code.
type marker byte

// DrawGlyph implements draw.GlyphDrawer.
func (m marker) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(1)}
	c.SetLineStyle(ls)
	r := sty.Radius
	poly := func(n int, r vg.Length, phase float64) {
		var p vg.Path
		for k := range n {
			a := phase + 2*math.Pi*float64(k)/float64(n)
			q := vg.Point{X: pt.X + r*vg.Length(math.Cos(a)), Y: pt.Y + r*vg.Length(math.Sin(a))}
			if k == 0 {
				p.Move(q)
			} else {
				p.Line(q)
			}
		}
		p.Close()
		c.Stroke(p)
	}
	cross := func(phase float64) {
		for _, a := range []float64{phase, phase + math.Pi/2} {
			dx, dy := r*vg.Length(math.Cos(a)), r*vg.Length(math.Sin(a))
			c.StrokeLine2(ls, pt.X-dx, pt.Y-dy, pt.X+dx, pt.Y+dy)
		}
	}
	switch m {
	case 'o':
		var p vg.Path
		p.Move(vg.Point{X: pt.X + r, Y: pt.Y})
		p.Arc(pt, r, 0, 2*math.Pi)
		p.Close()
		c.Stroke(p)
	case 's':
		poly(4, r*1.2, math.Pi/4)
	case '^':
		poly(3, r*1.2, math.Pi/2)
	case 'v':
		poly(3, r*1.2, -math.Pi/2)
	case 'D':
		poly(4, r*1.25, 0)
	case 'x':
		cross(math.Pi / 4)
	case '+':
		cross(0)
	case 'p':
		poly(5, r*1.15, math.Pi/2)
	}
}

// Pow2Ticks labels a log2 axis (values are exponents) with powers of two,
// 1, 2, 4, ..., 1K, ..., 1M: every power when there are at most 13 of them,
// else every second (or more).
type Pow2Ticks struct{}

// Ticks implements plot.Ticker.
func (Pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	first := int(math.Ceil(lo))
	step := max(1, int(math.Ceil((hi-lo+1)/13)))
	var ts []plot.Tick
	for e := first; float64(e) <= hi; e++ {
		t := plot.Tick{Value: float64(e)}
		if (e-first)%step == 0 {
			t.Label = Pow2Label(e)
		}
		ts = append(ts, t)
	}
	return ts
}

// Pow2Label writes 2^e as 512, 1K, 64M, 2G (and 0.5 for e = -1).
func Pow2Label(e int) string {
	switch {
	case e < 0:
		return strconv.FormatFloat(math.Exp2(float64(e)), 'g', -1, 64)
	case e >= 30:
		return strconv.Itoa(1<<(e-30)) + "G"
	case e >= 20:
		return strconv.Itoa(1<<(e-20)) + "M"
	case e >= 10:
		return strconv.Itoa(1<<(e-10)) + "K"
	}
	return strconv.Itoa(1 << e)
}

// DenseTicks labels a linear axis at 1, 2 or 5 times a power of ten, about
// ten labels over the range (0, 0.1, ..., 1 for a rate), with unlabelled
// minor ticks halfway.
type DenseTicks struct{}

// Ticks implements plot.Ticker.
func (DenseTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	// A tenth of the range, a little less, so that a range padded past a
	// round value (0 to 1.04 for a rate) keeps the round value's steps.
	raw := (hi - lo) / 10.5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw*(1-1e-9) {
			step = m * mag
			break
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step))))
	var ts []plot.Tick
	for k := math.Ceil(lo/step*2 - 1e-9); k/2*step <= hi+step*1e-9; k++ {
		v := k / 2 * step
		if v == 0 {
			v = 0 // not -0
		}
		t := plot.Tick{Value: v}
		if int(k)%2 == 0 {
			t.Label = strconv.FormatFloat(v, 'f', prec, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// SavePlot writes p as dir/base.png (1200 x 800 pixels) and dir/base.svg,
// each atomically, and returns the files written. The replay, scenario and
// crawl-order figures all go through it. The legend is drawn in a column
// of its own at the right of the data, never over a curve, and nothing is
// drawn within [figureMargin] of the canvas's edge.
func SavePlot(p *plot.Plot, dir, base string) ([]string, error) {
	return savePanels(dir, base, FigureWidth, FigureHeight, []*plot.Plot{p})
}

// figureMargin is the blank border of every figure.
const figureMargin = vg.Length(6)

// legendGap separates the legend column from the data, and its entries.
const legendGap = vg.Length(8)

// savePanels draws panels side by side, with one legend, the first
// panel's (the panels show the same series), into dir/base.png and
// dir/base.svg.
func savePanels(dir, base string, w, h vg.Length, panels []*plot.Plot) ([]string, error) {
	leg := panels[0].Legend
	for _, p := range panels {
		p.Legend = plot.NewLegend() // drawn apart, by drawPanels
	}
	return saveCanvas(dir, base, w, h, func(dc draw.Canvas) { drawPanels(dc, panels, leg) })
}

// drawPanels draws panels side by side in dc, leaving a blank margin, and
// leg beside them: in a column at their right, its top level with the
// data's, or, when that column would take more than a third of the width,
// in rows under them.
func drawPanels(dc draw.Canvas, panels []*plot.Plot, leg plot.Legend) {
	c := draw.Crop(dc, figureMargin, -figureMargin, figureMargin, -figureMargin)
	leg.Left, leg.Top, leg.XOffs, leg.YOffs = true, true, 0, 0
	leg.Padding = vg.Points(2)
	box := leg.Rectangle(c).Size()
	// The right strip also keeps room for half of the last x tick label,
	// which is centred on the data's right edge.
	right, below := max(box.X+2*legendGap, 3*legendGap), vg.Length(0)
	under := box.X > c.Size().X/3
	if under {
		right, below = 3*legendGap, box.Y+leg.TextStyle.FontExtents().Descent+legendGap
	}
	area := draw.Crop(c, 0, -right, below, 0)
	const padX = 6 * vg.Millimeter
	panelW := (area.Size().X - padX*vg.Length(len(panels)-1)) / vg.Length(len(panels))
	for _, p := range panels {
		fitTitle(p, panelW)
	}
	var data draw.Canvas
	if len(panels) == 1 {
		panels[0].Draw(area)
		data = panels[0].DataCanvas(area)
	} else {
		tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: padX}
		canvases := plot.Align([][]*plot.Plot{panels}, tiles, area)
		for i, p := range panels {
			p.Draw(canvases[0][i])
		}
		data = panels[0].DataCanvas(canvases[0][0])
	}
	lc := c
	if under {
		lc.Min.X, lc.Max.Y = data.Min.X, c.Min.Y+box.Y+leg.TextStyle.FontExtents().Descent
	} else {
		lc.Min.X, lc.Max.Y = area.Max.X+legendGap, data.Max.Y
	}
	leg.Draw(lc)
}

// fitTitle shrinks p's title font until the title fits in width w.
func fitTitle(p *plot.Plot, w vg.Length) {
	if tw := p.Title.TextStyle.Width(p.Title.Text); tw > w {
		p.Title.TextStyle.Font.Size = p.Title.TextStyle.Font.Size * w / tw * 0.98
	}
}

// saveCanvas renders draw at w x h into dir/base.png and dir/base.svg.
func saveCanvas(dir, base string, w, h vg.Length, drawFn func(draw.Canvas)) ([]string, error) {
	var files []string
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, base+ext)
		err := tracefile.WriteFileAtomic(path, func(out io.Writer) error {
			if ext == ".png" {
				c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(FigureDPI))
				drawFn(draw.New(c))
				_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(out)
				return err
			}
			c := vgsvg.New(w, h)
			drawFn(draw.New(c))
			_, err := c.WriteTo(out)
			return err
		})
		if err != nil {
			return files, fmt.Errorf("plot %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

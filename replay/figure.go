package replay

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"

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

// figurePalette is the Okabe-Ito palette (distinguishable with the common
// colour-vision deficiencies), black first.
var figurePalette = []color.Color{
	color.RGBA{0, 0, 0, 255}, color.RGBA{213, 94, 0, 255}, color.RGBA{0, 114, 178, 255},
	color.RGBA{0, 158, 115, 255}, color.RGBA{204, 121, 167, 255}, color.RGBA{230, 159, 0, 255},
	color.RGBA{86, 180, 233, 255}, color.RGBA{120, 120, 120, 255},
}

// figureDashes are the dash patterns of successive lines. Their count is
// prime to the palette's and the glyphs', so two lines that lie on top of
// each other still differ in colour, dashes and markers.
var figureDashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(12), vg.Points(4)},
}

var figureGlyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.PlusGlyph{}, draw.RingGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{},
}

// StyleLine gives line i of a figure its colour, dash pattern and (when s
// is not nil) marker shape: no two of the first 40 lines look alike. Later
// lines are drawn thinner and with smaller markers, so a line drawn over an
// identical earlier one (host and domain partitioning often coincide)
// shows both: the earlier one as a border, the later one inside it.
func StyleLine(i int, l *plotter.Line, s *plotter.Scatter) {
	c := figurePalette[i%len(figurePalette)]
	shrink := 0.4 * float64(min(i, 5))
	if l != nil {
		l.Color = c
		l.Width = vg.Points(3.2 - shrink)
		l.Dashes = figureDashes[i%len(figureDashes)]
	}
	if s != nil {
		s.Color = c
		s.Shape = figureGlyphs[i%len(figureGlyphs)]
		s.Radius = vg.Points(5 - shrink)
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
	raw := (hi - lo) / 10
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
// crawl-order figures all go through it.
func SavePlot(p *plot.Plot, dir, base string) ([]string, error) {
	return saveCanvas(dir, base, FigureWidth, FigureHeight, func(dc draw.Canvas) { p.Draw(dc) })
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

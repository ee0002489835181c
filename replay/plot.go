package replay

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// WritePlots draws the paper-style figures for rows into dir and returns the
// files written:
//
//	missrate-<trace>.png/.svg   miss rate vs cache size (log2), one line per policy (Figures 2 and 4)
//	relative-<trace>.png/.svg   miss rate relative to MIN (Figures 3 and 5), when min was run
//	full-vs-cross-<node>.png    the full and cross subtraces of one node side by side
//
// <trace> is the trace's base name without its extension.
func WritePlots(dir string, rows []Row) ([]string, error) {
	var files []string
	byTrace := map[string][]Row{}
	var traces []string
	for _, r := range rows {
		if byTrace[r.Trace] == nil {
			traces = append(traces, r.Trace)
		}
		byTrace[r.Trace] = append(byTrace[r.Trace], r)
	}
	save := func(p *plot.Plot, base string) error {
		f, err := SavePlot(p, dir, base)
		files = append(files, f...)
		return err
	}
	for _, tr := range traces {
		stem := traceStem(tr)
		p, err := missPlot(tr, byTrace[tr], false)
		if err != nil {
			return files, err
		}
		if err := save(p, "missrate-"+stem); err != nil {
			return files, err
		}
		if slices.ContainsFunc(byTrace[tr], func(r Row) bool { return r.Policy == "min" }) {
			p, err := missPlot(tr, byTrace[tr], true)
			if err != nil {
				return files, err
			}
			if err := save(p, "relative-"+stem); err != nil {
				return files, err
			}
		}
	}
	// Full vs cross subtrace of the same node.
	for _, tr := range traces {
		node, ok := strings.CutSuffix(tr, ".full.arrow")
		if !ok || byTrace[node+".cross.arrow"] == nil {
			continue
		}
		left, err := missPlot(tr, byTrace[tr], false)
		if err != nil {
			return files, err
		}
		right, err := missPlot(node+".cross.arrow", byTrace[node+".cross.arrow"], false)
		if err != nil {
			return files, err
		}
		path := filepath.Join(dir, "full-vs-cross-"+node+".png")
		if err := saveSideBySide(path, left, right); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

func traceStem(trace string) string {
	return strings.TrimSuffix(trace, filepath.Ext(trace))
}

// pow2Ticks labels a log2 axis with powers of two.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	step := max(1, int(math.Ceil((hi-lo)/8)))
	var ts []plot.Tick
	for e := int(math.Ceil(lo)); float64(e) <= hi; e++ {
		t := plot.Tick{Value: float64(e)}
		if (e-int(math.Ceil(lo)))%step == 0 {
			t.Label = sizeLabel(1 << e)
		}
		ts = append(ts, t)
	}
	return ts
}

// missPlot draws miss rate (or miss rate / MIN's) against log2 cache size,
// one line per policy.
func missPlot(trace string, rows []Row, relative bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = trace
	p.X.Label.Text = "cache size (entries, log2 scale)"
	p.X.Tick.Marker = pow2Ticks{}
	if relative {
		p.Y.Label.Text = "miss rate relative to MIN"
	} else {
		p.Y.Label.Text = "miss rate"
		p.Y.Min, p.Y.Max = 0, 1
	}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	var policies []string
	for _, r := range rows {
		if !slices.Contains(policies, r.Policy) {
			policies = append(policies, r.Policy)
		}
	}
	for i, pol := range policies {
		var xys plotter.XYs
		for _, r := range rows {
			if r.Policy != pol || r.Size < 1 {
				continue
			}
			y := r.MissRate
			if relative {
				y = r.RelativeToMin
			}
			if math.IsNaN(y) || math.IsInf(y, 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: math.Log2(float64(r.Size)), Y: y})
		}
		if len(xys) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("replay: plot %s: %w", trace, err)
		}
		c := palette[i%len(palette)]
		l.Color, s.Color = c, c
		l.Width = vg.Points(1.5)
		if i >= len(palette) {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		s.Shape = draw.GlyphDrawer(shapes[i%len(shapes)])
		s.Radius = vg.Points(2.5)
		p.Add(l, s)
		p.Legend.Add(pol, l, s)
	}
	return p, nil
}

var palette = []color.Color{
	color.RGBA{0, 0, 0, 255}, color.RGBA{213, 94, 0, 255}, color.RGBA{0, 114, 178, 255},
	color.RGBA{0, 158, 115, 255}, color.RGBA{204, 121, 167, 255}, color.RGBA{230, 159, 0, 255},
	color.RGBA{86, 180, 233, 255}, color.RGBA{120, 120, 120, 255},
}

var shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.PlusGlyph{}, draw.RingGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{},
}

func saveSideBySide(path string, left, right *plot.Plot) error {
	const w, h = 13 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	err := tracefile.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("replay: plot %s: %w", path, err)
	}
	return nil
}

// SavePlot writes p as dir/base.png and dir/base.svg at the size every
// crawltrace figure uses, and returns the files written. The replay,
// scenario and crawl-order figures all go through it.
func SavePlot(p *plot.Plot, dir, base string) ([]string, error) {
	var files []string
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, base+ext)
		wt, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, ext[1:])
		if err == nil {
			// Through a temporary file, so a figure is whole or absent.
			err = tracefile.WriteFileAtomic(path, func(w io.Writer) error {
				_, err := wt.WriteTo(w)
				return err
			})
		}
		if err != nil {
			return files, fmt.Errorf("plot %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

package replay

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// PlotOptions are the choices of [WritePlots].
type PlotOptions struct {
	// AllSizes draws every cache size of the rows. Without it, the x axis
	// of a trace whose distinct URL count is known (INFINITE's misses)
	// stops one doubling past the power of two above that count, where
	// every curve has long been flat.
	AllSizes bool
	// ChargeStatic says STATIC's preloads were counted as misses; without
	// it STATIC's legend entry says they were not (its curve falls to 0,
	// below INFINITE's, once the cache holds every URL).
	ChargeStatic bool
}

// WritePlots draws the paper-style figures for rows into dir and returns the
// files written:
//
//	missrate-<trace>.png/.svg        miss rate vs cache size (log2), one line per policy (Figures 2 and 4)
//	relative-<trace>.png/.svg        miss rate relative to MIN (Figures 3 and 5), when min was run
//	full-vs-cross-<node>.png/.svg    the full (left) and cross (right) subtraces of one node side by side
//
// <trace> is the trace's base name without its extension. traces, keyed by
// base name, gives each condensed trace's metadata: titles name its crawl,
// node and subtrace. A trace missing from it is titled from its file name.
// A dashed vertical line marks each trace's distinct URL count, when
// INFINITE was run.
func WritePlots(dir string, rows []Row, traces map[string]tracefile.Meta, opts PlotOptions) ([]string, error) {
	var files []string
	byTrace := map[string][]Row{}
	var names []string
	for _, r := range rows {
		if byTrace[r.Trace] == nil {
			names = append(names, r.Trace)
		}
		byTrace[r.Trace] = append(byTrace[r.Trace], r)
	}
	save := func(p *plot.Plot, base string) error {
		f, err := SavePlot(p, dir, base)
		files = append(files, f...)
		return err
	}
	for _, tr := range names {
		stem := traceStem(tr)
		title := TraceTitle(tr, traces[tr])
		p, err := missPlot("miss rate, "+title, byTrace[tr], false, opts)
		if err != nil {
			return files, err
		}
		if err := save(p, "missrate-"+stem); err != nil {
			return files, err
		}
		if slices.ContainsFunc(byTrace[tr], func(r Row) bool { return r.Policy == "min" }) {
			p, err := missPlot("miss rate relative to MIN, "+title, byTrace[tr], true, opts)
			if err != nil {
				return files, err
			}
			if err := save(p, "relative-"+stem); err != nil {
				return files, err
			}
		}
	}
	// Full vs cross subtrace of the same node.
	for _, tr := range names {
		node, ok := strings.CutSuffix(tr, ".full.arrow")
		cross := node + ".cross.arrow"
		if !ok || byTrace[cross] == nil {
			continue
		}
		left, err := missPlot(TraceTitle(tr, traces[tr]), byTrace[tr], false, opts)
		if err != nil {
			return files, err
		}
		right, err := missPlot(TraceTitle(cross, traces[cross]), byTrace[cross], false, opts)
		if err != nil {
			return files, err
		}
		f, err := savePanels(dir, "full-vs-cross-"+node, 2*FigureWidth, FigureHeight, []*plot.Plot{left, right})
		files = append(files, f...)
		if err != nil {
			return files, fmt.Errorf("replay: %w", err)
		}
	}
	return files, nil
}

func traceStem(trace string) string {
	return strings.TrimSuffix(trace, filepath.Ext(trace))
}

var condensedNameRE = regexp.MustCompile(`^node-(\d+)\.(full|cross)\.arrow$`)

// TraceTitle names a trace in a figure title: "crawl demo-seed1, node 0,
// full subtrace" from a condensed trace's metadata m, or from its file name
// node-000.full.arrow when m is empty; other traces by their file name.
func TraceTitle(trace string, m tracefile.Meta) string {
	node, sub := m.Node, m.Subtrace
	if sub == "" {
		g := condensedNameRE.FindStringSubmatch(trace)
		if g == nil {
			if m.CrawlID != "" {
				return fmt.Sprintf("crawl %s, %s", m.CrawlID, trace)
			}
			return trace
		}
		node, _ = strconv.Atoi(g[1])
		sub = g[2]
	}
	if m.CrawlID == "" {
		return fmt.Sprintf("node %d, %s subtrace", node, sub)
	}
	return fmt.Sprintf("crawl %s, node %d, %s subtrace", m.CrawlID, node, sub)
}

// missPlot draws miss rate (or miss rate / MIN's) against log2 cache size,
// one line per policy, in the policy's own style ([StyleSeries]).
// Curves estimated from a sample say so in the title, with the rate.
func missPlot(title string, rows []Row, relative bool, opts PlotOptions) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title + sampledNote(rows)
	p.X.Label.Text = "cache size (entries, log2 scale)"
	p.X.Tick.Marker = Pow2Ticks{}
	p.Y.Tick.Marker = DenseTicks{}
	distinct := distinctURLs(rows)
	maxExp := math.Inf(1)
	if distinct > 0 && !opts.AllSizes {
		maxExp = math.Ceil(math.Log2(float64(distinct))) + 1
	}
	var policies []string
	for _, r := range rows {
		if !slices.Contains(policies, r.Policy) {
			policies = append(policies, r.Policy)
		}
	}
	p.Add(plotter.NewGrid())
	top := 0.0
	for i, pol := range policies {
		var xys plotter.XYs
		for _, r := range rows {
			if r.Policy != pol || r.Size < 1 || math.Log2(float64(r.Size)) > maxExp {
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
			top = max(top, y)
		}
		if len(xys) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("replay: plot %s: %w", title, err)
		}
		StyleSeries(pol, i, l, s)
		p.Add(l, s)
		name := pol
		if pol == "static" && !opts.ChargeStatic {
			name = "static (preloads free)"
		}
		p.Legend.Add(name, l, s)
	}
	// The top curve stays clear of the frame.
	if relative {
		p.Y.Label.Text = "miss rate relative to MIN"
		p.Y.Min, p.Y.Max = 0, max(1, top)*1.06
	} else {
		p.Y.Label.Text = "miss rate"
		p.Y.Min, p.Y.Max = 0, 1.04
	}
	if distinct > 0 {
		p.Add(distinctMark{x: math.Log2(float64(distinct)), label: groupDigits(distinct) + " distinct URLs"})
	}
	return p, nil
}

// distinctURLs is the trace's distinct URL count, INFINITE's misses, or 0
// when INFINITE was not run.
func distinctURLs(rows []Row) int64 {
	for _, r := range rows {
		if r.Policy == "infinite" && r.SampleRate == 0 {
			return r.Misses
		}
	}
	return 0
}

// groupDigits writes n with commas between groups of three digits.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// distinctMark is a dashed grey vertical line at x, labelled along its
// top, to the right of the line.
type distinctMark struct {
	x     float64
	label string
}

// Plot implements plot.Plotter.
func (m distinctMark) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(m.x)
	ls := draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	c.StrokeLine2(ls, x, c.Min.Y, x, c.Max.Y)
	sty := p.Y.Label.TextStyle
	sty.Font.Size = vg.Points(10)
	sty.Color = color.Gray{Y: 60}
	sty.Rotation = math.Pi / 2 // read upwards, as the y axis's label
	sty.XAlign, sty.YAlign = draw.XRight, draw.YTop
	c.FillText(sty, vg.Point{X: x + vg.Points(3), Y: c.Max.Y - vg.Points(4)}, m.label)
}

// DataRange implements plot.DataRanger: the mark widens the x range to
// include itself.
func (m distinctMark) DataRange() (xmin, xmax, ymin, ymax float64) {
	return m.x, m.x, math.Inf(1), math.Inf(-1)
}

// sampledNote is ", sampled: 1% of keys" for rows estimated from a sample
// (a range when the rates differ, as SHARDS' fixed-size rates do), "" for
// exact rows.
func sampledNote(rows []Row) string {
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		if r.SampleRate > 0 {
			lo, hi = min(lo, r.SampleRate), max(hi, r.SampleRate)
		}
	}
	if hi == 0 {
		return ""
	}
	pct := func(v float64) string { return strconv.FormatFloat(100*v, 'g', 3, 64) + "%" }
	if lo == hi {
		return ", sampled: " + pct(lo) + " of keys"
	}
	return ", sampled: " + pct(lo) + "-" + pct(hi) + " of keys"
}

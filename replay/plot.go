package replay

import (
	"fmt"
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

// WritePlots draws the paper-style figures for rows into dir and returns the
// files written:
//
//	missrate-<trace>.png/.svg        miss rate vs cache size (log2), one line per policy (Figures 2 and 4)
//	relative-<trace>.png/.svg        miss rate relative to MIN (Figures 3 and 5), when min was run
//	full-vs-cross-<node>.png/.svg    the full and cross subtraces of one node side by side
//
// <trace> is the trace's base name without its extension. traces, keyed by
// base name, gives each condensed trace's metadata: titles name its crawl,
// node and subtrace. A trace missing from it is titled from its file name.
func WritePlots(dir string, rows []Row, traces map[string]tracefile.Meta) ([]string, error) {
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
		p, err := missPlot("miss rate, "+title, byTrace[tr], false)
		if err != nil {
			return files, err
		}
		if err := save(p, "missrate-"+stem); err != nil {
			return files, err
		}
		if slices.ContainsFunc(byTrace[tr], func(r Row) bool { return r.Policy == "min" }) {
			p, err := missPlot("miss rate relative to MIN, "+title, byTrace[tr], true)
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
		left, err := missPlot(TraceTitle(tr, traces[tr]), byTrace[tr], false)
		if err != nil {
			return files, err
		}
		right, err := missPlot(TraceTitle(cross, traces[cross]), byTrace[cross], false)
		if err != nil {
			return files, err
		}
		for _, p := range []*plot.Plot{left, right} {
			p.Title.TextStyle.Font.Size = vg.Points(11)
		}
		f, err := saveCanvas(dir, "full-vs-cross-"+node, 2*FigureWidth, FigureHeight, func(dc draw.Canvas) {
			tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 6}
			canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, dc)
			left.Draw(canvases[0][0])
			right.Draw(canvases[0][1])
		})
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
// one line per policy.
// Curves estimated from a sample say so in the title, with the rate.
func missPlot(title string, rows []Row, relative bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title + sampledNote(rows)
	p.X.Label.Text = "cache size (entries, log2 scale)"
	p.X.Tick.Marker = Pow2Ticks{}
	p.Y.Tick.Marker = DenseTicks{}
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
			return nil, fmt.Errorf("replay: plot %s: %w", title, err)
		}
		StyleLine(i, l, s)
		p.Add(l, s)
		p.Legend.Add(pol, l, s)
	}
	return p, nil
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

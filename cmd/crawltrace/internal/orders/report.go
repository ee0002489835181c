package orders

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/quality"
	"github.com/crawltrace/crawltrace/replay"
)

// milestone is the time at which fraction f of the pages or of the quality
// had been fetched (NaN if never, or not measured).
func milestone(ms []quality.Milestone, f float64) float64 {
	for _, m := range ms {
		if m.Fraction == f && m.Seconds >= 0 {
			return m.Seconds
		}
	}
	return math.NaN()
}

// at is the sample of a crawl at fraction f of its duration (nil if none).
func at(p *quality.Progress, f float64) *quality.ProgressPoint {
	if p == nil {
		return nil
	}
	for i := range p.At {
		if p.At[i].TimeFraction == f {
			return &p.At[i]
		}
	}
	return nil
}

// lruMiss is the LRU miss rate at size (NaN if not replayed).
func lruMiss(r *Result, size int) float64 {
	for _, row := range r.LRU {
		if row.Size == size {
			return row.MissRate
		}
	}
	return math.NaN()
}

// csvSizes are the cache sizes whose LRU miss rates orders.csv reports.
var csvSizes = []int{1 << 4, 1 << 8, 1 << 12, 1 << 16, 1 << 20}

// WriteCSV writes one row per order: duration, pages, speed, peak
// connections, URLs logged, time to 50% and 80% of the pages, the
// fraction of pages fetched at half time, time to 50% and 80% of the
// oracle's quality, the fraction of quality fetched at a third of the
// time and at the end, and the LRU miss rate at 2^4, 2^8, 2^12, 2^16 and
// 2^20 entries. Times are seconds; missing values are empty.
func WriteCSV(w io.Writer, results []Result) error {
	cw := csv.NewWriter(w)
	head := []string{"order", "seconds", "pages", "pages_per_second", "peak_conns", "urls_logged",
		"time_to_50pct_pages", "time_to_80pct_pages", "pages_at_half_time",
		"time_to_50pct_quality", "time_to_80pct_quality", "quality_at_third_time", "quality_fetched"}
	for _, s := range csvSizes {
		head = append(head, "lru_miss_"+strconv.Itoa(s))
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	num := func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', 6, 64)
	}
	for i := range results {
		r := &results[i]
		tl := r.Timeline
		dur, half, third, fetched := math.NaN(), math.NaN(), math.NaN(), math.NaN()
		var pages, qual []quality.Milestone
		if tl != nil {
			pages, qual = tl.TimeToPages, tl.TimeToQuality
		}
		if p := at(tl, 1); p != nil {
			dur, fetched = p.Seconds, p.QualityFraction
		}
		if p := at(tl, 0.5); p != nil && tl.Pages > 0 {
			half = p.PageFraction
		}
		if p := at(tl, 1.0/3); p != nil {
			third = p.QualityFraction
		}
		row := []string{r.Order, num(dur), strconv.FormatInt(r.Pages, 10), num(float64(r.Pages) / dur),
			strconv.Itoa(r.PeakConns), strconv.FormatInt(r.URLs, 10),
			num(milestone(pages, 0.5)), num(milestone(pages, 0.8)), num(half),
			num(milestone(qual, 0.5)), num(milestone(qual, 0.8)), num(third), num(fetched)}
		for _, s := range csvSizes {
			row = append(row, num(lruMiss(r, s)))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeReport writes orders.csv and the three figures.
func writeReport(dir string, results []Result) ([]string, error) {
	var files []string
	path := filepath.Join(dir, "orders.csv")
	if err := tracefile.WriteFileAtomic(path, func(w io.Writer) error { return WriteCSV(w, results) }); err != nil {
		return files, err
	}
	files = append(files, path)
	save := func(p *plot.Plot, base string) error {
		f, err := replay.SavePlot(p, dir, base)
		files = append(files, f...)
		if err != nil {
			return fmt.Errorf("orders: %w", err)
		}
		return nil
	}
	for _, fig := range []struct {
		base, title, y string
		val            func(Point) float64
	}{
		{"pages-vs-time", "Pages fetched over time (Cao, Jiang and Singh, Figure 6)", "pages fetched",
			func(p Point) float64 { return float64(p.Pages) }},
		{"quality-vs-time", "Quality fetched over time (Figure 7)", "fraction of the total quality fetched",
			func(p Point) float64 { return p.QualityFraction }},
	} {
		p := plot.New()
		p.Title.Text = fig.title
		p.X.Label.Text = "time (s)"
		p.Y.Label.Text = fig.y
		p.Legend.Top, p.Legend.Left = true, true
		p.Y.Tick.Marker = replay.DenseTicks{}
		p.Add(plotter.NewGrid())
		for i := range results {
			xys := downsample(results[i].Curve, fig.val, 800)
			if len(xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return files, fmt.Errorf("orders: plot %s: %w", fig.base, err)
			}
			replay.StyleLine(i, l, nil)
			p.Add(l)
			p.Legend.Add(results[i].Order, l)
		}
		if err := save(p, fig.base); err != nil {
			return files, err
		}
	}
	p := plot.New()
	p.Title.Text = "LRU miss rate by crawl order"
	p.X.Label.Text = "cache size (entries, log2 scale)"
	p.X.Tick.Marker = replay.Pow2Ticks{}
	p.Y.Tick.Marker = replay.DenseTicks{}
	p.Y.Label.Text = "miss rate"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	for i := range results {
		var xys plotter.XYs
		for _, row := range results[i].LRU {
			if row.Size >= 1 && !math.IsNaN(row.MissRate) {
				xys = append(xys, plotter.XY{X: math.Log2(float64(row.Size)), Y: row.MissRate})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			return files, fmt.Errorf("orders: plot lru-by-order: %w", err)
		}
		replay.StyleLine(i, l, s)
		p.Add(l, s)
		p.Legend.Add(results[i].Order, l, s)
	}
	if err := save(p, "lru-by-order"); err != nil {
		return files, err
	}
	return files, nil
}

// downsample keeps at most n points of a curve (always the last).
func downsample(c []Point, val func(Point) float64, n int) plotter.XYs {
	if len(c) == 0 {
		return nil
	}
	step := max(1, len(c)/n)
	xys := plotter.XYs{{X: 0, Y: 0}}
	for i := 0; i < len(c); i += step {
		xys = append(xys, plotter.XY{X: c[i].Seconds, Y: val(c[i])})
	}
	if last := c[len(c)-1]; xys[len(xys)-1].X != last.Seconds {
		xys = append(xys, plotter.XY{X: last.Seconds, Y: val(last)})
	}
	return xys
}

package main

import (
	"fmt"
	"image"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/figtest"
	"github.com/crawltrace/crawltrace/replay"
)

// Every figure kind, drawn from a small demo (replay and scenarios), a
// replay at sizes asked for, and the crawl orders, is a figure a paper can
// use: nothing drawn within 10 pixels of the edge (no legend, label or
// marker clipped), the size README.md states, and each policy or
// partitioner in one colour, its own, in every figure's legend.
func TestFiguresReadable(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	mustRun(t, "demo", "--out", run, "--hosts", "20", "--pages-per-host", "30", "--max-pages", "400", "--workers", "4",
		"--progress", "never")
	mustRun(t, "replay", filepath.Join(run, "condensed", "node-001.full.arrow"), "--policies", "infinite,min,lru,clock,random,static,fifo,sieve,s3fifo,arc,2q,wtinylfu,clock-scatter,random-scatter",
		"--sizes", "2^0..2^12", "-o", filepath.Join(dir, "all"), "--progress", "never")
	mustRun(t, "orders", "-o", filepath.Join(dir, "orders"), "--hosts", "6", "--pages-per-host", "6", "--lru-max-exp", "6", "--progress", "never")

	pngs, _ := filepath.Glob(filepath.Join(run, "*", "*.png"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.png"))
	pngs = append(pngs, more...)
	kinds := map[string]bool{}
	colors := map[string]string{} // series -> colour
	seen := map[string]string{}   // series -> the figure it was first seen in
	for _, png := range pngs {
		base := strings.TrimSuffix(filepath.Base(png), ".png")
		kind, _, _ := strings.Cut(base, "-node-")
		kinds[kind] = true
		if err := figtest.BlankBorder(png, 10); err != nil {
			t.Error(err)
		}
		w, h := pngSize(t, png)
		want := "1200x800"
		if kind == "full-vs-cross" {
			want = "2400x800"
		}
		if got := fmt.Sprintf("%dx%d", w, h); got != want {
			t.Errorf("%s is %s, README.md says %s", png, got, want)
		}
		svg, err := os.ReadFile(strings.TrimSuffix(png, ".png") + ".svg")
		if err != nil {
			t.Fatal(err)
		}
		legend := figtest.LegendColors(string(svg))
		for name, c := range legend {
			own, ok := replay.SeriesColor(name)
			if !ok {
				continue
			}
			r, g, b, _ := own.RGBA()
			if hex := fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8); c != hex {
				t.Errorf("%s: %s is drawn in %s, its colour is %s", png, name, c, hex)
			}
			if prev, ok := colors[name]; ok && prev != c {
				t.Errorf("%s is %s in %s and %s in %s", name, prev, seen[name], c, png)
			}
			colors[name], seen[name] = c, png
		}
		if kind == "missrate" && !strings.Contains(png, "all") {
			for _, p := range []string{"infinite", "min", "lru", "clock", "random", "static", "sieve", "s3fifo"} {
				if _, ok := legend[p]; !ok {
					t.Errorf("%s: no legend entry for %s (legend %v)", png, p, legend)
				}
			}
		}
	}
	for _, k := range []string{"missrate", "relative", "full-vs-cross", "partition-cross", "partition-balance", "splitter-cache",
		"threads", "locality", "locality-reuse", "node-loss", "pages-vs-time", "quality-vs-time", "lru-by-order"} {
		if !kinds[k] {
			t.Errorf("no %s figure among %v", k, slices.Sorted(maps.Keys(kinds)))
		}
	}
	for _, name := range []string{"lru", "clock", "random", "host", "url", "domain", "consistent", "wtinylfu"} {
		if _, ok := colors[name]; !ok {
			t.Errorf("%s is in no figure's legend", name)
		}
	}
}

func pngSize(t *testing.T, path string) (w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, _, err := image.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c.Width, c.Height
}

package replay

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// writeCondensed writes a condensed trace of keys with the given metadata.
func writeCondensed(t *testing.T, path string, m tracefile.Meta, keys []uint64) {
	t.Helper()
	w, err := tracefile.CreateCondensed(path, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendSlice(keys); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A replay of one node's full and cross traces writes figures a paper can
// use (PNG of at least 1200 x 800 pixels, and an SVG beside each, the
// full-vs-cross figure included) and a results.arrow that inspect opens,
// carrying the crawl, the traces and the parameters.
func TestReplayOutputsFiguresAndArrowMetadata(t *testing.T) {
	dir := t.TempDir()
	var full, cross []uint64
	for i := range 3000 {
		k := uint64(i*7919%257 + 1)
		full = append(full, k)
		if i%3 == 0 {
			cross = append(cross, k)
		}
	}
	var traces []string
	for sub, keys := range map[string][]uint64{tracefile.SubtraceFull: full, tracefile.SubtraceCross: cross} {
		p := filepath.Join(dir, tracefile.CondensedName(0, sub))
		writeCondensed(t, p, tracefile.Meta{CrawlID: "crawl-x", Node: 0, Nodes: 2, Partitioner: "host", Subtrace: sub}, keys)
		traces = append(traces, p)
	}
	cfg := DefaultConfig()
	cfg.Traces = traces
	cfg.Policies = []string{"infinite", "min", "lru", "random"}
	cfg.Sizes = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}
	cfg.Seeds = 3
	cfg.OutDir = filepath.Join(dir, "replay")
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pngs int
	for _, f := range res.Files {
		if !strings.HasSuffix(f, ".png") {
			continue
		}
		pngs++
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := image.DecodeConfig(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if c.Width < 1200 || c.Height < 800 {
			t.Errorf("%s is %dx%d, want at least 1200x800", filepath.Base(f), c.Width, c.Height)
		}
		svg := strings.TrimSuffix(f, ".png") + ".svg"
		if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("no SVG beside %s: %v", filepath.Base(f), err)
		}
	}
	// missrate x2, relative x2, full-vs-cross.
	if pngs != 5 {
		t.Errorf("%d PNG figures, want 5: %v", pngs, res.Files)
	}
	if b, err := os.ReadFile(filepath.Join(cfg.OutDir, "missrate-node-000.full.svg")); err != nil ||
		!bytes.Contains(b, []byte("crawl crawl-x, node 0, full subtrace")) {
		t.Errorf("miss-rate figure title does not name crawl, node and subtrace: %v", err)
	}
	var out bytes.Buffer
	if err := tracefile.Inspect(&out, filepath.Join(cfg.OutDir, "results.arrow"), 2); err != nil {
		t.Fatalf("inspect results.arrow: %v", err)
	}
	for _, want := range []string{`crawl "crawl-x"`, "node-000.full.arrow", "seeds=3", "policies=infinite,min,lru,random", "hits: type=int64", "misses: type=int64"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect results.arrow lacks %q:\n%s", want, out.String())
		}
	}
	for _, r := range res.Rows {
		if r.Hits+r.Misses != r.Requests {
			t.Errorf("%s %s %d: hits %d + misses %d != requests %d", r.Trace, r.Policy, r.Size, r.Hits, r.Misses, r.Requests)
		}
	}
}

func TestTraceTitle(t *testing.T) {
	for _, tc := range []struct {
		trace string
		m     tracefile.Meta
		want  string
	}{
		{"node-003.cross.arrow", tracefile.Meta{CrawlID: "c", Node: 3, Subtrace: "cross"}, "crawl c, node 3, cross subtrace"},
		{"node-001.full.arrow", tracefile.Meta{}, "node 1, full subtrace"},
		{"zipf.txt", tracefile.Meta{}, "zipf.txt"},
	} {
		if got := TraceTitle(tc.trace, tc.m); got != tc.want {
			t.Errorf("TraceTitle(%s) = %q, want %q", tc.trace, got, tc.want)
		}
	}
}

// Every power of two of the paper's grid is labelled; a rate axis has a
// label every 0.1.
func TestTicks(t *testing.T) {
	var labels []string
	for _, tk := range (Pow2Ticks{}).Ticks(0, 12) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "1 2 4 8 16 32 64 128 256 512 1K 2K 4K" {
		t.Errorf("2^0..2^12 labels: %s", got)
	}
	labels = nil
	for _, tk := range (DenseTicks{}).Ticks(0, 1) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0.0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0" {
		t.Errorf("rate labels: %s", got)
	}
}

// The figures are curves over cache size: a run at one size writes the
// tables and no figure; the same run at two sizes draws them.
func TestOneSizeDrawsNoFigures(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, tracefile.CondensedName(0, tracefile.SubtraceFull))
	var keys []uint64
	for i := range 3000 {
		keys = append(keys, uint64(i*i%701))
	}
	writeCondensed(t, p, tracefile.Meta{CrawlID: "crawl-y", Node: 0, Nodes: 1, Partitioner: "host", Subtrace: tracefile.SubtraceFull}, keys)
	for _, sizes := range [][]int{{64}, {16, 64}} {
		cfg := DefaultConfig()
		cfg.Traces = []string{p}
		cfg.Policies = []string{"random", "min"}
		cfg.Sizes = sizes
		cfg.OutDir = filepath.Join(dir, fmt.Sprint(len(sizes)))
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		figs, _ := filepath.Glob(filepath.Join(cfg.OutDir, "*.png"))
		svgs, _ := filepath.Glob(filepath.Join(cfg.OutDir, "*.svg"))
		if want := 2 * (len(sizes) - 1); len(figs) != want || len(svgs) != want {
			t.Errorf("sizes %v: %d PNG and %d SVG figures, want %d of each: %v", sizes, len(figs), len(svgs), want, res.Files)
		}
		for _, f := range []string{"results.csv", "results.arrow", "memory.csv"} {
			if _, err := os.Stat(filepath.Join(cfg.OutDir, f)); err != nil {
				t.Errorf("sizes %v: %v", sizes, err)
			}
		}
	}
}

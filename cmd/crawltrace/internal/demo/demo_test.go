package demo

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/condense"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/replay"
)

// The demo at a tiny budget: every output exists, tables parse, and the
// numbers agree with each other.
func TestDemoTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end demo")
	}
	cfg := DefaultConfig()
	if cfg.Duration != 0 {
		t.Errorf("default demo has a crawl time limit %s; --max-pages alone should bound it", cfg.Duration)
	}
	cfg.OutDir = t.TempDir()
	cfg.Hosts, cfg.PagesPerHost, cfg.MaxPages, cfg.Workers = 20, 30, 400, 4
	cfg.Sizes = []int{1, 2, 4, 16, 64, 256, 1024, 4096, 1 << 16}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"SUMMARY.md", "crawl/manifest.json", "crawl/stats.json", "condensed/report.json",
		"condensed/node-000.full.arrow", "condensed/node-000.cross.arrow", "replay/results.csv", "replay/missrate-node-000.full.png",
		"replay/full-vs-cross-node-000.png", "scenario/scenario-summary.json"} {
		if st, err := os.Stat(filepath.Join(cfg.OutDir, f)); err != nil || st.Size() == 0 {
			t.Errorf("missing or empty output %s: %v", f, err)
		}
	}
	rep, err := condense.ReadReport(filepath.Join(cfg.OutDir, "condensed", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.Rows != res.Crawl.Stats.URLsLogged || rep.Total.Rows == 0 {
		t.Errorf("condensed %d rows, crawl logged %d", rep.Total.Rows, res.Crawl.Stats.URLsLogged)
	}
	f, err := os.Open(filepath.Join(cfg.OutDir, "replay", "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := replay.ReadCSV(f, "results.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(cfg.Policies)*len(cfg.Sizes)*2 {
		t.Errorf("%d rows, want %d", len(rows), len(cfg.Policies)*len(cfg.Sizes)*2)
	}
	type key struct {
		trace string
		size  int
	}
	minRate := map[key]float64{}
	for _, r := range rows {
		if r.Policy == "min" {
			minRate[key{r.Trace, r.Size}] = r.MissRate
		}
	}
	node0 := rep.PerNode[0]
	for _, r := range rows {
		m, ok := minRate[key{r.Trace, r.Size}]
		if !ok {
			t.Fatalf("no MIN row for %s/%d", r.Trace, r.Size)
		}
		if r.Policy != "static" && r.Policy != "infinite" && r.MissRate < m-1e-12 {
			t.Errorf("%s %s size %d: miss rate %.4f below MIN %.4f", r.Trace, r.Policy, r.Size, r.MissRate, m)
		}
		if r.Policy == "infinite" && strings.Contains(r.Trace, "full") {
			want := float64(node0.DistinctURLs) / float64(node0.Rows)
			if math.Abs(r.MissRate-want) > 1e-9 {
				t.Errorf("INFINITE miss rate %.6f, want distinct/requests %.6f", r.MissRate, want)
			}
		}
		if strings.Contains(r.Trace, "full") && r.Requests != node0.Rows {
			t.Errorf("full trace replayed %d requests, node 0 logged %d", r.Requests, node0.Rows)
		}
	}
	var stats map[string]any
	b, _ := os.ReadFile(filepath.Join(cfg.OutDir, "crawl", "stats.json"))
	if err := json.Unmarshal(b, &stats); err != nil {
		t.Fatal(err)
	}
	sum, _ := os.ReadFile(res.Summary)
	for _, want := range []string{"62.55", "Critical point", "node-000.cross.arrow", "colliding pairs", "Host locality", "Losing a node",
		"The crawl stopped after", "max-pages, the budget of 400 pages", "preloads are not charged", "--charge-static"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("SUMMARY.md lacks %q", want)
		}
	}
	// inspect opens every Arrow file the demo wrote; the results tables
	// name the demo's crawl.
	var arrows int
	filepath.WalkDir(cfg.OutDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".arrow") {
			return err
		}
		arrows++
		var out strings.Builder
		if err := tracefile.Inspect(&out, p, 1); err != nil {
			t.Errorf("inspect %s: %v", p, err)
		} else if !strings.Contains(out.String(), `crawl "demo-seed1"`) {
			t.Errorf("inspect %s does not name the crawl:\n%s", p, out.String())
		}
		return nil
	})
	if arrows < 10 {
		t.Errorf("only %d Arrow files under %s", arrows, cfg.OutDir)
	}
	// A second run into the same directory replaces the earlier output.
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("rerun into an earlier demo's directory: %v", err)
	}
	// Anything else in the directory is left alone.
	precious := filepath.Join(cfg.OutDir, "precious.txt")
	os.WriteFile(precious, []byte("x"), 0o644)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "x" {
		t.Errorf("demo touched a file it did not write: %q, %v", b, err)
	}
}

// A time limit set beside --max-pages is announced before the crawl starts.
func TestDurationNoteBeforeCrawl(t *testing.T) {
	var log strings.Builder
	cfg := DefaultConfig()
	cfg.OutDir = t.TempDir()
	cfg.Hosts, cfg.PagesPerHost, cfg.MaxPages, cfg.Workers, cfg.Nodes = 5, 5, 10, 2, 1
	cfg.Duration = time.Hour
	cfg.Sizes, cfg.Policies, cfg.Scenarios, cfg.Plots = []int{1, 2}, []string{"lru"}, false, false
	cfg.Log = &log
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	out := log.String()
	note := strings.Index(out, "whichever comes first")
	crawled := strings.Index(out, "demo: crawled")
	if note < 0 || crawled < 0 || note > crawled {
		t.Errorf("no time-limit note before the crawl:\n%s", out)
	}
	if !strings.Contains(out, "crawl stopped: ") {
		t.Errorf("no stop reason on the log:\n%s", out)
	}
}

// --live crawls the web over loopback with real concurrency, and
// SUMMARY.md says its results vary.
func TestDemoLive(t *testing.T) {
	cfg := DefaultConfig()
	cfg.OutDir = t.TempDir()
	cfg.Live = true
	cfg.Hosts, cfg.PagesPerHost, cfg.MaxPages, cfg.Workers, cfg.Nodes = 5, 10, 30, 2, 2
	cfg.Sizes, cfg.Policies, cfg.Scenarios, cfg.Plots = []int{1, 2}, []string{"lru"}, false, false
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Crawl.Stats.Deterministic {
		t.Error("a --live crawl says it is deterministic")
	}
	sum, _ := os.ReadFile(res.Summary)
	if !strings.Contains(string(sum), "It was live (--live)") {
		t.Errorf("SUMMARY.md does not say the crawl was live:\n%s", sum)
	}
}

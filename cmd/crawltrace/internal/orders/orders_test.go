package orders

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/quality"
	"github.com/crawltrace/crawltrace/replay"
)

// TestRunTiny runs the whole experiment on a web of 4 hosts x 6 pages:
// every order fetches as many pages, the curves end at the crawl's page
// count with all the quality, LRU is replayed at 2^0..2^6 and every file
// is written.
func TestRunTiny(t *testing.T) {
	cfg := DefaultConfig()
	cfg.OutDir = t.TempDir()
	cfg.Hosts, cfg.PagesPerHost = 4, 6
	cfg.Orders = []string{"bfs", "capability"}
	cfg.MaxConns = 2
	cfg.LatencyMedian, cfg.ConnectMedian = 100*time.Microsecond, 200*time.Microsecond
	cfg.LRUMaxExp = 6
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.Pages == 0 || r.Pages != rep.Results[0].Pages {
			t.Errorf("%s: %d pages, bfs %d", r.Order, r.Pages, rep.Results[0].Pages)
		}
		if n := len(r.Curve); int64(n) != r.Pages || r.Curve[n-1].Pages != r.Pages {
			t.Errorf("%s: curve of %d points for %d pages", r.Order, n, r.Pages)
		}
		if q := r.Curve[len(r.Curve)-1].QualityFraction; q < 0.999 || q > 1.001 {
			t.Errorf("%s: crawled to completion but fetched %.4f of the quality", r.Order, q)
		}
		for i := 1; i < len(r.Curve); i++ {
			if r.Curve[i].Seconds < r.Curve[i-1].Seconds || r.Curve[i].QualityFraction < r.Curve[i-1].QualityFraction {
				t.Fatalf("%s: curve goes back at %d: %+v %+v", r.Order, i, r.Curve[i-1], r.Curve[i])
			}
		}
		if len(r.LRU) != 7 || r.LRU[0].Policy != "lru" || r.LRU[0].Size != 1 {
			t.Errorf("%s: LRU rows %+v", r.Order, r.LRU)
		}
		if r.Progress == nil || r.Progress.Pages != r.Pages {
			t.Errorf("%s: progress %+v", r.Order, r.Progress)
		}
	}
	for _, f := range []string{"orders.csv", "quality.tsv", "pages-vs-time.png", "quality-vs-time.svg",
		"lru-by-order.png", "lru-by-order.svg", "bfs/stats.json", "capability/condensed/report.json"} {
		if st, err := os.Stat(filepath.Join(cfg.OutDir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(cfg.OutDir, "orders.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) != 3 || rows[1][0] != "bfs" || rows[2][0] != "capability" {
		t.Errorf("orders.csv: %v %q", err, rows)
	}
	// A second run into the same directory replaces each order's crawl (a
	// crawl into the old one would mix two runs) and touches nothing else.
	mine := filepath.Join(cfg.OutDir, "notes.txt")
	os.WriteFile(mine, []byte("x"), 0o644)
	again, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range again.Results {
		if r.Pages != rep.Results[i].Pages {
			t.Errorf("%s again: %d pages, first run %d", r.Order, r.Pages, rep.Results[i].Pages)
		}
	}
	if b, err := os.ReadFile(mine); err != nil || string(b) != "x" {
		t.Errorf("a second run touched a file it did not write: %q, %v", b, err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, mut := range []func(*Config){
		func(c *Config) { c.OutDir = "" },
		func(c *Config) { c.Orders = []string{"bfs", "fastest"} },
		func(c *Config) { c.Orders = []string{"bfs", "bfs"} },
		func(c *Config) { c.Hosts = 0 },
		func(c *Config) { c.MaxConns = 0 },
		func(c *Config) { c.LRUMaxExp = 30 },
	} {
		cfg := DefaultConfig()
		cfg.OutDir = t.TempDir()
		mut(&cfg)
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("config %+v: error %v, want ErrConfig", cfg, err)
		}
	}
}

// TestWriteCSV pins the table's columns and arithmetic on a constructed
// result: 4 fetches at 1, 2, 3 and 4 seconds with 10%, 40%, 40% and 10%
// of the quality (given out of order, as a page log may hold them).
func TestWriteCSV(t *testing.T) {
	r := Result{Order: "quality", Pages: 4, PeakConns: 2, URLs: 100,
		Timeline: quality.SummarizeProgress([]quality.Fetch{{End: 4 * time.Second, Quality: 0.1},
			{End: 2 * time.Second, Quality: 0.4}, {End: 1 * time.Second, Quality: 0.1}, {End: 3 * time.Second, Quality: 0.4}},
			4*time.Second, true, 1),
		LRU: []replay.Row{{Policy: "lru", Size: 16, MissRate: 0.5}, {Policy: "lru", Size: 256, MissRate: 0.25}}}
	var b strings.Builder
	if err := WriteCSV(&b, []Result{r}); err != nil {
		t.Fatal(err)
	}
	want := "order,seconds,pages,pages_per_second,peak_conns,urls_logged,time_to_50pct_pages,time_to_80pct_pages,pages_at_half_time,time_to_50pct_quality,time_to_80pct_quality,quality_at_third_time,quality_fetched,lru_miss_16,lru_miss_256,lru_miss_4096,lru_miss_65536,lru_miss_1048576\n" +
		"quality,4,4,1,2,100,2,4,0.5,2,3,0.1,1,0.5,0.25,,,\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

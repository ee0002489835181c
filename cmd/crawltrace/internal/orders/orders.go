// Package orders runs the crawl-order experiment: one synthetic web (package
// recorder/testweb, with per-host latencies and keep-alive limits) crawled
// to completion, or to a page budget, under each crawl order of Cao, Jiang
// and Singh's two-level scheduler (bfs, performance, quality, capability),
// the pages and quality fetched over time compared as in their Figures 6
// and 7, and each crawl's URL trace condensed and replayed through LRU at
// every cache size from 2^0 to 2^20 — Broder, Najork and Wiener's open
// question whether the crawl order changes the caches' behaviour.
//
// Output, in Config.OutDir:
//
//	ORDER/                      the crawl directory of each order (recorder output)
//	ORDER/condensed/            its condensed traces (condense)
//	ORDER/replay/               its LRU results (replay)
//	quality.tsv                 the quality oracle (url<TAB>value)
//	orders.csv                  one row per order: speed, progress milestones, LRU miss rates
//	pages-vs-time.png/.svg      pages fetched against time, one line per order
//	quality-vs-time.png/.svg    fraction of the oracle's quality fetched against time
//	lru-by-order.png/.svg       LRU miss rate against cache size, one line per order
package orders

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/condense"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/quality"
	"github.com/crawltrace/crawltrace/recorder/testweb"
	"github.com/crawltrace/crawltrace/replay"
)

// ErrConfig marks an invalid [Config].
var ErrConfig = errors.New("orders: bad configuration")

// Config configures the experiment. Build it with [DefaultConfig]; flags
// of `crawltrace orders` bind straight into it. It is read, never
// written, by [Run].
type Config struct {
	// OutDir receives everything (see the package doc). Required.
	OutDir string
	// Hosts and PagesPerHost size the synthetic web; Seed selects it.
	Hosts, PagesPerHost int
	Seed                int64
	// QualityModel is the quality oracle: "pagerank" or "zipf".
	QualityModel string
	// Orders are the crawl orders to compare (recorder.Orders).
	Orders []string
	// MaxPages stops each crawl after this many fetches; 0 crawls the web
	// to completion.
	MaxPages int64
	// MaxConns caps each crawl's open connections, and Workers is its
	// number of fetch workers (default: MaxConns). A cap well below the
	// number of hosts is what makes the order matter.
	MaxConns, Workers int
	// LatencyMedian and ConnectMedian are the median per-host response and
	// connection set-up times of the web (testweb.Config), scaled down
	// from the web's defaults so the experiment runs in seconds.
	LatencyMedian, ConnectMedian time.Duration
	// LRUMaxExp: LRU is replayed at cache sizes 2^0 .. 2^LRUMaxExp.
	LRUMaxExp int
	// Progress, when not nil, receives one line per step.
	Progress io.Writer
}

// DefaultConfig returns the experiment's defaults: a web of 100 hosts of
// 20 pages (about 8,800 fetches per crawl with the resources, redirects
// and query variants), the four orders, 12 connections, response times
// around 2ms and connection set-up around 6ms, LRU up to 2^20: about 30
// seconds on two cores.
func DefaultConfig() Config {
	return Config{
		Hosts: 100, PagesPerHost: 20, Seed: 1, QualityModel: "pagerank",
		Orders:   []string{recorder.OrderBFS, recorder.OrderPerformance, recorder.OrderQuality, recorder.OrderCapability},
		MaxConns: 12, LatencyMedian: 2 * time.Millisecond, ConnectMedian: 6 * time.Millisecond,
		LRUMaxExp: 20,
	}
}

// Result is one order's outcome, a row of orders.csv.
type Result struct {
	Order     string
	Seconds   float64 // crawl duration
	Pages     int64   // fetches, robots.txt excluded
	PeakConns int
	// Progress is the crawl's progress summary (stats.json).
	Progress *quality.Progress
	// Timeline is the same summary measured on the fetches themselves,
	// from the crawl's first request to the end of its last fetch: what
	// orders.csv reports.
	Timeline *quality.Progress
	// Curve is every fetch in completion order, for the plots.
	Curve []Point
	// URLs is the number of URLs the host splitter logged (the trace).
	URLs int64
	// LRU are the replay rows (policy lru), one per cache size.
	LRU []replay.Row
}

// Point is one fetch of a crawl: when it completed (seconds from the
// crawl's first request), the pages fetched so far and the fraction of
// the oracle's quality fetched so far.
type Point struct {
	Seconds, QualityFraction float64
	Pages                    int64
}

// Report is what [Run] produced. It is a plain value.
type Report struct {
	Results []Result
	Files   []string
}

func (c *Config) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	if c.OutDir == "" {
		return bad("no output directory")
	}
	if c.Hosts < 1 || c.PagesPerHost < 1 {
		return bad("hosts and pages per host must be positive")
	}
	if len(c.Orders) == 0 {
		return bad("no orders")
	}
	seen := map[string]bool{}
	for _, o := range c.Orders {
		if !slices.Contains(recorder.Orders(), o) {
			return bad("unknown order %q (want %s)", o, strings.Join(recorder.Orders(), ", "))
		}
		if seen[o] {
			return bad("order %q given twice", o)
		}
		seen[o] = true
	}
	if c.MaxPages < 0 || c.MaxConns < 1 || c.Workers < 0 {
		return bad("max pages must not be negative and max connections must be positive")
	}
	if c.LRUMaxExp < 0 || c.LRUMaxExp > 25 {
		return bad("LRU sizes up to 2^%d: want 0..25", c.LRUMaxExp)
	}
	if c.LatencyMedian < 0 || c.ConnectMedian < 0 {
		return bad("negative latency")
	}
	return nil
}

func (c *Config) logf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}

// Run serves the web on 127.0.0.1, crawls it under each order in turn,
// condenses and replays each crawl, and writes the table and the plots.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Workers == 0 {
		cfg.Workers = cfg.MaxConns
	}
	// Each order's crawl goes to OutDir/ORDER. An earlier run there is
	// replaced, as the demo replaces its outputs: a crawl into it would mix
	// two runs in one trace. Nothing else in OutDir is touched; whether to
	// write into OutDir at all is the caller's policy (the CLI's is
	// internal/outdir, which refuses a directory it did not fill unless
	// --force).
	for _, o := range cfg.Orders {
		if err := os.RemoveAll(filepath.Join(cfg.OutDir, o)); err != nil {
			return nil, fmt.Errorf("orders: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("orders: %w", err)
	}
	wc := testweb.DefaultConfig()
	wc.Hosts, wc.PagesPerHost, wc.Seed, wc.TrapHosts = cfg.Hosts, cfg.PagesPerHost, cfg.Seed, 0
	wc.QualityModel = cfg.QualityModel
	wc.Latency, wc.KeepAliveLimits = true, true
	if cfg.LatencyMedian > 0 {
		wc.LatencyMedian = cfg.LatencyMedian
	}
	if cfg.ConnectMedian > 0 {
		wc.ConnectMedian = cfg.ConnectMedian
	}
	web, err := testweb.New(wc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	srv, err := testweb.ServeWeb(ctx, "127.0.0.1:0", web)
	if err != nil {
		return nil, fmt.Errorf("orders: %w", err)
	}
	defer srv.Close()
	oracle := web.Quality()
	rep := &Report{}
	qpath := filepath.Join(cfg.OutDir, "quality.tsv")
	if err := tracefile.WriteFileAtomic(qpath, web.WriteQuality); err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, qpath)
	// The oracle as the crawler reads it (normalized keys).
	crawlOracle, err := quality.ReadOracle(qpath)
	if err != nil {
		return nil, err
	}
	total := quality.Total(oracle)
	cfg.logf("orders: web of %d hosts x %d pages at %s, %d pages with quality (total %.4g)",
		cfg.Hosts, cfg.PagesPerHost, srv.Addr(), len(oracle), total)

	for _, order := range cfg.Orders {
		r, err := runOrder(ctx, &cfg, order, srv.Addr(), web.Seeds(), crawlOracle, total)
		if err != nil {
			return rep, err
		}
		rep.Results = append(rep.Results, *r)
	}
	files, err := writeReport(cfg.OutDir, rep.Results)
	rep.Files = append(rep.Files, files...)
	return rep, err
}

// runOrder crawls, condenses and replays one order.
func runOrder(ctx context.Context, cfg *Config, order, addr string, seeds []string, oracle map[string]float64, total float64) (*Result, error) {
	dir := filepath.Join(cfg.OutDir, order)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("orders: %w", err)
	}
	rc := recorder.DefaultConfig()
	rc.OutDir = dir
	rc.Seeds = seeds
	rc.Resolve = map[string]string{"*": addr}
	rc.AllowPrivate = true
	rc.MinDelay, rc.DelayFactor = 0, 0
	rc.Order = order
	rc.Quality = oracle
	rc.MaxPages = cfg.MaxPages
	rc.MaxConns, rc.Workers = cfg.MaxConns, cfg.Workers
	rc.CrawlID = "orders-" + order
	rc.Timeout = 10 * time.Second
	res, err := recorder.Run(ctx, rc)
	if err != nil {
		return nil, fmt.Errorf("orders: crawl %s: %w", order, err)
	}
	st := res.Stats
	curve, timeline, err := readCurve(dir, total)
	if err != nil {
		return nil, err
	}
	cfg.logf("orders: %-11s %6.2fs %6d pages (%.0f/s), %d URLs logged, %d connections (%.1f pages each), peak %d open",
		order, st.Seconds, st.FetchAttempts, st.PagesPerSecond, st.URLsLogged, st.Sessions,
		float64(st.FetchAttempts+st.RobotsFetches)/max(float64(st.Sessions), 1), st.PeakConns)

	cdir := filepath.Join(dir, "condensed")
	cc := condense.DefaultConfig()
	cc.Input, cc.Output = dir, cdir
	if _, err := condense.Run(ctx, cc); err != nil {
		return nil, fmt.Errorf("orders: condense %s: %w", order, err)
	}
	var sizes []int
	for e := 0; e <= cfg.LRUMaxExp; e++ {
		sizes = append(sizes, 1<<e)
	}
	trace := filepath.Join(cdir, tracefile.CondensedName(0, tracefile.SubtraceFull))
	pc := replay.DefaultConfig()
	pc.Traces = []string{trace}
	pc.Policies = []string{"lru"}
	pc.Sizes = sizes
	pc.OutDir = filepath.Join(dir, "replay")
	if err := os.MkdirAll(pc.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("orders: %w", err)
	}
	rr, err := replay.Run(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("orders: replay %s: %w", order, err)
	}
	return &Result{Order: order, Seconds: st.Seconds, Pages: st.FetchAttempts, PeakConns: st.PeakConns,
		Progress: st.Progress, Timeline: timeline, Curve: curve, URLs: st.URLsLogged, LRU: rr.Rows}, nil
}

// readCurve reads a one-node crawl's page log into its fetches in
// completion order (robots.txt excluded), timed from the crawl's first
// request, and summarizes them as the recorder summarizes a crawl's
// progress, over the time to the end of the last fetch.
func readCurve(dir string, total float64) ([]Point, *quality.Progress, error) {
	paths, err := tracefile.ListSegments(tracefile.NodeDir(dir, 0), tracefile.PrefixPages)
	if err != nil {
		return nil, nil, fmt.Errorf("orders: %w", err)
	}
	var fetches []quality.Fetch // ends in Unix nanoseconds until start is known
	start := int64(math.MaxInt64)
	for _, p := range paths {
		s, err := tracefile.OpenSegment(p, tracefile.KindPages)
		if err != nil {
			return nil, nil, fmt.Errorf("orders: %w", err)
		}
		for s.Next() {
			rec := s.Record()
			for i := 0; i < int(rec.NumRows()); i++ {
				pr := tracefile.PageRow(rec, i)
				start = min(start, pr.Time)
				if strings.HasSuffix(pr.URL, "/robots.txt") {
					continue
				}
				fetches = append(fetches, quality.Fetch{End: time.Duration(pr.Time + pr.DurationNS), Quality: pr.Quality})
			}
		}
		info := s.Info()
		s.Close()
		if !info.Clean {
			return nil, nil, fmt.Errorf("orders: page log %s: %s", p, info.Error)
		}
	}
	for i := range fetches {
		fetches[i].End -= time.Duration(start)
	}
	curve := quality.ProgressCurve(fetches, true)
	out := make([]Point, len(curve))
	var last time.Duration
	for i, c := range curve {
		out[i] = Point{Seconds: c.End.Seconds(), Pages: c.Pages}
		if total > 0 {
			out[i].QualityFraction = c.Quality / total
		}
		last = c.End
	}
	return out, quality.SummarizeProgress(fetches, last, true, total), nil
}

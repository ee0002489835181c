// Package demo runs the whole crawltrace study end to end on the local
// synthetic web, with no network: serve the test web in-process, crawl it
// with several nodes recording every URL entering their host splitters,
// condense the logs, replay the full and cross traces through the paper's
// cache policies at the paper's cache sizes, run the distributed-crawl
// scenarios where available, and write figures, tables and SUMMARY.md.
//
// It is the engine of `crawltrace demo`; every stage calls the same library
// the stand-alone commands use.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/condense"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/testweb"
	"github.com/crawltrace/crawltrace/replay"
	"github.com/crawltrace/crawltrace/replay/scenario"
)

// Config sizes the demo. Flags of `crawltrace demo` bind into it.
type Config struct {
	// OutDir receives crawl/, condensed/, replay/, scenario/ and SUMMARY.md.
	OutDir string
	// Hosts and PagesPerHost shape the local web.
	Hosts, PagesPerHost int
	// Seed makes the web (and so the whole run) deterministic.
	Seed int64
	// Nodes is the number of crawler nodes (in one process).
	Nodes int
	// Workers is the number of fetch workers per node.
	Workers int
	// MaxPages bounds the crawl (fetch attempts over all nodes).
	MaxPages int64
	// Duration bounds the crawl's time: virtual time, unless Live. 0, the
	// default, sets no bound: the crawl stops at MaxPages or when the local
	// web is exhausted, so a larger MaxPages never needs a longer Duration.
	// When both are set, Run says before crawling that whichever comes
	// first stops the crawl.
	Duration time.Duration
	// Policies and Sizes of the replay.
	Policies []string
	Sizes    []int
	// PlotAllSizes draws every size in the figures
	// ([replay.Config.PlotAllSizes]).
	PlotAllSizes bool
	// ChargeStatic makes STATIC count its preloads as misses
	// ([replay.Config.ChargeStatic]).
	ChargeStatic bool
	// ReplayNodes lists the nodes whose full and cross traces are replayed
	// (the paper replayed one machine's); nil means node 0.
	ReplayNodes []int
	// Live crawls the local web served on loopback with real concurrency
	// (fetch workers racing, wall-clock politeness delays), so that runs
	// differ. By default the crawl is deterministic: the web answers in
	// process and the crawl runs on a virtual clock (recorder.LocalWeb),
	// so the same Config gives the same trace and the same SUMMARY.md
	// numbers on any machine.
	Live bool
	// Scenarios runs the distributed-crawl scenarios.
	Scenarios bool
	// Plots draws the figures.
	Plots bool
	// Log receives stage lines; Progress (a terminal, or nil) live progress.
	Log, Progress io.Writer
}

// DefaultConfig is the README's demo: 50,000 pages, under half a minute on a
// 2-core machine, with no time limit on the crawl.
func DefaultConfig() Config {
	return Config{
		Hosts: 400, PagesPerHost: 200, Seed: 1, Nodes: 4, Workers: 16, MaxPages: 50000,
		Policies: []string{"infinite", "min", "lru", "clock", "random", "static", "sieve", "s3fifo"},
		Sizes:    replay.PaperSizes(), Scenarios: true, Plots: true,
	}
}

// Result is what a demo run wrote.
type Result struct {
	Crawl     *recorder.Result
	Condense  *condense.Report
	Replay    *replay.Results
	Scenario  *scenario.Summary // the distributed-crawl scenarios, if run
	Summary   string            // path of SUMMARY.md
	Files     []string          // every top-level output, for printing
	StageSecs map[string]float64
}

// demoOutput reports whether name is something a demo (or its notebooks)
// writes at the top of its output directory.
func demoOutput(name string) bool {
	switch name {
	case "crawl", "condensed", "replay", "scenario", "SUMMARY.md":
		return true
	}
	return strings.HasPrefix(name, "notebook-") && strings.HasSuffix(name, ".png")
}

// Run executes the demo.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.OutDir == "" {
		return nil, fmt.Errorf("%w: demo: no output directory", tracefile.ErrBadInput)
	}
	// An earlier demo's outputs in the directory are replaced; nothing else
	// is touched (whether to write into a directory at all is the caller's
	// policy: the CLI's is internal/outdir).
	if ents, err := os.ReadDir(cfg.OutDir); err == nil {
		for _, e := range ents {
			if demoOutput(e.Name()) {
				if err := os.RemoveAll(filepath.Join(cfg.OutDir, e.Name())); err != nil {
					return nil, fmt.Errorf("demo: %w", err)
				}
			}
		}
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "demo: "+format+"\n", args...)
		}
	}
	res := &Result{StageSecs: map[string]float64{}}
	stage := func(name string, start time.Time) { res.StageSecs[name] = time.Since(start).Seconds() }

	// 1. The local web.
	wcfg := testweb.DefaultConfig()
	wcfg.Hosts, wcfg.PagesPerHost, wcfg.Seed = cfg.Hosts, cfg.PagesPerHost, cfg.Seed
	web, err := testweb.New(wcfg)
	if err != nil {
		return nil, fmt.Errorf("demo: test web: %w", err)
	}
	rc := recorder.DefaultConfig()
	if cfg.Live {
		srv, err := testweb.ServeWeb(ctx, "127.0.0.1:0", web)
		if err != nil {
			return nil, fmt.Errorf("demo: test web: %w", err)
		}
		defer srv.Close()
		rc.AllowPrivate = true
		rc.Resolve = map[string]string{"*": srv.Addr()}
		logf("local web: %d hosts x %d pages on %s (a live crawl: results vary from run to run)", cfg.Hosts, cfg.PagesPerHost, srv.URL())
	} else {
		rc.Local = &recorder.LocalWeb{Handler: web.Handler()}
		logf("local web: %d hosts x %d pages, seed %d, answered in process (a deterministic crawl)", cfg.Hosts, cfg.PagesPerHost, cfg.Seed)
	}

	// 2. Crawl.
	t0 := time.Now()
	crawlDir := filepath.Join(cfg.OutDir, "crawl")
	rc.OutDir = crawlDir
	rc.Seeds = web.Seeds()
	rc.Nodes = cfg.Nodes
	rc.Workers = cfg.Workers
	rc.MaxPages = cfg.MaxPages
	rc.Duration = cfg.Duration
	rc.MinDelay = 0
	rc.CrawlID = fmt.Sprintf("demo-seed%d", cfg.Seed)
	rc.Progress = cfg.Progress
	logf("crawling with %d nodes x %d workers, up to %d pages", cfg.Nodes, cfg.Workers, cfg.MaxPages)
	if cfg.Duration > 0 {
		logf("note: the crawl stops at %d pages or after %s, whichever comes first (--duration 0 lifts the time limit)", cfg.MaxPages, cfg.Duration)
	}
	cr, err := recorder.Run(ctx, rc)
	if err != nil {
		return nil, fmt.Errorf("demo: crawl: %w", err)
	}
	res.Crawl = cr
	stage("crawl", t0)
	st := cr.Stats
	took := fmt.Sprintf("%.1fs", st.Seconds)
	if st.Deterministic {
		took = fmt.Sprintf("%.1fs of virtual time (%.1fs here)", st.VirtualSeconds, st.Seconds)
	}
	logf("crawled %d pages (%d HTML) in %s, logged %d URLs (%.1f%% local)", st.FetchAttempts, st.HTMLPages, took,
		st.URLsLogged, 100*st.LocalFraction)
	logf("crawl stopped: %s", recorder.StopText(st.StopReason, cfg.MaxPages, cfg.Duration))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	// 3. Condense.
	t0 = time.Now()
	condDir := filepath.Join(cfg.OutDir, "condensed")
	cc := condense.DefaultConfig()
	cc.Input, cc.Output = crawlDir, condDir
	cc.Progress = cfg.Progress
	rep, err := condense.Run(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("demo: condense: %w", err)
	}
	res.Condense = rep
	stage("condense", t0)
	logf("condensed %d URLs: %d distinct, %d fingerprint collisions", rep.Total.Rows, rep.Total.DistinctURLs, rep.Total.CollisionPairs)

	// 4. Replay the full and cross traces.
	t0 = time.Now()
	nodes := cfg.ReplayNodes
	if len(nodes) == 0 {
		nodes = []int{0}
	}
	rpc := replay.DefaultConfig()
	rpc.Policies, rpc.Sizes = cfg.Policies, cfg.Sizes
	rpc.OutDir = filepath.Join(cfg.OutDir, "replay")
	rpc.Plots, rpc.PlotAllSizes = cfg.Plots, cfg.PlotAllSizes
	rpc.ChargeStatic = cfg.ChargeStatic
	rpc.Progress = cfg.Progress
	for _, n := range nodes {
		for _, sub := range []string{tracefile.SubtraceFull, tracefile.SubtraceCross} {
			rpc.Traces = append(rpc.Traces, filepath.Join(condDir, tracefile.CondensedName(n, sub)))
		}
	}
	logf("replaying %d traces through %d policies at %d sizes", len(rpc.Traces), len(rpc.Policies), len(rpc.Sizes))
	rr, err := replay.Run(ctx, rpc)
	if err != nil {
		return nil, fmt.Errorf("demo: replay: %w", err)
	}
	res.Replay = rr
	stage("replay", t0)

	// 5. Distributed-crawl scenarios.
	if cfg.Scenarios {
		t0 = time.Now()
		logf("running distributed-crawl scenarios")
		sum, err := scenario.All(scenario.AllConfig{Input: crawlDir, OutDir: filepath.Join(cfg.OutDir, "scenario"), Order: "time", Plots: cfg.Plots, Progress: cfg.Progress})
		if err != nil {
			return nil, fmt.Errorf("demo: scenario: %w", err)
		}
		res.Scenario = sum
		stage("scenario", t0)
	}

	// 6. Summary.
	res.Summary = filepath.Join(cfg.OutDir, "SUMMARY.md")
	werr := tracefile.WriteFileAtomic(res.Summary, func(w io.Writer) error { return writeSummary(w, cfg, res) })
	if werr != nil {
		return nil, fmt.Errorf("demo: summary: %w", werr)
	}
	res.Files = []string{res.Summary, filepath.Join(crawlDir, "stats.json"), filepath.Join(condDir, "report.json")}
	res.Files = append(res.Files, rr.Files...)
	if res.Scenario != nil {
		res.Files = append(res.Files, filepath.Join(cfg.OutDir, "scenario", scenario.SummaryName))
	}
	return res, nil
}

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/cmd/crawltrace/internal/demo"
	"github.com/crawltrace/crawltrace/replay"
)

func init() { register(newDemoCmd) }

func newDemoCmd() *cobra.Command {
	cfg := demo.DefaultConfig()
	var policies, sizes string
	var replayNodes []int
	var force, noPlots, noScenarios bool
	cmd := &cobra.Command{
		Use:   "demo [--out DIR]",
		Short: "Run the whole study end to end on the local web (no network needed)",
		Long: `demo serves the local synthetic web in-process, crawls it with 4 nodes whose
host splitters log every URL, condenses the logs with the exact collision
check, replays node 0's full and cross traces through INFINITE, MIN, LRU,
CLOCK, RANDOM, STATIC, SIEVE and S3-FIFO at cache sizes 2^0..2^25, runs the
distributed-crawl scenarios, and writes figures, tables and SUMMARY.md to DIR.
The crawl is deterministic: the web answers in process and the crawl runs on
a virtual clock, so the same flags and seed give the same trace, tables and
SUMMARY.md numbers on any machine (--live crawls over loopback with real
concurrency instead, and its results vary from run to run).
The default budget of 50,000 pages takes under half a minute on a 2-core
machine; --max-pages, --hosts and --pages-per-host scale it. The crawl has no
time limit unless --duration sets one: it stops at --max-pages or when the
local web is exhausted, and SUMMARY.md says which.`,
		Example: `  crawltrace demo
  crawltrace demo --out big --max-pages 200000 --hosts 2000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			cfg.Policies = splitCommaList(policies)
			if cfg.Sizes, err = replay.ParseSizes(sizes); err != nil {
				return badInput("--sizes: %v", err)
			}
			// Checked before the crawl, not when the replay starts.
			if _, err := replay.CheckSizes(cfg.Sizes); err != nil {
				return fmt.Errorf("--sizes: %w", err)
			}
			cfg.PlotAllSizes = cmd.Flags().Changed("sizes")
			cfg.ReplayNodes = replayNodes
			if cmd.Flags().Changed("no-plots") {
				cfg.Plots = !noPlots
			}
			if cmd.Flags().Changed("no-scenarios") {
				cfg.Scenarios = !noScenarios
			}
			dir, err := prepareOut(cfg.OutDir, "demo", "", force)
			if err != nil {
				return err
			}
			cfg.Log = cmd.ErrOrStderr()
			cfg.Progress = progressOut(cmd)
			// demo.Run logs the crawl's stop reason and puts it in SUMMARY.md.
			res, err := runInOut(cmd, dir, func(ctx context.Context) (*demo.Result, error) { return demo.Run(ctx, cfg) },
				func(r *demo.Result) []string { return r.Files })
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "demo finished: %d pages crawled, %d URLs logged, %d replay rows\n",
				res.Crawl.Stats.FetchAttempts, res.Crawl.Stats.URLsLogged, len(res.Replay.Rows))
			fmt.Fprintln(out, "wrote:")
			for _, f := range res.Files {
				fmt.Fprintln(out, "  "+f)
			}
			fmt.Fprintf(out, "read %s first\n", res.Summary)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&cfg.OutDir, "out", "o", "", "output directory")
	f.IntVar(&cfg.Hosts, "hosts", cfg.Hosts, "hosts of the local web")
	f.IntVar(&cfg.PagesPerHost, "pages-per-host", cfg.PagesPerHost, "pages per host of the local web")
	f.Int64Var(&cfg.Seed, "web-seed", cfg.Seed, "seed of the local web")
	alias(f, "seed", "web-seed")
	f.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "crawler nodes")
	f.IntVar(&cfg.Workers, "workers", cfg.Workers, "fetch workers per node")
	f.Int64Var(&cfg.MaxPages, "max-pages", cfg.MaxPages, "crawl-wide budget of fetches")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "stop the crawl after this long, virtual time unless --live (0: no limit; the crawl stops at --max-pages or when the web is exhausted)")
	f.StringVar(&policies, "policies", strings.Join(cfg.Policies, ","), "replay policies")
	f.StringVar(&sizes, "sizes", "2^0..2^25", "replay cache sizes")
	f.IntSliceVar(&replayNodes, "replay-nodes", nil, "nodes whose full and cross traces are replayed (default 0)")
	f.BoolVar(&cfg.ChargeStatic, "charge-static", false, "count STATIC's preloads as misses")
	f.BoolVar(&cfg.Live, "live", false, "crawl the local web over loopback with real concurrency (results vary from run to run) instead of deterministically")
	f.BoolVar(&noScenarios, "no-scenarios", !cfg.Scenarios, "skip the distributed-crawl scenarios")
	f.BoolVar(&noPlots, "no-plots", !cfg.Plots, "do not draw figures")
	// The positive forms, kept as aliases: every command spells negations --no-X.
	f.BoolVar(&cfg.Scenarios, "scenarios", cfg.Scenarios, "")
	f.BoolVar(&cfg.Plots, "plots", cfg.Plots, "")
	deprecate(f, "scenarios", "no-scenarios")
	deprecate(f, "plots", "no-plots")
	addForce(cmd, &force)
	return cmd
}

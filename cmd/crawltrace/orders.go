package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/cmd/crawltrace/internal/orders"
)

func init() {
	register(newOrdersCmd)
}

func newOrdersCmd() *cobra.Command {
	cfg := orders.DefaultConfig()
	var list string
	var force bool
	cmd := &cobra.Command{
		Use:   "orders -o DIR [flags]",
		Short: "Compare crawl orders on a local test web: speed, quality over time, LRU miss rates",
		Long: `orders serves a synthetic web on 127.0.0.1 (per-host latencies and keep-alive
limits as Cao, Jiang and Singh measured), crawls it under each crawl order with
persistent connections and a connection cap, then condenses each crawl's URL
trace and replays it through LRU at sizes 2^0..2^20. It writes DIR/ORDER/ (crawl,
condensed/, replay/), DIR/orders.csv, DIR/pages-vs-time.png/.svg,
DIR/quality-vs-time.png/.svg and DIR/lru-by-order.png/.svg.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Orders = strings.Split(list, ",")
			dir, err := prepareOut(cfg.OutDir, "orders", "", force)
			if err != nil {
				return err
			}
			cfg.Progress = progressOut(cmd) // its step lines; none under --progress never
			rep, err := runInOut(cmd, dir, func(ctx context.Context) (*orders.Report, error) { return orders.Run(ctx, cfg) },
				func(r *orders.Report) []string { return r.Files })
			if errors.Is(err, orders.ErrConfig) {
				return badInput("%v", err)
			}
			if err != nil {
				return err
			}
			if err := orders.WriteCSV(cmd.OutOrStdout(), rep.Results); err != nil {
				return err
			}
			for _, f := range rep.Files {
				fmt.Fprintln(cmd.ErrOrStderr(), "wrote", f)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&cfg.OutDir, "out", "o", "", "output directory")
	f.IntVar(&cfg.Hosts, "hosts", cfg.Hosts, "hosts of the test web")
	f.IntVar(&cfg.PagesPerHost, "pages-per-host", cfg.PagesPerHost, "pages per host of the test web")
	alias(f, "pages", "pages-per-host")
	f.Int64Var(&cfg.Seed, "web-seed", cfg.Seed, "seed of the test web")
	alias(f, "seed", "web-seed")
	f.StringVar(&list, "orders", strings.Join(cfg.Orders, ","), "comma-separated crawl orders (bfs, dfs, random, performance, quality, capability)")
	f.StringVar(&cfg.QualityModel, "quality-model", cfg.QualityModel, "quality model of the test web: pagerank or zipf")
	f.Int64Var(&cfg.MaxPages, "max-pages", 0, "budget of fetches of each crawl (0 = crawl to completion)")
	f.IntVar(&cfg.MaxConns, "max-conns", cfg.MaxConns, "connections open at once")
	f.IntVar(&cfg.Workers, "workers", 0, "fetch workers (0 = --max-conns)")
	f.DurationVar(&cfg.LatencyMedian, "latency-median", cfg.LatencyMedian, "median of the hosts' mean response times")
	alias(f, "latency", "latency-median")
	f.DurationVar(&cfg.ConnectMedian, "connect", cfg.ConnectMedian, "median per-host connection set-up time")
	f.IntVar(&cfg.LRUMaxExp, "lru-max-exp", cfg.LRUMaxExp, "replay LRU at sizes 2^0..2^N")
	addForce(cmd, &force)
	return cmd
}

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/testweb"
)

func init() { register(newTestwebCmd) }

func newTestwebCmd() *cobra.Command {
	cfg := testweb.DefaultConfig()
	var listen, seedsOut, qualityOut string
	var sites []string
	var hostile bool
	cmd := &cobra.Command{
		Use:   "testweb",
		Short: "Serve a deterministic synthetic web for offline crawls",
		Long: `testweb serves a synthetic web of virtual hosts chosen by the Host header:
h0001.test, h0002.test, ... with generated pages, trap hosts trap1.test, ...
(an infinite calendar and an infinitely deep path), and --site directories.
URLs carry no port: point a crawler at the server for every host, e.g.
  crawltrace crawl --resolve '*:ADDR' --allow-private --seeds SEEDS ...
Requested by IP address (http://ADDR/) it answers with a root index linking
every host's home page, and http://ADDR/seeds.txt lists the seed URLs.
With --hostile it serves instead a web built to hurt crawlers, one case
per host of hostile.test: robots.txt behind 1, 3 and 6 redirects, an
endless redirect chain, a huge page, a gzip bomb, a link bomb, a
slow-loris server, non-HTML bodies, unknown encodings and trap URL spaces.
It runs until SIGINT or SIGTERM (exit status 130 or 143).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if hostile {
				return serveHostile(cmd, listen, seedsOut)
			}
			for _, s := range sites {
				host, dir, ok := strings.Cut(s, "=")
				if !ok || host == "" || dir == "" {
					return badInput("testweb: --site %q: want HOST=DIR", s)
				}
				if cfg.Sites == nil {
					cfg.Sites = map[string]string{}
				}
				cfg.Sites[host] = dir
			}
			w, err := testweb.New(cfg)
			if err != nil {
				return badInput("%w", err)
			}
			if seedsOut != "" {
				if err := createTestwebFile(seedsOut, w.WriteSeeds); err != nil {
					return err
				}
			}
			if qualityOut != "" {
				if err := createTestwebFile(qualityOut, w.WriteQuality); err != nil {
					return err
				}
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			srv, err := testweb.ServeWeb(ctx, listen, w)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "testweb: serving %d hosts x %d pages (+%d trap hosts, %d static sites) on %s\n",
				cfg.Hosts, cfg.PagesPerHost, cfg.TrapHosts, len(cfg.Sites), srv.URL())
			fmt.Fprintf(out, "testweb: crawl with --resolve '*:%s'; seed URLs at %sseeds.txt\n", srv.Addr(), srv.URL())
			if seedsOut != "" {
				fmt.Fprintf(out, "testweb: %d seeds written to %s\n", len(w.Seeds()), seedsOut)
			}
			if qualityOut != "" {
				fmt.Fprintf(out, "testweb: %s quality of %d pages written to %s\n", cfg.QualityModel, len(w.Quality()), qualityOut)
			}
			<-srv.Done()
			return srv.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "listen address (port 0 for any free port)")
	f.IntVar(&cfg.Hosts, "hosts", cfg.Hosts, "generated hosts")
	f.IntVar(&cfg.PagesPerHost, "pages", cfg.PagesPerHost, "pages per generated host")
	f.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the generated web")
	f.StringArrayVar(&sites, "site", nil, "HOST=DIR: serve a directory of static HTML as host HOST; repeatable")
	f.IntVar(&cfg.TrapHosts, "traps", cfg.TrapHosts, "crawler-trap hosts")
	f.Float64Var(&cfg.RobotsFraction, "robots", cfg.RobotsFraction, "fraction of hosts with robots.txt Disallow rules")
	f.Float64Var(&cfg.CrawlDelay, "crawl-delay", cfg.CrawlDelay, "Crawl-delay in seconds of the hosts that have one")
	f.Float64Var(&cfg.RedirectFraction, "redirects", cfg.RedirectFraction, "fraction of pages that redirect")
	f.Float64Var(&cfg.ErrorFraction, "errors", cfg.ErrorFraction, "fraction of pages that answer 404 or 5xx")
	f.Float64Var(&cfg.SharedProb, "shared", cfg.SharedProb, "probability that a page carries its host's shared links")
	f.BoolVar(&cfg.Latency, "latency", cfg.Latency, "per-host response and connection times")
	f.DurationVar(&cfg.LatencyMedian, "latency-median", cfg.LatencyMedian, "median of the hosts' mean response times")
	f.BoolVar(&cfg.KeepAliveLimits, "keepalive-limits", cfg.KeepAliveLimits, "close connections after a per-host number of requests")
	f.StringVar(&seedsOut, "seeds-out", "", "write the seed URLs to this file, one per line")
	f.BoolVar(&hostile, "hostile", false, "serve the hostile web (robots redirects, redirect chains, bombs, slow servers, traps) instead")
	f.StringVar(&qualityOut, "quality-out", "", "write url<TAB>quality lines to this file")
	f.StringVar(&cfg.QualityModel, "quality", cfg.QualityModel, "quality oracle: pagerank or zipf")
	return cmd
}

// createTestwebFile writes path with write, through a temporary file.
func createTestwebFile(path string, write func(io.Writer) error) error {
	if err := tracefile.WriteFileAtomic(path, write); err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return badInput("testweb: %v", err)
		}
		return err
	}
	return nil
}

// serveHostile serves the hostile web until SIGINT or SIGTERM.
func serveHostile(cmd *cobra.Command, listen, seedsOut string) error {
	w, err := testweb.NewHostile(testweb.DefaultHostileConfig())
	if err != nil {
		return badInput("%w", err)
	}
	if seedsOut != "" {
		err := createTestwebFile(seedsOut, func(out io.Writer) error {
			for _, s := range w.Seeds() {
				if _, err := fmt.Fprintln(out, s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	srv, err := testweb.ServeHostile(ctx, listen, w)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "testweb: serving the hostile web (%s) on %s\n", strings.Join(testweb.HostileCases(), ", "), srv.Addr())
	fmt.Fprintf(out, "testweb: crawl with --resolve '*:%s' --allow-private and the seeds http://CASE.%s/\n", srv.Addr(), testweb.HostileDomain)
	<-srv.Done()
	return nil
}

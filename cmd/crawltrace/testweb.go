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
	var listen, tlsListen, caOut, seedsOut, qualityOut string
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

--tls-listen ADDR serves the same web over HTTPS too, every host with a
certificate for its name signed by a test CA made at start (--ca-out FILE
writes the CA certificate, PEM); point https at it and trust the CA with
  crawltrace crawl --resolve '*:443:TLSADDR' --resolve '*:ADDR' --ca-file FILE ...
It runs until SIGINT or SIGTERM (exit status 130 or 143).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if hostile {
				if tlsListen != "" || caOut != "" {
					return badInput("testweb: --tls-listen and --ca-out are not served with --hostile")
				}
				return serveHostile(cmd, listen, seedsOut)
			}
			if caOut != "" && tlsListen == "" {
				return badInput("testweb: --ca-out needs --tls-listen")
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
			var ca *testweb.CA
			if tlsListen != "" {
				if ca, err = testweb.NewCA(); err != nil {
					return err
				}
				if caOut != "" {
					err := createTestwebFile(caOut, func(out io.Writer) error { _, err := out.Write(ca.PEM()); return err })
					if err != nil {
						return err
					}
				}
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			srv, err := testweb.ServeWeb(ctx, listen, w)
			if err != nil {
				return err
			}
			var tlsSrv *testweb.Server
			if ca != nil {
				if tlsSrv, err = testweb.ServeWebTLS(ctx, tlsListen, w, ca); err != nil {
					srv.Close()
					return err
				}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "testweb: serving %d hosts x %d pages (+%d trap hosts, %d static sites) on %s\n",
				cfg.Hosts, cfg.PagesPerHost, cfg.TrapHosts, len(cfg.Sites), srv.URL())
			if tlsSrv != nil {
				fmt.Fprintf(out, "testweb: serving https on %s\n", tlsSrv.URL())
				if caOut != "" {
					fmt.Fprintf(out, "testweb: test CA certificate written to %s\n", caOut)
				}
				fmt.Fprintf(out, "testweb: crawl with --resolve '*:443:%s' --resolve '*:%s'", tlsSrv.Addr(), srv.Addr())
				if caOut != "" {
					fmt.Fprintf(out, " --ca-file %s", caOut)
				}
				fmt.Fprintf(out, "; seed URLs at %sseeds.txt\n", srv.URL())
			} else {
				fmt.Fprintf(out, "testweb: crawl with --resolve '*:%s'; seed URLs at %sseeds.txt\n", srv.Addr(), srv.URL())
			}
			if seedsOut != "" {
				fmt.Fprintf(out, "testweb: %d seeds written to %s\n", len(w.Seeds()), seedsOut)
			}
			if qualityOut != "" {
				fmt.Fprintf(out, "testweb: %s quality of %d pages written to %s\n", cfg.QualityModel, len(w.Quality()), qualityOut)
			}
			if tlsSrv == nil {
				<-srv.Done()
				return srv.Close()
			}
			select {
			case <-srv.Done():
			case <-tlsSrv.Done():
			}
			return errors.Join(srv.Close(), tlsSrv.Close())
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "listen address (port 0 for any free port)")
	f.StringVar(&tlsListen, "tls-listen", "", "also serve the web over HTTPS on this address, with certificates from a test CA")
	f.StringVar(&caOut, "ca-out", "", "write the test CA's certificate (PEM) to this file, for crawl --ca-file")
	f.IntVar(&cfg.Hosts, "hosts", cfg.Hosts, "hosts of the generated web")
	f.IntVar(&cfg.PagesPerHost, "pages-per-host", cfg.PagesPerHost, "pages per host of the generated web")
	alias(f, "pages", "pages-per-host")
	f.Int64Var(&cfg.Seed, "web-seed", cfg.Seed, "seed of the generated web")
	alias(f, "seed", "web-seed")
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
	f.StringVar(&cfg.QualityModel, "quality-model", cfg.QualityModel, "quality model of the generated web: pagerank or zipf")
	alias(f, "quality", "quality-model")
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
		if err := createTestwebFile(seedsOut, w.WriteSeeds); err != nil {
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

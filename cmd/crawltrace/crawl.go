package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crawltrace/crawltrace/recorder"
	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/quality"
)

func init() {
	register(newCrawlCmd)
}

func newCrawlCmd() *cobra.Command {
	cfg := recorder.DefaultConfig()
	var seedsFile, qualityFile, localWeb string
	var lf launchFlags
	var resolve []string
	var resume bool
	var memory, queueBytes, warcSize string
	cmd := &cobra.Command{
		Use:   "crawl -o DIR [flags] [SEED_URL...]",
		Short: "Crawl from seed URLs and record every URL entering the host splitter",
		Long: `crawl runs a polite crawler (robots.txt, one request per host at a time, a
delay of max(--min-delay, 10 x the last fetch time) between requests to a host,
one persistent connection per host, at most --max-conns open, hosts and URLs
scheduled by --order)
and logs every URL that enters its host splitter to DIR/node-NNN/urls-*.arrows,
every fetch to pages-*.arrows, then writes DIR/manifest.json and DIR/stats.json.

--nodes N runs N nodes in this process; --node-id I --peers A,B,... --listen
ADDR --token T runs node I of a crawl whose nodes exchange URL batches over
HTTP. Connections to private and loopback addresses are refused unless
--allow-private is given. SIGINT/SIGTERM stop the crawl cleanly (the trace
is flushed and readable; exit status 130 or 143); a second signal exits at
once.

` + launchHelp + `

The crawl's state (frontier, DUE, robots.txt and politeness state, counters,
log positions) is checkpointed under DIR/node-NNN/state/ every
--checkpoint-every and at a clean stop. crawl -o DIR --resume continues the
crawl in DIR after a clean stop or kill -9, as the same crawl (same crawl id,
segments and rows numbered on); flags not given again keep their saved
values. Rows logged after the last checkpoint of a killed crawl are moved to
DIR/node-NNN/state/discarded/ and their pages may be fetched again. A
directory that already holds a crawl is refused without --resume. A
directory another process is writing is refused (exit 2, naming its pid
and host). A damaged checkpoint (every file is checksummed) is refused,
naming the file, and so is a closed segment the checkpoint lists that is
missing or has another size or xxhash64 than its writer recorded (the hash
check reads the whole crawl once; --resume-skip-hash checks sizes only).
Resuming a finished crawl prints so and exits 0 unless a larger --max-pages
gives it more to do (a node of a --peers crawl: once every node of the
crawl was over). See docs/crash-safety.md.

A resume may change the limits (--max-pages, --duration), fetching and
politeness (--workers, --max-conns, --min-delay, --max-delay,
--delay-factor, --timeout, --resolve), --memory, --queue-bytes,
--checkpoint-every, --progress, and over --peers --listen, --token and
--peer-timeout. It may not change the crawl's topology,
saved in DIR/node-NNN/state/topology.json when the crawl starts:
` + strings.Join(peer.TopologyFlags(), ", ") + ` (the peers' count and order)
and the fingerprint scheme. A resume that
changes one is refused (exit 2), naming the flag and its saved value.

In a crawl over --peers (which needs --crawl-id, the same on every node),
each node first exchanges its topology with every peer (the handshake,
docs/peers.md); a peer that differs in any of the flags above, or answers
as another node, stops the crawl on both sides with exit status 2. Every
batch for a peer is kept in DIR/node-NNN/state/outbox/ until acknowledged, and resent until it is; a
node restarted with --resume (a new incarnation) resends what it holds and
the crawl goes on. A peer silent for --peer-timeout is declared dead; with
--partitioner consistent its hosts go to the live nodes by the ring
(UbiCrawler's fail-over) and come back when it answers again, logged in
DIR/node-NNN/events.jsonl. Other partitioners have no fail-over: batches wait
for the node to return. --partitioner url is refused for live crawls (it
would fetch one host from several nodes).

--max-pages is a budget for the whole crawl. With --peers it is split
evenly: node I may fetch MAX/N pages (one more when I < MAX mod N); a node
that has used its share stops fetching but keeps exchanging batches, and the
crawl ends when every node has used its share or run out of URLs.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ln, err := lf.resolve(cmd, &cfg)
			if err != nil {
				return err
			}
			if resume {
				if cfg.OutDir == "" {
					return badInput("crawl: --resume needs the crawl directory (-o DIR)")
				}
				if err := mergeSavedConfig(cmd, &cfg); err != nil {
					return err
				}
				if len(args) > 0 || seedsFile != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), "crawl: resuming: seed URLs come from the saved crawl; the ones given are ignored")
					args, seedsFile = nil, ""
				}
				if qualityFile == "" {
					qualityFile = cfg.QualityFile
				}
				if localWeb == "" {
					localWeb = cfg.LocalWeb
				}
			}
			for _, m := range []struct {
				flag, v string
				dst     *int64
			}{{"--memory", memory, &cfg.Memory}, {"--queue-bytes", queueBytes, &cfg.QueueBytes}, {"--warc-file-size", warcSize, &cfg.WARCFileBytes}} {
				if m.v != "" {
					parse := parseBytes
					if m.flag == "--memory" {
						parse = parseMemory
					}
					n, err := parse(m.v)
					if err != nil {
						return badInput("crawl: %s: %v", m.flag, err)
					}
					*m.dst = n
				}
			}
			cfg.Seeds = append(cfg.Seeds, args...)
			if seedsFile != "" {
				s, err := readSeeds(seedsFile)
				if err != nil {
					return err
				}
				cfg.Seeds = append(cfg.Seeds, s...)
			}
			if err := applyLocalWeb(localWeb, &cfg); err != nil {
				return err
			}
			if len(cfg.Seeds) == 0 {
				return badInput("crawl: no seed URLs (give SEED_URL arguments or --seeds FILE)")
			}
			if cfg.OutDir == "" {
				return badInput("crawl: no output directory (-o DIR)")
			}
			if !resume {
				if err := checkCrawlOut(cfg.OutDir); err != nil {
					return err
				}
			}
			if resume && len(resolve) > 0 {
				cfg.Resolve = nil // given again: replaces the saved entries
			}
			for _, r := range resolve {
				h, a, err := fetch.ParseResolve(r)
				if err != nil {
					return badInput("crawl: %v", err)
				}
				if cfg.Resolve == nil {
					cfg.Resolve = map[string]string{}
				}
				cfg.Resolve[h] = a
			}
			if err := lf.apply(&cfg, ln, resume); err != nil {
				return err
			}
			if qualityFile != "" {
				q, err := quality.ReadOracle(qualityFile)
				if err != nil {
					return err
				}
				cfg.Quality = q
				cfg.QualityFile = qualityFile
			}
			cfg.Progress = progressOut(cmd)
			cfg.Log = cmd.ErrOrStderr()
			if cfg.Memory > 0 {
				// The garbage collector keeps the heap near the budget
				// plus the allowance, less what is not heap.
				debug.SetMemoryLimit(cfg.Memory + recorder.MemoryAllowance(&cfg) - 64<<20)
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			defer lf.restoreCores()
			if err := lf.join(ctx, cmd, &cfg, ln); err != nil {
				return err
			}
			res, err := recorder.Run(ctx, cfg)
			if res != nil && res.Finished != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "crawl: %s: nothing to do: %s\n", cfg.OutDir, res.Finished)
				return nil
			}
			if res != nil && res.Stats != nil {
				res.Stats.WriteText(cmd.OutOrStdout())
				fmt.Fprintln(cmd.ErrOrStderr(), "crawl: stopped:", recorder.StopText(res.Stats.StopReason, cfg.MaxPages, cfg.Duration))
				if lf.coresNote != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), lf.coresNote)
				}
			}
			if errors.Is(err, recorder.ErrConfig) {
				return badInput("crawl: %v", err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&cfg.OutDir, "out", "o", "", "output crawl directory")
	f.StringVar(&seedsFile, "seeds", "", "file of seed URLs, one per line (# comments)")
	addLocalWebFlag(f, &localWeb)
	f.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "crawler nodes to run in this process")
	f.IntVar(&cfg.NodeID, "node-id", 0, "this node's id (TCP mode)")
	f.StringVar(&lf.in.Peers, "peers", "", "comma-separated host:port of every node, by id (TCP mode)")
	f.StringVar(&cfg.Listen, "listen", "", "listen address (TCP mode; default this node's --peers entry)")
	f.StringVar(&cfg.Metrics, "metrics", "", "serve the crawl's metrics (Prometheus, /metrics), stats (/stats.json) and a status page (/) on this address while it runs, e.g. 127.0.0.1:9400")
	f.DurationVar(&cfg.MetricsLinger, "metrics-linger", 10*time.Second, "once the crawl is over, wait at most this long for a scraper that scraped during the crawl to scrape the final values")
	f.StringVar(&lf.in.Token, "token", "", "bearer token shared by the nodes (TCP mode; ps shows it: see --token-file)")
	lf.register(f)
	f.DurationVar(&cfg.IdleGrace, "idle-grace", cfg.IdleGrace, "no longer used: the nodes detect the crawl's end")
	f.MarkDeprecated("idle-grace", "the nodes of a TCP crawl now detect its end (docs/peers.md); the flag is ignored")
	f.DurationVar(&cfg.PeerTimeout, "peer-timeout", cfg.PeerTimeout, "TCP mode: declare a peer dead after this long without a heartbeat or acknowledgement")
	f.StringArrayVar(&resolve, "resolve", nil, "HOST:ADDR dial address for HOST ('*' for every host), or HOST:PORT:ADDR for connections to PORT only (tried HOST:PORT, *:PORT, HOST, *), like curl; repeatable")
	f.StringVar(&cfg.CAFile, "ca-file", "", "PEM file of CA certificates trusted for https in addition to the system roots")
	f.BoolVar(&cfg.AllowPrivate, "allow-private", false, "allow connections to private, loopback and link-local addresses")
	f.Int64Var(&cfg.MaxPages, "max-pages", 0, "crawl-wide budget of fetches (0 = no limit); with --peers each node gets an even share")
	f.DurationVar(&cfg.Duration, "duration", 0, "stop after this long (0 = no limit)")
	f.DurationVar(&cfg.MinDelay, "min-delay", cfg.MinDelay, "least delay between requests to one host")
	f.DurationVar(&cfg.MaxDelay, "max-delay", cfg.MaxDelay, "cap on the delay between requests to one host")
	f.Float64Var(&cfg.DelayFactor, "delay-factor", cfg.DelayFactor, "delay = factor x duration of the previous fetch")
	f.IntVar(&cfg.Workers, "workers", cfg.Workers, "fetch workers per node")
	f.StringVar(&cfg.Partitioner, "partitioner", cfg.Partitioner, "host splitter partitioner: host, url, domain or consistent")
	f.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "replicas per node of the consistent partitioner")
	f.StringVar(&cfg.Order, "order", cfg.Order, "crawl order: "+strings.Join(recorder.Orders(), ", ")+" (quality and capability need --quality)")
	f.StringVar(&qualityFile, "quality", "", "page-quality oracle, url<TAB>value lines (logged in the page log; unknown URLs 0)")
	f.IntVar(&cfg.MaxConns, "max-conns", cfg.MaxConns, "connections open at once (one persistent connection per server)")
	f.Uint64Var(&cfg.Seed, "order-seed", 0, "random seed of --order random")
	alias(f, "seed", "order-seed")
	f.StringVar(&cfg.UserAgent, "user-agent", cfg.UserAgent, "User-Agent header (include a contact URL)")
	f.Int64Var(&cfg.MaxBodyBytes, "max-body", cfg.MaxBodyBytes, "cap on the bytes read per page")
	f.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "timeout of one fetch")
	f.StringVar(&cfg.PolitenessKey, "politeness-key", cfg.PolitenessKey, "what one request at a time and the delays apply to: host (every origin of a host name) or ip (every host resolving to one address)")
	f.DurationVar(&cfg.RobotsTTL, "robots-ttl", cfg.RobotsTTL, "fetch a host's robots.txt again after this long (RFC 9309: at most 24h)")
	f.DurationVar(&cfg.RobotsRetry, "robots-retry", cfg.RobotsRetry, "first retry delay after a robots.txt 5xx or network error (doubled each time; host disallowed meanwhile)")
	f.IntVar(&cfg.MaxRedirects, "max-redirects", cfg.MaxRedirects, "redirects followed per chain from its first URL")
	f.DurationVar(&cfg.MaxRetryAfter, "max-retry-after", cfg.MaxRetryAfter, "cap on the wait a 429 or 503's Retry-After asks of its host (0 = Retry-After not heeded)")
	f.IntVar(&cfg.RetryAfterTries, "retry-after-tries", cfg.RetryAfterTries, "times a URL answered 429 or 503 with Retry-After is fetched again")
	f.IntVar(&cfg.SplitterCache, "splitter-cache", 0, "entries of the CLOCK cache in front of peer sends (0 = off)")
	f.StringVar(&cfg.CrawlID, "crawl-id", "", "crawl id written into the trace (default: slurm-$SLURM_JOB_ID in a Slurm job, else the start time)")
	f.StringVar(&cfg.Writer.Compression, "compression", "", "segment compression: none, zstd or lz4")
	f.StringVar(&cfg.DUE, "due", cfg.DUE, "duplicate URL eliminator: memory (a fingerprint table), disk (Mercator's: sorted file, buffer, CLOCK cache), or auto (memory while it fits a quarter of --memory, then disk)")
	f.IntVar(&cfg.DUECache, "due-cache", cfg.DUECache, "entries of the disk DUE's CLOCK cache (0 = none)")
	f.IntVar(&cfg.DUEBuffer, "due-buffer", cfg.DUEBuffer, "new fingerprints the disk DUE buffers before merging them into its file")
	f.IntVar(&cfg.MaxLinksPerPage, "max-links-per-page", 0, "links taken from one page; the rest are counted in stats.json (0 = no cap)")
	f.StringVar(&memory, "memory", "", "memory budget of the crawl's growing state, e.g. 512MiB, 4GiB, or auto (what the machine has available; bounds the URL queue; default none)")
	f.StringVar(&queueBytes, "queue-bytes", "", "bytes of extracted URLs that may wait for the host splitter (default 64MiB, at most --memory/8)")
	f.BoolVar(&cfg.WARC, "warc", false, "also keep every fetch as WARC records (robots.txt and redirects included), in -o DIR/node-NNN/warc/*.warc.gz")
	f.StringVar(&warcSize, "warc-file-size", "", "size past which a node's WARC file is rotated (default 1GiB)")
	f.BoolVar(&resume, "resume", false, "continue the crawl in -o DIR from its last checkpoint")
	f.BoolVar(&cfg.ResumeSkipHash, "resume-skip-hash", false, "on --resume, check the closed segments' sizes only, not their xxhash64 (a read of the whole crawl: ~0.05-0.3 s per 256 MiB segment, ~2 s from a spinning disk)")
	f.DurationVar(&cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, "interval between checkpoints of the crawl state (negative: only at a clean stop)")
	return cmd
}

// mergeSavedConfig replaces cfg with the configuration saved by the crawl
// in cfg.OutDir, then applies again the flags given on this command line
// that bind into cfg. Flags bound elsewhere (seeds, the launch flags of
// launch.go, resolve, quality) are handled by the caller.
func mergeSavedConfig(cmd *cobra.Command, cfg *recorder.Config) error {
	saved, err := recorder.LoadConfig(cfg.OutDir, cfg.NodeID)
	if err != nil {
		if errors.Is(err, recorder.ErrConfig) {
			return badInput("crawl: %v", err)
		}
		return err
	}
	given := map[string]string{}
	cmd.Flags().Visit(func(fl *pflag.Flag) { given[fl.Name] = fl.Value.String() })
	*cfg = saved
	cfg.Resume = true
	for name, v := range given {
		switch name {
		case "seeds", "peers", "peers-file", "rendezvous", "token", "token-file", "resolve", "quality", "resume":
			continue
		}
		if err := cmd.Flags().Set(name, v); err != nil {
			return badInput("crawl: --%s: %v", name, err)
		}
	}
	return nil
}

// readSeeds reads one URL per line, skipping blank lines and # comments.
func readSeeds(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badInput("crawl: seeds file %s: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("crawl: seeds file %s: %w", path, err)
	}
	return out, nil
}

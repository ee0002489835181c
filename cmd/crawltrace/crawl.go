package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crawltrace/crawltrace/recorder"
)

func init() {
	register(newCrawlCmd)
}

func newCrawlCmd() *cobra.Command {
	cfg := recorder.DefaultConfig()
	var seedsFile, peers, qualityFile string
	var resolve []string
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

In a crawl over --peers, every batch for a peer is kept in
DIR/node-NNN/state/outbox/ until acknowledged, and resent until it is; a
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
			cfg.Seeds = append(cfg.Seeds, args...)
			if seedsFile != "" {
				s, err := readSeeds(seedsFile)
				if err != nil {
					return err
				}
				cfg.Seeds = append(cfg.Seeds, s...)
			}
			if len(cfg.Seeds) == 0 {
				return badInput("crawl: no seed URLs (give SEED_URL arguments or --seeds FILE)")
			}
			if cfg.OutDir == "" {
				return badInput("crawl: no output directory (-o DIR)")
			}
			for _, r := range resolve {
				h, a, err := recorder.ParseResolve(r)
				if err != nil {
					return badInput("crawl: %v", err)
				}
				if cfg.Resolve == nil {
					cfg.Resolve = map[string]string{}
				}
				cfg.Resolve[h] = a
			}
			if peers != "" {
				cfg.Peers = strings.Split(peers, ",")
			}
			if qualityFile != "" {
				q, err := recorder.ReadQuality(qualityFile)
				if err != nil {
					return err
				}
				cfg.Quality = q
			}
			cfg.Progress = progressOut(cmd)
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			res, err := recorder.Run(ctx, cfg)
			if res != nil && res.Stats != nil {
				res.Stats.WriteText(cmd.OutOrStdout())
				fmt.Fprintln(cmd.ErrOrStderr(), "crawl: stopped:", stopReason(res.Stats))
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
	f.IntVar(&cfg.Nodes, "nodes", cfg.Nodes, "nodes to run in this process")
	f.IntVar(&cfg.NodeID, "node-id", 0, "this node's id (TCP mode)")
	f.StringVar(&peers, "peers", "", "comma-separated host:port of every node, by id (TCP mode)")
	f.StringVar(&cfg.Listen, "listen", "", "listen address (TCP mode; default this node's --peers entry)")
	f.StringVar(&cfg.Token, "token", "", "bearer token shared by the nodes (TCP mode)")
	f.DurationVar(&cfg.IdleGrace, "idle-grace", cfg.IdleGrace, "TCP mode: stop after all nodes are idle this long")
	f.DurationVar(&cfg.PeerTimeout, "peer-timeout", cfg.PeerTimeout, "TCP mode: declare a peer dead after this long without a heartbeat or acknowledgement")
	f.BoolVar(&cfg.Resume, "resume", false, "continue the crawl in OutDir")
	f.StringArrayVar(&resolve, "resolve", nil, "HOST:ADDR dial address for HOST ('*' for every host), like curl; repeatable")
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
	f.Uint64Var(&cfg.Seed, "seed", 0, "random seed of --order random")
	f.StringVar(&cfg.UserAgent, "user-agent", cfg.UserAgent, "User-Agent header (include a contact URL)")
	f.Int64Var(&cfg.MaxBodyBytes, "max-body", cfg.MaxBodyBytes, "cap on the bytes read per page")
	f.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "timeout of one fetch")
	f.StringVar(&cfg.PolitenessKey, "politeness-key", cfg.PolitenessKey, "what one request at a time and the delays apply to: host (every origin of a host name) or ip (every host resolving to one address)")
	f.DurationVar(&cfg.RobotsTTL, "robots-ttl", cfg.RobotsTTL, "fetch a host's robots.txt again after this long (RFC 9309: at most 24h)")
	f.DurationVar(&cfg.RobotsRetry, "robots-retry", cfg.RobotsRetry, "first retry delay after a robots.txt 5xx or network error (doubled each time; host disallowed meanwhile)")
	f.IntVar(&cfg.MaxRedirects, "max-redirects", cfg.MaxRedirects, "redirects followed per chain from its first URL")
	f.IntVar(&cfg.SplitterCache, "splitter-cache", 0, "entries of the CLOCK cache in front of peer sends (0 = off)")
	f.StringVar(&cfg.CrawlID, "crawl-id", "", "crawl id written into the trace (default: start time)")
	f.StringVar(&cfg.Writer.Compression, "compression", "", "segment compression: none, zstd or lz4")
	return cmd
}

// stopReason says in words why a crawl stopped.
func stopReason(st *recorder.Stats) string {
	switch st.StopReason {
	case recorder.StopDone:
		return "frontier empty (no URL left to fetch)"
	case recorder.StopMaxPages:
		return fmt.Sprintf("max-pages (%d pages fetched)", st.FetchAttempts)
	case recorder.StopDuration:
		return fmt.Sprintf("duration (after %.0fs)", st.Seconds)
	case recorder.StopCanceled:
		return "signal"
	}
	return st.StopReason
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

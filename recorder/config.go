package recorder

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/urlfilter"
)

// ErrConfig marks an invalid [Config]; the CLI maps it to a usage error.
var ErrConfig = errors.New("recorder: bad configuration")

// Crawl orders: how the server queue and each server's URL queue are
// served (two-level scheduling after Cao, Jiang and Singh; see
// [Config.Order] and recorder/frontier, which defines them).
const (
	OrderBFS         = frontier.OrderBFS
	OrderDFS         = frontier.OrderDFS
	OrderRandom      = frontier.OrderRandom
	OrderPerformance = frontier.OrderPerformance
	OrderQuality     = frontier.OrderQuality
	OrderCapability  = frontier.OrderCapability
)

// Duplicate URL eliminators ([Config.DUE]).
const (
	DUEAuto   = "auto"   // memory while the table fits Memory/4, then disk
	DUEMemory = "memory" // an in-memory fingerprint table
	DUEDisk   = "disk"   // Mercator's disk-based DUE: sorted file, buffer, cache
)

// Orders lists the crawl orders.
func Orders() []string {
	return []string{OrderBFS, OrderDFS, OrderRandom, OrderPerformance, OrderQuality, OrderCapability}
}

// Config configures a crawl. Build it with [DefaultConfig] and change
// fields; the zero value is not usable. A Config is read, never written, by
// the crawler.
type Config struct {
	// OutDir receives node-NNN/ segment directories, manifest.json and
	// stats.json. Required.
	OutDir string
	// Seeds are the start URLs. Each node logs and enqueues only the seeds
	// its partitioner assigns to it, so every node may be given all seeds.
	Seeds []string

	// Nodes is the number of crawler nodes run in this process, connected
	// by an in-memory transport. Ignored when Peers is set.
	Nodes int
	// NodeID is this process's node when Peers is set (TCP mode).
	NodeID int
	// Peers lists host:port of every node's listener, indexed by node id
	// (this node's own entry included). A non-empty Peers selects TCP mode:
	// one node per process, batches sent as Arrow IPC streams over HTTP.
	Peers []string
	// Listen is the address this node's HTTP listener binds (TCP mode);
	// default Peers[NodeID].
	Listen string
	// Token is the bearer token every peer request must carry (TCP mode).
	// It is a secret, so the saved configuration (state/config.json) leaves
	// it out: a resumed node is given it again.
	Token string `json:"-"`
	// IdleGrace is no longer used: the nodes of a TCP crawl detect its end
	// (docs/peers.md, "Termination") rather than waiting for a quiet
	// period. It is kept so that configurations saved by earlier versions
	// still read, and --idle-grace is accepted (hidden) for the same
	// reason.
	IdleGrace time.Duration
	// PeerTimeout is how long a peer may go without answering a heartbeat
	// or acknowledging a batch before the failure detector declares it
	// dead (TCP mode). With Partitioner "consistent" its hosts then go to
	// the live nodes by the ring, and come back when it answers again;
	// with the other partitioners there is no fail-over: batches for it
	// wait until it is back. Default 30s.
	PeerTimeout time.Duration
	// Resolve maps host names to dial addresses, like curl --resolve
	// (see fetch.ParseResolve): "example.com" -> "127.0.0.1:8080" maps every
	// port of example.com, "example.com:443" -> "127.0.0.1:8443" only
	// connections to its port 443; the host "*" matches every host. A
	// connection to HOST:PORT takes the first entry of "HOST:PORT",
	// "*:PORT", "HOST", "*". The address may omit the port ("10.0.0.1"),
	// keeping the URL's port.
	Resolve map[string]string
	// CAFile is a PEM file of CA certificates the crawler trusts for
	// https, in addition to the system's roots (a test web's own CA).
	// Read when the crawl starts; a file that cannot be read or holds no
	// certificate is an [ErrConfig]. Saved with the crawl's
	// configuration, so a resumed crawl reads it again.
	CAFile string
	// AllowPrivate permits connections to loopback, private, link-local,
	// multicast and unspecified addresses (refused by default, checked on
	// the resolved IP at dial time).
	AllowPrivate bool

	// MaxPages is the crawl's budget of fetch attempts (robots.txt
	// excluded); 0 = no limit. In one process it is shared by all its
	// nodes and the crawl stops when it is used. In TCP mode (Peers) it is
	// the budget of the whole crawl, split evenly: node i may fetch
	// MaxPages/N pages, one more when i < MaxPages mod N; a node that has
	// used its share stops fetching but keeps exchanging batches, and the
	// crawl ends (reason max-pages) when every node has used its share or
	// has nothing left to fetch, with every batch delivered. A resumed
	// crawl starts from the fetches its checkpoint counted.
	MaxPages int64
	// Duration stops the crawl after this long; 0 = no limit.
	Duration time.Duration

	// MinDelay is the least time between two requests to one host.
	// Default 1s (use 0 for a local test web).
	MinDelay time.Duration
	// MaxDelay caps the delay between two requests to one host, including
	// a robots.txt Crawl-delay. Default 30s.
	MaxDelay time.Duration
	// DelayFactor k: the next request to a host waits k times the duration
	// of the previous fetch (Mercator's politeness rule). Default 10.
	DelayFactor float64
	// Workers is the number of fetch workers per node. Default 64.
	Workers int
	// MaxConns caps the connections one node keeps open at once (each
	// node, like each crawling process of a distributed crawl, has its own
	// cap). A server's requests go over one persistent HTTP/1.1
	// connection (never two at once) for as long as the server keeps it
	// open and has URLs queued; a server without one waits for a free
	// slot, and an open connection is never closed for a higher-ranked
	// server. Default 64 (0 also means 64).
	MaxConns int
	// Order is the crawl order, one of [Orders]: OrderBFS (default),
	// OrderDFS, OrderRandom, OrderPerformance, OrderQuality or
	// OrderCapability.
	Order string
	// Quality is the page-quality oracle, URL (normalized) to value, for
	// OrderQuality and OrderCapability and the page log's quality column
	// (see quality.ReadOracle); URLs it does not list have quality 0. Nil means
	// no oracle: the quality column is null. Read, never written. It is not
	// saved with the crawl's configuration; QualityFile is.
	Quality map[string]float64 `json:"-"`
	// QualityFile is the file Quality was read from, saved with the
	// crawl's configuration so that a resumed crawl reads it again. The
	// crawler itself does not read it.
	QualityFile string
	// Seed seeds OrderRandom (combined with the node id).
	Seed uint64

	// Partitioner names the host-splitter partitioner (recorder/partition):
	// "host" (default), "url", "domain" or "consistent".
	Partitioner string
	// Replicas is the number of replicas per node of the consistent
	// partitioner. Default 100 (0 keeps the partitioner's default).
	Replicas int

	// UserAgent is sent with every request; its first product token
	// ("crawltrace" in "crawltrace/0.1 (+URL)") is matched against
	// robots.txt groups. It should carry a contact URL.
	UserAgent string
	// MaxBodyBytes caps the body read per page, after decompression.
	// Default 16 MiB. Longer pages are truncated and marked in the page log.
	MaxBodyBytes int64
	// Timeout bounds one fetch (connect, headers and body). Default 30s.
	Timeout time.Duration

	// PolitenessKey is what one queue, one request in flight and one delay
	// apply to: PolitenessHost (default; every origin of a host name) or
	// PolitenessIP (every host name resolving to one address).
	PolitenessKey string
	// RobotsTTL is how long a robots.txt is used before it is fetched
	// again (RFC 9309: at most 24 hours). Default 24h.
	RobotsTTL time.Duration
	// RobotsRetry is the wait before fetching again a robots.txt that
	// answered 5xx or could not be fetched; it doubles on each failure,
	// up to RobotsRetries retries. The origin is disallowed meanwhile, and
	// after the last retry until RobotsTTL. Default 1m and 4.
	RobotsRetry   time.Duration
	RobotsRetries int
	// MaxRetryAfter caps the wait a 429 or 503 response's Retry-After
	// asks of its host before the next request (0: Retry-After is not
	// heeded). A URL so answered is fetched again up to RetryAfterTries
	// times, each try a row of the page log. Default 1h and 3.
	MaxRetryAfter   time.Duration
	RetryAfterTries int
	// MaxRedirects caps a redirect chain: the redirects followed from the
	// first URL, counted over the redirect URLs logged. The redirect that
	// would exceed it is not followed (Stats.RedirectsCut). Default 20;
	// 0 follows none.
	MaxRedirects int
	// MaxLinksPerPage caps the links taken from one page (the redirect
	// target aside); the rest are counted in [Stats] (links_dropped) and
	// neither logged nor followed. 0 = no cap.
	MaxLinksPerPage int
	// QueueBytes bounds the bytes of extracted URLs waiting for the host
	// splitter, per node: workers wait (fetching slows) while it is full.
	// Default 64 MiB; with Memory set, at most Memory/8.
	QueueBytes int64
	// Memory is the memory budget of the crawler's growing state, in
	// bytes: it caps QueueBytes and sizes the in-memory part of the
	// frontier. 0 = no budget.
	Memory int64

	// Local, when set, is a web answered in process, crawled
	// deterministically on a virtual clock ([LocalWeb]): the same
	// configuration gives the same rows, whatever the machine. Nodes run
	// in this process (not with Peers); Duration is virtual time; only the
	// final checkpoint is taken.
	Local *LocalWeb `json:"-"`
	// LocalWeb describes the web of Local for the caller that made it,
	// saved with the crawl's configuration so that a resumed crawl can
	// make it again (the CLI's --local-web). The crawler itself does not
	// read it.
	LocalWeb string `json:",omitempty"`

	// Filter configures the URL filter applied to extracted links and
	// redirects before the host splitter.
	Filter urlfilter.Config

	// SplitterCache is the number of entries of the CLOCK cache in front of
	// the peer sends (URLs found in it are not sent again); 0 = off.
	SplitterCache int
	// DUE selects the duplicate URL eliminator (recorder/due): DUEAuto
	// (default), DUEMemory, an in-memory table of fingerprints, or DUEDisk,
	// Mercator's disk-based DUE (a sorted fingerprint file under
	// node-NNN/state/due/, a buffer of DUEBuffer new fingerprints merged
	// into it when full, and a CLOCK cache of DUECache fingerprints in
	// front). DUEAuto is the in-memory table while it takes at most a
	// quarter of Memory (always, without Memory), and from then on the
	// disk DUE, loaded with the table's fingerprints.
	DUE string
	// DUECache is the number of entries of the disk DUE's CLOCK cache
	// (0 = no cache). Default 1<<16.
	DUECache int
	// DUEBuffer is the number of new fingerprints the disk DUE buffers
	// before merging them into its file. Default 1<<20.
	DUEBuffer int

	// SplitterBatch is the number of URLs per batch sent to a peer.
	// Default 1024.
	SplitterBatch int

	// CrawlID is written into every file's metadata; default the start
	// time. A resumed crawl keeps its saved id. TCP mode needs it set,
	// the same on every node (the peer handshake compares it).
	CrawlID string

	// Resume continues the crawl in OutDir from its nodes' last complete
	// checkpoints (see recorder/checkpoint): same crawl id, segments numbered
	// and rows sequenced after the ones already there. Without Resume, an
	// OutDir that already holds a crawl is refused. The caller merges the
	// saved configuration ([LoadConfig]) with what it changes. In TCP mode
	// the node also resends the batches its checkpoint's outbox holds; every start is a
	// new incarnation (epoch).
	Resume bool `json:"-"`
	// ResumeSkipHash makes a resume check the closed segments its
	// checkpoint lists for their recorded size only. By default it also
	// checks each against its recorded xxhash64 (tracefile.RestoreLog),
	// which reads every closed segment once: about 50 ms per 256 MiB
	// segment from the page cache, 0.1 to 0.3 s read cold from an SSD,
	// about 2 s from a spinning disk. A mismatch refuses the resume.
	ResumeSkipHash bool `json:"-"`
	// CheckpointEvery is the interval between checkpoints of the crawl's
	// state (one is also taken at every clean stop). Default 60s; a
	// negative value takes only the final one.
	CheckpointEvery time.Duration
	// Writer configures the trace segment writers.
	Writer tracefile.WriterConfig
	// NoTrace turns the URL and page logs off (for measuring their cost);
	// the crawl is otherwise unchanged.
	NoTrace bool
	// WARC writes every fetch that got a response (robots.txt and
	// redirects included) as WARC records, one file series per node in
	// node-NNN/warc/ (recorder/warcout), part of the crawl's checkpointed
	// state. WARCFileBytes is the size past which a file is rotated;
	// default 1 GiB.
	WARC          bool
	WARCFileBytes int64

	// Now returns the current time; default time.Now. Inject it to make
	// log timestamps deterministic in tests.
	Now func() time.Time `json:"-"`
	// Progress receives progress lines when non-nil: pages fetched, rate,
	// and percentage and ETA when MaxPages is set. A *progress.Sink (what
	// the CLI passes under --progress) chooses between a live line and a
	// line every 10 s; any other writer gets a live, carriage-return
	// updated line.
	Progress io.Writer `json:"-"`
	// Log receives notices about the crawl's saved state when non-nil,
	// one line each: a resume that found no checkpoint and starts again,
	// a resume of a finished crawl. The CLI passes stderr.
	Log io.Writer `json:"-"`
	// ProgressEvery is how often the counts are sampled for Progress.
	// Default 1s.
	ProgressEvery time.Duration

	// Metrics, when set, is the address the crawl serves its metrics
	// (Prometheus' text format on /metrics), its stats (/stats.json) and
	// a status page (/) on while it runs (recorder/monitor,
	// docs/monitoring.md). MetricsLinger bounds how long the crawl, once
	// over, waits for a scraper that scraped during the crawl to scrape
	// its final values. Neither is saved: a resume is given them again.
	Metrics       string        `json:"-"`
	MetricsLinger time.Duration `json:"-"`

	// dialHook, when set, is called with every dial address (tests).
	dialHook func(addr string)
	// lookup, when set, replaces DNS for ip-mode politeness keys (tests).
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// tlsConfig, when set, is the client's TLS configuration (tests trust
	// an httptest server's certificate with it).
	tlsConfig *tls.Config
	// listener, when set, is used instead of listening on Listen (tests).
	listener net.Listener
}

// DefaultUserAgent identifies the crawler with a contact URL.
const DefaultUserAgent = "crawltrace/0.1 (+https://github.com/crawltrace/crawltrace)"

// DefaultConfig returns a Config with the defaults documented on its fields.
func DefaultConfig() Config {
	return Config{
		Nodes:         1,
		PeerTimeout:   30 * time.Second,
		MinDelay:      time.Second,
		MaxDelay:      30 * time.Second,
		DelayFactor:   10,
		Workers:       64,
		MaxConns:      64,
		Order:         OrderBFS,
		Partitioner:   "host",
		Replicas:      100,
		UserAgent:     DefaultUserAgent,
		MaxBodyBytes:  16 << 20,
		Timeout:       30 * time.Second,
		PolitenessKey: PolitenessHost,
		RobotsTTL:     24 * time.Hour,
		RobotsRetry:   time.Minute,
		RobotsRetries: 4,
		MaxRedirects:  20,
		Filter:        urlfilter.DefaultConfig(),
		SplitterBatch: 1024,
		QueueBytes:    64 << 20,
		DUE:           DUEAuto,
		DUECache:      1 << 16,
		DUEBuffer:     1 << 20,
		Writer:        tracefile.DefaultWriterConfig(),
		ProgressEvery: time.Second,

		CheckpointEvery: time.Minute,

		MaxRetryAfter:   time.Hour,
		RetryAfterTries: 3,
	}
}

// logf writes one notice line to c.Log.
func (c *Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

func (c *Config) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	if c.OutDir == "" {
		return bad("no output directory")
	}
	if len(c.Seeds) == 0 {
		return bad("no seed URLs")
	}
	if len(c.Peers) > 0 {
		if c.NodeID < 0 || c.NodeID >= len(c.Peers) {
			return bad("node id %d out of range for %d peers", c.NodeID, len(c.Peers))
		}
		if c.Token == "" {
			return bad("TCP mode needs a token")
		}
		if c.CrawlID == "" && !c.Resume {
			// The default, the start time, would differ between nodes,
			// and the peer handshake compares crawl ids.
			return bad("TCP mode needs a crawl id (--crawl-id), the same for every node")
		}
		if c.PeerTimeout < 0 {
			return bad("peer timeout must not be negative")
		}
		for i, p := range c.Peers {
			if _, _, err := net.SplitHostPort(p); err != nil {
				return bad("peer %d %q is not host:port", i, p)
			}
		}
	} else if c.Nodes < 1 || c.Nodes > 1<<15 {
		return bad("nodes must be between 1 and 32768, not %d", c.Nodes)
	}
	if c.Partitioner == "url" && (len(c.Peers) > 1 || (len(c.Peers) == 0 && c.Nodes > 1)) {
		return bad(`partitioner "url" splits a host's URLs over several nodes, so two nodes would fetch one host; a live crawl needs "host", "domain" or "consistent" (use "url" with crawltrace scenario)`)
	}
	if err := c.validateLocal(); err != nil {
		return err
	}
	if c.Workers < 1 {
		return bad("workers must be at least 1, not %d", c.Workers)
	}
	if c.MaxConns < 0 {
		return bad("max connections must not be negative, not %d", c.MaxConns)
	}
	switch c.Order {
	case OrderBFS, OrderDFS, OrderRandom, OrderPerformance:
	case OrderQuality, OrderCapability:
		if c.Quality == nil {
			return bad("order %q needs a quality oracle", c.Order)
		}
	default:
		return bad("unknown order %q (want %s)", c.Order, strings.Join(Orders(), ", "))
	}
	if c.MinDelay < 0 || c.MaxDelay < 0 || c.DelayFactor < 0 {
		return bad("delays must not be negative")
	}
	if c.MaxBodyBytes <= 0 {
		return bad("max body bytes must be positive")
	}
	if c.Timeout <= 0 {
		return bad("timeout must be positive")
	}
	switch c.DUE {
	case "", DUEAuto, DUEMemory, DUEDisk:
	default:
		return bad("unknown DUE %q (want %s, %s or %s)", c.DUE, DUEAuto, DUEMemory, DUEDisk)
	}
	if c.DUECache < 0 || c.DUEBuffer < 0 {
		return bad("DUE cache and buffer sizes must not be negative")
	}
	if c.MaxLinksPerPage < 0 || c.QueueBytes < 0 || c.Memory < 0 {
		return bad("max links per page, queue bytes and memory must not be negative")
	}
	if c.SplitterCache < 0 {
		return bad("splitter cache size must not be negative")
	}
	switch c.PolitenessKey {
	case "", PolitenessHost, PolitenessIP:
	default:
		return bad("unknown politeness key %q (want %s or %s)", c.PolitenessKey, PolitenessHost, PolitenessIP)
	}
	if c.RobotsTTL < 0 || c.RobotsRetry < 0 || c.RobotsRetries < 0 {
		return bad("robots.txt TTL and retries must not be negative")
	}
	if c.MaxRetryAfter < 0 || c.RetryAfterTries < 0 {
		return bad("max Retry-After and its tries must not be negative")
	}
	if c.MaxRedirects < 0 {
		return bad("max redirects must not be negative, not %d", c.MaxRedirects)
	}
	if c.UserAgent == "" {
		return bad("empty user agent")
	}
	for h, a := range c.Resolve {
		if h == "" || a == "" {
			return bad("empty --resolve entry")
		}
	}
	return nil
}

// MemoryAllowance is the documented constant by which a crawl's resident
// memory may exceed its [Config.Memory] budget: 128 MiB for the runtime,
// the binary, goroutine stacks, the HTTP client and the log writers'
// batches, and per fetch worker six times MaxBodyBytes (the body buffer
// and its growth, and the link extractor's per-page set of distinct
// links: about 800,000 for a 16 MiB page of short links). The CLI sets
// the Go heap's soft limit to Memory + MemoryAllowance - 64 MiB.
func MemoryAllowance(c *Config) int64 {
	return 128<<20 + int64(c.Workers)*6*c.MaxBodyBytes
}

// queueBytes is the splitter queue's byte budget (0: none).
func (c *Config) queueBytes() int64 {
	q := c.QueueBytes
	if c.Memory > 0 && (q <= 0 || q > c.Memory/8) {
		q = c.Memory / 8
	}
	return q
}

// Package recorder is crawltrace's crawler: a polite, multi-node web crawler
// built like Mercator whose host splitter logs every URL it receives, which
// is the raw trace the rest of crawltrace condenses and replays.
//
// # Pipeline (per node)
//
//		frontier -> fetch -> extract -> normalize -> filter -> host splitter (logged) -> DUE -> frontier
//		                                                            |  \
//		                                                            |   `-> peer node (batches) -> its DUE -> its frontier
//		                                                            `-> raw URL log (tracefile)
//
//	  - Frontier: a two-level schedule (Cao, Jiang and Singh): a queue of
//	    servers (by politeness key: the host name, every origin of it
//	    together, or with PolitenessKey "ip" the resolved address) and per
//	    server a queue of URLs,
//	    both ordered by [Config.Order]: "bfs" (both FIFO), "dfs" (URLs LIFO),
//	    "random" (seeded), "performance" (servers by P/T, from smoothed
//	    connection and response times and requests per connection),
//	    "quality" (URLs by the [Config.Quality] oracle, servers by their best
//	    URL) or "capability" (servers by the quality of their next P URLs per
//	    expected time T). A server is fetched over one persistent HTTP/1.1
//	    connection at a time, kept until the server closes it or its queue
//	    runs dry, and never preempted; at most [Config.MaxConns] connections
//	    are open at once. [Config.Workers] fetch workers take the first
//	    ready server.
//	    With [Config.Memory] set, the FIFO and LIFO server queues (bfs,
//	    performance, dfs) keep a bounded head and tail in memory and spill
//	    their middle to disk (recorder/frontier, Mercator's back-end queues
//	    after BUbiNG's virtualizer) once the URLs queued in memory pass
//	    Memory/2; see frontier/schedule_spill.go for the memory bound.
//	  - Politeness: a host leaves the heap while a worker holds it, so a host
//	    never has two requests in flight; its next request waits
//	    max(MinDelay, DelayFactor x duration of the previous fetch,
//	    robots.txt Crawl-delay), capped at MaxDelay.
//	  - robots.txt is fetched per origin before its first page, through
//	    the same politeness, following up to five redirects (each hop in
//	    the page log, and each a task queued at the server it goes to,
//	    taking that server's turn and delay), and fetched again after
//	    RobotsTTL (24h). It is matched with grobotstxt (Google's matcher)
//	    against the User-Agent's product token; Crawl-delay is taken from
//	    the groups grobotstxt would select. Per RFC 9309, 4xx (or a longer
//	    redirect chain) means allow all; 5xx or no answer means disallow
//	    all for that origin: its URLs are parked while robots.txt is
//	    fetched again after RobotsRetry (doubling), up to RobotsRetries
//	    times (once for an unreachable origin), before they are excluded
//	    until the TTL; the host's other origins go on meanwhile
//	    (frontier/schedule_robots.go). Exclusion applies at fetch time; excluded
//	    URLs were logged at the splitter like any other.
//	  - Fetch: net/http with keep-alive and timeouts. A page whose declared
//	    Content-Type is not HTML is logged without reading its body. Bodies
//	    in gzip, deflate or br are decoded (requested or not; another
//	    coding is an error), capped at MaxBodyBytes after decoding
//	    (truncation is recorded in the page log); redirects are not followed: the Location is resolved,
//	    normalized and filtered and enters the host splitter as
//	    kind=redirect, unless its chain already took MaxRedirects hops. By default the dialer refuses every address the
//	    IANA special-purpose registries do not mark globally reachable
//	    (loopback, private, link-local, CGN, benchmarking, documentation,
//	    reserved, multicast...) and IPv6 forms embedding such an IPv4
//	    address (NAT64, 6to4, Teredo, IPv4-compatible; see fetch/ssrf.go),
//	    checked on the address actually dialled (so a public name resolving to 127.0.0.1 is
//	    refused too); AllowPrivate lifts this. Resolve maps host names
//	    (for every port, or per port) to dial addresses, like curl --resolve.
//	  - Extraction (recorder/extract) emits every URL-bearing attribute
//	    occurrence, duplicates included, absolute and normalized
//	    (recorder/urlnorm); the filter (recorder/urlfilter) drops traps and
//	    out-of-scope URLs.
//	  - Queue to the host splitter: a page's URLs go to the splitter in
//	    parts of at most 4096, each waiting for room in a byte budget
//	    ([Config.QueueBytes], at most Memory/8), so a flood of links slows
//	    fetching instead of growing memory; [Config.MaxLinksPerPage] caps
//	    the links taken from one page.
//	  - Host splitter: one goroutine per node owns the URL and page log
//	    writers, the DUE and the splitter cache. Workers send a page's whole
//	    URL slice in one message on a bounded channel. Every URL (seeds,
//	    links, redirects) is assigned a node by the partitioner
//	    (recorder/partition) and appended to the node's raw URL log first —
//	    before any cache or duplicate check — with its time, kind, tag,
//	    source page id, worker and destination. URLs this node owns go
//	    through the DUE into the frontier; others pass the optional CLOCK
//	    splitter cache (hits are not sent again; counts in [Stats]) and are
//	    sent to their owner in batches. URLs received from peers are not
//	    logged again: each URL is logged once, by the node that found it.
//	  - DUE (recorder/due): [Config.DUE] "memory" is [DUE], an
//	    open-addressing table of 64-bit xxHash fingerprints, about 10 bytes
//	    per URL; "disk" is Mercator's disk-based DUE: a sorted fingerprint
//	    file, a buffer of new fingerprints merged into it when full, and a
//	    CLOCK cache of popular fingerprints in front, whose hit rate
//	    stats.json reports. On one node the URLs reaching the DUE are the
//	    node's full trace, in order, so that hit rate is what a replay of
//	    the condensed trace through CLOCK of the same size computes. The
//	    default, "auto", is the table while it fits a quarter of
//	    [Config.Memory], then the disk DUE.
//
// # Nodes and transports
//
// Config.Nodes > 1 runs that many nodes in one process over an in-memory
// [peer.Transport]; the crawl ends exactly when no URL is queued, fetched,
// waiting in a splitter channel or in transit anywhere. With Config.Peers
// each process runs one node and batches travel as Arrow IPC streams
// ([peer.BatchContentType], one small record batch of url, kind and source per
// request) over HTTP POST to [peer.PathBatch], authenticated with a bearer
// token (401 without it).
//
// # Restarts and fail-over (TCP mode)
//
// Every start of a node is a new incarnation: state/epoch is bumped, and a
// batch id is (from, epoch, seq). The splitter records the ids it
// processed per sending incarnation ([peer.BatchLog]) and admits each id once.
// Every batch is written to the node's outbox (state/outbox) before it is
// queued, sent in order and retried with backoff until the receiver
// acknowledges it; an acknowledged batch is kept until the receiver reports
// it durable (its checkpoint covers it) and is sent again when the receiver
// restarts, since a restarted receiver lost what it had admitted. A node
// restarted with Resume resends the unacknowledged batches of its outbox.
// A TCP crawl ends when two polls IdleGrace apart find every live node
// idle, agreeing on each other's incarnations and the live set, with
// unchanged per-incarnation counters (see watchTermination), or on a
// budget, a duration or a signal. At a stop the node refuses further
// batches (their senders keep them), delivers its queues for a while, and
// leaves what is unacknowledged in its outbox for Resume (Stats.OutboxLeft).
//
// A failure detector polls every peer's status; a peer silent for
// PeerTimeout is declared dead. With the "consistent" partitioner its hosts
// go to the live nodes by the ring restricted to them, so only its hosts
// move (UbiCrawler's contravariance), the URLs queued for it are routed to
// the new owners, and its seeds are taken up by theirs; when it answers
// again its hosts go back (workers hand URLs of hosts they no longer own to
// the owner instead of fetching them). Each change is an event in
// node-NNN/events.jsonl. The URLs the dead node had admitted and not
// fetched, which no outbox holds once its checkpoint covered them, are
// routed again from each live node's own URL log (recorder/splitter/redo.go). Other
// partitioners have no fail-over: batches for a dead peer wait until it is
// back. Partitioners that split a host over nodes ("url") are refused for
// live crawls.
//
// # Topology and the peer handshake
//
// A crawl's [peer.Topology] (crawl id, nodes, node id, peers in order,
// partitioner, replicas, politeness key, fingerprint scheme) is saved in
// state/topology.json when it starts; a resume that changes it is refused
// (ErrConfig). In TCP mode a node exchanges it with each peer ([peer.PathHello])
// before sending it a batch, every peer request carries its hash and the
// node it is for, and a mismatch stops the crawl on both sides. The batch
// endpoint bounds a body's size, the batches read at once, the time to
// read one and the memory they take; a node that finds a peer's view of
// its epoch not behind its own moves past it. See docs/peers.md.
//
// # Output
//
//	OutDir/node-NNN/urls-*.arrows   raw URL log (internal/tracefile)
//	OutDir/node-NNN/pages-*.arrows  page log: every fetch attempt, robots.txt included
//	OutDir/manifest.json            written when the crawl stops
//	OutDir/stats.json               [Stats]
//	OutDir/node-NNN/events.jsonl    membership events (TCP mode)
//
// Page ids are node<<40 | n (n from 1), so they are unique over the crawl;
// seeds have source 0. In TCP mode every process merges its node into
// OutDir/manifest.json under a file lock and writes its stats to
// OutDir/node-NNN/stats.json.
//
//	OutDir/node-NNN/state/          the node's durable state (see state.go):
//	    config.json                 the crawl's configuration and crawl id
//	    topology.json               the crawl's topology, fixed for its life (topology.go)
//	    checkpoint/                 the last complete checkpoint (recorder/checkpoint)
//	    discarded/run-T/            log rows cut by a resume at time T
//	    epoch, outbox/              incarnation and unacknowledged batches (TCP mode)
//
// Stopping: MaxPages, Duration or ctx cancellation stop the workers, flush
// and close every segment, take a final checkpoint, and write the manifest
// and the stats. A crawl killed outright leaves every flushed batch
// readable (tracefile reports the last segment as cut).
//
// # Checkpoints and resuming
//
// Every [Config.CheckpointEvery] the crawl's state is saved at a
// consistent cut: frontier (queued URLs, and URLs workers hold), DUE,
// robots.txt and politeness state per server, counters, the log writers'
// positions, and batches in transit between in-process nodes. A crawl
// started with [Config.Resume] in the same OutDir, after a clean stop or
// kill -9, loads the newest checkpoint, cuts the logs back to it (rows
// after it are kept under state/discarded/ and counted in [Stats]), and
// goes on as the same crawl: same crawl id, segments numbered and URL
// rows sequenced after the existing ones, one manifest listing every
// run's segments. No URL logged before the checkpoint is lost; pages
// fetched after it may be fetched again. Without Resume, an OutDir that
// already holds a crawl is refused. Other parts of a node's state join
// checkpoints as a checkpointPart (node.addCheckpointPart): in TCP mode the
// batch log, whose watermarks become the durable marks senders drop their
// outbox batches by once the checkpoint holding them is complete.
package recorder

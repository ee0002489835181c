package recorder

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawltrace/crawltrace/internal/procmem"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/monitor"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/politeness"
	"github.com/crawltrace/crawltrace/recorder/splitter"
)

// Stop reasons reported in [Stats].
const (
	StopDone     = "done"      // no URL left anywhere (in-process) or all nodes idle (TCP)
	StopMaxPages = "max-pages" // the page budget was used
	StopDuration = "duration"  // Config.Duration elapsed
	StopCanceled = "canceled"  // the context was canceled (a signal)
	StopError    = "error"     // a trace write failed
)

// StopText says in words why a crawl stopped (reason is one of the Stop
// constants), naming the limit that ended it; maxPages and duration are
// the crawl's Config.MaxPages and Config.Duration (0: none).
func StopText(reason string, maxPages int64, duration time.Duration) string {
	before := ""
	if maxPages > 0 {
		before = fmt.Sprintf(" before --max-pages %d was reached", maxPages)
	}
	switch reason {
	case StopMaxPages:
		return fmt.Sprintf("max-pages, the budget of %d pages (--max-pages) was used", maxPages)
	case StopDuration:
		return fmt.Sprintf("duration, the time limit of %s (--duration) elapsed", duration) + before
	case StopDone:
		return "frontier empty, no URL was left to crawl" + before
	case StopCanceled:
		return "signal, the crawl was interrupted"
	case StopError:
		return "error, writing the trace failed"
	case "":
		return "unknown"
	}
	return reason
}

// Result is what a finished crawl wrote. It is a plain value, owned by the
// caller.
type Result struct {
	Manifest *tracefile.Manifest
	Stats    *Stats
	// Finished is set, and nothing else, when a resume found the crawl
	// finished with nothing left to do: why, in words. Nothing was
	// written.
	Finished string
}

// crawl is the state shared by the nodes of one process.
type crawl struct {
	cfg      *Config
	tr       *peer.Tracker
	pages    atomic.Int64
	stopOnce sync.Once
	stopCh   chan struct{}
	// TCP mode: this node's share of MaxPages; when used, exhausted is set
	// and stopWorkers ends the fetch workers (the node keeps running).
	share       int64
	tcp         bool
	exhausted   atomic.Bool
	stopWorkers func()
	reason      string
	// crawlDone: a TCP node stopped on a complete termination decision
	// with nothing left for peers; its final checkpoint records that the
	// whole crawl is finished (finishedCrawl).
	crawlDone bool
	errMu     sync.Mutex
	err       error
	keys      *politeness.Keys
	redirs    fetch.Redirects
	// In one process: the nodes' frontiers by id and the partitioner
	// that says which node owns a URL, so that a robots.txt redirect hop
	// waits in the queue of its server's owner (nil in TCP mode).
	fronts []*frontier.Frontier
	part   partition.Partitioner
	// clock is the virtual clock of a deterministic crawl (Config.Local;
	// virtual.go), nil for a live one.
	clock *virtualClock
	// plan is what prepare settled.
	plan *plan
}

func (c *crawl) stop(reason string) {
	c.stopOnce.Do(func() {
		c.reason = reason
		close(c.stopCh)
	})
}

func (c *crawl) fail(err error) {
	c.errMu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.errMu.Unlock()
	c.stop(StopError)
}

func (c *crawl) failed() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// resumeNodes, for a resumed crawl, loads every node's state from set,
// the newest checkpoint all of them have (checkpoint.Find), and reports
// true; with no checkpoint (the crawl was killed before its
// first) it says so on cfg.Log, moves the logs aside and opens new ones,
// and the crawl starts again from its seeds. It also returns the
// checkpoint generation loaded.
func resumeNodes(cfg *Config, set *checkpoint.Set, nodes []*node) (restored bool, gen uint64, err error) {
	if !cfg.Resume {
		return false, 0, nil
	}
	for _, n := range nodes {
		if set != nil {
			err = checkpoint.Load(set.Dirs[n.id], set.Meta[n.id], n.parts)
		} else {
			err = n.split.DiscardLogs()
		}
		if err == nil {
			// Unless the checkpoint's segments part opened them.
			err = n.split.OpenLogs()
		}
		if err != nil {
			return false, 0, err
		}
		n.resume.Resumes++
	}
	if set == nil {
		var urls, pages int64
		for _, n := range nodes {
			urls += n.resume.DiscardedURLs
			pages += n.resume.DiscardedPages
		}
		cfg.logf("crawl: resuming %s: no checkpoint found (a crawl killed before its first checkpoint has none); its %d URL rows and %d page rows were moved to each node's %s, and the crawl starts again from its seeds",
			cfg.OutDir, urls, pages, filepath.Join(StateDirName, discardedDirName))
		return false, 0, nil
	}
	return true, set.Gen, nil
}

// reserve takes one page from the budget.
func (c *crawl) reserve() bool {
	if c.cfg.MaxPages <= 0 {
		return true
	}
	if c.tcp {
		if c.pages.Add(1) > c.share {
			if !c.exhausted.Swap(true) && c.stopWorkers != nil {
				c.stopWorkers()
			}
			return false
		}
		return true
	}
	if c.pages.Add(1) > c.cfg.MaxPages {
		c.stop(StopMaxPages)
		return false
	}
	return true
}

// pageShare is node id's share of a crawl-wide budget of max pages over n
// nodes: max/n, one more for the first max mod n nodes.
func pageShare(max int64, n, id int) int64 {
	s := max / int64(n)
	if int64(id) < max%int64(n) {
		s++
	}
	return s
}

// budgetIdle reports whether a node that used its page share has nothing
// left to do but exchange batches: its workers stopped and its splitter
// handled every message.
func (c *crawl) budgetIdle(n *node) bool {
	return c.exhausted.Load() && n.running.Load() == 0 && n.split.Inflight() == 0
}

// Run crawls with cfg until the web reachable from the seeds is exhausted,
// the budget (MaxPages, Duration) is used, or ctx is canceled; then it
// flushes and closes every log segment, writes OutDir/manifest.json and
// OutDir/stats.json, and returns them. Cancellation is a normal stop, not an
// error. With cfg.Peers set it runs node cfg.NodeID of a TCP crawl.
//
// Its steps: plan (prepare), nodes (restored from a checkpoint on a
// resume), the link that joins them to the crawl (link.go: in this
// process or over TCP, driven the same way), the wait for a stop, and the
// finish.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	// The metrics address is taken first: a busy one is refused before
	// anything is written.
	var monLn net.Listener
	if cfg.Metrics != "" {
		ln, err := net.Listen("tcp", cfg.Metrics)
		if err != nil {
			return nil, fmt.Errorf("%w: --metrics %s: %v", ErrConfig, cfg.Metrics, err)
		}
		monLn = ln
		defer ln.Close()
	}
	p, done, err := prepare(&cfg)
	if p == nil {
		return done, err
	}
	defer p.lock.Unlock()
	if p.events != nil {
		defer p.events.Close()
	}
	c := newCrawl(&cfg, p)
	client := newHTTPClient(&cfg, c.keys)
	defer client.CloseIdleConnections()
	nodes, err := c.newNodes(p, client)
	if err != nil {
		return nil, err
	}
	l := newLink(c, p)
	restored, gen, err := c.restore(p, l, nodes)
	if err != nil {
		closeWriters(nodes)
		return nil, err
	}
	if c.clock != nil {
		return runVirtual(ctx, c, p, nodes, restored, gen)
	}
	transport, err := l.open(nodes)
	if err != nil {
		closeWriters(nodes)
		return nil, err
	}
	r := c.launch(ctx, l, transport, nodes, restored, gen, monLn)
	defer r.cancel()
	c.wait(ctx, l, r)
	return c.finish(l, nodes, r)
}

// newCrawl is the crawl state of plan p's run.
func newCrawl(cfg *Config, p *plan) *crawl {
	c := &crawl{cfg: cfg, tr: peer.NewTracker(), stopCh: make(chan struct{}), tcp: p.tcp, keys: newPolitenessKeys(cfg), plan: p}
	if p.tcp && cfg.MaxPages > 0 {
		c.share = pageShare(cfg.MaxPages, p.total, cfg.NodeID)
	}
	if cfg.Local != nil {
		c.clock = newVirtualClock(p.start)
		cfg.Now = c.clock.Now
	}
	return c
}

// newNodes makes the nodes this process runs.
func (c *crawl) newNodes(p *plan, client *http.Client) ([]*node, error) {
	nodes := make([]*node, 0, len(p.local))
	for _, id := range p.local {
		n, err := newNode(c, id, p.total, p.part, p.filter, client, p.meta, p.start)
		if err != nil {
			closeWriters(nodes)
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// restore readies the link and loads the nodes' checkpoint on a resume;
// restored says one was loaded, gen is its generation.
func (c *crawl) restore(p *plan, l link, nodes []*node) (restored bool, gen uint64, err error) {
	l.ready(nodes)
	restored, gen, err = resumeNodes(c.cfg, p.resumeFrom, nodes)
	for _, n := range nodes {
		if err == nil {
			err = n.startWARC()
		}
	}
	if err != nil {
		return false, 0, err
	}
	// MaxPages is the crawl's budget, not the run's: a resumed crawl
	// starts from the fetches its checkpoint counted.
	for _, n := range nodes {
		c.pages.Add(n.st.FetchAttempts.Load())
	}
	return restored, gen, nil
}

// running is what launch set going and the stop undoes.
type running struct {
	fetchCtx            context.Context
	cancelFetch, cancel context.CancelFunc
	cancelStop          context.CancelFunc
	transport           peer.Transport
	ckpt                *checkpoint.Coordinator
	mon                 *monitor.Server
	progressDone        chan struct{}
	deadline            <-chan time.Time
	stopDeadline        func() bool
}

// launch sets the nodes going: their splitters on the transport, their
// seeds (or the batches their checkpoint had in transit), their fetch
// workers, the checkpoints, the monitor and the progress line.
func (c *crawl) launch(ctx context.Context, l link, transport peer.Transport, nodes []*node, restored bool, gen uint64, monLn net.Listener) *running {
	r := &running{transport: transport}
	for _, n := range nodes {
		n.split.SetTransport(transport)
		go n.split.Run()
	}
	var stopCtx context.Context
	r.fetchCtx, r.cancelFetch = context.WithCancel(ctx)
	stopCtx, r.cancelStop = context.WithCancel(r.fetchCtx)
	r.cancel = func() { r.cancelStop(); r.cancelFetch() }
	c.stopWorkers = r.cancelStop
	c.queueStart(nodes, restored, transport.Send, func(n *node, m *splitter.Msg) { n.split.Send(m) })
	l.started()
	for _, n := range nodes {
		n.startWorkers(stopCtx, r.fetchCtx)
	}
	r.ckpt = newCheckpointer(c, nodes, transport, gen)
	go r.ckpt.Run()
	if monLn != nil {
		var err error
		if r.mon, err = startMonitor(c.cfg, c, nodes, l, monLn, c.plan.start); err != nil {
			c.fail(err)
		}
	}
	r.progressDone = make(chan struct{})
	go c.progress(nodes, c.plan.start, r.progressDone)
	if c.cfg.Duration > 0 {
		t := time.NewTimer(c.cfg.Duration)
		r.deadline, r.stopDeadline = t.C, t.Stop
	}
	return r
}

// queueStart queues each node's first work: on a resume the batches its
// checkpoint had in transit (given to send: they go first), otherwise the
// seeds it owns (given to seed).
func (c *crawl) queueStart(nodes []*node, restored bool, send func(dest int, b *peer.Batch), seed func(n *node, m *splitter.Msg)) {
	for _, n := range nodes {
		if restored {
			for _, b := range n.pending.batches {
				send(n.id, b)
			}
			n.pending.batches = nil
			continue
		}
		if own := seedsOf(c.plan.seeds, c.plan.part, n.id); len(own) > 0 {
			seed(n, &splitter.Msg{URLs: own})
		}
	}
}

// wait returns once the crawl stops: canceled, out of time, or over by
// the link's rule (or by the budget, or a failure: c.stop).
func (c *crawl) wait(ctx context.Context, l link, r *running) {
	if r.stopDeadline != nil {
		defer r.stopDeadline()
	}
	over := l.over(r.fetchCtx)
	for {
		select {
		case <-ctx.Done():
			c.stop(StopCanceled)
		case <-r.deadline:
			c.stop(StopDuration)
			r.cancelFetch()
		case why := <-over:
			c.stop(why)
		case <-c.stopCh:
			return
		}
	}
}

// finish shuts the nodes down, takes the final checkpoint and writes the
// manifest and stats. Workers finish (or abort) their fetch and hand its
// URLs to the splitter; the link delivers what is left for peers; then the
// transport stops and each splitter drains its channel and closes its
// segments.
func (c *crawl) finish(l link, nodes []*node, r *running) (*Result, error) {
	cfg := c.cfg
	r.ckpt.Stop()
	r.cancelStop()
	for _, n := range nodes {
		n.front.Close()
	}
	for _, n := range nodes {
		n.wg.Wait()
	}
	left, crawlDone := l.drain(nodes, c.reason)
	c.crawlDone = crawlDone
	l.close()
	for _, n := range nodes {
		n.logs = n.split.Stop()
	}
	defer freeNodes(nodes)
	close(r.progressDone)
	if c.failed() == nil && !cfg.NoTrace {
		if err := r.ckpt.Final(c.reason); err != nil {
			c.fail(err)
		}
	}
	for _, n := range nodes {
		if err := n.closeWARC(); err != nil {
			c.fail(err)
		}
	}
	end := cfg.Now()
	man := manifestOf(c.plan.meta, nodes, end)
	stats := c.collect(nodes, end.Sub(c.plan.start), l.peerStats, false)
	stats.StopReason = c.reason
	stats.Checkpoints, stats.CheckpointSeconds = r.ckpt.Taken(), r.ckpt.Last().Seconds()
	stats.PeakRSSBytes = procmem.PeakRSS()
	stats.OutboxLeft = left
	l.stopped(c.reason, left)
	var werr error
	if !cfg.NoTrace {
		werr = l.write(man, stats)
	}
	if r.mon != nil {
		// The final values, as stats.json has them, for a last scrape.
		r.mon.Final(stats)
		r.mon.Close(cfg.MetricsLinger)
	}
	return c.result(man, stats, werr)
}

// freeNodes releases what the stopped nodes' splitters and spill stores
// still hold, once their final state is written.
func freeNodes(nodes []*node) {
	for _, n := range nodes {
		n.split.Free()
		if n.store != nil {
			n.store.Close()
		}
	}
}

// result is a finished crawl's Result, with the crawl's first failure or
// else werr, the error writing its manifest and stats.
func (c *crawl) result(man *tracefile.Manifest, stats *Stats, werr error) (*Result, error) {
	err := c.failed()
	if err == nil {
		err = werr
	}
	if err != nil {
		return &Result{Manifest: man, Stats: stats}, fmt.Errorf("recorder: %w", err)
	}
	return &Result{Manifest: man, Stats: stats}, nil
}

// StatsName is the statistics file written beside the manifest.
const StatsName = "stats.json"

// seedsOf is the seeds node id owns under part, as the URLs its splitter
// logs and enqueues at a fresh start.
func seedsOf(seeds []string, part partition.Partitioner, id int) []splitter.URL {
	var own []splitter.URL
	for _, u := range seeds {
		if part.Node(u) == id {
			own = append(own, splitter.URL{URL: u, Kind: tracefile.URLSeed})
		}
	}
	return own
}

// manifestOf is the manifest of nodes' closed logs (the segments their
// splitters returned when they stopped), finished at end.
func manifestOf(meta tracefile.Meta, nodes []*node, end time.Time) *tracefile.Manifest {
	man := tracefile.NewManifest(meta)
	man.Finished = end.UTC()
	for _, n := range nodes {
		man.AddNode(n.id, n.logs.URLs, n.logs.Pages)
	}
	return man
}

// drainWait bounds how long a stopping TCP node waits for its peers to
// acknowledge the batches it still has queued for them; what is left
// stays in its outbox for --resume.
const drainWait = 10 * time.Second

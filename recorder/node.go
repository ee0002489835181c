package recorder

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawltrace/crawltrace/internal/bytebudget"
	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/robots"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/urlfilter"
	"github.com/crawltrace/crawltrace/recorder/warcout"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// node is one crawling process: frontier, fetch workers and host splitter.
type node struct {
	id    int
	cfg   *Config
	c     *crawl
	front *frontier.Frontier
	conns *frontier.ConnSlots // this node's connection cap
	split *splitter.Splitter
	// queue bounds the bytes of the pages queued for the splitter (nil:
	// no bound); batches is the node's batch log. Both are made here and
	// handed to the splitter.
	queue   *bytebudget.Budget
	batches *peer.BatchLog
	// logs are the node's log segments once its splitter stopped, for
	// the manifest.
	logs   splitter.Segments
	client *http.Client
	filter *urlfilter.Filter
	agent  string
	st     worker.Stats
	wg     sync.WaitGroup
	// started is when the workers started; running counts them, and the
	// last to stop closes the frontier's connection sessions.
	started time.Time
	running atomic.Int64

	// meta is the metadata of this node's log segments.
	meta tracefile.Meta
	// parts are saved in every checkpoint (see addCheckpointPart).
	parts   []checkpoint.Part
	pending *pendingPart
	// outbox is a TCP node's outbox part (nil in-process).
	outbox *peer.OutboxPart
	// resume counts restarts; discardDir receives log rows a resume cuts.
	resume     resumeCounters
	discardDir string
	// warc writes the node's fetches as WARC (nil: no --warc);
	// warcRestored says a checkpoint restored its files.
	warc         *warcout.Writer
	warcRestored bool
	// store holds the frontier's spilled queues (nil: no spilling).
	store *frontier.Store
	// hops spaces robots.txt redirect hops to other servers.
}

// startWorkers starts the fetch workers. Each node has its own connection
// cap, as each crawling process of a distributed crawler has.
func (n *node) startWorkers(stopCtx, fetchCtx context.Context) {
	m := n.cfg.MaxConns
	if m <= 0 {
		m = DefaultConfig().MaxConns
	}
	n.conns = frontier.NewConnSlots(m)
	n.front.Configure(n.cfg.Quality, n.conns)
	n.started = n.cfg.Now()
	wk := worker.New(n.workerOptions(), n.front, workerSink{n}, crawlBudget{n.c}, &n.st)
	n.running.Store(int64(n.cfg.Workers))
	for w := 0; w < n.cfg.Workers; w++ {
		n.wg.Add(1)
		go func(w int) {
			defer n.wg.Done()
			wk.Run(stopCtx, fetchCtx, uint16(w))
			if n.running.Add(-1) == 0 {
				n.front.CloseSessions()
			}
		}(w)
	}
}

// lockCrawl takes the crawl directory's write locks for the crawl's life
// (package outdir): the process's node directories exclusively, and the
// crawl directory exclusively for an in-process crawl (with every node
// directory already there: it writes them all) or shared for a node of a
// TCP crawl. A second crawl, resume or import into the directory is
// refused at once.
// closeWriters closes the logs of nodes a failed start made.
func closeWriters(nodes []*node) {
	for _, n := range nodes {
		n.split.Close()
		n.closeWARC()
	}
}

func newNode(c *crawl, id, total int, part partition.Partitioner, filter *urlfilter.Filter, client *http.Client, meta tracefile.Meta, start time.Time) (*node, error) {
	cfg := c.cfg
	n := &node{id: id, cfg: cfg, c: c, client: client, filter: filter, agent: robots.Agent(cfg.UserAgent)}
	n.meta = meta
	n.meta.Node = id
	n.discardDir = filepath.Join(stateDir(cfg.OutDir, id), discardedDirName, "run-"+start.UTC().Format("20060102T150405.000000000Z"))
	n.front = frontier.New(n.frontierOptions())
	if cfg.Memory > 0 && frontier.Spillable(cfg.Order) {
		store, err := frontier.Open(filepath.Join(stateDir(cfg.OutDir, id), "frontier"))
		if err != nil {
			return nil, fmt.Errorf("recorder: node %d: %w", id, err)
		}
		n.store = store
		n.front.SpillTo(store, cfg.Memory/2)
	}
	if b := cfg.queueBytes(); b > 0 {
		n.queue = bytebudget.New(b)
	}
	n.batches = peer.NewBatchLog()
	s, err := newSplitter(c, n, id, total, part)
	if err != nil {
		return nil, err
	}
	n.split = s
	n.pending = &pendingPart{}
	if c.clock != nil {
		// A deterministic crawl's clock, loaded before the parts whose
		// times it dates.
		n.addCheckpointPart(clockPart{c.clock})
	}
	// The splitter's parts come first (after the clock): loading its
	// segments part restores the logs and opens their writers.
	for _, p := range s.Parts() {
		n.addCheckpointPart(p)
	}
	// The frontier's URLs loaded are work to do.
	n.addCheckpointPart(n.front.Part(func(k int) { c.tr.Add(int64(k)) }))
	n.addCheckpointPart(countersPart{n})
	n.addCheckpointPart(n.pending)
	if c.tcp {
		// Batches processed per sending incarnation: restored with the
		// state they went into, so resent batches the checkpoint covers
		// are dropped and the others processed again.
		n.addCheckpointPart(batchLogPart{n.batches})
		// The batches sent to peers and not yet durable at them: saved
		// at the same cut as the logs whose URLs they carry.
		n.outbox = peer.NewOutboxPart()
		n.addCheckpointPart(n.outbox)
	}
	n.newWARC()
	if !cfg.Resume {
		if err := s.OpenLogs(); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// newDiskDUE makes node id's disk DUE under its state directory.
func newDiskDUE(cfg *Config, id int) (*due.Disk, error) {
	buf := cfg.DUEBuffer
	if cfg.Memory > 0 {
		// The buffer takes at most a sixteenth of the budget.
		buf = max(1024, min(buf, int(cfg.Memory/16/due.BufferBytesPerFingerprint)))
	}
	d, err := due.NewDisk(due.DiskConfig{Dir: filepath.Join(stateDir(cfg.OutDir, id), "due"),
		CacheSize: cfg.DUECache, BufferSize: buf})
	if err != nil {
		return nil, fmt.Errorf("recorder: node %d: %w", id, err)
	}
	return d, nil
}

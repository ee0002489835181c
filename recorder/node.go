package recorder

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/checkpoint"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/peer"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/urlfilter"
	"github.com/crawltrace/crawltrace/recorder/warcout"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// node is one crawling process: frontier, fetch workers and host splitter.
type node struct {
	id     int
	cfg    *Config
	c      *crawl
	front  *frontier.Frontier
	conns  *frontier.ConnSlots // this node's connection cap
	split  *splitter.Splitter
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

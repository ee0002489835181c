package recorder

import (
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/worker"
)

// workerOptions are the options of node n's fetch workers, built from
// its Config; call it once the workers' start time is set.
func (n *node) workerOptions() worker.Options {
	return worker.Options{
		Node:            n.id,
		UserAgent:       n.cfg.UserAgent,
		Agent:           n.agent,
		Client:          n.client,
		Filter:          n.filter,
		MaxBodyBytes:    n.cfg.MaxBodyBytes,
		MaxRedirects:    n.cfg.MaxRedirects,
		MaxLinksPerPage: n.cfg.MaxLinksPerPage,
		Quality:         n.cfg.Quality,
		Robots:          n.robotsPolicy(),
		Now:             n.cfg.Now,
		Start:           n.started,
		Redirects:       &n.c.redirs,
		MaxRetryAfter:   n.cfg.MaxRetryAfter,
		RetryAfterTries: n.cfg.RetryAfterTries,
		HopQueue:        n.hopQueue,
		Owner:           n.split.OwnerOf,
		TaskDone:        func() { n.c.tr.Add(-1) },
		Archive:         n.archive(),
	}
}

// hopQueue is the frontier of the node owning u's server when the nodes
// run in one process: a robots.txt redirect hop to u waits in it, so one
// server sees one request at a time whichever node's hosts redirect to
// it. Nil in TCP mode (each process runs one node; see
// docs/politeness.md for the bound that holds there).
func (n *node) hopQueue(u string) worker.HopQueue {
	if n.c.fronts == nil {
		return nil
	}
	if id := n.c.part.Node(u); id >= 0 && id < len(n.c.fronts) && n.c.fronts[id] != nil {
		return n.c.fronts[id]
	}
	return nil
}

// workerSink hands the workers' pages to the node's splitter.
type workerSink struct{ n *node }

var _ worker.Sink = workerSink{}

// Submit sends m to the splitter once its URLs fit the queue's byte
// budget; the splitter gives the bytes back when it has logged them.
func (s workerSink) Submit(m *splitter.Msg) {
	m.Bytes = splitter.URLBytes(m.URLs)
	s.n.queue.Acquire(m.Bytes)
	if !s.n.split.Send(m) {
		s.n.queue.Release(m.Bytes)
	}
}

// Forward hands u, a URL fail-over moved to another node, to the
// splitter, which routes it to its owner.
func (s workerSink) Forward(u string, task uint64) {
	s.n.split.Send(&splitter.Msg{Forward: []string{u}, Task: task})
}

// crawlBudget is the crawl's page budget (MaxPages).
type crawlBudget struct{ c *crawl }

// Reserve takes one page from the budget.
func (b crawlBudget) Reserve() bool { return b.c.reserve() }

package recorder

import (
	"sync"
	"sync/atomic"
)

// Batch is a group of URLs the host splitter of node From sends to the node
// that owns them. Its id is (From, Epoch, Seq): Epoch is the incarnation of
// node From that made it (bumped at every start, see [stateDir]) and Seq
// numbers that incarnation's batches (from 1), so a receiver processes each
// id exactly once however often it is resent, and never mistakes a new
// incarnation's batches for old ones. A Batch is not safe for concurrent
// use; after Send the transport owns it.
type Batch struct {
	From   int
	Epoch  uint64
	Seq    uint64
	URLs   []string
	Kinds  []string // tracefile.URLSeed, URLLink or URLRedirect per URL
	Source []uint64 // page id each URL came from (0 for seeds)
}

// Len is the number of URLs.
func (b *Batch) Len() int { return len(b.URLs) }

// Transport carries batches between the host splitters of a crawl's nodes.
// Send must not block for long: a batch for a peer that is down is kept
// (and retried) by the transport, never dropped, while the crawl runs.
// Implementations are safe for concurrent use.
type Transport interface {
	// Send queues b for node dest. The transport owns b afterwards.
	Send(dest int, b *Batch)
	// Close stops delivery; batches still queued are abandoned.
	Close() error
}

// receiver accepts batches delivered to a node; it returns false when the
// node no longer accepts batches (it is stopping).
type receiver interface {
	receive(b *Batch) bool
}

// tracker counts outstanding work (queued URLs, splitter messages, batches
// in transit). When the count drops to zero the work it covers is done.
// It is safe for concurrent use.
type tracker struct {
	n    atomic.Int64
	zero chan struct{} // signalled (non-blocking) when n reaches 0
}

func newTracker() *tracker { return &tracker{zero: make(chan struct{}, 1)} }

func (t *tracker) add(d int64) {
	if t.n.Add(d) == 0 {
		select {
		case t.zero <- struct{}{}:
		default:
		}
	}
}

func (t *tracker) idle() bool { return t.n.Load() == 0 }

// memTransport connects the nodes of one process. Each destination has an
// unbounded queue drained by its own goroutine, so a splitter never blocks
// on a peer (two splitters sending to each other cannot deadlock). Batches
// are counted in the shared tracker until the destination has taken them.
type memTransport struct {
	tr    *tracker
	nodes []receiver
	qs    []*memQueue
	wg    sync.WaitGroup
	stop  chan struct{}
	once  sync.Once
}

type memQueue struct {
	mu    sync.Mutex
	items []*Batch
	ready chan struct{}
}

func newMemTransport(tr *tracker, nodes []receiver) *memTransport {
	m := &memTransport{tr: tr, nodes: nodes, stop: make(chan struct{})}
	for i := range nodes {
		q := &memQueue{ready: make(chan struct{}, 1)}
		m.qs = append(m.qs, q)
		m.wg.Add(1)
		go m.deliver(i, q)
	}
	return m
}

func (m *memTransport) Send(dest int, b *Batch) {
	m.tr.add(1)
	q := m.qs[dest]
	q.mu.Lock()
	q.items = append(q.items, b)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (m *memTransport) deliver(dest int, q *memQueue) {
	defer m.wg.Done()
	for {
		select {
		case <-m.stop:
			return
		case <-q.ready:
		}
		for {
			q.mu.Lock()
			if len(q.items) == 0 {
				q.mu.Unlock()
				break
			}
			b := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			if !m.nodes[dest].receive(b) {
				return
			}
			m.tr.add(-1)
		}
	}
}

func (m *memTransport) Close() error {
	m.once.Do(func() { close(m.stop) })
	m.wg.Wait()
	return nil
}

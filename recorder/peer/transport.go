// Package peer carries URL batches between the host splitters of a
// crawl's nodes: the [Batch] and its wire format (Arrow IPC), the
// in-process transport ([MemTransport]) and the TCP one ([HTTPTransport]:
// outbox, handshake, failure detector, termination, epochs), the
// receiver's record of processed batch ids ([BatchLog]), a node's
// incarnation number ([BumpEpoch]) and the crawl's [Topology]. A node's
// splitter is a [Receiver]; the package knows nothing else of it.
package peer

import (
	"sort"
	"sync"
	"sync/atomic"
)

// Batch is a group of URLs the host splitter of node From sends to the node
// that owns them. Its id is (From, Epoch, Seq): Epoch is the incarnation of
// node From that made it (bumped at every start, see [BumpEpoch]) and Seq
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

// Receiver is a node's host splitter as the transports see it: what
// batches for the node are delivered to. Implementations are safe for
// concurrent use.
type Receiver interface {
	// Receive queues b to be processed and returns at once; false when
	// the node no longer accepts batches (it is stopping). The
	// in-process transport delivers through it.
	Receive(b *Batch) bool
	// ReceiveBatch hands b to the node and waits until it is processed:
	// isNew is false when its id (From, Epoch, Seq) was processed before;
	// ok is false when the node no longer accepts batches. The TCP
	// endpoint answers a batch through it.
	ReceiveBatch(b *Batch) (isNew, ok bool)
	// Durable is the batch log's watermarks as of the node's last
	// complete checkpoint (nil: none yet), reported in NodeStatus so
	// that senders delete the batches it covers from their outboxes.
	Durable() []DurableMark
}

// Tracker counts outstanding work (queued URLs, splitter messages, batches
// in transit). When the count drops to zero the work it covers is done.
// It is safe for concurrent use.
type Tracker struct {
	n    atomic.Int64
	zero chan struct{} // signalled (non-blocking) when n reaches 0
}

// NewTracker returns a tracker counting nothing.
func NewTracker() *Tracker { return &Tracker{zero: make(chan struct{}, 1)} }

// Add adds d (negative when work is done) to the count.
func (t *Tracker) Add(d int64) {
	if t.n.Add(d) == 0 {
		select {
		case t.zero <- struct{}{}:
		default:
		}
	}
}

// Idle reports whether the count is zero.
func (t *Tracker) Idle() bool { return t.n.Load() == 0 }

// Count is the outstanding work counted now.
func (t *Tracker) Count() int64 { return t.n.Load() }

// Zero is signalled (without blocking, so signals may merge) when the
// count reaches zero; check Idle on receipt.
func (t *Tracker) Zero() <-chan struct{} { return t.zero }

// MemTransport connects the nodes of one process. Each destination has an
// unbounded queue drained by its own goroutine, so a splitter never blocks
// on a peer (two splitters sending to each other cannot deadlock). Batches
// are counted in the shared tracker until the destination has taken them.
type MemTransport struct {
	// unacked holds, per destination, the batches sent to it that its
	// splitter has not processed yet; a checkpoint saves them with the
	// destination's state.
	mu      sync.Mutex
	unacked []map[*Batch]struct{}

	tr    *Tracker
	nodes []Receiver
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

// NewMemTransport connects nodes (indexed by node id), counting the
// batches in transit in tr.
func NewMemTransport(tr *Tracker, nodes []Receiver) *MemTransport {
	m := &MemTransport{tr: tr, nodes: nodes, stop: make(chan struct{})}
	for i := range nodes {
		q := &memQueue{ready: make(chan struct{}, 1)}
		m.qs = append(m.qs, q)
		m.unacked = append(m.unacked, map[*Batch]struct{}{})
		m.wg.Add(1)
		go m.deliver(i, q)
	}
	return m
}

// Send queues b for node dest; it never blocks.
func (m *MemTransport) Send(dest int, b *Batch) {
	m.tr.Add(1)
	m.mu.Lock()
	m.unacked[dest][b] = struct{}{}
	m.mu.Unlock()
	q := m.qs[dest]
	q.mu.Lock()
	q.items = append(q.items, b)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (m *MemTransport) deliver(dest int, q *memQueue) {
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
			if !m.nodes[dest].Receive(b) {
				return
			}
			m.tr.Add(-1)
		}
	}
}

// Processed records that dest's splitter has admitted b.
func (m *MemTransport) Processed(dest int, b *Batch) {
	m.mu.Lock()
	delete(m.unacked[dest], b)
	m.mu.Unlock()
}

// Unprocessed returns the batches sent to dest and not yet processed, by
// sender and sequence number: a checkpoint taken while every splitter is
// parked saves them with the receiving node's state.
func (m *MemTransport) Unprocessed(dest int) []*Batch {
	m.mu.Lock()
	out := make([]*Batch, 0, len(m.unacked[dest]))
	for b := range m.unacked[dest] {
		out = append(out, b)
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].Seq < out[j].Seq
	})
	return out
}

// Close stops delivery; batches still queued are abandoned.
func (m *MemTransport) Close() error {
	m.once.Do(func() { close(m.stop) })
	m.wg.Wait()
	return nil
}

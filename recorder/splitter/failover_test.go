package splitter

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// holdingTransport keeps the batches sent to each node until Take, as the
// TCP transport keeps a dead peer's queue.
type holdingTransport struct {
	mu   sync.Mutex
	held map[int][]*peer.Batch
}

func (h *holdingTransport) Send(dest int, b *peer.Batch) {
	h.mu.Lock()
	h.held[dest] = append(h.held[dest], b)
	h.mu.Unlock()
}

func (h *holdingTransport) Close() error { return nil }

func (h *holdingTransport) Take(dest int) ([]*peer.Batch, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	bs := h.held[dest]
	delete(h.held, dest)
	return bs, 0
}

// A URL this node admitted and a worker then forwarded to the host's
// owner under the old view (the owner's death not yet seen here, while a
// peer that saw it already routed the URL to this node) is queued again
// when the view changes and the host comes back to this node. The URL is
// in this node's DUE, so admitting it again, as a logged URL is, drops
// it: the crawl lost such URLs when views disagreed for long enough
// (under load, TestClusterFailoverNoLoss lost up to 500 pages).
func TestForwardedURLsSurviveTheirTargetsDeath(t *testing.T) {
	ring := partition.NewConsistent([]int{0, 1, 2}, 0)
	after := ring.Without(1)
	var urls []string
	for h := 0; len(urls) < 10; h++ {
		u := fmt.Sprintf("http://h%04d.test/", h)
		if ring.Node(u) == 1 && after.Node(u) == 2 {
			urls = append(urls, u)
		}
	}
	ht := &holdingTransport{held: map[int][]*peer.Batch{}}
	front := &testFrontier{}
	s := &Splitter{node: 2, part: ring, ring: ring, live: []bool{true, true, true}, log: peer.NewBatchLog(), in: make(chan *Msg, 8),
		tr: peer.NewTracker(), due: due.NewMemory(64), front: front, out: make([]*peer.Batch, 3), seqs: make([]uint64, 3),
		hosts: map[string]struct{}{}, batchSize: 1 << 20, flushTick: time.Hour, now: time.Now, stop: make(chan struct{}),
		done: make(chan struct{}), transport: ht, redirs: noRedirects{}, events: &testEvents{}}
	s.owner.Store(ring)
	go s.Run()
	// Node 0 saw node 1 die and routed node 1's hosts here: admitted.
	b := &peer.Batch{From: 0, Epoch: 1, Seq: 1, URLs: urls, Kinds: make([]string, len(urls)), Source: make([]uint64, len(urls))}
	if !s.Receive(b) {
		t.Fatal("batch refused")
	}
	// This node's workers still see node 1 as the owner: forwarded.
	s.Send(&Msg{Forward: urls})
	// Then this node sees node 1 die too.
	s.SendView([]bool{true, false, true})
	close(s.stop)
	<-s.done
	front.mu.Lock()
	defer front.mu.Unlock()
	for _, u := range urls {
		if n := countOf(front.added, u); n != 2 {
			t.Errorf("%s queued %d times, want 2 (admitted, then queued again when its host came back)", u, n)
		}
	}
}

func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

package splitter

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// captureTransport records the batches sent, by destination.
type captureTransport struct {
	mu   sync.Mutex
	sent map[int][]string
}

func (c *captureTransport) Send(dest int, b *peer.Batch) {
	c.mu.Lock()
	c.sent[dest] = append(c.sent[dest], b.URLs...)
	c.mu.Unlock()
}

func (c *captureTransport) Close() error { return nil }

// testFrontier is a node's frontier as the splitter sees it: it keeps
// the URLs added and the tasks finished.
type testFrontier struct {
	mu       sync.Mutex
	added    []string
	finished []uint64
}

func (f *testFrontier) Add(u string) {
	f.mu.Lock()
	f.added = append(f.added, u)
	f.mu.Unlock()
}

func (f *testFrontier) Finish(task uint64) {
	f.mu.Lock()
	f.finished = append(f.finished, task)
	f.mu.Unlock()
}

func (f *testFrontier) Err() error { return nil }

// testEvents keeps the events written.
type testEvents struct {
	mu  sync.Mutex
	evs []tracefile.Event
}

func (e *testEvents) Write(ev tracefile.Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func (e *testEvents) events() []tracefile.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]tracefile.Event(nil), e.evs...)
}

// TestRedoRoutesDeadNodesURLs (issue 21, case 4): node 0 of three logs
// URLs, some for node 1 (sent, and as far as node 0 knows delivered for
// good). Node 1 is declared dead: node 0 streams its own URL log and
// routes every URL it had logged for node 1 to its owner on the ring
// without node 1: admitted into its own DUE and frontier, or batched for
// node 2. The reference is the ring itself.
func TestRedoRoutesDeadNodesURLs(t *testing.T) {
	outDir := t.TempDir()
	ring := partition.NewConsistent([]int{0, 1, 2}, 0)
	after := ring.Without(1)
	tr := peer.NewTracker()
	ct := &captureTransport{sent: map[int][]string{}}
	s := &Splitter{node: 0, part: ring, ring: ring, live: []bool{true, true, true}, log: peer.NewBatchLog(), in: make(chan *Msg, 8), tr: tr,
		due: due.NewMemory(64), front: &testFrontier{}, out: make([]*peer.Batch, 3), seqs: make([]uint64, 3), hosts: map[string]struct{}{},
		batchSize: 7, flushTick: time.Hour, now: time.Now, stop: make(chan struct{}), done: make(chan struct{}), transport: ct, outDir: outDir,
		redirs: noRedirects{}}
	s.owner.Store(ring)
	ev := &testEvents{}
	s.events = ev
	uw, err := tracefile.CreateURLWriter(tracefile.NodeDir(outDir, 0), tracefile.Meta{CrawlID: "t", Nodes: 3, Partitioner: "consistent"}, tracefile.DefaultWriterConfig())
	if err != nil {
		t.Fatal(err)
	}
	s.urlw = uw
	go s.Run()
	var urls []URL
	var toOne []string
	for h := range 40 {
		for p := range 5 {
			u := fmt.Sprintf("http://h%04d.test/%d.html", h, p)
			urls = append(urls, URL{URL: u, Kind: tracefile.URLLink})
			if ring.Node(u) == 1 {
				toOne = append(toOne, u)
			}
		}
	}
	if len(toOne) < 20 {
		t.Fatalf("only %d URLs for node 1", len(toOne))
	}
	s.Send(&Msg{URLs: urls, Source: 1})
	crawltest.WaitFor(t, "the URLs for node 1 to be sent", 10*time.Second, func() bool {
		ct.mu.Lock()
		defer ct.mu.Unlock()
		return len(ct.sent[1]) == len(toOne)
	})
	ct.mu.Lock()
	ct.sent = map[int][]string{}
	ct.mu.Unlock()
	s.Send(&Msg{view: []bool{true, false, true}})
	// The redo scan runs in the background and ends with its event.
	var redo *tracefile.Event
	crawltest.WaitFor(t, "the redo event", 10*time.Second, func() bool {
		for _, e := range ev.events() {
			if e.Event == tracefile.EventRedo {
				redo = &e
			}
		}
		return redo != nil
	})
	if redo.Peer == nil || *redo.Peer != 1 || redo.URLsRerouted != int64(len(toOne)) || redo.Reason != "" {
		t.Errorf("redo event %+v, want peer 1 and %d URLs", *redo, len(toOne))
	}
	close(s.stop)
	<-s.done
	ct.mu.Lock()
	defer ct.mu.Unlock()
	got := map[string]bool{}
	for _, u := range ct.sent[2] {
		got[u] = true
	}
	for _, u := range toOne {
		switch after.Node(u) {
		case 2:
			if !got[u] {
				t.Errorf("%s (node 2's now) not sent to node 2", u)
			}
		case 0:
			if s.due.Add(xxhash.Sum64String(u)) {
				t.Errorf("%s (node 0's now) not admitted by node 0", u)
			}
		default:
			t.Fatalf("%s owned by %d without node 1", u, after.Node(u))
		}
	}
	for _, u := range ct.sent[2] {
		if ring.Node(u) != 1 {
			t.Errorf("%s, node %d's, routed again", u, ring.Node(u))
		}
	}
}

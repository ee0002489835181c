package peer

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// workReceiver is a node whose every new batch is work (a URL to fetch)
// until the test releases it: it stays busy meanwhile.
type workReceiver struct {
	testReceiver
	tr   *Tracker
	mu   sync.Mutex
	held int
}

func (r *workReceiver) Receive(b *Batch) bool { r.ReceiveBatch(b); return true }

func (r *workReceiver) ReceiveBatch(b *Batch) (isNew, ok bool) {
	isNew, ok = r.testReceiver.ReceiveBatch(b)
	if isNew {
		r.mu.Lock()
		r.held++
		r.tr.Add(1)
		r.mu.Unlock()
	}
	return isNew, ok
}

// release finishes the work held.
func (r *workReceiver) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tr.Add(int64(-r.held))
	r.held = 0
}

func (r *workReceiver) holding() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// termCluster starts n transports on loopback with work receivers.
func termCluster(t *testing.T, n int) ([]*HTTPTransport, []*workReceiver) {
	t.Helper()
	lns, addrs := crawltest.Listeners(t, n)
	trs := make([]*HTTPTransport, n)
	rs := make([]*workReceiver, n)
	for i := range n {
		dir := t.TempDir()
		tk := NewTracker()
		rs[i] = &workReceiver{testReceiver: testReceiver{log: NewBatchLog()}, tr: tk}
		topo := Topology{Format: TopologyFormat, CrawlID: "term", Nodes: n, NodeID: i, Peers: addrs, Partitioner: "host",
			PolitenessKey: "host", Fingerprint: FingerprintScheme}
		tr, err := NewHTTPTransport(Options{Self: i, Peers: addrs, Listener: lns[i], Token: "T", Epoch: 1, Topology: topo,
			StateDir: dir, Outbox: dir + "/outbox", PeerTimeout: time.Hour,
			MaxBody: MaxBatchBytes(0, 0, 1000), EndpointMemory: 64 << 20, Tracker: tk,
			Receiver: rs[i], ErrConfig: errors.New("bad configuration")})
		if err != nil {
			t.Fatal(err)
		}
		trs[i] = tr
		t.Cleanup(func() { tr.ShutdownServer(); tr.Close() })
	}
	return trs, rs
}

// waitSnapshots waits until node tr began k more termination snapshots.
func waitSnapshots(t *testing.T, tr *HTTPTransport, k uint64) {
	t.Helper()
	want := tr.snapshots.Load() + k
	crawltest.WaitFor(t, fmt.Sprintf("node %d to begin %d snapshots", tr.self, k), 20*time.Second, func() bool { return tr.snapshots.Load() >= want })
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: the crawl's end was not detected", what)
	}
}

// TestTerminationWaitsForStart: a node whose endpoint is up but which
// has not queued its seeds yet is busy, whatever its counters say; the
// others, idle, must not end the crawl before it starts (the 5 s idle
// grace used to cover this window). Once it starts, with nothing to do,
// every node detects the end, and the decision is complete.
func TestTerminationWaitsForStart(t *testing.T) {
	t.Parallel() // waits on its servers and timers, not the CPU
	trs, _ := termCluster(t, 3)
	trs[0].Started()
	trs[1].Started()
	outs := watchAll(t, trs)
	endHeldBy(t, trs, outs, 2, "had not started", trs[2].Started)
	for i, tr := range trs {
		if !tr.Complete() {
			t.Errorf("node %d: decision not complete", i)
		}
	}
}

// TestTerminationWaitsForWork: a batch sent by an idle-looking sender
// makes its receiver busy; the crawl must not end while the receiver
// holds the work it got (counters changed between snapshots, then the
// receiver is busy), and ends once the work is done.
func TestTerminationWaitsForWork(t *testing.T) {
	t.Parallel() // waits on its servers and timers, not the CPU
	trs, rs := termCluster(t, 3)
	for _, tr := range trs {
		tr.Started()
	}
	trs[0].Send(1, &Batch{URLs: []string{"http://h1.test/a"}, Kinds: []string{"link"}, Source: []uint64{0}})
	outs := watchAll(t, trs)
	crawltest.WaitFor(t, "node 1 to receive the batch", 20*time.Second, func() bool { return rs[1].holding() != 0 })
	endHeldBy(t, trs, outs, 1, "had work", rs[1].release)
	if s := trs[0].status(); s.Sent != 1 {
		t.Errorf("node 0 status %+v, want 1 batch acknowledged", s)
	}
	// Every node learned of the end from another or decided itself, and
	// knows that every peer knows: none lingers.
	for i, tr := range trs {
		for j := range trs {
			if j != i && !tr.finKnown[j].Load() {
				t.Errorf("node %d does not know that node %d decided", i, j)
			}
		}
	}
}

// watchAll starts every node's termination detection, until the test
// ends.
func watchAll(t *testing.T, trs []*HTTPTransport) []<-chan struct{} {
	var outs []<-chan struct{}
	for _, tr := range trs {
		outs = append(outs, tr.WatchTermination(t.Context()))
	}
	return outs
}

// endHeldBy checks that node busy holds the crawl's end while it is
// busy (why): the other nodes begin 5 termination snapshots each and
// none decides the crawl is over; once unblock has run, every node
// detects the end.
func endHeldBy(t *testing.T, trs []*HTTPTransport, outs []<-chan struct{}, busy int, why string, unblock func()) {
	t.Helper()
	for i, tr := range trs {
		if i != busy {
			waitSnapshots(t, tr, 5)
		}
	}
	for i, o := range outs {
		if closed(o) {
			t.Fatalf("node %d decided the crawl is over while node %d %s", i, busy, why)
		}
	}
	unblock()
	for i, o := range outs {
		waitClosed(t, fmt.Sprintf("node %d", i), o)
	}
}

// TestShutdownClosesUnusedConns: a connection a peer dialled and never
// sent a request on does not hold the node's exit: ShutdownServer closes
// it (http.Server.Shutdown alone waits for it until it is 5 s old, then
// gives up on its 2 s deadline and leaves it open).
func TestShutdownClosesUnusedConns(t *testing.T) {
	ln := crawltest.Listen(t)
	addrs := []string{ln.Addr().String(), "127.0.0.1:1"}
	tr := startTransport(t, 0, "shut", addrs, ln, nil, nil)
	defer tr.Close()
	unused, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer unused.Close()
	crawltest.WaitFor(t, "the server to take the connection", 10*time.Second, func() bool {
		tr.connMu.Lock()
		defer tr.connMu.Unlock()
		return len(tr.fresh) == 1
	})
	tr.ShutdownServer()
	// Closed before ShutdownServer returned, the connection reads EOF at
	// once; left open, it would wait for the read deadline (the server's
	// own 10 s header timeout is far off).
	unused.SetReadDeadline(time.Now().Add(time.Second))
	if n, err := unused.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("after ShutdownServer, the unused connection read %d bytes, %v; want it closed by the node (EOF)", n, err)
	}
}

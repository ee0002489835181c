package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// syncBuffer is a log output read while the transports write it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPollAfterHandshake: a node whose first contact with a peer of
// another topology is the termination rule's status poll (it came before
// the failure detector's handshake) still finds the mismatch through the
// handshake, so both nodes stop naming what differs. Without the
// handshake first, the peer refused the poll's topology hash and stopped
// with only that in its log (the cause of a flake of
// TestPeerHandshakeRefuses in cmd/crawltrace).
func TestPollAfterHandshake(t *testing.T) {
	var logs syncBuffer
	defer log.SetOutput(log.Writer())
	log.SetOutput(&logs)
	lns, addrs := crawltest.Listeners(t, 2)
	errConfig := errors.New("bad configuration")
	var mu sync.Mutex
	stopped := map[int]error{}
	var trs []*HTTPTransport
	for i, crawl := range []string{"one", "another"} {
		tr := startTransport(t, i, crawl, addrs, lns[i], errConfig, func(err error) { mu.Lock(); stopped[i] = err; mu.Unlock() })
		defer tr.Close()
		trs = append(trs, tr)
	}
	// Node 1 polls node 0 first (the failure detector's first beat is
	// seconds away with this peer timeout).
	if _, _, ok := trs[1].snapshot(); ok {
		t.Fatal("a snapshot across two topologies succeeded")
	}
	// Both nodes stop (or the wait ends and the errors below say which did not).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	crawltest.Until(ctx, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(stopped) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	for i := range 2 {
		err := stopped[i]
		if err == nil || !errors.Is(err, errConfig) || !strings.Contains(err.Error(), "peer handshake") || !strings.Contains(err.Error(), "--crawl-id: here") {
			t.Errorf("node %d stopped with %v, want the handshake's refusal naming --crawl-id; logs:\n%s", i, err, logs.String())
		}
	}
}

// startTransport starts node i of a crawl of len(addrs) nodes on ln, with
// timeouts long enough that only what a test does talks to the peers.
func startTransport(t *testing.T, i int, crawl string, addrs []string, ln net.Listener, errConfig error, onError func(error)) *HTTPTransport {
	t.Helper()
	dir := t.TempDir()
	topo := Topology{Format: TopologyFormat, CrawlID: crawl, Nodes: len(addrs), NodeID: i, Peers: addrs, Partitioner: "host",
		PolitenessKey: "host", Fingerprint: FingerprintScheme}
	tr, err := NewHTTPTransport(Options{Self: i, Peers: addrs, Listener: ln, Token: "T", Epoch: 1, Topology: topo,
		StateDir: dir, Outbox: dir + "/outbox", PeerTimeout: time.Hour,
		MaxBody: MaxBatchBytes(0, 0, 1000), EndpointMemory: 64 << 20, Tracker: NewTracker(),
		Receiver: &testReceiver{log: NewBatchLog()}, ErrConfig: errConfig, OnError: onError})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestMismatchToldToLatePeer: a node stopping on a topology mismatch
// greets a peer that is not listening yet again until it is, so that a
// peer started after the others had stopped still learns why and stops
// (greeted once, it waited for ever for peers that were gone: a flake of
// TestPeerHandshakeRefuses under load).
func TestMismatchToldToLatePeer(t *testing.T) {
	var logs syncBuffer
	defer log.SetOutput(log.Writer())
	log.SetOutput(&logs)
	ln0 := crawltest.Listen(t)
	// Node 1 is not up yet: its address hangs up on whoever calls, until
	// node 1 starts on it.
	ln1 := newLateListener(t)
	addrs := []string{ln0.Addr().String(), ln1.Addr().String()}
	errConfig := errors.New("bad configuration")
	tr0 := startTransport(t, 0, "one", addrs, ln0, errConfig, nil)
	defer tr0.Close()
	// Node 0 stops on a mismatch found with another node.
	tr0.failTopology(fmt.Errorf("%w: peer handshake: a mismatch with another node", errConfig))
	drained := make(chan struct{})
	go func() {
		// Then it is gone, as the process exits.
		tr0.Drain(100 * time.Millisecond)
		tr0.ShutdownServer()
		tr0.Close()
		close(drained)
	}()
	// Node 1 starts once node 0 has greeted it in vain.
	crawltest.WaitFor(t, "node 0 to greet node 1 while it is down", 10*time.Second, func() bool { return ln1.hungUp.Load() > 0 })
	ln1.up()
	told := make(chan error, 1)
	tr1 := startTransport(t, 1, "another", addrs, ln1, errConfig, func(err error) { told <- err })
	defer tr1.Close()
	select {
	case err := <-told:
		if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), "peer handshake") || !strings.Contains(err.Error(), "--crawl-id: here") {
			t.Errorf("node 1 stopped with %v, want the handshake's refusal naming --crawl-id", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("node 1, started after node 0 stopped, never heard of the mismatch; logs:\n%s", logs.String())
	}
	<-drained
}

// TestMismatchNotRetoldToGonePeer: a node stopping on a topology mismatch
// greets once, and does not greet again, a peer that was up (it greeted
// this node) and is silent now: that peer has stopped. Greeting it again
// until the tell's deadline held every node of a crawl whose --peers were
// in another order for 10 s after the refusal.
func TestMismatchNotRetoldToGonePeer(t *testing.T) {
	defer log.SetOutput(log.Writer())
	log.SetOutput(io.Discard)
	ln0, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lnUp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Node 1's address hangs up on whoever calls (counted): node 1 has
	// gone; it greeted node 0 from a listener of its own before.
	gone := newLateListener(t)
	addrs := []string{ln0.Addr().String(), gone.Addr().String()}
	errConfig := errors.New("bad configuration")
	tr0 := startTransport(t, 0, "one", addrs, ln0, errConfig, nil)
	defer tr0.Close()
	tr1 := startTransport(t, 1, "one", addrs, lnUp, errConfig, nil)
	if err := tr1.greet(0); err != nil {
		t.Fatalf("node 1's hello to node 0: %v", err)
	}
	tr1.ShutdownServer()
	tr1.Close()
	tr0.failTopology(fmt.Errorf("%w: peer handshake: a mismatch with another node", errConfig))
	tr0.Drain(100 * time.Millisecond)
	if n := gone.hungUp.Load(); n != 1 {
		t.Errorf("node 0 greeted the gone node 1 %d times at its stop, want once", n)
	}
}

// lateListener is the address of a node that is not up yet: it hangs up
// on every connection (counted in hungUp), as a port nobody listens on
// refuses it, until up; then Accept hands the connections to the node
// that listens on it.
type lateListener struct {
	net.Listener
	hungUp  atomic.Int64
	started atomic.Bool
	conns   chan net.Conn
}

func newLateListener(t *testing.T) *lateListener {
	ln := crawltest.Listen(t)
	l := &lateListener{Listener: ln, conns: make(chan net.Conn)}
	go func() {
		defer close(l.conns)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !l.started.Load() {
				c.Close()
				l.hungUp.Add(1)
				continue
			}
			l.conns <- c
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return l
}

// up starts passing connections to Accept.
func (l *lateListener) up() { l.started.Store(true) }

func (l *lateListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}

package peer

import (
	"bytes"
	"errors"
	"log"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
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
	var lns []net.Listener
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		addrs = append(addrs, ln.Addr().String())
	}
	errConfig := errors.New("bad configuration")
	var mu sync.Mutex
	stopped := map[int]error{}
	var trs []*HTTPTransport
	for i, crawl := range []string{"one", "another"} {
		dir := t.TempDir()
		topo := Topology{Format: TopologyFormat, CrawlID: crawl, Nodes: 2, NodeID: i, Peers: addrs, Partitioner: "host",
			PolitenessKey: "host", Fingerprint: FingerprintScheme}
		tr, err := NewHTTPTransport(Options{Self: i, Peers: addrs, Listener: lns[i], Token: "T", Epoch: 1, Topology: topo,
			StateDir: dir, Outbox: dir + "/outbox", PeerTimeout: time.Hour, IdleGrace: time.Hour,
			MaxBody: MaxBatchBytes(0, 0, 1000), EndpointMemory: 64 << 20, Tracker: NewTracker(),
			Receiver: &testReceiver{log: NewBatchLog()}, ErrConfig: errConfig,
			OnError: func(err error) { mu.Lock(); stopped[i] = err; mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		trs = append(trs, tr)
	}
	// Node 1 polls node 0 first (the failure detector's first beat is
	// seconds away with this peer timeout).
	if _, _, ok := trs[1].snapshot(); ok {
		t.Fatal("a snapshot across two topologies succeeded")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(stopped)
		mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range 2 {
		err := stopped[i]
		if err == nil || !errors.Is(err, errConfig) || !strings.Contains(err.Error(), "peer handshake") || !strings.Contains(err.Error(), "--crawl-id: here") {
			t.Errorf("node %d stopped with %v, want the handshake's refusal naming --crawl-id; logs:\n%s", i, err, logs.String())
		}
	}
}

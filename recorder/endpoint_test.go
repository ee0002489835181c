package recorder

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/partition"
)

// testEndpoint runs node 0's batch endpoint of a 3-node crawl over a
// running splitter.
func testEndpoint(t *testing.T) (*httpTransport, *splitter, string) {
	t.Helper()
	tr := newTracker()
	s := &splitter{node: 0, part: partition.Host{N: 3}, log: newBatchLog(), in: make(chan *splitMsg, 8), tr: tr,
		due: NewDUE(64), front: newFrontier(OrderBFS, 1), out: make([]*Batch, 3), seqs: make([]uint64, 3),
		batchSize: 10, flushTick: time.Second, now: time.Now, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	t.Cleanup(func() { close(s.stop); <-s.done })
	ht := &httpTransport{self: 0, epoch: 1, token: "T", peers: []string{"a:1", "b:1", "c:1"}, tr: tr, recv: s,
		finished: make(chan struct{}), known: make([]uint64, 3), heard: make([]time.Time, 3), dead: make([]bool, 3),
		logf: t.Logf}
	for range 3 {
		ht.queues = append(ht.queues, &peerQueue{ready: make(chan struct{}, 1)})
	}
	srv := httptest.NewServer(http.HandlerFunc(ht.handleBatch))
	t.Cleanup(srv.Close)
	return ht, s, srv.URL
}

func postBatch(t *testing.T, url, auth, senderEpoch string, body []byte) (int, BatchAck) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", BatchContentType)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if senderEpoch != "" {
		req.Header.Set(HeaderEpoch, senderEpoch)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ack BatchAck
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&ack); err != nil {
			t.Fatalf("ack: %v", err)
		}
	}
	return resp.StatusCode, ack
}

// TestBatchEndpoint: a batch id is processed once per (sender, epoch,
// seq); a new incarnation's batches are new even with the same seq; wrong
// tokens, garbage, bad ids and stale epochs are refused, and the node
// keeps serving.
func TestBatchEndpoint(t *testing.T) {
	ht, s, url := testEndpoint(t)
	batch := func(from int, epoch, seq uint64, u string) []byte {
		b, err := encodeBatchBytes(&Batch{From: from, Epoch: epoch, Seq: seq, URLs: []string{u}, Kinds: []string{"link"}, Source: []uint64{1}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name     string
		auth     string
		epoch    string
		body     []byte
		code     int
		new      bool
		received uint64
	}{
		{"no token", "", "1", batch(1, 1, 1, "http://h/a"), 401, false, 0},
		{"wrong token", "Bearer wrong", "1", batch(1, 1, 1, "http://h/a"), 401, false, 0},
		{"garbage", "Bearer T", "1", []byte("definitely not arrow"), 400, false, 0},
		{"garbage with a length prefix", "Bearer T", "1", []byte("\xff\xff\xff\xffgarbage"), 400, false, 0},
		{"no epoch header", "Bearer T", "", batch(1, 1, 1, "http://h/a"), 400, false, 0},
		{"from self", "Bearer T", "1", batch(0, 1, 1, "http://h/a"), 400, false, 0},
		{"from unknown node", "Bearer T", "1", batch(7, 1, 1, "http://h/a"), 400, false, 0},
		{"batch epoch after sender's", "Bearer T", "1", batch(1, 2, 1, "http://h/a"), 400, false, 0},
		{"first", "Bearer T", "1", batch(1, 1, 1, "http://h/a"), 200, true, 1},
		{"resend", "Bearer T", "1", batch(1, 1, 1, "http://h/a"), 200, false, 1},
		{"next seq", "Bearer T", "1", batch(1, 1, 2, "http://h/b"), 200, true, 2},
		{"other sender, same seq", "Bearer T", "1", batch(2, 1, 1, "http://h/c"), 200, true, 3},
		{"restarted sender, seq 1 again", "Bearer T", "2", batch(1, 2, 1, "http://h/d"), 200, true, 4},
		{"old batch resent by new incarnation", "Bearer T", "2", batch(1, 1, 2, "http://h/b"), 200, false, 4},
		{"old batch never seen, resent", "Bearer T", "2", batch(1, 1, 3, "http://h/e"), 200, true, 5},
		{"stale epoch", "Bearer T", "1", batch(1, 1, 9, "http://h/f"), 409, false, 5},
	} {
		code, ack := postBatch(t, url, tc.auth, tc.epoch, tc.body)
		if code != tc.code || ack.New != tc.new || ht.received.Load() != tc.received {
			t.Errorf("%s: %d new=%v received=%d, want %d new=%v received=%d", tc.name, code, ack.New, ht.received.Load(), tc.code, tc.new, tc.received)
		}
		if code == 200 && (ack.Node != 0 || ack.Epoch != 1) {
			t.Errorf("%s: ack %+v", tc.name, ack)
		}
	}
	if got := ht.known[1]; got != 2 {
		t.Errorf("known epoch of node 1: %d, want 2", got)
	}
	if q, _ := s.front.sizes(); q != 5 {
		t.Errorf("frontier holds %d URLs, want 5", q)
	}
}

func TestBatchLogCheckpoint(t *testing.T) {
	l := newBatchLog()
	for _, q := range []uint64{1, 2, 3, 5, 8} {
		l.record(1, 2, q)
	}
	l.record(2, 1, 1)
	if l.through(1, 2) != 3 || !l.seen(1, 2, 8) || l.seen(1, 2, 4) || l.seen(1, 1, 1) {
		t.Fatalf("batch log: %+v", l.m[batchKey{1, 2}])
	}
	var buf bytes.Buffer
	if err := l.saveCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	m := newBatchLog()
	if err := m.loadCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	for _, q := range []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9} {
		if l.seen(1, 2, q) != m.seen(1, 2, q) {
			t.Errorf("seq %d differs after reload", q)
		}
	}
	if !m.seen(2, 1, 1) || m.through(1, 2) != 3 {
		t.Error("reload lost entries")
	}
}

// TestDurableMarksDeleteOutbox: once a receiver's status reports a batch
// durable (its checkpoint covers it), the sender deletes it from its
// outbox; batches not covered stay.
func TestDurableMarksDeleteOutbox(t *testing.T) {
	dir := t.TempDir()
	ht := &httpTransport{self: 0, epoch: 3, queues: []*peerQueue{{}, {}}}
	for seq := uint64(1); seq <= 3; seq++ {
		p := dir + "/" + outboxName(1, 3, seq)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		ht.queues[1].acked = append(ht.queues[1].acked, &outItem{path: p, epoch: 3, seq: seq, ackedBy: 1})
	}
	ht.forgetDurable(1, []DurableMark{{From: 0, Epoch: 3, Through: 2}, {From: 2, Epoch: 3, Through: 9}})
	if len(ht.queues[1].acked) != 1 || ht.queues[1].acked[0].seq != 3 {
		t.Fatalf("kept %d batches", len(ht.queues[1].acked))
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 {
		t.Errorf("%d outbox files left, want 1", len(left))
	}
}

// TestDurableMarksAreTheCheckpoints: a receiver reports as durable the
// batch ids its last complete checkpoint saved, not what it processed
// since: a batch processed after the cut is lost if the receiver crashes,
// so its sender must keep it.
func TestDurableMarksAreTheCheckpoints(t *testing.T) {
	s := &splitter{log: newBatchLog()}
	for q := uint64(1); q <= 3; q++ {
		s.log.record(1, 2, q)
	}
	if m := s.durable.Load(); m != nil {
		t.Fatalf("durable before any checkpoint: %+v", *m)
	}
	if err := s.log.saveCheckpoint(io.Discard); err != nil {
		t.Fatal(err)
	}
	s.log.record(1, 2, 4) // processed after the cut
	s.checkpointed()      // the checkpoint holding seqs 1-3 is complete
	m := s.durable.Load()
	if m == nil || len(*m) != 1 || (*m)[0] != (DurableMark{From: 1, Epoch: 2, Through: 3}) {
		t.Fatalf("durable after the checkpoint: %+v, want node 1 epoch 2 through 3", m)
	}
}

package peer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/bytebudget"
	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// testReceiver is a node's splitter as the endpoint sees it: it processes
// each batch id once (its batch log) and keeps the URLs of the batches it
// processed.
type testReceiver struct {
	mu   sync.Mutex
	log  *BatchLog
	urls []string
}

func (r *testReceiver) Receive(b *Batch) bool { r.ReceiveBatch(b); return true }

func (r *testReceiver) ReceiveBatch(b *Batch) (isNew, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.log.Seen(b.From, b.Epoch, b.Seq) {
		return false, true
	}
	r.log.Record(b.From, b.Epoch, b.Seq)
	r.urls = append(r.urls, b.URLs...)
	return true, true
}

func (r *testReceiver) Durable() []DurableMark { return nil }

func (r *testReceiver) received() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.urls)
}

// testEndpoint runs node 0's batch endpoint of a 3-node crawl over a
// receiver.
func testEndpoint(t *testing.T) (*HTTPTransport, *testReceiver, string) {
	t.Helper()
	tr := NewTracker()
	s := &testReceiver{log: NewBatchLog()}
	peers := []string{"a:1", "b:1", "c:1"}
	topo := Topology{Format: TopologyFormat, CrawlID: "test", Nodes: 3, Peers: peers, Partitioner: "host",
		PolitenessKey: "host", Fingerprint: FingerprintScheme}
	ht := &HTTPTransport{self: 0, token: "T", peers: peers, tr: tr, recv: s, events: noEvents{},
		errConfig: errors.New("bad configuration"),
		finished:  make(chan struct{}), known: make([]uint64, 3), heard: make([]time.Time, 3), dead: make([]bool, 3),
		topo: topo, greeted: make([]atomic.Bool, 3), helloKnown: make([]atomic.Uint64, 3), seenEpoch: make([]atomic.Uint64, 3), greetMu: make([]sync.Mutex, 3),
		maxBody: MaxBatchBytes(0, 0, 1000), sem: make(chan struct{}, 3), bodyTimeout: 2 * time.Second, mem: bytebudget.New(64 << 20),
		logf: t.Logf}
	ht.topoHash = ht.topo.Hash()
	testTopoHash = ht.topoHash
	ht.epoch.Store(1)
	for range 3 {
		ht.queues = append(ht.queues, &peerQueue{ready: make(chan struct{}, 1)})
	}
	ht.store = newOutStore(t.TempDir(), 32<<20, nil, t.Logf)
	srv := httptest.NewServer(http.HandlerFunc(ht.handleBatch))
	t.Cleanup(srv.Close)
	return ht, s, srv.URL
}

// testTopoHash is the topology hash of the last testEndpoint.
var testTopoHash string

func postBatch(t *testing.T, url, auth, senderEpoch string, body []byte) (int, BatchAck) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", BatchContentType)
	req.Header.Set(HeaderTopology, testTopoHash)
	req.Header.Set(HeaderTo, "0")
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
	if q := s.received(); q != 5 {
		t.Errorf("receiver holds %d URLs, want 5", q)
	}
}

func TestBatchLogCheckpoint(t *testing.T) {
	l := NewBatchLog()
	for _, q := range []uint64{1, 2, 3, 5, 8} {
		l.Record(1, 2, q)
	}
	l.Record(2, 1, 1)
	if l.Through(1, 2) != 3 || !l.Seen(1, 2, 8) || l.Seen(1, 2, 4) || l.Seen(1, 1, 1) {
		t.Fatalf("batch log: %+v", l.m[batchKey{1, 2}])
	}
	var buf bytes.Buffer
	if err := l.Save(&buf); err != nil {
		t.Fatal(err)
	}
	m := NewBatchLog()
	if err := m.Load(&buf); err != nil {
		t.Fatal(err)
	}
	for _, q := range []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9} {
		if l.Seen(1, 2, q) != m.Seen(1, 2, q) {
			t.Errorf("seq %d differs after reload", q)
		}
	}
	if !m.Seen(2, 1, 1) || m.Through(1, 2) != 3 {
		t.Error("reload lost entries")
	}
}

// rawPost writes a batch request's headers by hand on a new connection,
// declaring length bytes of body, then body (which may be shorter), and
// returns the connection.
func rawPost(t *testing.T, addr string, length int64, chunked bool, body []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h := "POST " + PathBatch + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer T\r\nContent-Type: " + BatchContentType +
		"\r\n" + HeaderTopology + ": " + testTopoHash + "\r\n" + HeaderTo + ": 0\r\n" + HeaderEpoch + ": 1\r\n"
	if chunked {
		h += "Transfer-Encoding: chunked\r\n"
	} else {
		h += "Content-Length: " + strconv.FormatInt(length, 10) + "\r\n"
	}
	if _, err := io.WriteString(c, h+"\r\n"); err != nil {
		t.Fatal(err)
	}
	c.Write(body)
	return c
}

// answerCode reads the status code of the answer on c within d: 0 when
// the server closed the connection without one, -1 when nothing came.
func answerCode(c net.Conn, d time.Duration) int {
	c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return -1
	}
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBatchEndpointBounds (issue 21, case 6): a body declared larger than
// the batch limit is refused before it is read (the whole 100 MB never
// sent), a body without a length too; at most the semaphore's capacity
// of batches is read at once (then 503 with Retry-After); a slow body is
// cut at the read deadline and its slot freed; a batch whose memory does
// not fit the endpoint's budget waits (503). A batch for another node is
// refused (421), one of another topology (412) too, and stops the crawl.
func TestBatchEndpointBounds(t *testing.T) {
	t.Parallel() // waits on its servers and timers, not the CPU
	ht, _, url := testEndpoint(t)
	addr := strings.TrimPrefix(url, "http://")
	if c := rawPost(t, addr, 100<<20, false, nil); answerCode(c, 5*time.Second) != http.StatusRequestEntityTooLarge {
		t.Error("a 100 MB body was not refused at once with 413")
	}
	if c := rawPost(t, addr, 0, true, nil); answerCode(c, 5*time.Second) != http.StatusLengthRequired {
		t.Error("a chunked body was not refused with 411")
	}
	good, err := encodeBatchBytes(&Batch{From: 1, Epoch: 1, Seq: 1, URLs: []string{"http://h/a"}, Kinds: []string{"link"}, Source: []uint64{1}})
	if err != nil {
		t.Fatal(err)
	}
	// Three slow bodies hold the three slots: the fourth batch is told
	// to come back.
	var slow []net.Conn
	for range cap(ht.sem) {
		slow = append(slow, rawPost(t, addr, int64(len(good)), false, good[:10]))
	}
	crawltest.WaitFor(t, "the slow bodies to take every slot", 10*time.Second, func() bool { return len(ht.sem) == cap(ht.sem) })
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(good))
	req.Header.Set("Authorization", "Bearer T")
	req.Header.Set("Content-Type", BatchContentType)
	req.Header.Set(HeaderTopology, testTopoHash)
	req.Header.Set(HeaderTo, "0")
	req.Header.Set(HeaderEpoch, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("batch beyond the concurrency cap: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// The read deadline (2 s here) ends the slow bodies and frees the
	// slots; then a batch goes through.
	for _, c := range slow {
		if code := answerCode(c, 10*time.Second); code != http.StatusBadRequest && code != 0 {
			t.Errorf("slow body: answer %d, want 400 or a closed connection after the read deadline", code)
		}
	}
	crawltest.WaitFor(t, "the slots to be free", 10*time.Second, func() bool { return len(ht.sem) == 0 })
	if code, ack := postBatch(t, url, "Bearer T", "1", good); code != 200 || !ack.New {
		t.Errorf("batch after the slow ones: %d %+v", code, ack)
	}
	// Memory: a budget smaller than what is held makes batches wait.
	ht.mem = bytebudget.New(int64(len(good)))
	ht.mem.Acquire(1)
	if code, _ := postBatch(t, url, "Bearer T", "1", good); code != http.StatusServiceUnavailable {
		t.Errorf("batch over the memory budget: %d, want 503", code)
	}
	ht.mem.Release(1)
	if code, _ := postBatch(t, url, "Bearer T", "1", good); code != 200 {
		t.Errorf("batch within the memory budget: %d", code)
	}
	// Addressed to another node; another topology.
	for _, tc := range []struct {
		header, value string
		code          int
	}{{HeaderTo, "1", http.StatusMisdirectedRequest}, {HeaderTopology, "0123", http.StatusPreconditionFailed}} {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(good))
		req.Header.Set("Authorization", "Bearer T")
		req.Header.Set("Content-Type", BatchContentType)
		req.Header.Set(HeaderTopology, testTopoHash)
		req.Header.Set(HeaderTo, "0")
		req.Header.Set(HeaderEpoch, "1")
		req.Header.Set(tc.header, tc.value)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s %s: %d, want %d", tc.header, tc.value, resp.StatusCode, tc.code)
		}
	}
	if !ht.mismatch.Load() {
		t.Error("a batch of another topology did not stop the crawl")
	}
}

// TestEpochMovesPast: a node moves its epoch past a peer's view of it,
// saves it, and numbers its next batches from 1 in the new epoch.
func TestEpochMovesPast(t *testing.T) {
	dir := t.TempDir()
	ht, _, _ := testEndpoint(t)
	ht.stateDir, ht.outbox = dir, dir
	ht.Send(1, &Batch{URLs: []string{"http://h/a"}})
	ht.moveEpochPast(999, "test")
	ht.moveEpochPast(5, "an older view changes nothing")
	b := &Batch{URLs: []string{"http://h/b"}}
	ht.Send(1, b)
	if ht.epoch.Load() != 1000 || b.Epoch != 1000 || b.Seq != 1 {
		t.Errorf("epoch %d, batch %d/%d: want 1000, 1000/1", ht.epoch.Load(), b.Epoch, b.Seq)
	}
	if e, err := ReadEpoch(dir); err != nil || e != 1000 {
		t.Errorf("epoch file holds %d (%v), want 1000", e, err)
	}
	ht.moveEpochPast(maxEpoch+1, "absurd")
	if ht.epoch.Load() != 1000 {
		t.Errorf("an epoch past maxEpoch moved the node to %d", ht.epoch.Load())
	}
}

// TestRestampRenumbers: batches queued for a peer under an epoch the peer
// has seen another copy of this node use get new ids in the new epoch,
// in their bodies too; batches of older incarnations (loaded from
// the outbox) keep theirs.
func TestRestampRenumbers(t *testing.T) {
	dir := t.TempDir()
	ht, _, _ := testEndpoint(t)
	ht.stateDir, ht.outbox, ht.firstEpoch = dir, dir, 1
	old := &outItem{epoch: 0, seq: 7} // from an incarnation before this one
	ht.queues[1].items = append(ht.queues[1].items, old)
	for _, u := range []string{"http://h/a", "http://h/b"} {
		ht.Send(1, &Batch{URLs: []string{u}})
	}
	ht.moveEpochPast(1, "peer 1 processed batches of epoch 1")
	ht.restamp(1, 1)
	var ids []string
	for _, it := range ht.queues[1].items {
		ids = append(ids, fmt.Sprintf("%d/%d", it.epoch, it.seq))
	}
	if strings.Join(ids, " ") != "0/7 2/1 2/2" {
		t.Errorf("ids after restamp: %v, want 0/7 2/1 2/2", ids)
	}
	// The bodies the senders post carry the new ids.
	for _, it := range ht.queues[1].items[1:] {
		if b := ht.itemBatch(it); b == nil || b.Epoch != it.epoch || b.Seq != it.seq {
			t.Errorf("batch %d/%d reads back as %+v", it.epoch, it.seq, b)
		}
	}
}

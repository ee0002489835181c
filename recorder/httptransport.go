package recorder

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// HTTP endpoints of a node in TCP mode. Every request carries
// "Authorization: Bearer TOKEN"; without it the node answers 401.
const (
	PathBatch  = "/v1/batch"  // POST one Batch (BatchContentType)
	PathStatus = "/v1/status" // GET NodeStatus as JSON
	PathFinish = "/v1/finish" // POST: a node observed global termination
)

// NodeStatus is a node's answer on PathStatus.
type NodeStatus struct {
	Node     int    `json:"node"`
	Idle     bool   `json:"idle"`     // frontier empty, no fetch in flight, nothing queued for peers
	Sent     uint64 `json:"sent"`     // batches acknowledged by peers
	Received uint64 `json:"received"` // distinct batches accepted from peers
	Finished bool   `json:"finished"` // the node decided the crawl is over
}

// spillURLs is how many URLs a peer queue keeps in memory before further
// batches are spilled to disk.
const spillURLs = 1 << 20

// httpTransport sends batches to peers as Arrow IPC streams over HTTP POST
// and serves this node's endpoints. A batch for a peer that is down stays
// in the peer's queue (spilled to files when large) and is retried with
// backoff until the peer takes it; receivers drop repeated (from, seq)
// pairs, so a resend after a lost acknowledgement is harmless.
type httpTransport struct {
	self     int
	token    string
	peers    []string
	tr       *tracker
	recv     receiver
	client   *http.Client
	srv      *http.Server
	ln       net.Listener
	queues   []*peerQueue
	spillDir string
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
	sent     atomic.Uint64
	received atomic.Uint64
	seenMu   sync.Mutex
	seen     map[int]map[uint64]bool
	finished chan struct{}
	finOnce  sync.Once
	poll     time.Duration
	grace    time.Duration
	decided  atomic.Bool
}

type peerQueue struct {
	mu    sync.Mutex
	items []queued
	mem   int
	ready chan struct{}
}

type queued struct {
	b    *Batch
	path string // spilled to disk when b == nil
}

func newHTTPTransport(cfg *Config, tr *tracker, recv receiver, nodeDir string) (*httpTransport, error) {
	listen := cfg.Listen
	if listen == "" {
		listen = cfg.Peers[cfg.NodeID]
	}
	ln := cfg.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", listen); err != nil {
			return nil, fmt.Errorf("recorder: listen %s: %w", listen, err)
		}
	}
	t := &httpTransport{self: cfg.NodeID, token: cfg.Token, peers: cfg.Peers, tr: tr, recv: recv, ln: ln,
		client:   &http.Client{Timeout: 10 * time.Second},
		spillDir: filepath.Join(nodeDir, "spill"), stop: make(chan struct{}),
		seen: make(map[int]map[uint64]bool), finished: make(chan struct{}),
		grace: cfg.IdleGrace, poll: max(cfg.IdleGrace/4, 20*time.Millisecond)}
	mux := http.NewServeMux()
	mux.HandleFunc(PathBatch, t.handleBatch)
	mux.HandleFunc(PathStatus, t.handleStatus)
	mux.HandleFunc(PathFinish, t.handleFinish)
	t.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go t.srv.Serve(ln)
	for i := range cfg.Peers {
		q := &peerQueue{ready: make(chan struct{}, 1)}
		t.queues = append(t.queues, q)
		if i != t.self {
			t.wg.Add(1)
			go t.sender(i, q)
		}
	}
	return t, nil
}

// Addr is the listener's address.
func (t *httpTransport) Addr() string { return t.ln.Addr().String() }

func (t *httpTransport) authorized(r *http.Request) bool {
	want := "Bearer " + t.token
	got := r.Header.Get("Authorization")
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func (t *httpTransport) handleBatch(w http.ResponseWriter, r *http.Request) {
	if !t.authorized(r) {
		http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != BatchContentType {
		http.Error(w, "want "+BatchContentType, http.StatusUnsupportedMediaType)
		return
	}
	b, err := DecodeBatch(http.MaxBytesReader(w, r.Body, 256<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t.seenMu.Lock()
	m := t.seen[b.From]
	if m == nil {
		m = make(map[uint64]bool)
		t.seen[b.From] = m
	}
	dup := m[b.Seq]
	m[b.Seq] = true
	t.seenMu.Unlock()
	if dup {
		w.WriteHeader(http.StatusOK)
		return
	}
	if !t.recv.receive(b) {
		t.seenMu.Lock()
		delete(m, b.Seq)
		t.seenMu.Unlock()
		http.Error(w, "node stopping", http.StatusServiceUnavailable)
		return
	}
	t.received.Add(1)
	w.WriteHeader(http.StatusOK)
}

func (t *httpTransport) status() NodeStatus {
	fin := false
	select {
	case <-t.finished:
		fin = true
	default:
	}
	return NodeStatus{Node: t.self, Idle: t.tr.idle(), Sent: t.sent.Load(), Received: t.received.Load(),
		Finished: fin || t.decided.Load()}
}

func (t *httpTransport) handleStatus(w http.ResponseWriter, r *http.Request) {
	if !t.authorized(r) {
		http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(t.status())
}

func (t *httpTransport) handleFinish(w http.ResponseWriter, r *http.Request) {
	if !t.authorized(r) {
		http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	t.finOnce.Do(func() { close(t.finished) })
	w.WriteHeader(http.StatusOK)
}

// Send queues b for peer dest; it never blocks on the network.
func (t *httpTransport) Send(dest int, b *Batch) {
	t.tr.add(1)
	q := t.queues[dest]
	item := queued{b: b}
	q.mu.Lock()
	if q.mem+len(b.URLs) > spillURLs {
		if p, err := t.spill(dest, b); err == nil {
			item = queued{path: p}
		}
	}
	if item.b != nil {
		q.mem += len(b.URLs)
	}
	q.items = append(q.items, item)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (t *httpTransport) spill(dest int, b *Batch) (string, error) {
	if err := os.MkdirAll(t.spillDir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(t.spillDir, fmt.Sprintf("peer-%03d-%012d.arrows", dest, b.Seq))
	data, err := encodeBatchBytes(b)
	if err != nil {
		return "", err
	}
	return p, os.WriteFile(p, data, 0o644)
}

func (t *httpTransport) sender(dest int, q *peerQueue) {
	defer t.wg.Done()
	url := "http://" + t.peers[dest] + PathBatch
	backoff := 50 * time.Millisecond
	for {
		q.mu.Lock()
		var it queued
		has := len(q.items) > 0
		if has {
			it = q.items[0]
		}
		q.mu.Unlock()
		if !has {
			select {
			case <-t.stop:
				return
			case <-q.ready:
				continue
			}
		}
		var body []byte
		var err error
		if it.b != nil {
			body, err = encodeBatchBytes(it.b)
		} else {
			body, err = os.ReadFile(it.path)
		}
		if err == nil {
			err = t.post(url, body)
		}
		if err != nil {
			select {
			case <-t.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		q.mu.Lock()
		q.items[0] = queued{}
		q.items = q.items[1:]
		if it.b != nil {
			q.mem -= len(it.b.URLs)
		}
		q.mu.Unlock()
		if it.path != "" {
			os.Remove(it.path)
		}
		t.sent.Add(1)
		t.tr.add(-1)
	}
}

func (t *httpTransport) request(method, url string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	if body != nil {
		req.Header.Set("Content-Type", BatchContentType)
	}
	return t.client.Do(req)
}

func (t *httpTransport) post(url string, body []byte) error {
	resp, err := t.request(http.MethodPost, url, body)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("recorder: %s: %s", url, resp.Status)
	}
	return nil
}

func (t *httpTransport) peerStatus(i int) (NodeStatus, error) {
	if i == t.self {
		return t.status(), nil
	}
	resp, err := t.request(http.MethodGet, "http://"+t.peers[i]+PathStatus, nil)
	if err != nil {
		return NodeStatus{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return NodeStatus{}, errors.New(resp.Status)
	}
	var s NodeStatus
	err = json.NewDecoder(resp.Body).Decode(&s)
	return s, err
}

// watchTermination implements the TCP-mode termination rule. Every poll
// interval (IdleGrace/4) the node asks every node (itself included) for its
// status. The crawl is over when every node is reachable and idle, the sum
// of batches sent (acknowledged) equals the sum of distinct batches
// received, and every poll over at least IdleGrace has seen exactly the
// same counters (Mattern's four-counter method: equal counters in two
// snapshots that each find all nodes idle mean no batch was in transit).
// An unreachable node counts as busy (it may hold URLs). A node that
// concludes the crawl is over tells the others (PathFinish) and reports
// Finished in its status until it exits; a node hearing either stops too.
// Budgets (MaxPages, Duration) and signals stop a node on their own.
func (t *httpTransport) watchTermination(ctx context.Context, _ *tracker) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		tick := time.NewTicker(t.poll)
		defer tick.Stop()
		var since time.Time
		var lastSent, lastRecv uint64
		stable := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.finished:
				close(out)
				return
			case <-tick.C:
			}
			var sent, recv uint64
			ok := true
			for i := range t.peers {
				s, err := t.peerStatus(i)
				if err == nil && s.Finished && i != t.self {
					t.decided.Store(true)
					close(out)
					return
				}
				if err != nil || !s.Idle {
					ok = false
					break
				}
				sent += s.Sent
				recv += s.Received
			}
			if !ok || sent != recv || (stable && (sent != lastSent || recv != lastRecv)) {
				stable = false
				continue
			}
			if !stable {
				stable, since, lastSent, lastRecv = true, time.Now(), sent, recv
				continue
			}
			if time.Since(since) >= t.grace {
				t.decided.Store(true)
				for i := range t.peers {
					if i != t.self {
						if resp, err := t.request(http.MethodPost, "http://"+t.peers[i]+PathFinish, nil); err == nil {
							resp.Body.Close()
						}
					}
				}
				close(out)
				return
			}
		}
	}()
	return out
}

// shutdownServer stops the listener. A node that decided the crawl is over
// keeps answering status polls for two poll intervals first, so peers that
// missed the finish message see it.
func (t *httpTransport) shutdownServer() {
	if t.decided.Load() {
		time.Sleep(2 * t.poll)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	t.srv.Shutdown(ctx)
}

// Close stops the senders; batches still queued are abandoned and the
// spill directory removed.
func (t *httpTransport) Close() error {
	t.stopOnce.Do(func() { close(t.stop) })
	t.wg.Wait()
	t.srv.Close()
	os.RemoveAll(t.spillDir)
	return nil
}

// mergeManifest adds this node's entry to dir/manifest.json under an
// exclusive file lock, so the processes of a TCP crawl sharing one output
// directory build one manifest. An existing manifest of another crawl id is
// replaced.
func mergeManifest(dir string, m *tracefile.Manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(dir, "manifest.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("recorder: lock manifest: %w", err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	old, err := tracefile.ReadManifest(dir)
	if err == nil && old.CrawlID == m.CrawlID {
		for _, nm := range old.NodeInfo {
			mine := false
			for _, x := range m.NodeInfo {
				mine = mine || x.Node == nm.Node
			}
			if !mine {
				m.AddNode(nm.Node, nm.URLSegments, nm.PageSegments)
			}
		}
		if old.Created.Before(m.Created) {
			m.Created = old.Created
		}
		if old.Finished.After(m.Finished) {
			m.Finished = old.Finished
		}
	}
	return tracefile.WriteManifest(dir, m)
}

// The node's endpoint: the checks every request passes, the batch
// endpoint and its bounds, and the status answer.

package peer

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

func (t *HTTPTransport) authorized(r *http.Request) bool {
	want := "Bearer " + t.token
	got := r.Header.Get("Authorization")
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// refuse answers a bad request with code and msg, and logs one line.
func (t *HTTPTransport) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	t.refused.Add(1)
	t.logf("refused %s %s from %s: %d %s", r.Method, r.URL.Path, r.RemoteAddr, code, msg)
	// The connection closes after the answer: the server would otherwise
	// read the unread body first, as slowly as the client sends it.
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
}

// admitPost refuses a request without the crawl's token, or not a POST.
func (t *HTTPTransport) admitPost(w http.ResponseWriter, r *http.Request) bool {
	if !t.authorized(r) {
		t.refuse(w, r, http.StatusUnauthorized, "missing or wrong bearer token")
		return false
	}
	if r.Method != http.MethodPost {
		t.refuse(w, r, http.StatusMethodNotAllowed, "POST only")
		return false
	}
	return true
}

func (t *HTTPTransport) handleBatch(w http.ResponseWriter, r *http.Request) {
	if !t.admitPost(w, r) {
		return
	}
	if !t.checkPeerHeaders(w, r, true) {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != BatchContentType {
		t.refuse(w, r, http.StatusUnsupportedMediaType, "want "+BatchContentType)
		return
	}
	sender, err := strconv.ParseUint(r.Header.Get(HeaderEpoch), 10, 64)
	if err != nil || sender == 0 || sender > maxEpoch {
		t.refuse(w, r, http.StatusBadRequest, "missing or bad "+HeaderEpoch+" header")
		return
	}
	// Bounds before a byte of the body is read: its declared size, a
	// free slot, and memory for it and its decoded copy.
	switch {
	case r.ContentLength < 0:
		t.refuse(w, r, http.StatusLengthRequired, "a batch needs a Content-Length")
		return
	case r.ContentLength > t.maxBody:
		t.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("batch of %d bytes, the limit is %d", r.ContentLength, t.maxBody))
		return
	}
	select {
	case t.sem <- struct{}{}:
		defer func() { <-t.sem }()
	default:
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Connection", "close")
		t.refused.Add(1)
		http.Error(w, "too many batches in flight", http.StatusServiceUnavailable)
		return
	}
	need := 3 * r.ContentLength
	if !t.mem.TryAcquire(need) {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Connection", "close")
		t.refused.Add(1)
		http.Error(w, "batch memory in use", http.StatusServiceUnavailable)
		return
	}
	defer t.mem.Release(need)
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(t.bodyTimeout))
	b, err := DecodeBatch(http.MaxBytesReader(w, r.Body, r.ContentLength))
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		t.refuse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if b.From < 0 || b.From >= len(t.peers) || b.From == t.self {
		t.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("batch from node %d: not a peer", b.From))
		return
	}
	if b.Epoch == 0 || b.Epoch > sender {
		t.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("batch epoch %d of node %d: want 1..%d", b.Epoch, b.From, sender))
		return
	}
	if cur := t.observe(b.From, sender); sender < cur {
		w.Header().Set(HeaderEpochCurrent, strconv.FormatUint(cur, 10))
		t.refuse(w, r, http.StatusConflict, fmt.Sprintf("stale epoch %d of node %d (current %d)", sender, b.From, cur))
		return
	}
	if t.refusing.Load() {
		t.refused.Add(1)
		http.Error(w, "node stopping", http.StatusServiceUnavailable)
		return
	}
	isNew, ok := t.recv.ReceiveBatch(b)
	if !ok {
		t.refused.Add(1)
		http.Error(w, "node stopping", http.StatusServiceUnavailable)
		return
	}
	if isNew {
		t.received.Add(1)
	}
	for seen := &t.seenEpoch[b.From]; ; {
		if cur := seen.Load(); b.Epoch <= cur || seen.CompareAndSwap(cur, b.Epoch) {
			break
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(BatchAck{Node: t.self, Epoch: t.epoch.Load(), New: isNew})
}

// checkPeerHeaders refuses a request whose topology hash is not this
// node's (412; with a hash that differs the crawl stops, see failTopology)
// or that is meant for another node (421). Without need, a request with
// neither header passes (a status poll by a monitor).
func (t *HTTPTransport) checkPeerHeaders(w http.ResponseWriter, r *http.Request, need bool) bool {
	h, to := r.Header.Get(HeaderTopology), r.Header.Get(HeaderTo)
	if !need && h == "" && to == "" {
		return true
	}
	if h != t.topoHash {
		msg := fmt.Sprintf("topology %q, this node's is %q (node %d of crawl %q): nodes of one crawl must be given the same --crawl-id, --peers (same order), --partitioner, --replicas and --politeness-key",
			h, t.topoHash, t.self, t.topo.CrawlID)
		t.refuse(w, r, http.StatusPreconditionFailed, msg)
		if h != "" {
			t.failTopology(fmt.Errorf("%w: %s %s from %s: %s", t.errConfig, r.Method, r.URL.Path, r.RemoteAddr, msg))
		}
		return false
	}
	if to != strconv.Itoa(t.self) {
		t.refuse(w, r, http.StatusMisdirectedRequest, fmt.Sprintf("request for node %q reached node %d (%s)", to, t.self, t.peers[t.self]))
		return false
	}
	return true
}

func (t *HTTPTransport) status() NodeStatus {
	fin := false
	select {
	case <-t.finished:
		fin = true
	default:
	}
	started := t.started.Load()
	s := NodeStatus{Node: t.self, Epoch: t.epoch.Load(), Topology: t.topoHash, Idle: t.idle(),
		Sent: t.sent.Load(), Received: t.received.Load(), Finished: fin || t.decided.Load(),
		Drained: started && t.tr.Idle(), Queued: make([]int, len(t.queues))}
	for i, q := range t.queues {
		q.mu.Lock()
		s.Queued[i] = len(q.items)
		q.mu.Unlock()
		s.Outbox += s.Queued[i]
	}
	s.Complete = s.Finished && t.complete.Load()
	if t.recv != nil {
		s.Durable = t.recv.Durable()
	}
	t.peerMu.Lock()
	s.Peers = slices.Clone(t.known)
	for i, d := range t.dead {
		if d {
			s.Dead = append(s.Dead, i)
		}
	}
	t.peerMu.Unlock()
	return s
}

// pending is the number of batches queued for peers, not yet acknowledged.
func (t *HTTPTransport) pending() int {
	n := 0
	for _, q := range t.queues {
		q.mu.Lock()
		n += len(q.items)
		q.mu.Unlock()
	}
	return n
}

func (t *HTTPTransport) handleStatus(w http.ResponseWriter, r *http.Request) {
	if !t.authorized(r) {
		t.refuse(w, r, http.StatusUnauthorized, "missing or wrong bearer token")
		return
	}
	if !t.checkPeerHeaders(w, r, false) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(t.status())
}

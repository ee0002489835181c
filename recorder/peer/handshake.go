// The handshake and epochs: a node greets each peer before its first
// batch, and moves its incarnation past any view of it a peer holds.

package peer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// failTopology stops the crawl on a topology mismatch: the error goes to
// this node's log and ends the crawl with ErrConfig (exit status 2).
func (t *HTTPTransport) failTopology(err error) {
	if t.mismatch.Swap(true) {
		return
	}
	t.logf("%v", err)
	if t.onError != nil {
		t.onError(err)
	}
}

// handleHello is the handshake's receiving side: it answers this node's
// Hello, 200 when the asking node's topology agrees and 412 (and the crawl
// stops) when it does not.
func (t *HTTPTransport) handleHello(w http.ResponseWriter, r *http.Request) {
	if !t.admitPost(w, r) {
		return
	}
	var h Hello
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&h); err != nil {
		t.refuse(w, r, http.StatusBadRequest, "bad hello: "+err.Error())
		return
	}
	if h.Node < 0 || h.Node >= len(t.peers) || h.Node == t.self || h.Epoch == 0 || h.Epoch > maxEpoch {
		t.refuse(w, r, http.StatusBadRequest, fmt.Sprintf("hello from node %d epoch %d: not a peer of node %d", h.Node, h.Epoch, t.self))
		return
	}
	// The asking node is up: it is heard from at the address it gives as
	// its own (under a mismatch that may be another id than h.Node here).
	if a := h.Topology.Peers; h.Topology.NodeID >= 0 && h.Topology.NodeID < len(a) {
		if j := slices.Index(t.peers, a[h.Topology.NodeID]); j >= 0 {
			t.wasUp[j].Store(true)
		}
	}
	t.peerMu.Lock()
	known := t.known[h.Node]
	t.peerMu.Unlock()
	reply := Hello{Node: t.self, Epoch: t.epoch.Load(), Known: known, Seen: t.seenEpoch[h.Node].Load(), Topology: t.topo}
	w.Header().Set("Content-Type", "application/json")
	diff := t.topo.peerDiff(h.Topology)
	if to := r.Header.Get(HeaderTo); to != strconv.Itoa(t.self) {
		diff = append(diff, fmt.Sprintf("node %d sent its hello for node %s to %s, which is node %d", h.Node, to, t.peers[t.self], t.self))
	}
	if h.Topology.NodeID != h.Node {
		diff = append(diff, fmt.Sprintf("hello from node %d carries the topology of node %d", h.Node, h.Topology.NodeID))
	}
	if len(diff) > 0 {
		t.failTopology(fmt.Errorf("%w: peer handshake: node %d (%s) does not agree with node %d on the crawl's topology: %s",
			t.errConfig, h.Node, r.RemoteAddr, t.self, strings.Join(diff, "; ")))
		w.WriteHeader(http.StatusPreconditionFailed)
		json.NewEncoder(w).Encode(reply)
		return
	}
	json.NewEncoder(w).Encode(reply)
}

// greet is the handshake's asking side: it sends this node's Hello to
// peer i and checks the answer. A topology that differs, or an answer
// from another node than i, stops the crawl (errTopology); a peer that
// knows an epoch of this node at least as new as its own moves this
// node's epoch past it. Other errors (the peer is down) are returned to
// be retried.
func (t *HTTPTransport) greet(i int) error {
	if t.greeted[i].Load() {
		return nil
	}
	// One handshake with a peer at a time: a second one, answered after
	// the first let batches through, would read them as another copy's.
	t.greetMu[i].Lock()
	defer t.greetMu[i].Unlock()
	if t.greeted[i].Load() {
		return nil
	}
	body, _ := json.Marshal(Hello{Node: t.self, Epoch: t.epoch.Load(), Topology: t.topo})
	req, err := http.NewRequest(http.MethodPost, "http://"+t.peers[i]+PathHello, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderTo, strconv.Itoa(i))
	req.Header.Set(HeaderTopology, t.topoHash)
	resp, err := t.hbClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	t.wasUp[i].Store(true)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPreconditionFailed {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("recorder: hello to node %d (%s): %s: %s", i, t.peers[i], resp.Status, strings.TrimSpace(string(msg)))
	}
	var h Hello
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&h); err != nil {
		return fmt.Errorf("recorder: hello to node %d (%s): bad answer: %v", i, t.peers[i], err)
	}
	diff := t.topo.peerDiff(h.Topology)
	if h.Node != i {
		diff = append(diff, fmt.Sprintf("%s is node %d's address here, but answers as node %d", t.peers[i], i, h.Node))
	}
	if resp.StatusCode == http.StatusPreconditionFailed && len(diff) == 0 {
		diff = append(diff, "it refused this node's hello")
	}
	if len(diff) > 0 {
		err := fmt.Errorf("%w: peer handshake: node %d (%s) does not agree with node %d on the crawl's topology: %s",
			t.errConfig, i, t.peers[i], t.self, strings.Join(diff, "; "))
		t.failTopology(err)
		return errTopology
	}
	if h.Epoch > 0 && h.Epoch <= maxEpoch {
		t.observe(i, h.Epoch)
	}
	// A peer that heard of a later epoch of this node, or processed
	// batches of this epoch that this node never sent it, knows another
	// copy of it: move past, and renumber what is queued for the peer.
	mine := t.epoch.Load()
	if h.Known > mine || (h.Seen >= mine && h.Seen <= maxEpoch) {
		view := max(h.Known, h.Seen)
		t.moveEpochPast(view, fmt.Sprintf("node %d knows epoch %d and processed batches of epoch %d of this node", i, h.Known, h.Seen))
		t.restamp(i, view)
	}
	t.greeted[i].Store(true)
	return nil
}

// errTopology is greet's answer when the peer's topology differs.
var errTopology = errors.New("recorder: topology mismatch")

// moveEpochPast makes this node a new incarnation, numbered view+1, when a
// peer's view of it (view) is not behind its own epoch: a node restored
// from an older copy of its state directory, or named in a forged batch
// claiming a later epoch, would otherwise have its batches refused as
// stale (409) for ever. The new epoch is saved before it is used.
func (t *HTTPTransport) moveEpochPast(view uint64, why string) {
	if view > maxEpoch {
		return
	}
	t.epochMu.Lock()
	defer t.epochMu.Unlock()
	old := t.epoch.Load()
	if view < old {
		return
	}
	next := view + 1
	if t.stateDir != "" {
		if err := SetEpoch(t.stateDir, next); err != nil {
			t.logf("moving past epoch %d: %v", view, err)
			return
		}
	}
	t.epoch.Store(next)
	t.peerMu.Lock()
	t.known[t.self] = next
	t.peerMu.Unlock()
	t.events.SetEpoch(next)
	t.events.Write(tracefile.Event{Event: tracefile.EventEpoch, PeerEpoch: view, Reason: why})
	t.logf("epoch %d is behind its peers' view (%s): now epoch %d", old, why, next)
}

// restamp gives new ids, in this node's current epoch, to the batches
// queued for peer i that this incarnation made in an epoch i may have
// seen used by another copy of this node (at most known): i would take
// them for that copy's batches and drop them. Called at the handshake,
// before anything is sent to i.
func (t *HTTPTransport) restamp(i int, known uint64) {
	q := t.queues[i]
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, it := range q.items {
		if it.epoch < t.firstEpoch || it.epoch > known {
			continue
		}
		b := t.itemBatch(it)
		if b == nil {
			continue
		}
		t.stampLocked(q, b)
		body, err := encodeBatchBytes(b)
		if err != nil {
			t.logf("outbox: batch e%d s%d: %v", it.epoch, it.seq, err)
			continue
		}
		t.store.drop(it)
		it.epoch, it.seq = b.Epoch, b.Seq
		t.store.hold(it, body)
		n++
	}
	if n > 0 {
		t.logf("%d batches for node %d renumbered in epoch %d (node %d knew epoch %d of this node)", n, i, t.epoch.Load(), i, known)
	}
}

// stampLocked gives b the next id of q's sequence in the current epoch
// (a new epoch starts at 1). The transport numbers a node's batches, so
// that a node that moves its epoch (moveEpochPast) starts the new one at
// 1, as receivers' batch logs expect.
func (t *HTTPTransport) stampLocked(q *peerQueue, b *Batch) {
	e := t.epoch.Load()
	if q.epoch != e {
		q.epoch, q.seq = e, 0
	}
	q.seq++
	b.From, b.Epoch, b.Seq = t.self, e, q.seq
}

// observe records that peer answered in incarnation epoch and returns the
// newest incarnation known of it. A newer incarnation means the peer
// restarted: what its old incarnation acknowledged is queued again. A
// peer declared dead that answers comes back.
func (t *HTTPTransport) observe(peer int, epoch uint64) uint64 {
	t.peerMu.Lock()
	cur := t.known[peer]
	if epoch < cur {
		t.peerMu.Unlock()
		return cur
	}
	t.heard[peer] = time.Now()
	restarted := cur != 0 && epoch > cur
	t.known[peer] = epoch
	back := t.dead[peer]
	var live []bool
	if back {
		t.dead[peer] = false
		live = t.liveLocked()
	}
	t.peerMu.Unlock()
	if restarted {
		t.requeueAcked(peer, epoch)
	}
	if back {
		p := peer
		t.events.Write(tracefile.Event{Event: tracefile.EventPeerBack, Peer: &p, PeerEpoch: epoch})
		t.logf("peer %d is back (epoch %d)", peer, epoch)
		if t.failover && t.onView != nil {
			t.onView(live)
		}
	}
	return epoch
}

// mismatchTell is the least time a node stopping on a topology mismatch
// spends telling its peers (see tellMismatch).
const mismatchTell = 5 * time.Second

// tellMismatch greets every peer not greeted yet, so that a peer this node
// disagrees with learns it now rather than waiting for ever for a node
// that is gone. A peer that does not answer and has never been up (still
// starting) is greeted again until d has passed: greeted once, a
// node that came up after its disagreeing peers had stopped never heard
// of the mismatch and waited for them for ever (a flake of
// TestPeerHandshakeRefuses under load). One that answers, whatever it
// answers, is not greeted again, nor one that was up before and is silent
// now: it has stopped (on the mismatch, as a peer that disagreed with it
// told it), and greeting it until d held every node of a crawl whose
// peer lists were in another order for the whole d.
func (t *HTTPTransport) tellMismatch(d time.Duration) {
	deadline := time.Now().Add(d)
	var left []int
	for i := range t.peers {
		if i != t.self && !t.greeted[i].Load() {
			left = append(left, i)
		}
	}
	for len(left) > 0 {
		var again []int
		for _, i := range left {
			// A transport error (no answer) is a *url.Error.
			var noAnswer *url.Error
			if err := t.greet(i); errors.As(err, &noAnswer) && !t.wasUp[i].Load() {
				again = append(again, i)
			}
		}
		left = again
		if len(left) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

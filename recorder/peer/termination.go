package peer

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Termination of a crawl over TCP (docs/peers.md, "Termination").
//
// A node is idle when it has started (Started), has nothing to fetch (or
// has used its page share), no fetch in flight, and no batch for a peer
// that the peer has not acknowledged. An idle node becomes busy again
// only by processing a new batch (its Received counter moves), by a
// resend to a peer's new incarnation (its views move, and its Sent
// counter when the resend is acknowledged) or by a change of the live
// set (the dead set moves). So two successive snapshots of every live
// node (the second begun after the first ended) that find every node
// idle, with equal counters, views and dead sets, prove that at the end
// of the first every node was idle and no batch was in transit: the
// double collect of Mattern's counting method. Nothing waits for a
// quiet period: a node polls its peers as soon as it is idle itself, and
// the crawl ends one confirming snapshot after its last node went idle.

const (
	// termCheck is how often a node looks at its own state; it polls its
	// peers only when that finds it idle.
	termCheck = 10 * time.Millisecond
	// termBackoffMax bounds the interval between an idle node's polls of
	// peers that are still busy (doubling from termCheck).
	termBackoffMax = 250 * time.Millisecond
	// finishLinger bounds how long a node that decided the crawl is over
	// keeps answering, waiting for every live peer to know it too.
	finishLinger = 3 * time.Second
)

// Started tells the transport that its node has queued its start's work
// (its seeds, or the batches its checkpoint had in transit). Until then
// the node reports busy: a node whose endpoint is up but whose seeds are
// not queued yet must not let the crawl end.
func (t *HTTPTransport) Started() { t.started.Store(true) }

// idle reports whether this node is idle (see NodeStatus.Idle).
func (t *HTTPTransport) idle() bool {
	if !t.started.Load() {
		return false
	}
	if t.tr.Idle() {
		return true
	}
	return t.idleFn != nil && t.idleFn() && t.pending() == 0
}

// WatchTermination implements the TCP-mode termination rule (see the
// comment at the top of this file). Every termCheck the node looks at its
// own state; while it is idle it snapshots every live node (itself
// included): their status, polled after the handshake. A snapshot that
// finds a node busy, unreachable or disagreeing on the live set or on an
// incarnation is discarded, and the next one waits twice as long (up to
// termBackoffMax); one that finds all idle is confirmed by another at
// once. Two equal ones end the crawl. Without fail-over a node that does
// not answer counts as busy; with it, nodes declared dead are left out. A
// node that concludes the crawl is over tells the others (PathFinish) and
// reports Finished in its status until it exits; a node hearing either
// stops too and tells the peers it has not heard from.
//
// The decision is complete (t.complete, Complete in the status,
// "complete=1" on the finish message) when both snapshots found no node
// declared dead and every node drained: the whole crawl, not only the
// live part of it, had nothing left, and no page share held URLs back.
// Only then does a node record in its final checkpoint that the crawl is
// finished (see finishedCrawl and docs/crash-safety.md).
func (t *HTTPTransport) WatchTermination(ctx context.Context) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		tick := time.NewTicker(termCheck)
		defer tick.Stop()
		var last string
		wait := termCheck
		var next time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.finished:
				t.decided.Store(true)
				t.tellFinished()
				close(out)
				return
			case <-tick.C:
			}
			if !t.idle() {
				last, wait, next = "", termCheck, time.Time{}
				continue
			}
			if time.Now().Before(next) {
				continue
			}
			snap, fin, ok := t.snapshot()
			if fin {
				t.decided.Store(true)
				t.tellFinished()
				close(out)
				return
			}
			if !ok {
				last, wait = "", min(2*wait, termBackoffMax)
				next = time.Now().Add(wait)
				continue
			}
			if snap != last {
				// Every node idle: confirm with a second snapshot at once.
				last, wait, next = snap, termCheck, time.Time{}
				continue
			}
			// Both snapshots are equal, so both found the same dead set and
			// the same drained flags.
			t.complete.Store(strings.HasSuffix(snap, "dead[]") && !strings.Contains(snap, ":busy;"))
			t.decided.Store(true)
			t.tellFinished()
			close(out)
			return
		}
	}()
	return out
}

// snapshot polls every live node; ok when all answered idle with views
// that agree, fin when one of them already decided the crawl is over.
func (t *HTTPTransport) snapshot() (snap string, fin, ok bool) {
	t.snapshots.Add(1)
	me := t.status()
	if !me.Idle {
		return "", false, false
	}
	var sb strings.Builder
	all := make([]NodeStatus, len(t.peers))
	for i := range t.peers {
		if t.failover && slices.Contains(me.Dead, i) {
			continue
		}
		s := me
		if i != t.self {
			// The handshake comes before any poll, as before any batch: a
			// node whose topology differs is then told so by the
			// handshake, which names what differs, on both sides. A poll
			// first had the peer refuse a topology hash and stop with
			// that alone in its log.
			if err := t.greet(i); err != nil {
				return "", false, false
			}
			var err error
			if s, err = t.peerStatus(t.hbClient, i); err != nil {
				return "", false, false
			}
			if s.Finished {
				t.finKnown[i].Store(true)
				t.complete.Store(s.Complete)
				return "", true, true
			}
		}
		if !s.Idle || !slices.Equal(s.Dead, me.Dead) || len(s.Peers) != len(t.peers) {
			return "", false, false
		}
		all[i] = s
		drained := "drained"
		if !s.Drained {
			drained = "busy" // idle on a used page share
		}
		fmt.Fprintf(&sb, "%d:%d:%d:%d:%s;", i, s.Epoch, s.Sent, s.Received, drained)
	}
	for _, s := range all {
		if s.Epoch == 0 {
			continue
		}
		for j, o := range all {
			if o.Epoch != 0 && s.Peers[j] != o.Epoch {
				return "", false, false
			}
		}
	}
	fmt.Fprintf(&sb, "dead%v", me.Dead)
	return sb.String(), false, true
}

// tellFinished tells every live peer not yet known to have decided that
// the crawl is over (PathFinish, with this node's id and whether the
// decision is complete), all at once.
func (t *HTTPTransport) tellFinished() {
	path := PathFinish + "?from=" + strconv.Itoa(t.self)
	if t.complete.Load() {
		path += "&complete=1"
	}
	var wg sync.WaitGroup
	for i := range t.peers {
		if i == t.self || t.isDead(i) || t.finKnown[i].Load() {
			continue
		}
		wg.Go(func() {
			resp, err := t.request(t.hbClient, http.MethodPost, i, path, nil)
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.finKnown[i].Store(true)
			}
		})
	}
	wg.Wait()
}

// handleFinish: a peer decided the crawl is over.
func (t *HTTPTransport) handleFinish(w http.ResponseWriter, r *http.Request) {
	if !t.admitPost(w, r) {
		return
	}
	if !t.checkPeerHeaders(w, r, true) {
		return
	}
	if from, err := strconv.Atoi(r.URL.Query().Get("from")); err == nil && from >= 0 && from < len(t.peers) {
		t.finKnown[from].Store(true)
	}
	t.finOnce.Do(func() {
		t.complete.Store(r.URL.Query().Get("complete") == "1")
		close(t.finished)
	})
	w.WriteHeader(http.StatusOK)
}

// ShutdownServer stops the listener. A node that decided the crawl is over
// first keeps answering until every live peer is known to have decided
// too (it told them, or they told it), for at most finishLinger, so that a
// peer whose finish message was lost still finds Finished in this node's
// status.
func (t *HTTPTransport) ShutdownServer() {
	if t.decided.Load() {
		for end := time.Now().Add(finishLinger); time.Now().Before(end); time.Sleep(termCheck) {
			all := true
			for i := range t.peers {
				if i != t.self && !t.isDead(i) && !t.finKnown[i].Load() {
					all = false
					break
				}
			}
			if all {
				break
			}
		}
	}
	// A peer's HTTP client may have dialled a connection it then never
	// used (another became free first). Shutdown waits for such a
	// connection until it is 5 s old, in steps of up to 500 ms: that was
	// the 0.5-1 s that one stop in ten of scripts/bench-crawl-tcp.sh at 8
	// nodes spent after every node had decided. No request will come on
	// it that this node still has to answer, so it is closed, after the
	// listener, so that no new one comes.
	t.ln.Close()
	t.connMu.Lock()
	fresh := slices.Collect(maps.Keys(t.fresh))
	t.connMu.Unlock()
	for _, c := range fresh {
		c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	t.srv.Shutdown(ctx)
}

// trackConn keeps the server's connections that have not carried a
// request yet (see ShutdownServer).
func (t *HTTPTransport) trackConn(c net.Conn, s http.ConnState) {
	t.connMu.Lock()
	defer t.connMu.Unlock()
	if s == http.StateNew {
		if t.fresh == nil {
			t.fresh = map[net.Conn]struct{}{}
		}
		t.fresh[c] = struct{}{}
	} else {
		delete(t.fresh, c)
	}
}

// Complete reports whether the termination decision covered the whole
// crawl (see WatchTermination).
func (t *HTTPTransport) Complete() bool { return t.complete.Load() }

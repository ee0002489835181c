// The failure detector: peers polled every heartbeat, a peer silent for
// the timeout declared dead.

package peer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

func (t *HTTPTransport) liveLocked() []bool {
	live := make([]bool, len(t.dead))
	for i, d := range t.dead {
		live[i] = !d
	}
	return live
}

func (t *HTTPTransport) isDead(i int) bool {
	t.peerMu.Lock()
	defer t.peerMu.Unlock()
	return t.dead[i]
}

func (t *HTTPTransport) peerStatus(c *http.Client, i int) (NodeStatus, error) {
	if i == t.self {
		return t.status(), nil
	}
	resp, err := t.request(c, http.MethodGet, i, PathStatus, nil)
	if err != nil {
		return NodeStatus{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode == http.StatusPreconditionFailed || resp.StatusCode == http.StatusMisdirectedRequest {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			t.failTopology(fmt.Errorf("%w: node %d (%s) refused a status poll: %s: %s", t.errConfig, i, t.peers[i], resp.Status, strings.TrimSpace(string(msg))))
		}
		return NodeStatus{}, errors.New(resp.Status)
	}
	var s NodeStatus
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&s)
	if err == nil && (s.Node != i || s.Epoch == 0 || s.Epoch > maxEpoch) {
		err = fmt.Errorf("recorder: %s answers as node %d epoch %d", t.peers[i], s.Node, s.Epoch)
	}
	if err == nil && s.Topology != t.topoHash {
		t.failTopology(fmt.Errorf("%w: node %d (%s) has topology %q, this node %q", t.errConfig, i, t.peers[i], s.Topology, t.topoHash))
		err = errTopology
	}
	return s, err
}

// detect is the failure detector: every hb it asks each peer for its
// status (the heartbeat). A peer neither answering nor acknowledging for
// the peer timeout is declared dead; with fail-over the live set changes.
func (t *HTTPTransport) detect() {
	defer t.wg.Done()
	tick := time.NewTicker(t.hb)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		for i := range t.peers {
			if i == t.self {
				continue
			}
			err := t.greet(i)
			if errors.Is(err, errTopology) {
				continue
			}
			var s NodeStatus
			if err == nil {
				s, err = t.peerStatus(t.hbClient, i)
			}
			if err == nil {
				t.observe(i, s.Epoch)
				if t.self < len(s.Peers) && s.Peers[t.self] > t.epoch.Load() {
					t.moveEpochPast(s.Peers[t.self], fmt.Sprintf("node %d knows epoch %d of this node", i, s.Peers[t.self]))
				}
				t.forgetDurable(i, s.Durable)
				continue
			}
			t.peerMu.Lock()
			var live []bool
			died := !t.dead[i] && time.Since(t.heard[i]) > t.timeout
			if died {
				t.dead[i] = true
				live = t.liveLocked()
			}
			known := t.known[i]
			t.peerMu.Unlock()
			if died {
				p := i
				t.events.Write(tracefile.Event{Event: tracefile.EventPeerDead, Peer: &p, PeerEpoch: known})
				t.logf("peer %d declared dead (no heartbeat for %s)", i, t.timeout)
				if t.failover && t.onView != nil {
					t.onView(live)
				}
			}
		}
	}
}

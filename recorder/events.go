package recorder

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// EventsName is a node's event log in its directory of a TCP crawl: one
// JSON object per line (JSON Lines), appended as things happen and kept
// across restarts. See docs/trace-format.md.
const EventsName = "events.jsonl"

// Events of a node's event log.
const (
	EventStart    = "start"     // the node started (epoch, resume, outbox batches loaded)
	EventPeerDead = "peer-dead" // the failure detector declared Peer dead
	EventPeerBack = "peer-back" // a peer declared dead answered again (Peer, PeerEpoch)
	EventReassign = "reassign"  // the live set changed and hosts moved on the ring
	EventStop     = "stop"      // the node stopped (Reason, OutboxLeft)
)

// event is one line of a node's event log. Fields not set for an event
// are omitted.
type event struct {
	Time      time.Time `json:"time"`
	Node      int       `json:"node"`
	Epoch     uint64    `json:"epoch"`
	Event     string    `json:"event"`
	Peer      *int      `json:"peer,omitempty"`
	PeerEpoch uint64    `json:"peer_epoch,omitempty"`
	Resume    bool      `json:"resume,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	// reassign: the live node ids after the change, the nodes that left
	// and joined, and the hosts this node had seen that changed owner:
	// HostsMoved in all, HostsMovedOther of them neither from a node that
	// left nor to one that joined (0 under consistent hashing), HostsOut
	// (this node's before) and HostsIn (this node's after).
	Live            []int    `json:"live,omitempty"`
	Left            []int    `json:"left,omitempty"`
	Joined          []int    `json:"joined,omitempty"`
	HostsMoved      int      `json:"hosts_moved,omitempty"`
	HostsMovedOther int      `json:"hosts_moved_other,omitempty"`
	HostsOut        []string `json:"hosts_out,omitempty"`
	HostsIn         []string `json:"hosts_in,omitempty"`
	BatchesTaken    int      `json:"batches_taken,omitempty"` // queued for the dead nodes, routed anew
	URLsRerouted    int64    `json:"urls_rerouted,omitempty"`
	OutboxBatches   int      `json:"outbox_batches,omitempty"` // start: loaded; stop: left for --resume
}

// eventLog appends events to node-NNN/events.jsonl. A nil *eventLog drops
// events. It is safe for concurrent use.
type eventLog struct {
	mu    sync.Mutex
	f     *os.File
	node  int
	epoch uint64
	now   func() time.Time
}

func openEventLog(nodeDir string, node int, epoch uint64, now func() time.Time) (*eventLog, error) {
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(nodeDir, EventsName), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	return &eventLog{f: f, node: node, epoch: epoch, now: now}, nil
}

// write appends e, stamped with the time, node and epoch, as one line.
func (l *eventLog) write(e event) {
	if l == nil {
		return
	}
	e.Time, e.Node, e.Epoch = l.now().UTC(), l.node, l.epoch
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Write(append(b, '\n'))
	}
}

func (l *eventLog) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

package tracefile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
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
	// EventEpoch: the node found a peer's view of its epoch (PeerEpoch)
	// not behind its own and moved past it (Epoch is the new one; Reason
	// says who knew what).
	EventEpoch = "epoch"
	// EventRedo: after the fail-over of Peer, the node routed again the
	// URLs its own URL log had routed to it, for the hosts that moved
	// (URLsRerouted).
	EventRedo = "redo"
)

// Event is one line of a node's event log. Fields not set for an event
// are omitted. The recorder writes it; the node-loss scenario and the
// tests read it with [ReadEvents].
type Event struct {
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

// ReadEvents reads an event log. A line that is not an event is an
// ErrCorrupt error naming the file and the line; a last line cut short
// by a crash is one too.
func ReadEvents(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for line := 1; sc.Scan(); line++ {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("%w: %s line %d: %v", ErrCorrupt, path, line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

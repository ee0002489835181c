package recorder

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// EventsName and the Event constants name a node's event log and its
// events (tracefile.Event is a line of it).
const (
	EventsName    = tracefile.EventsName
	EventStart    = tracefile.EventStart
	EventPeerDead = tracefile.EventPeerDead
	EventPeerBack = tracefile.EventPeerBack
	EventReassign = tracefile.EventReassign
	EventStop     = tracefile.EventStop
	EventEpoch    = tracefile.EventEpoch
	EventRedo     = tracefile.EventRedo
)

type event = tracefile.Event

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

// setEpoch stamps later events with epoch (the node moved its epoch).
func (l *eventLog) setEpoch(epoch uint64) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.epoch = epoch
	l.mu.Unlock()
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

package tracefile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// EventLog appends events to a node's event log, [EventsName] in its
// directory: one JSON object ([Event]) per line, appended to what earlier
// runs wrote. Read it with [ReadEvents].
//
// A nil *EventLog drops events. An event that cannot be written is
// dropped too: the log records what happened for people and tests, a
// crawl does not depend on it. It is safe for concurrent use.
type EventLog struct {
	mu    sync.Mutex
	f     *os.File
	node  int
	epoch uint64
	now   func() time.Time
}

// OpenEventLog opens the event log in nodeDir for appending, creating the
// directory and the file if need be. Its events are stamped with node,
// epoch (until [EventLog.SetEpoch]) and the time now returns, in UTC.
func OpenEventLog(nodeDir string, node int, epoch uint64, now func() time.Time) (*EventLog, error) {
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(nodeDir, EventsName), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tracefile: %w", err)
	}
	return &EventLog{f: f, node: node, epoch: epoch, now: now}, nil
}

// Write appends e, its Time, Node and Epoch set to the log's, as one line.
func (l *EventLog) Write(e Event) {
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

// SetEpoch stamps later events with epoch (the node moved its epoch).
func (l *EventLog) SetEpoch(epoch uint64) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.epoch = epoch
	l.mu.Unlock()
}

// Close closes the file; later events are dropped.
func (l *EventLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("tracefile: %w", err)
	}
	return nil
}

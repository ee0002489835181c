package tracefile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// An event log holds one JSON object per event, stamped with the log's
// time, node and epoch, appended across reopenings; ReadEvents reads back
// what was written.
func TestEventLogWritesLines(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "node-003") // created by the open
	clock := time.Date(2026, 11, 23, 10, 0, 0, 5, time.FixedZone("x", 3600))
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	l, err := OpenEventLog(dir, 3, 7, now)
	if err != nil {
		t.Fatal(err)
	}
	peer := 1
	// The writer overwrites Time, Node and Epoch.
	l.Write(Event{Event: EventStart, Resume: true, OutboxBatches: 2, Node: 99, Epoch: 99})
	l.Write(Event{Event: EventPeerDead, Peer: &peer})
	l.SetEpoch(8)
	l.Write(Event{Event: EventReassign, Live: []int{0, 3}, Left: []int{1}, HostsMoved: 4, HostsIn: []string{"a.test"}})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l.Write(Event{Event: EventStop}) // dropped: closed
	// A restart appends to the same file.
	l, err = OpenEventLog(dir, 3, 9, now)
	if err != nil {
		t.Fatal(err)
	}
	l.Write(Event{Event: EventStop, Reason: "done"})
	l.Close()

	at := func(s int) time.Time { return time.Date(2026, 11, 23, 9, 0, s, 5, time.UTC) }
	want := []Event{
		{Time: at(1), Node: 3, Epoch: 7, Event: EventStart, Resume: true, OutboxBatches: 2},
		{Time: at(2), Node: 3, Epoch: 7, Event: EventPeerDead, Peer: &peer},
		{Time: at(3), Node: 3, Epoch: 8, Event: EventReassign, Live: []int{0, 3}, Left: []int{1}, HostsMoved: 4, HostsIn: []string{"a.test"}},
		// at(4) stamped the event dropped after Close.
		{Time: at(5), Node: 3, Epoch: 9, Event: EventStop, Reason: "done"},
	}
	path := filepath.Join(dir, EventsName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range want {
		j, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(j))
	}
	if got, w := string(b), strings.Join(lines, "\n")+"\n"; got != w {
		t.Errorf("file:\n%s\nwant:\n%s", got, w)
	}
	// The format itself, written out by hand.
	if first := `{"time":"2026-11-23T09:00:01.000000005Z","node":3,"epoch":7,"event":"start","resume":true,"outbox_batches":2}`; !strings.HasPrefix(string(b), first+"\n") {
		t.Errorf("first line %q, want %q", strings.SplitN(string(b), "\n", 2)[0], first)
	}
	got, err := ReadEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwant %+v", got, want)
	}
}

// Writers on several goroutines each get whole lines; a nil log drops
// events.
func TestEventLogConcurrentAndNil(t *testing.T) {
	var nilLog *EventLog
	nilLog.Write(Event{Event: EventStart})
	nilLog.SetEpoch(2)
	if err := nilLog.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, err := OpenEventLog(dir, 0, 1, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				l.Write(Event{Event: EventReassign, HostsIn: []string{strings.Repeat("h", 100*g+i)}})
			}
		})
	}
	wg.Wait()
	l.Close()
	got, err := ReadEvents(filepath.Join(dir, EventsName))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, e := range got {
		seen[len(e.HostsIn[0])] = true
	}
	if len(got) != 200 || len(seen) != 200 {
		t.Errorf("%d events, %d distinct; want 200", len(got), len(seen))
	}
}

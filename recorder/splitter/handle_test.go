package splitter

import (
	"fmt"
	"slices"
	"testing"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// Handle processes a message on the caller's goroutine, with Run never
// started: the node's own URLs are admitted before it returns, the
// others are sent to their node at once, and a batch handed to
// HandleBatch is admitted the same way. Close sends nothing more and
// makes Stop return.
func TestHandleWithoutRun(t *testing.T) {
	part, _ := partition.New("host", 2, 0)
	front := &testFrontier{}
	tr := &captureTransport{sent: map[int][]string{}}
	tracker := peer.NewTracker()
	s := New(Options{Node: 0, Nodes: 2, Part: part, BatchSize: 1 << 10, DUE: due.NewMemory(1 << 10), Tracker: tracker, Frontier: front})
	s.SetTransport(tr)
	var local, remote []URL
	for i := 0; len(local) < 2 || len(remote) < 2; i++ {
		u := URL{URL: fmt.Sprintf("http://h%d.test/", i), Kind: tracefile.URLLink}
		if s.dest(u.URL) == 0 {
			local = append(local, u)
		} else {
			remote = append(remote, u)
		}
	}
	s.Handle(&Msg{URLs: []URL{local[0], remote[0], remote[1]}, Task: 7})
	if !slices.Equal(front.added, []string{local[0].URL}) || !slices.Equal(front.finished, []uint64{7}) {
		t.Errorf("frontier got %v, finished %v", front.added, front.finished)
	}
	if want := []string{remote[0].URL, remote[1].URL}; !slices.Equal(tr.sent[1], want) {
		t.Errorf("sent to node 1: %v, want %v at once", tr.sent[1], want)
	}
	s.HandleBatch(&peer.Batch{From: 1, Epoch: 1, Seq: 1, URLs: []string{local[1].URL}, Kinds: []string{tracefile.URLLink}, Source: []uint64{0}})
	if len(front.added) != 2 || front.added[1] != local[1].URL {
		t.Errorf("a peer's batch was not admitted: %v", front.added)
	}
	s.Close()
	if st := s.Published().Stats; st.URLsLogged != 3 || st.Cross != 2 || st.BatchesReceived != 1 {
		t.Errorf("stats %+v", st)
	}
	s.Stop()
}

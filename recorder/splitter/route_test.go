package splitter

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/due"
	"github.com/crawltrace/crawltrace/recorder/partition"
	"github.com/crawltrace/crawltrace/recorder/peer"
)

// TestRouting: node 0 of three routes each URL a worker found to the
// node its partitioner names (the reference: partition.Partitioner.Node,
// called here on its own). Its own URLs pass its DUE into its frontier
// once each, however often they are found; the others are batched for
// their owner, every time they are found without a splitter cache, once
// with one. A batch from a peer is admitted through the DUE, and a batch
// received again is not processed again. Each URL queued counts as
// outstanding work in the tracker; a page's task is finished.
func TestRouting(t *testing.T) {
	const nodes = 3
	part, err := partition.New("host", nodes, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found []URL // two pages' links: every URL twice, one a redirect
	for round := range 2 {
		for h := range 24 {
			for p := range 2 {
				kind := tracefile.URLLink
				if p == 1 && round == 1 {
					kind = tracefile.URLRedirect
				}
				found = append(found, URL{URL: fmt.Sprintf("http://h%d.test/%d", h, p), Tag: "a", Kind: kind})
			}
		}
	}
	// From node 1: URLs of node 0, one of them already found by a worker.
	var fromPeer []string
	for h := 0; len(fromPeer) < 3; h++ {
		if u := fmt.Sprintf("http://p%d.test/", h); part.Node(u) == 0 {
			fromPeer = append(fromPeer, u)
		}
	}
	var firstLocal string
	for _, u := range found {
		if part.Node(u.URL) == 0 {
			firstLocal = u.URL
			break
		}
	}
	batch := &peer.Batch{From: 1, Epoch: 1, Seq: 1, URLs: append(slices.Clone(fromPeer), firstLocal)}

	for _, cache := range []int{0, 64} {
		// The reference routing.
		var wantLocal []string
		wantSent := map[int][]string{}
		seen := map[string]bool{}
		for _, u := range append(found, URL{URL: "-"}) {
			if u.URL == "-" {
				for _, v := range batch.URLs {
					if !seen[v] {
						seen[v] = true
						wantLocal = append(wantLocal, v)
					}
				}
				break
			}
			switch d := part.Node(u.URL); {
			case d == 0 && !seen[u.URL]:
				seen[u.URL] = true
				wantLocal = append(wantLocal, u.URL)
			case d != 0 && (cache == 0 || !seen[u.URL]):
				seen[u.URL] = true
				wantSent[d] = append(wantSent[d], u.URL)
			}
		}

		if len(wantLocal) < 5 || len(wantSent[1]) < 5 || len(wantSent[2]) < 5 {
			t.Fatalf("cache %d: the hosts give %d URLs here, %d and %d for the peers; want 5 or more each", cache, len(wantLocal), len(wantSent[1]), len(wantSent[2]))
		}
		front := &testFrontier{}
		tr := peer.NewTracker()
		ct := &captureTransport{sent: map[int][]string{}}
		s := New(Options{Node: 0, Nodes: nodes, Part: part, Queue: 16, BatchSize: 5, CacheSize: cache,
			DUE: due.NewMemory(1 << 12), Tracker: tr, Log: peer.NewBatchLog(), Frontier: front, Now: time.Now})
		s.SetTransport(ct)
		go s.Run()
		half := len(found) / 2
		s.Send(&Msg{URLs: slices.Clone(found[:half]), Source: 1, Task: 7})
		s.Send(&Msg{URLs: slices.Clone(found[half:]), Source: 2, Task: 8})
		if isNew, ok := s.ReceiveBatch(batch); !isNew || !ok {
			t.Fatalf("cache %d: a peer's batch: new %v, accepted %v", cache, isNew, ok)
		}
		if isNew, ok := s.ReceiveBatch(batch); isNew || !ok {
			t.Fatalf("cache %d: the same batch again: new %v, accepted %v", cache, isNew, ok)
		}
		s.Stop()

		front.mu.Lock()
		added, finished := slices.Clone(front.added), slices.Clone(front.finished)
		front.mu.Unlock()
		if !slices.Equal(added, wantLocal) {
			t.Errorf("cache %d: queued here %v, want %v", cache, added, wantLocal)
		}
		if !slices.Equal(finished, []uint64{7, 8}) {
			t.Errorf("cache %d: tasks finished %v, want [7 8]", cache, finished)
		}
		ct.mu.Lock()
		for d := range nodes {
			if !slices.Equal(ct.sent[d], wantSent[d]) {
				t.Errorf("cache %d: sent to node %d %v, want %v", cache, d, ct.sent[d], wantSent[d])
			}
		}
		ct.mu.Unlock()
		if n := tr.Count(); n != int64(len(wantLocal)) {
			t.Errorf("cache %d: %d units of work outstanding, want the %d URLs queued", cache, n, len(wantLocal))
		}
	}
}

//go:build trials

package main

import (
	"testing"
	"time"
)

// TestClusterFailoverTrials is the acceptance run of issue 21: ten
// permanent-loss trials of a 3-node crawl, node 1 killed for good at kill
// times spread over the crawl, each losing no page of the reference
// crawl. It takes minutes: go test -tags trials -run
// TestClusterFailoverTrials ./cmd/crawltrace -v
func TestClusterFailoverTrials(t *testing.T) {
	web := startClusterWeb(t, 40, 60)
	want := controlPages(t, web)
	lost := 0
	for k := range 10 {
		kill := time.Second + time.Duration(k)*2500*time.Millisecond
		r := failoverTrial(t, web, want, kill)
		t.Logf("trial %d: node 1 killed at %s (finished before: %v), survivors done at %s: %d of %d reference pages lost; %d redo events routed %d URLs again",
			k+1, kill, r.early, r.took.Round(100*time.Millisecond), len(r.missing), len(want), r.redos, r.rerouted)
		for i, u := range r.missing {
			if i < 3 {
				t.Errorf("trial %d: never fetched: %s", k+1, u)
			}
		}
		lost += len(r.missing)
	}
	if lost > 0 {
		t.Errorf("%d pages lost over 10 trials", lost)
	}
}

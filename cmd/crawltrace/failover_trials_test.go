//go:build trials

package main

import (
	"testing"
	"time"
)

// TestClusterFailoverTrials is the first acceptance run of issue 21: ten
// permanent-loss trials of a 3-node crawl, node 1 killed for good at kill
// times spread over the crawl, each losing no page of the reference
// crawl. It takes minutes: go test -tags trials -run
// TestClusterFailoverTrials ./cmd/crawltrace -v
func TestClusterFailoverTrials(t *testing.T) {
	failoverTrials(t, func(int) time.Duration { return 0 })
}

// TestClusterRestartTrials is the second: ten restart trials, node 1
// killed at the same kill times and restarted with --resume 1, 2 or 3 s
// later, except in trial 5, where it stays down 6 s, so that its peers
// (--peer-timeout 2s) declare it dead and route its URLs again before it
// rejoins. All three nodes finish and no page of the reference crawl is
// lost: go test -tags trials -run TestClusterRestartTrials ./cmd/crawltrace -v
func TestClusterRestartTrials(t *testing.T) {
	failoverTrials(t, func(k int) time.Duration {
		if k == 4 {
			return 6 * time.Second
		}
		return time.Duration(1+k%3) * time.Second
	})
}

// failoverTrials runs ten fail-over trials against one reference crawl,
// killing node 1 at 1, 3.5, 6, ..., 23.5 s and restarting it pause(k)
// after the kill of trial k (never when 0).
func failoverTrials(t *testing.T, pause func(k int) time.Duration) {
	web := startClusterWeb(t, 40, 60)
	want := controlPages(t, web)
	lost := 0
	for k := range 10 {
		kill := time.Second + time.Duration(k)*2500*time.Millisecond
		p := pause(k)
		r := failoverTrial(t, web, want, killAt{after: kill}, p)
		what := "lost for good"
		if p > 0 {
			what = "restarted " + p.String() + " later"
		}
		t.Logf("trial %d: node 1 killed at %s (finished before: %v), %s; all done at %s: %d of %d reference pages lost, %d pages in the trace more than once, %d page rows cut off by the resume and fetched again; %d redo events routed %d URLs again",
			k+1, kill, r.early, what, r.took.Round(100*time.Millisecond), len(r.missing), len(want), r.twice, r.cut, r.redos, r.rerouted)
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

package recorder

import (
	"net/http"
	"testing"
	"time"
)

// TestRobotsHubOneRequestAtATime: 100 hosts redirect their robots.txt to
// one hub server, crawled by 2 in-process nodes whose hosts are split
// between them. The hub is owned by one node, and every request to it,
// robots.txt hops of either node's hosts and its own pages alike, waits
// in that node's queue for the hub: the hub, which logs when each request
// starts and ends, never has two at once.
func TestRobotsHubOneRequestAtATime(t *testing.T) {
	t.Parallel() // waits on its servers and timers, not the CPU
	const hubTakes = 10 * time.Millisecond
	var hits timedHits
	sites := map[string]http.HandlerFunc{
		"hub.test": hits.wrap("hub.test", hub(hubTakes, linkPage())),
	}
	seeds := []string{"http://hub.test/"}
	seeds = addHubRedirected(sites, seeds, 100)
	_, srv := startVhosts(t, sites)
	cfg := localConfig(t, srv.Listener.Addr().String(), seeds...)
	cfg.Nodes = 2
	res := runCrawl(t, cfg)
	hub := hits.hostSpans("hub.test")
	if len(hub) < 101 {
		t.Fatalf("hub.test got %d requests, want the 100 hops and its own", len(hub))
	}
	overlaps := 0
	for i := range hub {
		for j := i + 1; j < len(hub) && hub[j][0].Before(hub[i][1]); j++ {
			overlaps++
		}
	}
	if overlaps > 0 {
		t.Errorf("%d pairs of requests overlapped at hub.test, want none", overlaps)
	}
	if res.Stats.RobotsExcluded != 100 {
		t.Errorf("%d URLs excluded by robots.txt, want the 100 /secret", res.Stats.RobotsExcluded)
	}
}

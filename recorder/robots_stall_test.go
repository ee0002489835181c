package recorder

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// timedHits records when each request to a test server started and ended.
type timedHits struct {
	mu     sync.Mutex
	starts map[string][]time.Time // by "host/path"
	spans  map[string][][2]time.Time
}

func (h *timedHits) wrap(host string, fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		fn(w, r)
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.starts == nil {
			h.starts, h.spans = map[string][]time.Time{}, map[string][][2]time.Time{}
		}
		k := host + r.URL.Path
		h.starts[k] = append(h.starts[k], t0)
		h.spans[host] = append(h.spans[host], [2]time.Time{t0, time.Now()})
	}
}

func (h *timedHits) first(k string) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ts := h.starts[k]
	if len(ts) == 0 {
		return time.Time{}, false
	}
	return ts[0], true
}

func (h *timedHits) hostSpans(host string) [][2]time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := slices.Clone(h.spans[host])
	slices.SortFunc(s, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	return s
}

// TestMixedOriginHostNotHeldBack: a host whose pages link its https
// origin, which does not answer TLS (the test server speaks plain HTTP),
// fetches its http pages at its own delay: the https origin's robots.txt
// failure and its retry (a minute away, the default) hold back only the
// https URL.
func TestMixedOriginHostNotHeldBack(t *testing.T) {
	var hits timedHits
	links := []string{"https://a.test/s"} // taken first
	for i := range 10 {
		links = append(links, fmt.Sprintf("/m%d", i))
	}
	_, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": hits.wrap("a.test", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.URL.Path == "/":
			linkPage(links...)(w, r)
		default:
			linkPage()(w, r)
		}
	})})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/")
	cfg.MinDelay = 100 * time.Millisecond
	cfg.DelayFactor = 3
	cfg.RobotsRetry = DefaultConfig().RobotsRetry
	cfg.RobotsRetries = DefaultConfig().RobotsRetries
	start := time.Now()
	res := runUntil(t, cfg, 10*time.Second, func() bool { _, ok := hits.first("a.test/m9"); return ok })
	for i := range 10 {
		at, ok := hits.first(fmt.Sprintf("a.test/m%d", i))
		if !ok {
			t.Errorf("/m%d never fetched", i)
			continue
		}
		// 12 requests at 0.1 s or more apart: about 1.2 s.
		if d := at.Sub(start); d > 2*time.Second {
			t.Errorf("/m%d fetched %v after the start, want within 2s", i, d)
		}
	}
	if res.Stats.RobotsRetries != 1 {
		t.Errorf("%d robots.txt retries scheduled, want 1 (the https origin)", res.Stats.RobotsRetries)
	}
	if res.Stats.MaxStallSeconds > 1 {
		t.Errorf("a host stalled %.2fs (%s)", res.Stats.MaxStallSeconds, res.Stats.MaxStallHost)
	}
}

// TestRobotsHubDoesNotFreezeOtherHosts: 24 hosts whose robots.txt
// redirects to one slow hub server do not hold the workers: a fast host
// is served at its own delay meanwhile, and the hub sees one request at a
// time, robots.txt hops and its own pages alike, each after the delay
// rule (DelayFactor x the request's duration).
//
// 24 hops are more than the hub serves in the 6 s (one per 1.2 s), so
// hops that held workers would hold all 4. They are few enough that the
// start-up queue stays short of the stall bound: every host is due at
// once, and the last waits for its share of the others' robots.txt
// requests, 6 a worker here. With 100 hosts it waited for 25: 16 ms on a
// quiet machine, 50-100 ms beside six busy loops, and 1.04 s once in CI,
// where this test runs beside whole crawls.
func TestRobotsHubDoesNotFreezeOtherHosts(t *testing.T) {
	// It waits 6 s on its servers; the bounds below leave a second of
	// slack to a 0.1 s delay.
	crawltest.Waiting(t, "runs 6 s")
	const hubTakes = 300 * time.Millisecond
	var hits timedHits
	sites := map[string]http.HandlerFunc{
		"hub.test": hits.wrap("hub.test", hub(hubTakes, func(w http.ResponseWriter, r *http.Request) {
			n := atoiSuffix(r.URL.Path)
			linkPage(fmt.Sprintf("/p%d", n+1))(w, r)
		})),
		"fast.test": hits.wrap("fast.test", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(w, r)
				return
			}
			n := atoiSuffix(r.URL.Path)
			linkPage(fmt.Sprintf("/p%d", n+1))(w, r)
		}),
	}
	seeds := []string{"http://fast.test/", "http://hub.test/"}
	seeds = addHubRedirected(sites, seeds, 24)
	_, srv := startVhosts(t, sites)
	cfg := localConfig(t, srv.Listener.Addr().String(), seeds...)
	cfg.Workers = 4
	cfg.MinDelay = 100 * time.Millisecond
	cfg.DelayFactor = 3
	cfg.MaxDelay = 30 * time.Second
	res := runUntil(t, cfg, 6*time.Second, nil)
	fast := hits.hostSpans("fast.test")
	if len(fast) < 20 {
		t.Fatalf("fast.test got %d requests in 6 s", len(fast))
	}
	// The fast host's own delay is about 0.1 s; a second more is allowed.
	for i := 1; i < len(fast); i++ {
		if gap := fast[i][0].Sub(fast[i-1][1]); gap > 1100*time.Millisecond {
			t.Errorf("fast.test waited %v between requests %d and %d", gap, i-1, i)
		}
	}
	hub := hits.hostSpans("hub.test")
	if len(hub) < 3 {
		t.Fatalf("hub.test got %d requests", len(hub))
	}
	// One delay rule at the hub: 3 x at least 0.3 s between any two of
	// its requests, hops or pages.
	for i := 1; i < len(hub); i++ {
		if gap := hub[i][0].Sub(hub[i-1][1]); gap < 3*hubTakes*9/10 {
			t.Errorf("hub.test request %d started %v after the one before ended, want at least %v", i, gap, 3*hubTakes)
		}
	}
	if res.Stats.MaxStallSeconds > 1 {
		t.Errorf("a host stalled %.2fs (%s)", res.Stats.MaxStallSeconds, res.Stats.MaxStallHost)
	}
}

// TestDeadHTTPSOriginsOneRetry: pages link https origins whose server
// fails every TLS handshake with an alert (it has no certificate for
// their names: "remote error: tls: internal error"). Each dead origin's
// robots.txt is tried twice, the fetch and its one retry, counted at the
// server by handshake; its URLs are then excluded and the crawl ends on
// its own. At the default --robots-retry the last try comes a minute
// after the first, so such a crawl ends about a minute after its last
// live fetch, not 15.
func TestDeadHTTPSOriginsOneRetry(t *testing.T) {
	const dead = 3
	var mu sync.Mutex
	handshakes := map[string]int{}
	noCert := crawltest.NoCertTLS(t, func(name string) {
		mu.Lock()
		handshakes[name]++
		mu.Unlock()
	})
	var links []string
	for i := range dead {
		links = append(links, fmt.Sprintf("https://dead%d.test/a", i), fmt.Sprintf("https://dead%d.test/b", i))
	}
	_, srv := startVhosts(t, map[string]http.HandlerFunc{"live.test": linkPage(links...)})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://live.test/")
	cfg.Resolve["*:443"] = noCert
	cfg.RobotsRetry = 100 * time.Millisecond
	cfg.RobotsRetries = DefaultConfig().RobotsRetries
	res := runCrawl(t, cfg)
	mu.Lock()
	defer mu.Unlock()
	for i := range dead {
		if n := handshakes[fmt.Sprintf("dead%d.test", i)]; n != 2 {
			t.Errorf("dead%d.test: %d handshakes, want 2 (robots.txt and its one retry)", i, n)
		}
	}
	if res.Stats.RobotsRetries != dead || res.Stats.RobotsExcluded != 2*dead {
		t.Errorf("robots.txt retries %d, excluded %d; want %d and %d", res.Stats.RobotsRetries, res.Stats.RobotsExcluded, dead, 2*dead)
	}
}

// hub serves the robots.txt hub.test of the hub tests: every request takes
// at least takes; its robots.txt disallows /secret and page serves the
// rest.
func hub(takes time.Duration, page http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(takes)
		if strings.HasSuffix(r.URL.Path, "robots.txt") {
			w.Write([]byte("User-agent: *\nDisallow: /secret\n"))
			return
		}
		page(w, r)
	}
}

// addHubRedirected adds n sites s0.test, s1.test, ... to sites, each
// redirecting its robots.txt to hub.test's and linking to its /secret,
// and returns seeds with their roots appended.
func addHubRedirected(sites map[string]http.HandlerFunc, seeds []string, n int) []string {
	for i := range n {
		h := fmt.Sprintf("s%d.test", i)
		seeds = append(seeds, "http://"+h+"/")
		sites[h] = func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(w, r, "http://hub.test/robots.txt", http.StatusMovedPermanently)
				return
			}
			linkPage("/secret")(w, r)
		}
	}
	return seeds
}

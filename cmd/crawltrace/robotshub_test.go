package main

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// TestRobotsHubAcrossProcesses is the bound docs/politeness.md states
// for a robots.txt hub across processes: 100 hosts, split over a 2-process
// TCP crawl, redirect their robots.txt to one hub server, which logs when
// each request starts and ends. A hop waits in its own node's queue for
// the hub, so the hub sees at most one request per node at once: never
// more than 2.
func TestRobotsHubAcrossProcesses(t *testing.T) {
	childProcesses(t, "a 2-process crawl")
	var mu sync.Mutex
	var spans [][2]time.Time
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.Host, ":")
		w.Header().Set("Content-Type", "text/html")
		switch {
		case host == "hub.test":
			t0 := time.Now()
			time.Sleep(10 * time.Millisecond)
			if r.URL.Path == "/robots.txt" {
				w.Write([]byte("User-agent: *\nDisallow: /secret\n"))
			}
			mu.Lock()
			spans = append(spans, [2]time.Time{t0, time.Now()})
			mu.Unlock()
		case r.URL.Path == "/robots.txt":
			http.Redirect(w, r, "http://hub.test/robots.txt", http.StatusMovedPermanently)
		default:
			w.Write([]byte(`<a href="/secret">x</a>`))
		}
	})}
	ln := crawltest.Listen(t)
	go srv.Serve(ln)
	defer srv.Close()
	seeds := []string{"http://hub.test/"}
	for i := range 100 {
		seeds = append(seeds, fmt.Sprintf("http://s%d.test/", i))
	}
	web := &clusterWeb{addr: ln.Addr().String(), seeds: crawltest.SeedsFile(t, seeds)}
	c := newCluster(t, web, 2, "--min-delay", "0")
	t.Cleanup(func() {
		if t.Failed() {
			for i := range c.procs {
				b, _ := os.ReadFile(c.procs[i].log)
				t.Logf("node %d's log:\n%s", i, tail(string(b), 2000))
			}
		}
	})
	c.waitNodes(t, 60*time.Second)

	mu.Lock()
	defer mu.Unlock()
	if len(spans) < 101 {
		t.Fatalf("hub.test got %d requests, want the 100 hops and its own", len(spans))
	}
	// The most requests in flight at once: +1 at each start, -1 at each
	// end, in time order (an end before a start at the same instant).
	type ev struct {
		at time.Time
		d  int
	}
	var evs []ev
	for _, s := range spans {
		evs = append(evs, ev{s[0], 1}, ev{s[1], -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d
	})
	most, now := 0, 0
	for _, e := range evs {
		now += e.d
		most = max(most, now)
	}
	t.Logf("hub.test: %d requests, at most %d at once", len(spans), most)
	if most > 2 {
		t.Errorf("hub.test had %d requests at once, want at most 2 (one per node)", most)
	}
}

package recorder

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// TestLateOriginNotHeldBack: a host whose first URL is of an origin that
// does not answer (its https, here a port that accepts and hangs up) has
// all its URLs parked and waits for that origin's robots.txt retry, a
// minute away. A URL of its other origin (http) found after that must be
// fetched at the host's own delay, not after the retry.
func TestLateOriginNotHeldBack(t *testing.T) {
	// b.test:443 hangs up: the https origin is unreachable.
	hangUp := crawltest.HangUp(t)
	// The progress line tells when b.test's https origin waits for its
	// retry.
	parked := &lineWatch{want: "origins awaiting a robots.txt retry 1", seen: make(chan struct{})}
	var hits timedHits
	_, srv := startVhosts(t, map[string]http.HandlerFunc{
		"a.test": func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				linkPage("https://b.test/s", "/next")(w, r)
			case "/next":
				// Served once b.test's https origin has failed, so that
				// b.test has only parked URLs when http://b.test/p comes.
				select {
				case <-parked.seen:
				case <-time.After(5 * time.Second):
				}
				linkPage("http://b.test/p")(w, r)
			default:
				http.NotFound(w, r)
			}
		},
		"b.test": hits.wrap("b.test", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(w, r)
				return
			}
			linkPage()(w, r)
		}),
	})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/")
	cfg.Resolve["b.test:443"] = hangUp
	cfg.RobotsRetry = DefaultConfig().RobotsRetry
	cfg.RobotsRetries = DefaultConfig().RobotsRetries
	cfg.Progress, cfg.ProgressEvery = parked, 10*time.Millisecond
	start := time.Now()
	res := runUntil(t, cfg, 15*time.Second, func() bool { _, ok := hits.first("b.test/p"); return ok })
	at, ok := hits.first("b.test/p")
	if !ok {
		t.Fatalf("http://b.test/p not fetched in 15 s (the https origin's retry is %v away)", cfg.RobotsRetry)
	}
	if d := at.Sub(start); d > 5*time.Second {
		t.Errorf("http://b.test/p fetched %v after the start, want within a few seconds", d)
	}
	if res.Stats.MaxStallSeconds > 1 {
		t.Errorf("a host stalled %.2fs (%s)", res.Stats.MaxStallSeconds, res.Stats.MaxStallHost)
	}
}

// lineWatch is a progress writer that closes seen when a line holds want.
type lineWatch struct {
	want string
	mu   sync.Mutex
	seen chan struct{}
	done bool
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done && strings.Contains(string(p), w.want) {
		w.done = true
		close(w.seen)
	}
	return len(p), nil
}

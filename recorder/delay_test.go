package recorder

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestDelayFactor: Mercator's rule with a real slow server. Each page
// takes 100ms to serve, so with DelayFactor 10 consecutive requests to
// the host start at least 1s apart (10 x 100ms after the previous one
// ended).
func TestDelayFactor(t *testing.T) {
	var mu sync.Mutex
	var starts []time.Time
	_, srv := startVhosts(t, map[string]http.HandlerFunc{"slow.test": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		time.Sleep(100 * time.Millisecond)
		linkPage("/a", "/b")(w, r)
	}})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://slow.test/")
	cfg.DelayFactor = 10
	cfg.MinDelay = 0
	res := runCrawl(t, cfg)
	mu.Lock()
	defer mu.Unlock()
	if len(starts) != 3 || res.Stats.FetchAttempts != 3 {
		t.Fatalf("%d page requests (%d attempts), want 3", len(starts), res.Stats.FetchAttempts)
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d < time.Second {
			t.Errorf("requests %d and %d started %v apart, want at least 1s", i-1, i, d)
		}
	}
}

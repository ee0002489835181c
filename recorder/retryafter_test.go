package recorder

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
)

// TestRetryAfter: servers that answer 429 or 503 with Retry-After, at a
// real local server that logs when each request started and ended. The
// host's next request waits at least what the server asked (delay-seconds
// or an HTTP-date), capped at MaxRetryAfter; the URL is tried again, at
// most RetryAfterTries times, and every try is a row of the page log.
//   - a.test/busy: 429 with Retry-After: 2 once, then 200;
//   - b.test/busy: 503 with Retry-After an HTTP-date 2 s ahead once;
//   - c.test/busy: 429 with Retry-After: 1 every time;
//   - d.test/busy: 503 with Retry-After: 3600 once, cut to the cap;
//   - e.test/robots.txt: 429 with Retry-After: 1 once (the host waits;
//     the rules are a 4xx's: everything allowed).
func TestRetryAfter(t *testing.T) {
	crawltest.Waiting(t, "waits what the servers ask: about 3 s")
	const retryCap = 2500 * time.Millisecond
	var hits timedHits
	var mu sync.Mutex
	busyN := map[string]int{}
	type ask struct{ at, due time.Time } // an answer asking to wait until due
	asks := map[string][]ask{}
	// busy serves a host whose /busy answers with answer(w, n) for its
	// n-th request: the wait asked (0: none, the page is served).
	busy := func(host string, answer func(w http.ResponseWriter, n int) time.Duration) http.HandlerFunc {
		return hits.wrap(host, func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(w, r)
			case "/":
				linkPage("/busy", "/after")(w, r)
			case "/busy":
				mu.Lock()
				n := busyN[host]
				busyN[host]++
				mu.Unlock()
				now := time.Now()
				if wait := answer(w, n); wait > 0 {
					mu.Lock()
					asks[host] = append(asks[host], ask{now, now.Add(wait)})
					mu.Unlock()
					return
				}
				linkPage()(w, r)
			default:
				linkPage()(w, r)
			}
		})
	}
	var eRobots int
	sites := map[string]http.HandlerFunc{
		// robots.txt: 429 with Retry-After: 1 once (4xx: everything
		// allowed), then 404; the host waits before its pages.
		"e.test": hits.wrap("e.test", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/robots.txt" {
				linkPage()(w, r)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if eRobots++; eRobots > 1 {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			now := time.Now()
			asks["e.test"] = append(asks["e.test"], ask{now, now.Add(time.Second)})
		}),
		"a.test": busy("a.test", func(w http.ResponseWriter, n int) time.Duration {
			if n > 0 {
				return 0
			}
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			return 2 * time.Second
		}),
		"b.test": busy("b.test", func(w http.ResponseWriter, n int) time.Duration {
			if n > 0 {
				return 0
			}
			d := time.Now().Add(2 * time.Second).Truncate(time.Second)
			w.Header().Set("Retry-After", d.UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
			return time.Until(d)
		}),
		"c.test": busy("c.test", func(w http.ResponseWriter, n int) time.Duration {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return time.Second
		}),
		"d.test": busy("d.test", func(w http.ResponseWriter, n int) time.Duration {
			if n > 0 {
				return 0
			}
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
			return retryCap // what the crawler waits: the cap
		}),
	}
	_, srv := startVhosts(t, sites)
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/", "http://b.test/", "http://c.test/", "http://d.test/", "http://e.test/")
	cfg.MinDelay = 50 * time.Millisecond
	cfg.MaxRetryAfter = retryCap
	cfg.RetryAfterTries = 2
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the crawl did not end on its own within 30 s")
	}

	// From the server's side: after each 429 or 503, the host's next
	// request started no sooner than the server asked (d.test: the cap),
	// with a 20 ms margin for the clock's grain.
	const margin = 20 * time.Millisecond
	wantBusy := map[string]int{"a.test": 2, "b.test": 2, "c.test": 3, "d.test": 2}
	rows := map[string][]int32{} // the statuses logged for host/busy
	for _, p := range readPages(t, cfg.OutDir, 0) {
		if strings.HasSuffix(p.URL, "/busy") {
			h := strings.TrimPrefix(strings.TrimSuffix(p.URL, "/busy"), "http://")
			rows[h] = append(rows[h], p.Status)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := len(hits.hostSpans("e.test")); n < 2 {
		t.Errorf("e.test: %d requests, want its robots.txt and its page", n)
	}
	for host, want := range wantBusy {
		if n := busyN[host]; n != want {
			t.Errorf("%s/busy requested %d times, want %d", host, n, want)
		}
		if len(rows[host]) != want {
			t.Errorf("%s/busy logged %d times (%v), want %d", host, len(rows[host]), rows[host], want)
		}
	}
	for host := range asks {
		spans := hits.hostSpans(host)
		for _, a := range asks[host] {
			for _, sp := range spans {
				if sp[0].After(a.at) {
					if sp[0].Before(a.due.Add(-margin)) {
						t.Errorf("%s: the request after a Retry-After began %v before the wait asked ended", host, a.due.Sub(sp[0]))
					}
					break
				}
			}
		}
	}
	if s := res.Stats; s.RetryAfterWaits != 7 || s.RetryAfterRetries != 5 {
		t.Errorf("retry_after_waits %d, retry_after_retries %d; want 7 and 5", s.RetryAfterWaits, s.RetryAfterRetries)
	}
}

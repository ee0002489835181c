package worker

import (
	"fmt"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/politeness"
)

// TestRetryAfterBackoff: a 429 or 503 with Retry-After makes its server
// wait what it asks, capped at MaxRetryAfter, before its next request;
// the URL is fetched again at most RetryAfterTries times, each try a row
// of the page log. A robots.txt so answered makes its server wait too
// (its 4xx allows everything).
//   - a.test/busy: 429, Retry-After: 2 once, then 200;
//   - c.test/busy: 429, Retry-After: 1 every time;
//   - d.test/busy: 503, Retry-After: 3600 once, cut to the cap;
//   - e.test/robots.txt: 429, Retry-After: 1.
func TestRetryAfterBackoff(t *testing.T) {
	const retryCap, minDelay = 2500 * time.Millisecond, 50 * time.Millisecond
	asks := map[string]struct {
		status      int
		retryAfter  string
		times       int // answered so for the first times requests
		wait        time.Duration
		wantRequest int
	}{
		"http://a.test/busy":       {429, "2", 1, 2 * time.Second, 2},
		"http://c.test/busy":       {429, "1", 99, time.Second, 3},
		"http://d.test/busy":       {503, "3600", 1, retryCap, 2},
		"http://e.test/robots.txt": {429, "1", 1, time.Second, 1},
	}
	w := newVWeb(func(u string, n int) (fetch.Result, string) {
		if a, ok := asks[u]; ok && n < a.times {
			return status(a.status, a.retryAfter)
		}
		switch {
		case politeness.Origin(u)+"/robots.txt" == u:
			return status(404, "")
		case politeness.Origin(u)+"/" == u:
			return linkPage("/busy", "/after")
		}
		return linkPage()
	})
	var seeds []string
	for _, h := range []string{"a", "c", "d", "e"} {
		seeds = append(seeds, fmt.Sprintf("http://%s.test/", h))
	}
	delay := politeness.Delay{Min: minDelay, Max: time.Minute}.Wait
	node := newVNode(t, w, 0, Options{MaxRetryAfter: retryCap, RetryAfterTries: 2}, delay, seeds...)
	w.run(t, 2*time.Hour, node)

	checked := 0 // the answers asking to wait that were followed
	rows := map[string]int{}
	for _, m := range node.sink.msgs {
		if m.Page != nil {
			rows[m.Page.URL]++
		}
	}
	for u, a := range asks {
		if n := len(w.of(u)); n != a.wantRequest || rows[u] != n {
			t.Errorf("%s requested %d times, %d rows logged; want %d", u, n, rows[u], a.wantRequest)
		}
		// After each answer asking to wait, the server's next request
		// starts no sooner than asked (the cap for d.test), and no later
		// than that and the one other request the worker may be making.
		on := w.onHost(politeness.Host(u))
		for i, r := range on[:len(on)-1] {
			if r.url != u || (r.status != 429 && r.status != 503) {
				continue
			}
			checked++
			if gap := on[i+1].start - r.end; gap < a.wait || gap > a.wait+w.took*4 {
				t.Errorf("%s: the next request %v after the answer, want %v", u, gap, a.wait)
			}
		}
	}
	if checked != 6 {
		t.Errorf("%d answers asking to wait were followed by a request to their server, want 6", checked)
	}
	if !w.requested("http://e.test/after") || !w.requested("http://a.test/after") {
		t.Error("the hosts' other pages were not fetched")
	}
	if wt, r := node.st.RetryAfterWaits.Load(), node.st.RetryAfterRetries.Load(); wt != 1+3+1+1 || r != 1+2+1 {
		t.Errorf("retry_after_waits %d, retry_after_retries %d; want 6 and 4", wt, r)
	}
}

package robots

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// TestPolicyDate: TTL on success, doubling backoff up to Retries on 5xx,
// one retry at most for an unreachable origin, none when refused.
func TestPolicyDate(t *testing.T) {
	p := Policy{TTL: time.Hour, Retry: time.Second, Retries: 3}
	now := time.Unix(1000, 0)
	ok := New(200, "User-agent: *\nDisallow: /x\n", nil, "a")
	if refetch, retry := p.Date(ok, "http://a", nil, nil, false, now); refetch || retry || !ok.Expires().Equal(now.Add(time.Hour)) {
		t.Fatalf("2xx: refetch %v retry %v expires %v", refetch, retry, ok.Expires())
	}
	again := New(200, "", nil, "a")
	if refetch, _ := p.Date(again, "http://a", ok, nil, false, now); !refetch {
		t.Error("new rules over allowing ones of the same origin are a refetch")
	}
	// 5xx: retries after 1s, 2s, 4s, then none (the TTL).
	var prev *Rules
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, time.Hour} {
		r := New(503, "", nil, "a")
		_, retry := p.Date(r, "http://a", prev, nil, false, now)
		if retry != (i < 3) || r.Expires().Sub(now) != want || r.WaitingRetry(now) != (i < 3) || r.Allowed("a", "http://a/") {
			t.Errorf("failure %d: retry %v, expires after %v (want %v)", i+1, retry, r.Expires().Sub(now), want)
		}
		prev = r
	}
	refused := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	for _, tc := range []struct {
		err     error
		refused bool
		retries int
	}{
		{refused, false, 1},
		{errors.New("x"), true, 0},
		{errors.New("timeout"), false, 3},
	} {
		prev, n := (*Rules)(nil), 0
		for range 5 {
			r := New(0, "", tc.err, "a")
			if _, retry := p.Date(r, "http://a", prev, tc.err, tc.refused, now); retry {
				n++
			}
			prev = r
		}
		if n != tc.retries {
			t.Errorf("%v (refused %v): %d retries, want %d", tc.err, tc.refused, n, tc.retries)
		}
	}
}

// TestRulesList: a host's rules are one per origin; With replaces an
// origin's rules without changing the list it was given.
func TestRulesList(t *testing.T) {
	a := New(200, "Crawl-delay: 1\nUser-agent: *\nCrawl-delay: 2\n", nil, "x")
	p := Policy{TTL: time.Hour}
	now := time.Unix(0, 0)
	p.Date(a, "http://h", nil, nil, false, now)
	b := New(200, "User-agent: *\nCrawl-delay: 5\n", nil, "x")
	p.Date(b, "https://h", nil, nil, false, now)
	l := a.With(b)
	if l.ForOrigin("http://h") == nil || l.ForOrigin("https://h") != b || l.ForOrigin("http://other") != nil {
		t.Fatal("ForOrigin")
	}
	if d := l.MaxCrawlDelay(); d != 5*time.Second {
		t.Errorf("max crawl delay %v", d)
	}
	c := New(404, "", nil, "x")
	p.Date(c, "https://h", nil, nil, false, now)
	l2 := l.With(c)
	if l2.MaxCrawlDelay() != 2*time.Second || l.MaxCrawlDelay() != 5*time.Second {
		t.Errorf("after replacing https://h: %v, old list %v", l2.MaxCrawlDelay(), l.MaxCrawlDelay())
	}
	if !l2.ForOrigin("http://h").Current(now) || l2.ForOrigin("http://h").Current(now.Add(time.Hour)) {
		t.Error("Current must end at the TTL")
	}
	if (*Rules)(nil).ForOrigin("x") != nil || (*Rules)(nil).Current(now) || (*Rules)(nil).MaxCrawlDelay() != 0 {
		t.Error("nil list")
	}
}

package recorder

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// robotsMaxRedirects is how many redirects a robots.txt fetch follows
// (RFC 9309 2.3.1.2 asks for at least five). A longer chain means the
// file is unavailable, which RFC 9309 lets a crawler treat like 4xx.
const robotsMaxRedirects = 5

// noteOrigin records that h has a URL of origin queued, so its robots.txt
// is fetched before that URL (called under the frontier lock).
func (h *hostState) noteOrigin(origin string) {
	if !slices.Contains(h.origins, origin) {
		h.origins = append(h.origins, origin)
	}
}

// robotsDue returns an origin of h whose robots.txt must be fetched
// before h's next request: never fetched, or its rules expired at now
// (the TTL, or a retry's backoff). "" when none. h is not held.
func robotsDue(h *hostState, now time.Time) string {
	for _, o := range h.origins {
		r := h.robots.forOrigin(o)
		if r == nil || (!r.expires.IsZero() && !now.Before(r.expires)) {
			return o
		}
	}
	return ""
}

// forOrigin returns the rules of origin in the list r, nil when none.
// Rules with an empty origin apply to every origin.
func (r *robotsRules) forOrigin(origin string) *robotsRules {
	for ; r != nil; r = r.next {
		if r.origin == origin || r.origin == "" {
			return r
		}
	}
	return nil
}

// with returns the list r with x replacing the rules of x's origin.
func (r *robotsRules) with(x *robotsRules) *robotsRules {
	x.next = nil
	tail := x
	for ; r != nil; r = r.next {
		if r.origin != x.origin {
			c := *r
			c.next = nil
			tail.next = &c
			tail = &c
		}
	}
	return x
}

// maxCrawlDelay is the largest Crawl-delay over the origins of a host.
func (r *robotsRules) maxCrawlDelay() time.Duration {
	var d time.Duration
	for ; r != nil; r = r.next {
		d = max(d, r.crawlDelay)
	}
	return d
}

// fetchRobots fetches origin's robots.txt for the held host h, following
// up to robotsMaxRedirects redirects (each hop is logged in the page log;
// RFC 9309: the rules found apply to the original origin; a hop waits the
// held host's delay, or, to another server, its turn at [hopGate]), stores the
// rules with their expiry, and releases h. A 5xx or network error keeps
// the origin disallowed and is retried after RobotsRetry, doubled on each
// failure, up to RobotsRetries times; h waits that long, so its URLs stay
// queued instead of being excluded. A refused address is not retried.
func (n *node) fetchRobots(ctx context.Context, h *hostState, origin string, w uint16, buf *bytes.Buffer) {
	u := origin + "/robots.txt"
	client := n.sessionClient(h)
	q := math.NaN()
	if n.cfg.Quality != nil {
		q = n.cfg.Quality[u]
	}
	var r fetchResult
	var end bool
	var took time.Duration
	var gate *hopKey // held during a hop to another server
	status := 0
	for hop := 0; ; hop++ {
		start := n.cfg.Now()
		r = fetch(ctx, client, n.cfg.UserAgent, u, robotsLimit, buf, false)
		if hop == 0 {
			end = observe(h, &r)
		}
		if gate != nil {
			n.hops.release(gate, n.delayWith(r.dur, 0))
			gate = nil
		}
		took += r.dur
		status = r.status
		n.st.robotsFetches.Add(1)
		n.st.status(&n.st.robotsByStatus, r.status)
		p := n.pageRecord(u, q, w, start, r, buf.Len())
		loc := ""
		if r.err == nil && isRedirect(r.status) && r.location != "" {
			if base, err := url.Parse(u); err == nil {
				if l, err := urlnorm.Resolve(base, r.location); err == nil &&
					(strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")) {
					loc = l
					p.Redirect = l
				}
			}
		}
		n.split.send(&splitMsg{page: p, source: p.ID, worker: w})
		if loc == "" {
			if isRedirect(r.status) || (r.status >= 300 && r.status < 400) {
				status = 404 // a redirect without a usable Location: unavailable
			}
			break
		}
		if hop == robotsMaxRedirects {
			status = 404 // too many redirects: unavailable (RFC 9309 2.3.1.2)
			break
		}
		n.st.robotsRedirects.Add(1)
		// The next hop waits as politeness asks: after the held server's
		// own delay when it stays on that server (http to https, say),
		// else behind the node's other hops to the same server.
		if key := n.front.s.keyOf(loc); key == h.origin {
			t := time.NewTimer(n.delay(r.dur, h))
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		} else {
			var ok bool
			if gate, ok = n.hops.acquire(ctx, key); !ok {
				// Stopping: the rules stay unknown, as after a failed fetch.
				r, status = fetchResult{err: ctx.Err()}, 0
				break
			}
		}
		u = loc
		client = n.client // later hops may leave the session's origin
	}
	rules := newRobotsRules(status, buf.String(), r.err, n.agent)
	now := time.Now()
	rules.origin, rules.fetchedAt = origin, now
	prev := h.robots.forOrigin(origin)
	if prev != nil && prev.origin == origin && !prev.denyAll {
		n.st.robotsRefetches.Add(1)
	}
	ttl := n.cfg.RobotsTTL
	if ttl <= 0 {
		ttl = DefaultConfig().RobotsTTL
	}
	rules.expires = now.Add(ttl)
	var backoff time.Duration
	if rules.denyAll {
		rules.failures = 1
		if prev != nil && prev.origin == origin && prev.denyAll {
			rules.failures = prev.failures + 1
		}
		if rules.failures <= n.cfg.RobotsRetries && !errors.Is(r.err, ErrPrivateAddress) && n.cfg.RobotsRetry > 0 {
			backoff = min(n.cfg.RobotsRetry<<(rules.failures-1), ttl)
			rules.expires = now.Add(backoff)
			n.st.robotsRetries.Add(1)
		}
	}
	h.robots = h.robots.with(rules)
	n.front.releaseSession(h, true, max(n.delay(took, h), backoff), end)
}

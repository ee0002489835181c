package recorder

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// robotsMaxRedirects is how many redirects a robots.txt fetch follows
// (RFC 9309 2.3.1.2 asks for at least five). A longer chain means the
// file is unavailable, which RFC 9309 lets a crawler treat like 4xx.
const robotsMaxRedirects = 5

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

// robotsStep makes one request of a robots.txt fetch, holding host h:
// the robots.txt of origin (a task's robots, hop nil; h is the origin's
// host) or a redirect hop to h (hop). The response is logged in the page
// log. A redirect queues the next hop on the server it goes to (up to
// robotsMaxRedirects; RFC 9309: the rules found apply to the original
// origin), where it waits that server's turn and delay like a fetch; any
// other outcome becomes the origin's rules (robotsOutcome). Either way h
// is released after its own delay, so a failing origin holds back only
// its own URLs.
func (n *node) robotsStep(ctx context.Context, h *hostState, origin string, hop *robotsHop, w uint16, buf *bytes.Buffer) {
	owner, u, nhop := h, origin+"/robots.txt", 0
	if hop != nil {
		owner, origin, u, nhop = hop.owner, hop.origin, hop.url, hop.n
	}
	q := math.NaN()
	if n.cfg.Quality != nil {
		q = n.cfg.Quality[u]
	}
	start := n.cfg.Now()
	r := fetch(ctx, n.sessionClient(h), n.cfg.UserAgent, u, robotsLimit, buf, false)
	end := observe(h, &r)
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
	n.split.Send(&splitter.Msg{Page: p, Source: p.ID, Worker: w})
	switch {
	case r.err != nil && ctx.Err() != nil:
		// Stopping: the rules stay as they were, and the origin's URLs
		// are saved with the frontier.
		n.front.robotsDone(owner, origin, nil)
	case loc != "" && nhop < robotsMaxRedirects:
		n.st.robotsRedirects.Add(1)
		n.front.addHop(n.front.keyFor(loc), &robotsHop{owner: owner, origin: origin, url: loc, n: nhop + 1})
	default:
		status := r.status
		if loc != "" || isRedirect(r.status) || (r.status >= 300 && r.status < 400) {
			// Too many redirects, or one without a usable Location: the
			// file is unavailable (RFC 9309 2.3.1.2).
			status = 404
		}
		rules := newRobotsRules(status, buf.String(), r.err, n.agent)
		n.front.robotsDone(owner, origin, func(prev *robotsRules) *robotsRules {
			return n.robotsOutcome(origin, prev, rules, r.err)
		})
	}
	n.front.releaseFetch(h, r.dur, end)
}

// robotsOutcome dates new rules of origin, fetched now, given the
// origin's previous rules: they expire after RobotsTTL; a failure
// (5xx, no response) is retried after RobotsRetry, doubled on each
// failure in a row, up to RobotsRetries times, with the origin's URLs
// waiting meanwhile. An origin that is unreachable outright (its
// connection refused, its TLS handshake failed, its name unknown) gets
// one retry at most; a refused address none. After the last retry the
// origin stays disallowed until the TTL, its URLs counted as excluded.
func (n *node) robotsOutcome(origin string, prev, rules *robotsRules, err error) *robotsRules {
	now := time.Now()
	rules.origin, rules.fetchedAt = origin, now
	if prev != nil && prev.origin == origin && !prev.denyAll {
		n.st.robotsRefetches.Add(1)
	}
	ttl := n.cfg.RobotsTTL
	if ttl <= 0 {
		ttl = DefaultConfig().RobotsTTL
	}
	rules.expires = now.Add(ttl)
	if !rules.denyAll {
		return rules
	}
	rules.failures = 1
	if prev != nil && prev.origin == origin && prev.denyAll {
		rules.failures = prev.failures + 1
	}
	retries := n.cfg.RobotsRetries
	if unreachable(err) {
		retries = min(retries, 1)
	}
	if rules.failures <= retries && !errors.Is(err, ErrPrivateAddress) && n.cfg.RobotsRetry > 0 {
		rules.expires = now.Add(min(n.cfg.RobotsRetry<<(rules.failures-1), ttl))
		rules.retrying = true
		n.st.robotsRetries.Add(1)
	}
	return rules
}

// unreachable reports whether err says the origin cannot be reached at
// all, as opposed to a server that answered badly or slowly: the
// connection was refused, the TLS handshake failed (no TLS there, or a
// certificate not trusted), or the host name does not resolve.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	var dnsErr *net.DNSError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	// net/http turns a plain HTTP answer to a TLS hello into a bare
	// error string, dropping the tls.RecordHeaderError.
	return errors.Is(err, syscall.ECONNREFUSED) ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") ||
		(errors.As(err, &dnsErr) && dnsErr.IsNotFound) ||
		errors.As(err, &recErr) || errors.As(err, &alert) || errors.As(err, &verify) ||
		errors.As(err, &unknownCA) || errors.As(err, &hostErr) || errors.As(err, &invalid)
}

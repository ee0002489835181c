package recorder

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/robots"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// robotsMaxRedirects is how many redirects a robots.txt fetch follows
// (RFC 9309 2.3.1.2 asks for at least five). A longer chain means the
// file is unavailable, which RFC 9309 lets a crawler treat like 4xx.
const robotsMaxRedirects = 5

// robotsStep makes one request of a robots.txt fetch, holding host h:
// the robots.txt of origin (a task's robots, hop nil; h is the origin's
// host) or a redirect hop to h (hop). The response is logged in the page
// log. A redirect queues the next hop on the server it goes to (up to
// robotsMaxRedirects; RFC 9309: the rules found apply to the original
// origin), where it waits that server's turn and delay like a fetch; any
// other outcome becomes the origin's rules (robotsOutcome). Either way h
// is released after its own delay, so a failing origin holds back only
// its own URLs.
func (n *node) robotsStep(ctx context.Context, h *frontier.Host, origin string, hop *frontier.Hop, w uint16, buf *bytes.Buffer) {
	owner, u, nhop := h, origin+"/robots.txt", 0
	if hop != nil {
		owner, origin, u, nhop = hop.Owner, hop.Origin, hop.URL, hop.N
	}
	q := math.NaN()
	if n.cfg.Quality != nil {
		q = n.cfg.Quality[u]
	}
	start := n.cfg.Now()
	r := fetch.Get(ctx, n.sessionClient(h), n.cfg.UserAgent, u, robotsLimit, buf, false)
	end := observe(h, &r)
	n.st.robotsFetches.Add(1)
	n.st.status(&n.st.robotsByStatus, r.Status)
	p := n.pageRecord(u, q, w, start, r, buf.Len())
	loc := ""
	if r.Err == nil && fetch.IsRedirect(r.Status) && r.Location != "" {
		if base, err := url.Parse(u); err == nil {
			if l, err := urlnorm.Resolve(base, r.Location); err == nil &&
				(strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")) {
				loc = l
				p.Redirect = l
			}
		}
	}
	n.split.send(&splitMsg{page: p, source: p.ID, worker: w})
	switch {
	case r.Err != nil && ctx.Err() != nil:
		// Stopping: the rules stay as they were, and the origin's URLs
		// are saved with the frontier.
		n.front.RobotsDone(owner, origin, nil)
	case loc != "" && nhop < robotsMaxRedirects:
		n.st.robotsRedirects.Add(1)
		n.front.AddHop(n.front.KeyFor(loc), &frontier.Hop{Owner: owner, Origin: origin, URL: loc, N: nhop + 1})
	default:
		status := r.Status
		if loc != "" || fetch.IsRedirect(r.Status) || (r.Status >= 300 && r.Status < 400) {
			// Too many redirects, or one without a usable Location: the
			// file is unavailable (RFC 9309 2.3.1.2).
			status = 404
		}
		rules := robots.New(status, buf.String(), r.Err, n.agent)
		n.front.RobotsDone(owner, origin, func(prev *robots.Rules) *robots.Rules {
			return n.robotsOutcome(origin, prev, rules, r.Err)
		})
	}
	n.front.ReleaseFetch(h, r.Dur, end)
}

// robotsOutcome dates new rules of origin, fetched now, given the
// origin's previous rules (robots.Policy.Date): they expire after
// RobotsTTL; a failure is retried after RobotsRetry, doubled on each
// failure in a row, up to RobotsRetries times; a private address is not
// retried.
func (n *node) robotsOutcome(origin string, prev, rules *robots.Rules, err error) *robots.Rules {
	refetch, retry := n.robotsPolicy().Date(rules, origin, prev, err, errors.Is(err, ErrPrivateAddress), time.Now())
	if refetch {
		n.st.robotsRefetches.Add(1)
	}
	if retry {
		n.st.robotsRetries.Add(1)
	}
	return rules
}

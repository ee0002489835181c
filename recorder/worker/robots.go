package worker

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/url"
	"strings"

	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/robots"
	"github.com/crawltrace/crawltrace/recorder/splitter"
	"github.com/crawltrace/crawltrace/recorder/urlnorm"
)

// robotsLimit is how much of a robots.txt is read (RFC 9309 asks parsers
// to handle at least 500 KiB).
const robotsLimit = 512 << 10

// robotsMaxRedirects is how many redirects a robots.txt fetch follows
// (RFC 9309 2.3.1.2 asks for at least five). A longer chain means the
// file is unavailable, which RFC 9309 lets a crawler treat like 4xx.
const robotsMaxRedirects = 5

// robotsStep makes one request of a robots.txt fetch, holding host h:
// the robots.txt of origin (a task's robots, hop nil; h is the origin's
// host) or a redirect hop to h (hop). The response is logged in the page
// log. A redirect queues the next hop on the server it goes to (up to
// robotsMaxRedirects; RFC 9309: the rules found apply to the original
// origin), in the queue of the node that owns that server
// (Options.HopQueue), where it waits that server's turn and delay like a
// fetch; any other outcome becomes the origin's rules (robotsOutcome),
// stored by the origin's own frontier (the hop's Home). Either way h
// is released after its own delay (or the longer wait a 429 or 503 asks
// with Retry-After), so a failing origin holds back only its own URLs.
func (wk *Worker) robotsStep(ctx context.Context, h *frontier.Host, origin string, hop *frontier.Hop, w uint16, buf *bytes.Buffer) {
	owner, home, u, nhop := h, frontier.RobotsHome(wk.front), origin+"/robots.txt", 0
	if hop != nil {
		owner, origin, u, nhop = hop.Owner, hop.Origin, hop.URL, hop.N
		if hop.Home != nil {
			home = hop.Home
		}
	}
	q := math.NaN()
	if wk.o.Quality != nil {
		q = wk.o.Quality[u]
	}
	start := wk.o.Now()
	capt := wk.capture()
	r := wk.get(ctx, wk.sessionClient(h), u, robotsLimit, buf, false, capt)
	end := observe(h, &r)
	wk.st.RobotsFetches.Add(1)
	wk.st.RobotsBytes.Add(int64(buf.Len()))
	wk.st.status(&wk.st.d.RobotsByStatus, r.Status)
	p := wk.pageRecord(u, q, w, start, r, buf.Len())
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
	wk.sink.Submit(&splitter.Msg{Page: p, Source: p.ID, Worker: w, Logged: wk.archive(ctx, capt, &r, u, start, p.ID)})
	switch {
	case r.Err != nil && ctx.Err() != nil:
		// Stopping: the rules stay as they were, and the origin's URLs
		// are saved with the frontier.
		home.RobotsDone(owner, origin, nil)
	case loc != "" && nhop < robotsMaxRedirects:
		wk.st.RobotsRedirects.Add(1)
		q := wk.hopQueue(loc)
		q.AddHop(q.KeyFor(loc), &frontier.Hop{Owner: owner, Home: home, Origin: origin, URL: loc, N: nhop + 1})
	default:
		status := r.Status
		if loc != "" || fetch.IsRedirect(r.Status) || (r.Status >= 300 && r.Status < 400) {
			// Too many redirects, or one without a usable Location: the
			// file is unavailable (RFC 9309 2.3.1.2).
			status = 404
		}
		rules := robots.New(status, buf.String(), r.Err, wk.o.Agent)
		home.RobotsDone(owner, origin, func(prev *robots.Rules) *robots.Rules {
			return wk.robotsOutcome(origin, prev, rules, r.Err)
		})
	}
	if wait, ok := wk.retryAfter(&r); ok {
		// The server asked to come back later: h waits (the origin's
		// rules and their retries are robots.Policy's).
		wk.front.Backoff(frontier.Task{Host: h}, r.Dur, wait, end, false)
	} else {
		wk.front.ReleaseFetch(h, r.Dur, end)
	}
}

// hopQueue is the frontier a robots.txt redirect hop to u waits in: that
// of the node owning u's server (Options.HopQueue), else this node's.
func (wk *Worker) hopQueue(u string) HopQueue {
	if wk.o.HopQueue != nil {
		if q := wk.o.HopQueue(u); q != nil {
			return q
		}
	}
	return wk.front
}

// robotsOutcome dates new rules of origin, fetched now, given the
// origin's previous rules (robots.Policy.Date): they expire after the
// policy's TTL; a failure is retried after its Retry, doubled on each
// failure in a row, up to Retries times; a private address is not
// retried.
func (wk *Worker) robotsOutcome(origin string, prev, rules *robots.Rules, err error) *robots.Rules {
	refetch, retry := wk.o.Robots.Date(rules, origin, prev, err, errors.Is(err, fetch.ErrPrivateAddress), wk.o.RulesNow())
	if refetch {
		wk.st.RobotsRefetches.Add(1)
	}
	if retry {
		wk.st.RobotsRetries.Add(1)
	}
	return rules
}

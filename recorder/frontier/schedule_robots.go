package frontier

import (
	"time"

	"github.com/crawltrace/crawltrace/recorder/politeness"
	"github.com/crawltrace/crawltrace/recorder/robots"
)

// robots.txt in the schedule. RFC 9309 keeps one robots.txt per origin
// (scheme, host and port), and its outcome, retries and backoff belong to
// that origin alone, while politeness belongs to the server (the host's
// queue). So a host's URL is checked against its own origin's rules when
// it is taken:
//   - rules current: the URL is fetched (or excluded by the worker);
//   - no rules yet, or expired: the URL is parked under its origin and the
//     worker fetches the origin's robots.txt instead;
//   - the origin waits for a robots.txt retry, or its fetch is under way
//     (a redirect chain waiting at other servers): the URL is parked and
//     the next one is taken.
//
// Parked URLs come back (to h.first, served next) when their origin's
// rules are known; a host left with only parked URLs waits, in no heap
// or in the waiting heap until the first retry, without holding a worker
// or a connection. A robots.txt redirect hop is a request to the server
// it goes to: it waits in that server's hops, taken before its URLs, and
// its request takes that server's turn and delay.

// parkedOrigin holds a host's URLs of one origin set aside while the
// origin's robots.txt is fetched (fetching) or waits for a retry.
type parkedOrigin struct {
	origin   string
	urls     []qurl
	fetching bool
}

// Hop is one robots.txt redirect hop: the request for URL, hop N (1 for
// the first redirect) of the fetch of Origin's robots.txt, whose rules go
// to Owner, the host the origin belongs to, through Home, the frontier
// Owner is in ([Frontier.RobotsDone]). The worker makes it and queues it
// with [Frontier.AddHop] on the frontier that owns URL's server, which
// may be another in-process node's than Home.
type Hop struct {
	Owner  *Host
	Home   RobotsHome
	Origin string
	URL    string
	N      int
}

// RobotsHome is the frontier an origin's host is in, where the outcome
// of its robots.txt fetch goes; [Frontier] satisfies it. It is called
// from the workers of any node.
type RobotsHome interface {
	// RobotsDone ends the robots.txt fetch of origin, held by owner, as
	// [Frontier.RobotsDone] does.
	RobotsDone(owner *Host, origin string, build func(prev *robots.Rules) *robots.Rules)
}

var _ RobotsHome = (*Frontier)(nil)

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (h *Host) parkedFor(origin string) *parkedOrigin {
	for _, p := range h.parked {
		if p.origin == origin {
			return p
		}
	}
	return nil
}

// dueOrigin returns a parked origin whose robots.txt may be fetched now:
// no fetch under way, and no rules in force (the retry's time has come).
func (h *Host) dueOrigin(now time.Time) *parkedOrigin {
	for _, p := range h.parked {
		if !p.fetching && !h.robots.ForOrigin(p.origin).Current(now) {
			return p
		}
	}
	return nil
}

// parkedDue is when the first parked origin's robots.txt may be fetched;
// false when every parked origin waits for a fetch under way (or none is
// parked).
func (h *Host) parkedDue() (time.Time, bool) {
	var due time.Time
	ok := false
	for _, p := range h.parked {
		if p.fetching {
			continue
		}
		var t time.Time // no rules: at once
		if r := h.robots.ForOrigin(p.origin); r != nil {
			t = r.Expires()
		}
		if !ok || t.Before(due) {
			due, ok = t, true
		}
	}
	return due, ok
}

// park sets x aside under its origin.
func (s *scheduler) park(h *Host, origin string, x qurl) *parkedOrigin {
	p := h.parkedFor(origin)
	if p == nil {
		p = &parkedOrigin{origin: origin}
		h.parked = append(h.parked, p)
		if s.parkedHosts == nil {
			s.parkedHosts = map[*Host]struct{}{}
		}
		s.parkedHosts[h] = struct{}{}
	}
	p.urls = append(p.urls, x)
	h.nParked++
	return p
}

// prepare makes sure a host taken from the server queue has something to
// give a worker: a hop, a parked origin's robots.txt due, or a URL at the
// head of h.first whose origin is not parked. URLs of parked origins met
// on the way are parked. It reports false when everything left is
// parked.
func (s *scheduler) prepare(h *Host, now time.Time) bool {
	if len(h.hops) > 0 || h.dueOrigin(now) != nil {
		return true
	}
	for {
		if len(h.first) == 0 {
			if h.urls.len() == 0 {
				return false
			}
			x := s.popURL(h) // counted out; counted in again below
			s.queued++
			s.mem += int64(len(x.url)) + qurlBytes
			h.first = append(h.first, x)
		}
		x := h.first[0]
		o := politeness.Origin(x.url)
		if h.parkedFor(o) == nil && !h.robots.ForOrigin(o).WaitingRetry(now) {
			return true
		}
		h.first[0] = qurl{}
		h.first = h.first[1:]
		s.park(h, o, x)
	}
}

// take gives the worker holding h (prepared by pick) its task: a hop to
// this server first, then a parked origin's robots.txt that is due, then
// the head URL, or its origin's robots.txt when the origin has no rules
// in force (the URL is parked meanwhile). The URL's rules go with the
// task, so the worker reads them without the frontier's lock.
func (s *scheduler) take(h *Host, now time.Time) Task {
	if len(h.hops) > 0 {
		hop := h.hops[0]
		h.hops[0] = nil
		h.hops = h.hops[1:]
		return Task{Host: h, Hop: hop, URL: hop.URL}
	}
	if p := h.dueOrigin(now); p != nil {
		p.fetching = true
		return Task{Host: h, Robots: true, URL: p.origin}
	}
	o := politeness.Origin(h.first[0].url)
	r := h.robots.ForOrigin(o)
	if !r.Current(now) {
		x := h.first[0]
		h.first[0] = qurl{}
		h.first = h.first[1:]
		s.park(h, o, x).fetching = true
		return Task{Host: h, Robots: true, URL: o}
	}
	x := s.popURL(h)
	t := Task{Host: h, URL: x.url, Q: x.q, Rules: r}
	if n, ok := h.retried[x.url]; ok {
		t.Tries = n
		delete(h.retried, x.url)
		if len(h.retried) == 0 {
			h.retried = nil
		}
	}
	return t
}

// robotsDone stores origin's rules on owner and brings back its parked
// URLs, unless the rules make them wait for a retry. A fetch that ended
// without an outcome (the crawl stopping) passes rules nil: the origin's
// rules stay as they were. It reports whether workers should look again.
func (s *scheduler) robotsDone(owner *Host, origin string, rules *robots.Rules, now time.Time) bool {
	if rules != nil {
		owner.robots = owner.robots.With(rules)
	}
	p := owner.parkedFor(origin)
	if p == nil {
		return false
	}
	p.fetching = false
	if !owner.robots.ForOrigin(origin).WaitingRetry(now) {
		owner.first = append(owner.first, p.urls...)
		owner.nParked -= len(p.urls)
		for i, x := range owner.parked {
			if x == p {
				owner.parked = append(owner.parked[:i], owner.parked[i+1:]...)
				break
			}
		}
		if len(owner.parked) == 0 {
			owner.parked = nil
			delete(s.parkedHosts, owner)
		}
	}
	return s.reschedule(owner, now)
}

// addHop queues a robots.txt redirect hop on the server of key.
func (s *scheduler) addHop(key string, hop *Hop, now time.Time) bool {
	h := s.host(key)
	h.hops = append(h.hops, hop)
	return s.reschedule(h, now)
}

// waitingRobots is the number of origins whose URLs wait for a robots.txt
// retry at now.
func (s *scheduler) waitingRobots(now time.Time) int {
	n := 0
	for h := range s.parkedHosts {
		for _, p := range h.parked {
			if h.robots.ForOrigin(p.origin).WaitingRetry(now) {
				n++
			}
		}
	}
	return n
}

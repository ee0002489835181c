package frontier

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/politeness"
	"github.com/crawltrace/crawltrace/recorder/robots"
)

// Host is one server's URL queue, politeness and connection state inside
// the frontier's scheduler. A server is keyed by its politeness key (the
// host name, or its IP address; see [Options.KeyOf]), so every origin of
// a host shares one queue, one request in flight and one delay.
//
// robots.txt is per origin (RFC 9309 2.3): robots holds the rules of each
// origin (robots.Rules.ForOrigin). A URL whose origin has no current rules
// yet, or whose origin waits for a robots.txt retry, is set aside in
// parked under its origin (schedule_robots.go), so the host's other
// origins go on at the host's delay. hops are robots.txt redirect hops
// (of any host's origin) that go to this server: they wait their turn
// here like a fetch. All of it is read and written under the frontier's
// lock only, except the session, which the worker holding the host uses
// through [Host.Client] and [Host.Observe].
type Host struct {
	origin  string // the politeness key
	urls    urlQueue
	first   []qurl // URLs taken from urls, served before it in this order
	parked  []*parkedOrigin
	nParked int // URLs in parked
	hops    []*Hop
	nextAt  time.Time // earliest start of the next request
	at      time.Time // when the host is due (its place in the waiting heap)
	readyAt time.Time // when the host last became due (stall accounting)
	busy    bool      // a worker holds the host (a request is in flight)
	robots  *robots.Rules
	heapIdx int // index in the heap holding the host, -1 when in none
	seq     uint64
	ent     uint64  // when the host last entered the server queue (FIFO)
	key     float64 // rank in the server queue, higher first
	est     serverEstimate
	sess    *session // the open connection session, nil when none
	// retried holds the tries made of URLs queued again because the
	// server asked to come back later, until they are taken (nil: none).
	retried map[string]int
}

// queued is the number of the host's URLs not yet taken by a worker,
// parked ones included.
func (h *Host) queued() int { return h.urls.len() + len(h.first) + h.nParked }

// hasWork reports whether the host has something to do other than wait
// for a parked origin's robots.txt: a hop, or URLs not set aside.
func (h *Host) hasWork() bool { return len(h.hops) > 0 || len(h.first) > 0 || h.urls.len() > 0 }

// session is a server's connection session: from the connection the
// scheduler opens to the server (taking one of the capped connection
// slots) until the server closes it, a fetch fails, or the server's queue
// runs dry. The worker holding the host owns it.
type session struct {
	client *http.Client // made by the worker on first use; nil in unit tests
	sample connSample
}

// Client returns the HTTP client of h's connection session, made by mk
// on first use (mk may return nil: no client of the session's own), or
// nil when h has no session. Only the worker holding h may call it.
func (h *Host) Client(mk func() *http.Client) *http.Client {
	if h.sess == nil {
		return nil
	}
	if h.sess.client == nil {
		h.sess.client = mk()
	}
	return h.sess.client
}

// Observe records a request's connection facts in h's session and
// reports whether the session should end because the connection is gone
// (false without a session). Only the worker holding h may call it.
func (h *Host) Observe(c *fetch.Conn) (end bool) {
	return h.sess != nil && h.sess.sample.observe(c)
}

func (s *session) close() {
	if s.client != nil {
		s.client.CloseIdleConnections()
	}
}

// scheduler is the two-level crawl schedule of one node (Cao, Jiang and
// Singh): a queue of servers and, per server, a queue of URLs, both
// ordered by the crawl order. A server is in one of three heaps while it
// is not held by a worker and has URLs: waiting (its politeness delay has
// not passed), resume (it holds an open connection and is ready: served
// first, so an open connection is used until it closes — the schedule is
// non-preemptive) or ready (no connection; ranked by the order, highest
// first, and given a connection when a slot is free). It is not safe for
// concurrent use; [Frontier] locks it.
type scheduler struct {
	order   string
	keyOf   func(url string) string // the politeness key (Options.KeyOf)
	rng     *rand.Rand
	oracle  map[string]float64
	hosts   map[string]*Host
	waiting hostHeap
	resume  hostHeap
	ready   hostHeap
	def     serverEstimate // smoothed over every session of the node
	seq     uint64
	ent     uint64
	urlSeq  uint64
	queued  int
	open    int   // sessions open
	opened  int64 // sessions opened
	// freed counts the sessions pick ended on hosts left with nothing to
	// do; the frontier frees their connection slots.
	freed int
	// maxStall is the longest a host waited between becoming due (its
	// delay passed, with something to fetch) and being taken by a worker,
	// and stallHost that host.
	maxStall  time.Duration
	stallHost string
	// parkedHosts holds the hosts with parked URLs.
	parkedHosts map[*Host]struct{}
	// Spilling (schedule_spill.go): store is nil without a budget; mem
	// is the bytes of URLs queued in memory.
	store    *Store
	budget   int64
	mem      int64
	storeErr error
}

func newScheduler(order string, seed uint64, oracle map[string]float64) *scheduler {
	s := &scheduler{order: order, oracle: oracle, hosts: make(map[string]*Host), keyOf: politeness.Host,
		rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), def: newDefaultEstimate()}
	s.waiting.less = func(a, b *Host) bool {
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return a.seq < b.seq
	}
	s.resume.less = func(a, b *Host) bool { return a.ent < b.ent }
	s.ready.less = func(a, b *Host) bool {
		if a.key != b.key {
			return a.key > b.key
		}
		return a.ent < b.ent
	}
	return s
}

// byQuality reports whether URLs are served best quality first.
func (s *scheduler) byQuality() bool {
	return s.order == OrderQuality || s.order == OrderCapability
}

// setOracle sets the quality oracle and rescores the URLs already queued.
func (s *scheduler) setOracle(oracle map[string]float64) {
	s.oracle = oracle
	for _, h := range s.hosts {
		for i := h.urls.head; i < len(h.urls.items); i++ {
			h.urls.items[i].q = s.quality(h.urls.items[i].url)
		}
		if h.urls.byQuality {
			for i := len(h.urls.items)/2 - 1; i >= 0; i-- {
				h.urls.down(i)
			}
		}
	}
	for _, h := range s.ready.hs {
		h.key = s.key(h)
	}
	heap.Init(&s.ready)
}

// quality is u's oracle value, 0 when unknown.
func (s *scheduler) quality(u string) float64 {
	return s.oracle[u]
}

// add queues u (with quality q) at time now. It reports whether a host
// became ready or the earliest waiting time moved, so waiting workers
// should look again.
func (s *scheduler) add(u string, q float64, now time.Time) bool {
	return s.addKeyed(s.keyOf(u), u, q, now)
}

// addKeyed is add for a caller that has u's politeness key already.
func (s *scheduler) addKeyed(key, u string, q float64, now time.Time) bool {
	h := s.host(key)
	s.urlSeq++
	h.urls.push(qurl{url: u, q: q, seq: s.urlSeq})
	s.queued++
	s.mem += int64(len(u)) + qurlBytes
	s.maybeSpill(h)
	if h.busy {
		return false
	}
	if h.heapIdx < 0 {
		return s.schedule(h, now)
	}
	if s.waiting.has(h) && h.at.After(h.nextAt) {
		// The host waited past its delay only for a parked origin's
		// robots.txt retry; u may be of another origin, served at the
		// host's own delay (prepare parks it otherwise).
		return s.reschedule(h, now)
	}
	if h.sess == nil && s.ready.has(h) {
		h.key = s.key(h)
		heap.Fix(&s.ready, h.heapIdx)
	}
	return false
}

// host returns the server keyed o, made on first use.
func (s *scheduler) host(o string) *Host {
	h := s.hosts[o]
	if h == nil {
		s.seq++
		h = &Host{origin: o, heapIdx: -1, seq: s.seq}
		h.urls.byQuality = s.byQuality()
		s.hosts[o] = h
	}
	return h
}

// schedule puts an idle host into the heap it belongs in: waiting until
// its delay has passed (and, when all its URLs are parked, until the
// first parked origin's robots.txt retry), else resume or ready. A host
// with nothing to do, or only parked URLs whose robots.txt fetch is under
// way, goes in no heap: the fetch's end schedules it again. It reports
// whether workers should look again.
func (s *scheduler) schedule(h *Host, now time.Time) bool {
	at := h.nextAt
	if !h.hasWork() {
		due, ok := h.parkedDue()
		if !ok {
			return false
		}
		at = maxTime(at, due)
	}
	h.at = at
	if at.After(now) {
		heap.Push(&s.waiting, h)
		return h.heapIdx == 0
	}
	h.readyAt = now
	s.ent++
	h.ent = s.ent
	if h.sess != nil {
		heap.Push(&s.resume, h)
	} else {
		h.key = s.key(h)
		heap.Push(&s.ready, h)
	}
	return true
}

// key is a host's rank in the server queue, higher first: 0 for every
// host under the FIFO orders (bfs, dfs, random), so hosts are served in
// the order they entered the queue; P/T under performance; the best
// queued quality under quality; the summed quality of the next P URLs
// divided by T under capability (P rounded to the nearest integer).
func (s *scheduler) key(h *Host) float64 {
	switch s.order {
	case OrderPerformance:
		p := h.est.pages(h.queued())
		return p / max(h.est.expectedTime(p, &s.def), 1e-9)
	case OrderQuality:
		return h.urls.best()
	case OrderCapability:
		p := h.est.pages(h.queued())
		return h.urls.topSum(int(math.Round(p))) / max(h.est.expectedTime(p, &s.def), 1e-9)
	}
	return 0
}

// promote moves the waiting hosts whose time has come into resume or
// ready.
func (s *scheduler) promote(now time.Time) {
	for len(s.waiting.hs) > 0 && !s.waiting.hs[0].at.After(now) {
		h := heap.Pop(&s.waiting).(*Host)
		due := h.at
		s.schedule(h, now)
		if h.heapIdx >= 0 && !s.waiting.has(h) {
			h.readyAt = due // due since then, however late promote ran
		}
	}
}

// reschedule puts an idle host back where it now belongs, after its
// parked URLs or hops changed. A held host is left alone: its release
// schedules it.
func (s *scheduler) reschedule(h *Host, now time.Time) bool {
	if h.busy {
		return false
	}
	for _, q := range []*hostHeap{&s.waiting, &s.resume, &s.ready} {
		if q.has(h) {
			heap.Remove(q, h.heapIdx)
			break
		}
	}
	return s.schedule(h, now)
}

// pick returns the host to fetch from next at time now and holds it: a
// ready host with an open connection if there is one, else the best
// ready host without, if acquire grants it a connection slot (acquire
// nil: no cap). With no host to give, it returns nil and how long until
// the earliest waiting host is due (-1: none), and blocked reports that a
// ready host waits for a slot.
func (s *scheduler) pick(now time.Time, acquire func() bool) (h *Host, wait time.Duration, blocked bool) {
	s.promote(now)
	for h == nil {
		var q *hostHeap
		switch {
		case len(s.resume.hs) > 0:
			q = &s.resume
		case len(s.ready.hs) > 0:
			q = &s.ready
		}
		if q == nil {
			break
		}
		c := q.hs[0]
		if !s.prepare(c, now) {
			// Every URL left is parked: the host waits for its robots.txt.
			heap.Remove(q, c.heapIdx)
			if c.sess != nil {
				s.endSession(c)
				s.freed++
			}
			s.schedule(c, now)
			continue
		}
		if q == &s.ready {
			if acquire != nil && !acquire() {
				blocked = true
				break
			}
			c.sess = &session{}
			s.open++
			s.opened++
		}
		h = heap.Pop(q).(*Host)
	}
	if h != nil {
		h.busy = true
		if d := now.Sub(h.readyAt); d > s.maxStall {
			s.maxStall, s.stallHost = d, h.origin
		}
		return h, 0, false
	}
	wait = -1
	if len(s.waiting.hs) > 0 {
		wait = s.waiting.hs[0].at.Sub(now)
	}
	return nil, wait, blocked
}

// popURL removes the next URL of a held host by the crawl order: FIFO
// (bfs, performance), LIFO (dfs), seeded uniform (random) or best quality
// first (quality, capability).
func (s *scheduler) popURL(h *Host) qurl {
	var x qurl
	if len(h.first) > 0 {
		x = h.first[0]
		h.first[0] = qurl{}
		h.first = h.first[1:]
		if len(h.first) == 0 {
			h.first = nil
		}
		s.queued--
		s.mem -= int64(len(x.url)) + qurlBytes
		return x
	}
	switch s.order {
	case OrderDFS:
		s.refillBack(&h.urls)
		x = h.urls.popBack()
	case OrderRandom:
		x = h.urls.popAt(s.rng.IntN(h.queued()))
	case OrderQuality, OrderCapability:
		x = h.urls.popBest()
	default:
		s.refillFront(&h.urls)
		x = h.urls.popFront()
	}
	s.queued--
	s.mem -= int64(len(x.url)) + qurlBytes
	return x
}

// requeueFirst queues u again on the held host h, at the head of its
// queue (served first), after tries fetches of it that the server asked
// to repeat later.
func (s *scheduler) requeueFirst(h *Host, u string, tries int) {
	s.urlSeq++
	h.first = append([]qurl{{url: u, q: s.quality(u), seq: s.urlSeq}}, h.first...)
	s.queued++
	s.mem += int64(len(u)) + qurlBytes
	if h.retried == nil {
		h.retried = map[string]int{}
	}
	h.retried[u] = tries
}

// release returns a held host at time now. When requested is true a
// request was made and the host waits delay before the next one. The
// host's session ends when endSession is set (the server closed the
// connection, a fetch failed) or its queue is empty: its estimate (and
// the node's default estimate) take the session's sample, and release
// reports true so the caller frees the connection slot. It also reports
// whether workers should look again.
func (s *scheduler) release(h *Host, now time.Time, requested bool, delay time.Duration, endSession bool) (ended, wake bool) {
	h.busy = false
	if requested {
		h.nextAt = now.Add(delay)
	}
	if h.sess != nil && (endSession || !h.hasWork()) {
		s.endSession(h)
		ended = true
	}
	wake = s.schedule(h, now)
	return ended, wake || ended
}

// endSession closes h's session and learns from it.
func (s *scheduler) endSession(h *Host) {
	h.est.update(&h.sess.sample)
	s.def.update(&h.sess.sample)
	h.sess.close()
	h.sess = nil
	s.open--
}

// closeSessions ends every open session (the crawl is over) and returns
// how many there were; hosts held by workers must have been released.
func (s *scheduler) closeSessions() int {
	n := 0
	for _, h := range s.hosts {
		if h.sess != nil {
			h.sess.close()
			h.sess = nil
			s.open--
			n++
		}
	}
	return n
}

// hostHeap is a heap of hosts under less; heapIdx tracks positions.
type hostHeap struct {
	hs   []*Host
	less func(a, b *Host) bool
}

func (q *hostHeap) has(h *Host) bool {
	return h.heapIdx >= 0 && h.heapIdx < len(q.hs) && q.hs[h.heapIdx] == h
}
func (q *hostHeap) Len() int           { return len(q.hs) }
func (q *hostHeap) Less(i, j int) bool { return q.less(q.hs[i], q.hs[j]) }
func (q *hostHeap) Swap(i, j int) {
	q.hs[i], q.hs[j] = q.hs[j], q.hs[i]
	q.hs[i].heapIdx = i
	q.hs[j].heapIdx = j
}
func (q *hostHeap) Push(x any) {
	h := x.(*Host)
	h.heapIdx = len(q.hs)
	q.hs = append(q.hs, h)
}
func (q *hostHeap) Pop() any {
	old := q.hs
	h := old[len(old)-1]
	old[len(old)-1] = nil
	q.hs = old[:len(old)-1]
	h.heapIdx = -1
	return h
}

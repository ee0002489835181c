package recorder

import (
	"context"
	"github.com/crawltrace/crawltrace/recorder/robots"

	frontierdisk "github.com/crawltrace/crawltrace/recorder/frontier"
	"github.com/crawltrace/crawltrace/recorder/politeness"
	"math"
	"sync"
	"time"
)

// task is what a worker does next, holding host: fetch robots.txt of the
// origin url of host (robots), a robots.txt redirect hop to host (hop),
// or fetch url (of quality q; NaN without an oracle) under its origin's
// rules.
type task struct {
	host   *hostState
	url    string
	q      float64
	robots bool
	hop    *robotsHop
	rules  *robots.Rules
	id     uint64 // the URL's in-flight number (0 for robots.txt)
}

// inflightURL is a URL a worker took from the frontier whose page the
// splitter has not yet logged: a checkpoint queues it again, so a crash
// before its page reaches the log loses no URL.
type inflightURL struct {
	origin, url string
	q           float64
}

// frontier holds the URLs a node has yet to fetch in a [scheduler]: a
// queue of servers and one queue of URLs per server. A host is held by
// one worker at a time, so there is never more than one request in
// flight per host, and a host's requests go over its session's single
// connection; slots, shared by the nodes of a crawl, caps the sessions
// (open connections). It is safe for concurrent use.
type frontier struct {
	mu     sync.Mutex
	s      *scheduler
	slots  *connSlots    // nil: no cap
	wake   chan struct{} // closed (and replaced) when a host may be ready
	closed bool
	oracle bool
	// inflight holds the URLs taken by workers until [frontier.finish].
	inflight map[uint64]inflightURL
	nextID   uint64
	// keys, when set, says which URLs' politeness keys are known without
	// a DNS lookup (ip mode); the others wait in resolving, by host,
	// while a lookup runs off the caller's goroutine (the splitter's).
	keys      *politeness.Keys
	resolving map[string][]string
	lookups   chan struct{} // bounds the lookups at once
	// delay is the politeness rule: the wait after a request that took d
	// to a server whose robots.txt asks crawlDelay (politeness.Delay).
	delay func(d, crawlDelay time.Duration) time.Duration
}

// maxLookups bounds a node's DNS lookups in flight for politeness keys.
const maxLookups = 16

func newFrontier(order string, seed uint64) *frontier {
	return newFrontierWith(order, seed, nil, nil)
}

// newFrontierWith makes a frontier whose URLs take their quality from
// oracle (nil: none) and whose sessions take slots (nil: no cap).
func newFrontierWith(order string, seed uint64, oracle map[string]float64, slots *connSlots) *frontier {
	return &frontier{s: newScheduler(order, seed, oracle), slots: slots, wake: make(chan struct{}), oracle: oracle != nil,
		inflight: make(map[uint64]inflightURL)}
}

// configure sets the quality oracle (rescoring URLs already queued) and
// the connection cap; the node calls it before its workers start.
func (f *frontier) configure(oracle map[string]float64, slots *connSlots) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.s.setOracle(oracle)
	f.oracle = oracle != nil
	f.slots = slots
}

// add queues u. It never blocks: a URL whose server needs a DNS lookup
// (ip mode) is queued when the lookup returns.
func (f *frontier) add(u string) {
	var key string
	if f.keys != nil {
		var ok bool
		if key, ok = f.keys.Cached(u); !ok {
			f.resolve(u)
			return
		}
	} else {
		key = f.s.keyOf(u)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.s.addKeyed(key, u, f.s.quality(u), time.Now()) {
		f.broadcast()
	}
}

// resolve holds u until its host's politeness key is looked up; the
// first URL of a host starts the lookup.
func (f *frontier) resolve(u string) {
	host := politeness.Host(u)
	f.mu.Lock()
	if f.resolving == nil {
		f.resolving = map[string][]string{}
		f.lookups = make(chan struct{}, maxLookups)
	}
	q, pending := f.resolving[host]
	f.resolving[host] = append(q, u)
	f.mu.Unlock()
	if pending {
		return
	}
	go func() {
		f.lookups <- struct{}{}
		key := f.keys.Key(u)
		<-f.lookups
		f.mu.Lock()
		defer f.mu.Unlock()
		now, added := time.Now(), false
		for _, x := range f.resolving[host] {
			added = f.s.addKeyed(key, x, f.s.quality(x), now) || added
		}
		delete(f.resolving, host)
		if added {
			f.broadcast()
		}
	}()
}

func (f *frontier) broadcast() {
	close(f.wake)
	f.wake = make(chan struct{})
}

// next blocks until a host may be fetched (and, for a host without an
// open connection, a connection slot is free) and returns its task; the
// host is then held until [frontier.release]. It returns false when ctx
// is done or the frontier is closed.
func (f *frontier) next(ctx context.Context) (task, bool) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	var acquire func() bool
	if f.slots != nil {
		acquire = f.slots.tryAcquire
	}
	for {
		var slotFreed <-chan struct{}
		if f.slots != nil {
			slotFreed = f.slots.freed() // before trying, so no release is missed
		}
		f.mu.Lock()
		if f.closed || ctx.Err() != nil {
			f.mu.Unlock()
			return task{}, false
		}
		now := time.Now()
		h, wait, blocked := f.s.pick(now, acquire)
		freed := f.s.freed
		f.s.freed = 0
		if h != nil {
			t := f.s.take(h, now)
			if !t.robots && t.hop == nil {
				f.nextID++
				t.id = f.nextID
				f.inflight[t.id] = inflightURL{origin: h.origin, url: t.url, q: t.q}
				if !f.oracle {
					t.q = math.NaN()
				}
			}
			f.mu.Unlock()
			f.freeSlots(freed)
			return t, true
		}
		f.freeSlots(freed)
		ch := f.wake
		f.mu.Unlock()
		if !blocked {
			slotFreed = nil
		}
		var tc <-chan time.Time
		if wait >= 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			tc = timer.C
		}
		select {
		case <-ctx.Done():
			return task{}, false
		case <-ch:
		case <-tc:
		case <-slotFreed:
		}
	}
}

// spillTo lets server queues spill to store once the URLs queued in
// memory pass budget bytes (see schedule_spill.go). The node calls it
// before its workers start.
func (f *frontier) spillTo(store *frontierdisk.Store, budget int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.s.store, f.s.budget = store, budget
}

// err is the first error of the frontier's disk store.
func (f *frontier) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s.storeErr
}

// spillStats returns the disk store's counters and the bytes of URLs
// queued in memory.
func (f *frontier) spillStats() (frontierdisk.Stats, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.s.store == nil {
		return frontierdisk.Stats{}, f.s.mem
	}
	return f.s.store.Stats(), f.s.mem
}

// finish ends in-flight URL id: its page was logged, or it will never be
// fetched (robots.txt excludes it).
func (f *frontier) finish(id uint64) {
	if id == 0 {
		return
	}
	f.mu.Lock()
	delete(f.inflight, id)
	f.mu.Unlock()
}

// release returns a held host. When requested is true a request was made
// and the host waits delay before the next one; otherwise (a URL skipped
// by robots.txt) its schedule is unchanged.
func (f *frontier) release(h *hostState, requested bool, delay time.Duration) {
	f.releaseSession(h, requested, delay, false)
}

// releaseSession is release that also ends the host's connection session
// when endSession is set (the server closed the connection, or the fetch
// failed); a session also ends when the host has no URL left.
func (f *frontier) releaseSession(h *hostState, requested bool, delay time.Duration, endSession bool) {
	f.releaseWith(h, requested, func() time.Duration { return delay }, endSession)
}

// releaseFetch returns a host held for a request that took d: it waits
// the delay rule, with the largest Crawl-delay of its origins' rules,
// read under the lock (a hop may set another origin's rules meanwhile).
func (f *frontier) releaseFetch(h *hostState, d time.Duration, endSession bool) {
	f.releaseWith(h, true, func() time.Duration {
		if f.delay == nil {
			return d
		}
		return f.delay(d, h.robots.MaxCrawlDelay())
	}, endSession)
}

// releaseWith is releaseSession with the delay computed under the lock.
func (f *frontier) releaseWith(h *hostState, requested bool, delay func() time.Duration, endSession bool) {
	f.mu.Lock()
	ended, wake := f.s.release(h, time.Now(), requested, delay(), endSession)
	if wake {
		f.broadcast()
	}
	f.mu.Unlock()
	if ended {
		f.freeSlots(1)
	}
}

// freeSlots frees n connection slots.
func (f *frontier) freeSlots(n int) {
	for range n {
		if f.slots != nil {
			f.slots.release()
		}
	}
}

// robotsDone stores the outcome of origin's robots.txt fetch for owner
// (its host): build builds the rules from the origin's previous ones (nil
// when none); build nil, or returning nil, leaves them as they were (the
// fetch was cut short). The origin's parked URLs come back unless the
// rules make them wait for a retry.
func (f *frontier) robotsDone(owner *hostState, origin string, build func(prev *robots.Rules) *robots.Rules) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var rules *robots.Rules
	if build != nil {
		rules = build(owner.robots.ForOrigin(origin))
	}
	if f.s.robotsDone(owner, origin, rules, time.Now()) {
		f.broadcast()
	}
}

// keyFor is u's politeness key (it may wait for a DNS lookup in ip mode).
func (f *frontier) keyFor(u string) string { return f.s.keyOf(u) }

// addHop queues a robots.txt redirect hop on the server of key, where it
// waits its turn like a fetch.
func (f *frontier) addHop(key string, hop *robotsHop) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.s.addHop(key, hop, time.Now()) {
		f.broadcast()
	}
}

// stall is the longest a host waited for a worker once due, and that
// host.
func (f *frontier) stall() (time.Duration, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s.maxStall, f.s.stallHost
}

// robotsWaiting is the number of origins whose URLs wait for a
// robots.txt retry.
func (f *frontier) robotsWaiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s.waitingRobots(time.Now())
}

// close wakes and stops every waiting worker.
func (f *frontier) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		f.broadcast()
	}
}

// closeSessions ends every open session once the workers have stopped,
// closing their connections and freeing their slots.
func (f *frontier) closeSessions() {
	f.mu.Lock()
	n := f.s.closeSessions()
	f.mu.Unlock()
	f.freeSlots(n)
}

// sizes returns the number of queued URLs and known hosts.
func (f *frontier) sizes() (queued, hosts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s.queued, len(f.s.hosts)
}

// sessionsOpened is the number of connection sessions opened so far.
func (f *frontier) sessionsOpened() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s.opened
}

// connSlots caps the connections open at once over the nodes of a crawl:
// a session takes a slot when it opens and frees it when it ends. It is
// safe for concurrent use.
type connSlots struct {
	mu        sync.Mutex
	max, open int
	peak      int
	ch        chan struct{} // closed (and replaced) when a slot is freed
}

func newConnSlots(max int) *connSlots {
	return &connSlots{max: max, ch: make(chan struct{})}
}

func (c *connSlots) tryAcquire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open >= c.max {
		return false
	}
	c.open++
	c.peak = max(c.peak, c.open)
	return true
}

func (c *connSlots) release() {
	c.mu.Lock()
	c.open--
	close(c.ch)
	c.ch = make(chan struct{})
	c.mu.Unlock()
}

// freed returns a channel closed at the next release.
func (c *connSlots) freed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}

// peakOpen is the most slots ever taken at once.
func (c *connSlots) peakOpen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peak
}

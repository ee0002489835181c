package frontier

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/crawltrace/crawltrace/recorder/politeness"
	"github.com/crawltrace/crawltrace/recorder/robots"
)

// Task is what a worker does next, holding Host: fetch robots.txt of the
// origin URL of Host (Robots), a robots.txt redirect hop to Host (Hop),
// or fetch URL (of quality Q; NaN without an oracle) under its origin's
// Rules. ID is the URL's in-flight number (0 for robots.txt), which the
// worker passes to [Frontier.Finish] once the page is logged. Tries is
// how many times the URL was fetched before and queued again because
// its server asked to come back later ([Frontier.Backoff]).
type Task struct {
	Host   *Host
	URL    string
	Q      float64
	Robots bool
	Hop    *Hop
	Rules  *robots.Rules
	ID     uint64
	Tries  int
}

// inflightURL is a URL a worker took from the frontier whose page the
// splitter has not yet logged: a checkpoint queues it again, so a crash
// before its page reaches the log loses no URL.
type inflightURL struct {
	origin, url string
	q           float64
}

// Options configure a [Frontier]. The politeness key and the delay rule
// belong to the crawler's configuration; the frontier only calls them.
type Options struct {
	// Order is the crawl order (one of the Order constants; "" is bfs).
	Order string
	// Seed seeds the random order.
	Seed uint64
	// KeyOf returns a URL's politeness key: the server whose queue,
	// delay and connection it shares. It may block on a DNS lookup (ip
	// mode). Nil: the host name (politeness.Host).
	KeyOf func(u string) string
	// Keys, when set, says which URLs' keys are known without a DNS
	// lookup; [Frontier.Add] then looks the others up off the caller's
	// goroutine. Nil: Add calls KeyOf.
	Keys Keys
	// Delay is the politeness rule: the wait after a request that took
	// d to a server whose robots.txt asks crawlDelay. Nil: d.
	Delay func(d, crawlDelay time.Duration) time.Duration
	// Now is the clock of the schedule (politeness delays, robots.txt
	// dates, stalls). Nil: time.Now. A driver on a virtual clock sets it
	// and takes tasks with [Frontier.Poll]; [Frontier.Next] waits on
	// real timers and needs the real clock.
	Now func() time.Time
}

// Keys are politeness keys that may need a DNS lookup (ip mode), as
// [politeness.Keys] gives them. One lookup serves every URL of a host
// ([politeness.Host]). Its methods are called from several goroutines at
// once.
type Keys interface {
	// Cached returns u's politeness key when it is known without a DNS
	// lookup (an address, or a host looked up before).
	Cached(u string) (key string, ok bool)
	// Key returns u's politeness key, looking its host up if need be;
	// it may block.
	Key(u string) string
}

// Frontier holds the URLs a node has yet to fetch in a scheduler: a
// queue of servers and one queue of URLs per server. A host is held by
// one worker at a time, so there is never more than one request in
// flight per host, and a host's requests go over its session's single
// connection; slots, shared by the nodes of a crawl, caps the sessions
// (open connections). It is safe for concurrent use.
type Frontier struct {
	mu     sync.Mutex
	s      *scheduler
	slots  *ConnSlots    // nil: no cap
	wake   chan struct{} // closed (and replaced) when a host may be ready
	closed bool
	oracle bool
	// inflight holds the URLs taken by workers until [Frontier.Finish].
	inflight map[uint64]inflightURL
	nextID   uint64
	// keys, when set, says which URLs' politeness keys are known without
	// a DNS lookup (ip mode); the others wait in resolving, by host,
	// while a lookup runs off the caller's goroutine (the splitter's).
	keys      Keys
	resolving map[string][]string
	lookups   chan struct{} // bounds the lookups at once
	// delay is the politeness rule (Options.Delay).
	delay func(d, crawlDelay time.Duration) time.Duration
	// now is the schedule's clock (Options.Now).
	now func() time.Time
	// wakes counts the broadcasts (see Poll).
	wakes uint64
}

// maxLookups bounds a node's DNS lookups in flight for politeness keys.
const maxLookups = 16

// New makes an empty frontier: no quality oracle and no connection cap
// until [Frontier.Configure].
func New(o Options) *Frontier {
	s := newScheduler(o.Order, o.Seed, nil)
	if o.KeyOf != nil {
		s.keyOf = o.KeyOf
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Frontier{s: s, wake: make(chan struct{}), keys: o.Keys, delay: o.Delay, now: now,
		inflight: make(map[uint64]inflightURL)}
}

// Configure sets the quality oracle (nil: none), rescoring URLs already
// queued, and the connection cap (nil: none); the node calls it before
// its workers start.
func (f *Frontier) Configure(oracle map[string]float64, slots *ConnSlots) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.s.setOracle(oracle)
	f.oracle = oracle != nil
	f.slots = slots
}

// Add queues u. It never blocks: a URL whose server needs a DNS lookup
// (ip mode) is queued when the lookup returns.
func (f *Frontier) Add(u string) {
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
	if f.s.addKeyed(key, u, f.s.quality(u), f.now()) {
		f.broadcast()
	}
}

// resolve holds u until its host's politeness key is looked up; the
// first URL of a host starts the lookup.
func (f *Frontier) resolve(u string) {
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
		now, added := f.now(), false
		for _, x := range f.resolving[host] {
			added = f.s.addKeyed(key, x, f.s.quality(x), now) || added
		}
		delete(f.resolving, host)
		if added {
			f.broadcast()
		}
	}()
}

func (f *Frontier) broadcast() {
	f.wakes++
	close(f.wake)
	f.wake = make(chan struct{})
}

// Next blocks until a host may be fetched (and, for a host without an
// open connection, a connection slot is free) and returns its task; the
// host is then held until [Frontier.Release]. It returns false when ctx
// is done or the frontier is closed.
func (f *Frontier) Next(ctx context.Context) (Task, bool) {
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
			return Task{}, false
		}
		t, ok, wait, blocked, freed := f.pickLocked(f.now(), acquire)
		if ok {
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
			return Task{}, false
		case <-ch:
		case <-tc:
		case <-slotFreed:
		}
	}
}

// pickLocked picks a host at now and takes its task (see
// scheduler.pick), holding f.mu; freed is the number of connection
// slots to free once f.mu is released.
func (f *Frontier) pickLocked(now time.Time, acquire func() bool) (t Task, ok bool, wait time.Duration, blocked bool, freed int) {
	h, wait, blocked := f.s.pick(now, acquire)
	freed = f.s.freed
	f.s.freed = 0
	if h == nil {
		return Task{}, false, wait, blocked, freed
	}
	t = f.s.take(h, now)
	if !t.Robots && t.Hop == nil {
		f.nextID++
		t.ID = f.nextID
		f.inflight[t.ID] = inflightURL{origin: h.origin, url: t.URL, q: t.Q}
		if !f.oracle {
			t.Q = math.NaN()
		}
	}
	return t, true, 0, false, freed
}

// SpillTo lets server queues spill to store once the URLs queued in
// memory pass budget bytes (see schedule_spill.go). The node calls it
// before its workers start.
func (f *Frontier) SpillTo(store *Store, budget int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.s.store, f.s.budget = store, budget
}

// Err is the first error of the frontier's disk store.
func (f *Frontier) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s.storeErr
}

// Finish ends in-flight URL id: its page was logged, or it will never be
// fetched (robots.txt excludes it).
func (f *Frontier) Finish(id uint64) {
	if id == 0 {
		return
	}
	f.mu.Lock()
	delete(f.inflight, id)
	f.mu.Unlock()
}

// Release returns a held host. When requested is true a request was made
// and the host waits delay before the next one; otherwise (a URL skipped
// by robots.txt) its schedule is unchanged.
func (f *Frontier) Release(h *Host, requested bool, delay time.Duration) {
	f.releaseSession(h, requested, delay, false)
}

// releaseSession is release that also ends the host's connection session
// when endSession is set (the server closed the connection, or the fetch
// failed); a session also ends when the host has no URL left.
func (f *Frontier) releaseSession(h *Host, requested bool, delay time.Duration, endSession bool) {
	f.releaseWith(h, requested, func() time.Duration { return delay }, endSession)
}

// ReleaseFetch returns a host held for a request that took d: it waits
// the delay rule, with the largest Crawl-delay of its origins' rules,
// read under the lock (a hop may set another origin's rules meanwhile).
func (f *Frontier) ReleaseFetch(h *Host, d time.Duration, endSession bool) {
	f.releaseWith(h, true, func() time.Duration {
		if f.delay == nil {
			return d
		}
		return f.delay(d, h.robots.MaxCrawlDelay())
	}, endSession)
}

// Backoff returns the host of task t, held for a request that took d
// whose server asked the crawler to come back later (Retry-After): it
// waits the longer of the delay rule and wait. With retry, t's URL is
// queued again at the head of the host's queue, to be fetched first once
// the wait is over (its task's Tries one more), and its in-flight id is
// finished under the same lock: the URL is queued, no longer in flight,
// so a checkpoint saves it once.
func (f *Frontier) Backoff(t Task, d, wait time.Duration, endSession, retry bool) {
	h := t.Host
	if retry {
		f.mu.Lock()
		f.s.requeueFirst(h, t.URL, t.Tries+1)
		delete(f.inflight, t.ID)
		f.mu.Unlock()
	}
	f.releaseWith(h, true, func() time.Duration {
		delay := d
		if f.delay != nil {
			delay = f.delay(d, h.robots.MaxCrawlDelay())
		}
		return max(delay, wait)
	}, endSession)
}

// releaseWith is releaseSession with the delay computed under the lock.
func (f *Frontier) releaseWith(h *Host, requested bool, delay func() time.Duration, endSession bool) {
	f.mu.Lock()
	ended, wake := f.s.release(h, f.now(), requested, delay(), endSession)
	if wake {
		f.broadcast()
	}
	f.mu.Unlock()
	if ended {
		f.freeSlots(1)
	}
}

// freeSlots frees n connection slots.
func (f *Frontier) freeSlots(n int) {
	for range n {
		if f.slots != nil {
			f.slots.release()
		}
	}
}

// RobotsDone stores the outcome of origin's robots.txt fetch for owner
// (its host): build builds the rules from the origin's previous ones (nil
// when none); build nil, or returning nil, leaves them as they were (the
// fetch was cut short). The origin's parked URLs come back unless the
// rules make them wait for a retry.
func (f *Frontier) RobotsDone(owner *Host, origin string, build func(prev *robots.Rules) *robots.Rules) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var rules *robots.Rules
	if build != nil {
		rules = build(owner.robots.ForOrigin(origin))
	}
	if f.s.robotsDone(owner, origin, rules, f.now()) {
		f.broadcast()
	}
}

// KeyFor is u's politeness key (it may wait for a DNS lookup in ip mode).
func (f *Frontier) KeyFor(u string) string { return f.s.keyOf(u) }

// AddHop queues a robots.txt redirect hop on the server of key, where it
// waits its turn like a fetch.
func (f *Frontier) AddHop(key string, hop *Hop) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.s.addHop(key, hop, f.now()) {
		f.broadcast()
	}
}

// Close wakes and stops every waiting worker.
func (f *Frontier) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		f.broadcast()
	}
}

// CloseSessions ends every open session once the workers have stopped,
// closing their connections and freeing their slots.
func (f *Frontier) CloseSessions() {
	f.mu.Lock()
	n := f.s.closeSessions()
	f.mu.Unlock()
	f.freeSlots(n)
}

// Snapshot is what a frontier reports of itself at one time, for the
// crawl's statistics and its progress line.
type Snapshot struct {
	// Queued is the number of URLs queued, Hosts of hosts known.
	Queued, Hosts int
	// RobotsWaiting is the number of origins whose URLs wait for a
	// robots.txt retry.
	RobotsWaiting int
	// HostsPolite is the number of hosts with URLs queued whose
	// politeness delay has not passed, HostsDue of those due and waiting
	// for a worker or a connection.
	HostsPolite, HostsDue int
	// Sessions is the number of connection sessions opened so far.
	Sessions int64
	// Stall is the longest a host waited for a worker once due, and
	// StallHost that host.
	Stall     time.Duration
	StallHost string
	// Spill is the disk store's counters (zero without one), MemBytes
	// the bytes of URLs queued in memory.
	Spill    Stats
	MemBytes int64
}

// Snapshot is the frontier's [Snapshot], taken under its lock. Safe for
// concurrent use.
func (f *Frontier) Snapshot() Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := Snapshot{Queued: f.s.queued, Hosts: len(f.s.hosts), RobotsWaiting: f.s.waitingRobots(f.now()),
		HostsPolite: len(f.s.waiting.hs), HostsDue: len(f.s.resume.hs) + len(f.s.ready.hs), Sessions: f.s.opened,
		Stall: f.s.maxStall, StallHost: f.s.stallHost, MemBytes: f.s.mem}
	if f.s.store != nil {
		v.Spill = f.s.store.Stats()
	}
	return v
}

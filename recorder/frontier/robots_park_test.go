package frontier

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/robots"
)

// vclock is a schedule clock that moves only when told.
type vclock struct{ t time.Time }

func newVClock() *vclock                  { return &vclock{t: t0} }
func (c *vclock) now() time.Time          { return c.t }
func (c *vclock) advance(d time.Duration) { c.t = c.t.Add(d) }
func (c *vclock) since() time.Duration    { return c.t.Sub(t0) }

// nextTask polls f, moving the clock to each waiting host's time, until a
// task comes; false when nothing waits (the frontier has nothing to give
// without another call). It never moves the clock past limit after t0.
func nextTask(f *Frontier, c *vclock, limit time.Duration) (Task, bool) {
	for {
		t, ok, wait, _ := f.Poll()
		if ok {
			return t, true
		}
		if wait < 0 || c.since()+wait > limit {
			return Task{}, false
		}
		c.advance(wait)
	}
}

// queuedWaiting reads f's URLs queued (parked ones included) and its
// origins waiting for a robots.txt retry, under its lock.
func queuedWaiting(f *Frontier) (queued, waiting int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s.queued, f.s.waitingRobots(f.now())
}

// testPolicy dates rules as the worker does: a TTL of an hour, a failed
// fetch retried after 100ms, then 200ms.
var testPolicy = robots.Policy{TTL: time.Hour, Retry: 100 * time.Millisecond, Retries: 4}

// rulesAt is the build function of a robots.txt fetch of origin that
// answered status and body at c's time, dated by testPolicy.
func rulesAt(c *vclock, origin string, status int, body string) func(prev *robots.Rules) *robots.Rules {
	return func(prev *robots.Rules) *robots.Rules {
		r := robots.New(status, body, nil, "crawltrace")
		testPolicy.Date(r, origin, prev, nil, false, c.now())
		return r
	}
}

// TestRobotsParkedWhileFetched: the URLs of an origin whose robots.txt
// fetch is under way (here its redirect hop waits at another server, so
// the host is released without an outcome) are parked: the host gives no
// second robots.txt request for that origin, holds no worker and no
// timer, while a URL of the host's other origin is served at the host's
// own delay. The outcome brings the parked URLs back in their order.
func TestRobotsParkedWhileFetched(t *testing.T) {
	c := newVClock()
	f := New(Options{Now: c.now})
	f.Add("http://a.test/1")
	f.Add("http://a.test/2")
	tk, ok := nextTask(f, c, time.Second)
	if !ok || !tk.Robots || tk.URL != "http://a.test" {
		t.Fatalf("first task %+v, want http://a.test's robots.txt", tk)
	}
	owner := tk.Host
	f.ReleaseFetch(owner, 10*time.Millisecond, false) // the fetch goes on elsewhere
	f.Add("http://a.test/3")
	if tk, ok := nextTask(f, c, time.Hour); ok {
		t.Fatalf("gave %+v while http://a.test's robots.txt is fetched", tk)
	}
	if _, _, wait, _ := f.Poll(); wait >= 0 {
		t.Errorf("a host with only parked URLs waits %v in the schedule, want no place there", wait)
	}
	if q, _ := queuedWaiting(f); q != 3 {
		t.Errorf("%d URLs queued, want the 3 parked", q)
	}

	// The host's other origin goes on meanwhile, at the host's delay.
	released := c.now()
	f.Add("https://a.test/s")
	tk, ok = nextTask(f, c, 2*time.Hour)
	if !ok || !tk.Robots || tk.URL != "https://a.test" || !c.now().Equal(released) {
		t.Fatalf("task %+v at %v, want https://a.test's robots.txt at once", tk, c.since())
	}
	f.RobotsDone(tk.Host, "https://a.test", rulesAt(c, "https://a.test", 404, ""))
	f.ReleaseFetch(tk.Host, 10*time.Millisecond, false)
	tk, ok = nextTask(f, c, 2*time.Hour)
	if !ok || tk.URL != "https://a.test/s" || c.now().Sub(released) != 10*time.Millisecond {
		t.Fatalf("task %+v %v after, want https://a.test/s 10ms after the last request", tk, c.now().Sub(released))
	}
	f.ReleaseFetch(tk.Host, 10*time.Millisecond, false)
	if tk, ok := nextTask(f, c, 3*time.Hour); ok {
		t.Fatalf("gave %+v: http://a.test's robots.txt again while its fetch is under way", tk)
	}

	f.RobotsDone(owner, "http://a.test", rulesAt(c, "http://a.test", 200, "User-agent: *\nDisallow: /2\n"))
	var got []string
	for {
		tk, ok := nextTask(f, c, 4*time.Hour)
		if !ok {
			break
		}
		if tk.Robots || tk.Hop != nil {
			t.Fatalf("task %+v after the outcome, want URLs only", tk)
		}
		if tk.Rules.Allowed("crawltrace", tk.URL) {
			got = append(got, tk.URL)
		}
		f.Finish(tk.ID)
		f.ReleaseFetch(tk.Host, 10*time.Millisecond, false)
	}
	if want := []string{"http://a.test/1", "http://a.test/3"}; !slices.Equal(got, want) {
		t.Errorf("allowed URLs %v, want %v", got, want)
	}
}

// TestRobotsParkedWhileRetried: an origin whose robots.txt failed (503)
// keeps its URLs parked, not excluded, until the retry the rules date
// (100ms, then 200ms: robots.Policy's backoff). A URL of the host's other
// origin found meanwhile, when the host has only parked URLs, is served
// at the host's delay, not after the retry.
func TestRobotsParkedWhileRetried(t *testing.T) {
	c := newVClock()
	f := New(Options{Now: c.now})
	f.Add("http://a.test/ok")
	f.Add("http://a.test/private")
	var robotsAt []time.Duration
	fail := func() {
		t.Helper()
		tk, ok := nextTask(f, c, time.Hour)
		if !ok || !tk.Robots || tk.URL != "http://a.test" {
			t.Fatalf("task %+v, want http://a.test's robots.txt", tk)
		}
		robotsAt = append(robotsAt, c.since())
		f.RobotsDone(tk.Host, "http://a.test", rulesAt(c, "http://a.test", 503, ""))
		f.ReleaseFetch(tk.Host, 5*time.Millisecond, false)
	}
	fail()
	if _, n := queuedWaiting(f); n != 1 {
		t.Errorf("%d origins waiting for a retry, want 1", n)
	}

	// 50ms later, with every URL of the host parked, another origin's URL.
	c.advance(50 * time.Millisecond)
	if tk, ok, _, _ := f.Poll(); ok {
		t.Fatalf("gave %+v before the retry", tk)
	}
	f.Add("https://a.test/late")
	tk, ok, _, _ := f.Poll()
	if !ok || !tk.Robots || tk.URL != "https://a.test" {
		t.Fatalf("task %+v at %v, want https://a.test's robots.txt at once", tk, c.since())
	}
	f.RobotsDone(tk.Host, "https://a.test", rulesAt(c, "https://a.test", 404, ""))
	f.ReleaseFetch(tk.Host, 5*time.Millisecond, false)
	tk, ok = nextTask(f, c, time.Hour)
	if !ok || tk.URL != "https://a.test/late" || c.since() != 55*time.Millisecond {
		t.Fatalf("task %+v at %v, want https://a.test/late at 55ms", tk, c.since())
	}
	f.ReleaseFetch(tk.Host, 5*time.Millisecond, false)

	fail() // the first retry, 100ms after the first failure
	tk, ok = nextTask(f, c, time.Hour)
	if !ok || !tk.Robots {
		t.Fatalf("task %+v, want the second retry", tk)
	}
	robotsAt = append(robotsAt, c.since())
	f.RobotsDone(tk.Host, "http://a.test", rulesAt(c, "http://a.test", 200, "User-agent: *\nDisallow: /private\n"))
	f.ReleaseFetch(tk.Host, 5*time.Millisecond, false)
	if want := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}; !slices.Equal(robotsAt, want) {
		t.Errorf("robots.txt requests at %v, want %v", robotsAt, want)
	}
	if _, n := queuedWaiting(f); n != 0 {
		t.Errorf("%d origins waiting for a retry after the rules came", n)
	}
	var allowed, excluded []string
	for {
		tk, ok := nextTask(f, c, time.Hour)
		if !ok {
			break
		}
		if tk.Rules.Allowed("crawltrace", tk.URL) {
			allowed = append(allowed, tk.URL)
		} else {
			excluded = append(excluded, tk.URL)
		}
		f.Finish(tk.ID)
		f.ReleaseFetch(tk.Host, 5*time.Millisecond, false)
	}
	if !slices.Equal(allowed, []string{"http://a.test/ok"}) || !slices.Equal(excluded, []string{"http://a.test/private"}) {
		t.Errorf("allowed %v, excluded %v; want /ok and /private", allowed, excluded)
	}
}

// TestRobotsHopWaitsServerDelay: a robots.txt redirect hop to the server
// just requested waits that server's delay (the delay rule over the
// request's time), like any request to it; it is taken before the
// server's URLs.
func TestRobotsHopWaitsServerDelay(t *testing.T) {
	c := newVClock()
	f := New(Options{Now: c.now, Delay: func(d, crawlDelay time.Duration) time.Duration { return max(10*d, crawlDelay) }})
	f.Add("http://a.test/open")
	tk, _ := nextTask(f, c, time.Hour)
	if !tk.Robots {
		t.Fatalf("task %+v, want robots.txt", tk)
	}
	// robots.txt took 40ms and redirected to the same server.
	c.advance(40 * time.Millisecond)
	f.AddHop(f.KeyFor("http://a.test:80/real-robots.txt"), &Hop{Owner: tk.Host, Home: f, Origin: "http://a.test", URL: "http://a.test:80/real-robots.txt", N: 1})
	if tk, ok, _, _ := f.Poll(); ok {
		t.Fatalf("gave %+v while the server is held", tk)
	}
	f.ReleaseFetch(tk.Host, 40*time.Millisecond, false)
	released := c.now()
	hop, ok := nextTask(f, c, time.Hour)
	if !ok || hop.Hop == nil || hop.Hop.N != 1 || hop.Host != tk.Host {
		t.Fatalf("task %+v, want the hop on a.test", hop)
	}
	if d := c.now().Sub(released); d != 400*time.Millisecond {
		t.Errorf("the hop came %v after the server was released, want the delay rule's 400ms", d)
	}
	hop.Hop.Home.RobotsDone(hop.Hop.Owner, hop.Hop.Origin, rulesAt(c, "http://a.test", 200, "User-agent: *\nDisallow: /secret\n"))
	f.ReleaseFetch(hop.Host, time.Millisecond, false)
	if tk, ok := nextTask(f, c, time.Hour); !ok || tk.URL != "http://a.test/open" || tk.Rules == nil {
		t.Errorf("after the hop: %+v, want http://a.test/open under the rules found", tk)
	}
}

// simNode is one in-process node of sim: its frontier and its workers.
type simNode struct {
	f       *Frontier
	workers int
	busy    int
}

// simReq is a request under way in sim.
type simReq struct {
	node       *simNode
	task       Task
	start, end time.Duration
}

// sim runs the workers of in-process nodes on a virtual clock: each free
// worker polls its node's frontier, a request to server s takes took(s),
// and done(node, task) plays its outcome when it ends (the caller
// releases the host there). It returns when no node has anything to give
// or the clock reaches limit.
func sim(t *testing.T, c *vclock, nodes []*simNode, took func(server string) time.Duration, done func(n *simNode, r simReq), limit time.Duration) {
	t.Helper()
	var running []simReq
	for c.since() < limit {
		next := time.Duration(-1)
		for _, n := range nodes {
			for n.busy < n.workers {
				tk, ok, wait, _ := n.f.Poll()
				if !ok {
					if wait >= 0 && (next < 0 || c.since()+wait < next) {
						next = c.since() + wait
					}
					break
				}
				n.busy++
				running = append(running, simReq{node: n, task: tk, start: c.since(), end: c.since() + took(tk.Host.origin)})
			}
		}
		for _, r := range running {
			if next < 0 || r.end < next {
				next = r.end
			}
		}
		if next < 0 {
			return
		}
		c.advance(next - c.since())
		var left []simReq
		for _, r := range running {
			if r.end > c.since() {
				left = append(left, r)
				continue
			}
			r.node.busy--
			done(r.node, r)
		}
		running = left
	}
	t.Fatalf("the crawl did not end within %v", limit)
}

// TestRobotsHubFanIn: six hosts whose robots.txt all redirect to one slow
// hub server, owned by another in-process node, reach it one hop at a
// time, each after the hub's delay (3 x its 300ms request), although the
// six hosts' robots.txt requests end at once; the hub's own robots.txt
// and page take the same turns. The hops' rules go to the hosts' own
// node. Meanwhile the parked hosts hold no worker: a fast host is served
// at its own delay (100ms) all along, by two workers.
func TestRobotsHubFanIn(t *testing.T) {
	const hosts, hubTakes, fastPages = 6, 300 * time.Millisecond, 80
	c := newVClock()
	delay := func(d, crawlDelay time.Duration) time.Duration { return max(3*d, 100*time.Millisecond, crawlDelay) }
	home := &simNode{f: New(Options{Now: c.now, Delay: delay}), workers: 2}
	hub := &simNode{f: New(Options{Now: c.now, Delay: delay}), workers: 2}
	home.f.Add("http://fast.test/p0")
	for i := range hosts {
		home.f.Add("http://s" + string(rune('0'+i)) + ".test/secret")
		home.f.Add("http://s" + string(rune('0'+i)) + ".test/open")
	}
	hub.f.Add("http://hub.test/page")
	type span struct{ start, end time.Duration }
	requests := map[string][]span{} // by server
	var hops, excluded, opened int
	sim(t, c, []*simNode{home, hub}, func(server string) time.Duration {
		if server == "hub.test" {
			return hubTakes
		}
		return 10 * time.Millisecond
	}, func(n *simNode, r simReq) {
		tk, f := r.task, n.f
		server := tk.Host.origin
		switch {
		case tk.Hop != nil:
			hops++
			tk.Hop.Home.RobotsDone(tk.Hop.Owner, tk.Hop.Origin, rulesAt(c, tk.Hop.Origin, 200, "User-agent: *\nDisallow: /secret\n"))
		case tk.Robots && server != "fast.test" && server != "hub.test":
			hubURL := "http://hub.test/robots.txt"
			hub.f.AddHop(hub.f.KeyFor(hubURL), &Hop{Owner: tk.Host, Home: f, Origin: tk.URL, URL: hubURL, N: 1})
		case tk.Robots:
			f.RobotsDone(tk.Host, tk.URL, rulesAt(c, tk.URL, 404, ""))
		case !tk.Rules.Allowed("crawltrace", tk.URL):
			excluded++
			f.Finish(tk.ID)
			f.Release(tk.Host, false, 0) // no request was made
			return
		default:
			if server == "fast.test" {
				if n := atoi(tk.URL[len("http://fast.test/p"):]); n+1 < fastPages {
					f.Add("http://fast.test/p" + itoa(n+1))
				}
			} else if server != "hub.test" {
				opened++
			}
			f.Finish(tk.ID)
		}
		requests[server] = append(requests[server], span{r.start, r.end})
		f.ReleaseFetch(tk.Host, r.end-r.start, false)
	}, time.Minute)

	if hops != hosts || excluded != hosts || opened != hosts {
		t.Errorf("%d hops, %d URLs excluded, %d /open fetched; want %d each", hops, excluded, opened, hosts)
	}
	at := requests["hub.test"]
	if len(at) != hosts+2 {
		t.Fatalf("%d requests to the hub, want the %d hops, its robots.txt and its page", len(at), hosts)
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].start - at[i-1].end; gap < 3*hubTakes {
			t.Errorf("hub request %d began %v after the one before ended, want at least %v", i, gap, 3*hubTakes)
		}
	}
	fast := requests["fast.test"]
	if len(fast) != fastPages+1 || fast[len(fast)-1].end < at[len(at)-1].start {
		t.Fatalf("fast.test: %d requests, the last ending at %v; want %d, past the hub's last at %v", len(fast), fast[len(fast)-1].end, fastPages+1, at[len(at)-1].start)
	}
	for i := 1; i < len(fast); i++ {
		if gap := fast[i].start - fast[i-1].end; gap != 100*time.Millisecond {
			t.Errorf("fast.test request %d began %v after the one before ended, want its delay of 100ms", i, gap)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

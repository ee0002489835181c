package frontier

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/recorder/crawltest"
	"github.com/crawltrace/crawltrace/recorder/politeness"
	"github.com/crawltrace/crawltrace/recorder/robots"
)

// allowAll is the build function of an origin whose robots.txt is 404.
func allowAll(c *vclock, origin string) func(*robots.Rules) *robots.Rules {
	return rulesAt(c, origin, 404, "")
}

// serveAll takes every task f gives at c's time and releases it after a
// request of took, the robots.txt ones with allowAll, and returns the
// tasks' URLs: what a worker per server would be given at once.
func serveAll(f *Frontier, c *vclock, took time.Duration) []string {
	var got []string
	var held []Task
	for {
		tk, ok, _, _ := f.Poll()
		if !ok {
			break
		}
		got = append(got, tk.URL)
		held = append(held, tk)
	}
	for _, tk := range held {
		if tk.Robots {
			f.RobotsDone(tk.Host, tk.URL, allowAll(c, tk.URL))
		}
		f.Finish(tk.ID)
		f.ReleaseFetch(tk.Host, took, false)
	}
	return got
}

// TestPolitenessPerServer: the origins of one host (ports 80 and 81),
// each with its own robots.txt, share one server: one request at a time
// and one delay. Keyed by address (ip mode, Options.KeyOf), hosts of one
// address share it too; keyed by host they go in parallel.
func TestPolitenessPerServer(t *testing.T) {
	minDelay := politeness.Delay{Min: 150 * time.Millisecond, Max: time.Minute}.Wait
	c := newVClock()
	f := New(Options{Now: c.now, Delay: minDelay})
	for _, u := range []string{"http://h.test/a", "http://h.test:81/a", "http://h.test/b", "http://h.test:81/b"} {
		f.Add(u)
	}
	var got []string
	var at []time.Duration
	for {
		tk, ok := nextTask(f, c, time.Minute)
		if !ok {
			break
		}
		if more, _, _, _ := f.Poll(); more.Host != nil {
			t.Fatalf("%s given while %s is in flight to the same host", more.URL, tk.URL)
		}
		got, at = append(got, tk.URL), append(at, c.since())
		if tk.Robots {
			f.RobotsDone(tk.Host, tk.URL, allowAll(c, tk.URL))
		}
		f.Finish(tk.ID)
		c.advance(20 * time.Millisecond)
		f.ReleaseFetch(tk.Host, 20*time.Millisecond, false)
	}
	// Each origin's robots.txt, then its URL that waited for it.
	want := []string{"http://h.test", "http://h.test/a", "http://h.test:81", "http://h.test:81/a", "http://h.test/b", "http://h.test:81/b"}
	if !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i] - at[i-1]; gap != 170*time.Millisecond {
			t.Errorf("requests %d and %d began %v apart, want 20ms + the 150ms delay", i-1, i, gap)
		}
	}

	seeds := []string{"http://a.test/", "http://b.test/", "http://c.test/"}
	for _, tc := range []struct {
		name  string
		keyOf func(string) string
		at0   int // the requests given at once
	}{
		{"host", nil, 3},
		{"ip", func(string) string { return "ip:127.0.0.1" }, 1},
	} {
		c := newVClock()
		f := New(Options{Now: c.now, Delay: minDelay, KeyOf: tc.keyOf})
		for _, u := range seeds {
			f.Add(u)
		}
		var starts [][]string // the URLs given at each time
		for {
			got := serveAll(f, c, 20*time.Millisecond)
			if len(got) > 0 {
				starts = append(starts, got)
			}
			_, ok, wait, _ := f.Poll()
			if ok || wait < 0 {
				break
			}
			if wait < 150*time.Millisecond {
				t.Fatalf("%s: a host due %v after its last request, within the delay", tc.name, wait)
			}
			c.advance(wait)
		}
		if len(starts[0]) != tc.at0 || len(starts) != 6/tc.at0 {
			t.Errorf("%s: requests given together %v, want %d at a time", tc.name, starts, tc.at0)
		}
	}
}

// TestDelayRuleApplied: a server released after a request waits the
// delay rule (Options.Delay, here politeness.Delay) over the request's
// time and the largest Crawl-delay of its origins' rules, the one of the
// group naming the crawler (robots.Rules), not the global group's.
func TestDelayRuleApplied(t *testing.T) {
	rule := politeness.Delay{Factor: 10, Max: time.Minute}.Wait
	for _, tc := range []struct {
		name   string
		robots map[string]string // robots.txt by origin; none: 404
		took   time.Duration
		want   time.Duration
	}{
		{"factor", nil, 100 * time.Millisecond, time.Second},
		{"crawl-delay of the crawler's group", map[string]string{
			"http://a.test": "User-agent: *\nCrawl-delay: 0\n\nUser-agent: crawltrace/1\nCrawl-delay: 2\nAllow: /\n",
		}, 10 * time.Millisecond, 2 * time.Second},
		{"largest over the host's origins", map[string]string{
			"http://a.test":  "User-agent: *\nCrawl-delay: 1\n",
			"https://a.test": "User-agent: *\nCrawl-delay: 3\n",
		}, 10 * time.Millisecond, 3 * time.Second},
	} {
		c := newVClock()
		f := New(Options{Now: c.now, Delay: rule})
		f.Add("http://a.test/1")
		f.Add("https://a.test/2")
		f.Add("http://a.test/3")
		var gaps []time.Duration
		last := time.Duration(-1)
		for {
			tk, ok := nextTask(f, c, time.Hour)
			if !ok {
				break
			}
			if last >= 0 && !tk.Robots {
				gaps = append(gaps, c.since()-last)
			}
			if tk.Robots {
				body, ok := tc.robots[tk.URL]
				status := 200
				if !ok {
					status = 404
				}
				f.RobotsDone(tk.Host, tk.URL, rulesAt(c, tk.URL, status, body))
			}
			f.Finish(tk.ID)
			c.advance(tc.took)
			last = c.since()
			f.ReleaseFetch(tk.Host, tc.took, false)
		}
		if len(gaps) != 3 {
			t.Fatalf("%s: %d URL requests, want 3", tc.name, len(gaps))
		}
		// The first URL follows robots.txt of its origin only; the
		// last two follow every origin's rules.
		for _, g := range gaps[1:] {
			if g != tc.want {
				t.Errorf("%s: a URL request %v after the one before ended, want %v (gaps %v)", tc.name, g, tc.want, gaps)
			}
		}
	}
}

// TestBackoffVirtualClock: a server that asked to come back later
// (Retry-After) waits the longer of what it asked and the delay rule;
// with a retry the URL comes back first, with one more try. A
// robots.txt request so answered makes the server wait too.
func TestBackoffVirtualClock(t *testing.T) {
	c := newVClock()
	f := New(Options{Now: c.now, Delay: politeness.Delay{Factor: 10, Max: time.Minute}.Wait})
	f.Add("http://a.test/1")
	f.Add("http://a.test/2")
	tk, _ := nextTask(f, c, time.Hour)
	f.RobotsDone(tk.Host, tk.URL, allowAll(c, tk.URL))
	c.advance(10 * time.Millisecond)
	f.Backoff(Task{Host: tk.Host}, 10*time.Millisecond, time.Second, false, false) // 429, Retry-After: 1
	for i, step := range []struct {
		url         string
		tries       int
		after       time.Duration // since the last request ended
		took, asked time.Duration // the request's time and its Retry-After (-1: none)
		retry       bool
	}{
		{"http://a.test/1", 0, time.Second, 10 * time.Millisecond, 2 * time.Second, true},      // asked: 1s over the rule's 100ms
		{"http://a.test/1", 1, 2 * time.Second, 500 * time.Millisecond, time.Second, true},     // asked: 2s
		{"http://a.test/1", 2, 5 * time.Second, 10 * time.Millisecond, 3 * time.Second, false}, // the rule's 5s over the 1s asked
		{"http://a.test/2", 0, 3 * time.Second, 10 * time.Millisecond, -1, false},              // tries used up: the next URL
	} {
		ended := c.now()
		tk, ok := nextTask(f, c, time.Hour)
		if !ok || tk.URL != step.url || tk.Tries != step.tries || c.now().Sub(ended) != step.after {
			t.Fatalf("step %d: task %q (tries %d) %v after the last request, want %q (tries %d) after %v",
				i, tk.URL, tk.Tries, c.now().Sub(ended), step.url, step.tries, step.after)
		}
		c.advance(step.took)
		if step.asked < 0 {
			f.Finish(tk.ID)
			f.ReleaseFetch(tk.Host, step.took, false)
			continue
		}
		if !step.retry {
			f.Finish(tk.ID)
		}
		f.Backoff(tk, step.took, step.asked, false, step.retry)
	}
	if tk, ok := nextTask(f, c, time.Hour); ok {
		t.Errorf("task %q after every URL", tk.URL)
	}
	if q, _ := queuedWaiting(f); q != 0 {
		t.Errorf("%d URLs queued at the end", q)
	}
}

// ipKeys are ip-mode politeness keys whose lookups each wait until
// another one runs too: a frontier that looked names up one at a time,
// or on the caller's goroutine, would never get them.
type ipKeys struct {
	mu      sync.Mutex
	running int
	overlap chan struct{}
	once    sync.Once
	testKeys
}

func newIPKeys() *ipKeys {
	k := &ipKeys{overlap: make(chan struct{})}
	k.lookup = func(string) string {
		k.mu.Lock()
		if k.running++; k.running > 1 {
			k.once.Do(func() { close(k.overlap) })
		}
		k.mu.Unlock()
		<-k.overlap
		return "ip:192.0.2.1" // the two names share one address
	}
	return k
}

// TestKeyLookupsOverlap: in ip mode Add does not wait for a DNS lookup
// (it is called on the splitter's goroutine): URLs whose key needs one
// wait aside while lookups run off it, several at once, one per host;
// the hosts then share their address's server.
func TestKeyLookupsOverlap(t *testing.T) {
	keys := newIPKeys()
	c := newVClock()
	f := New(Options{Now: c.now, KeyOf: keys.Key, Keys: keys})
	for _, u := range []string{"http://a.test/1", "http://b.test/1", "http://a.test/2"} {
		f.Add(u) // would block for good on a lookup of its own
	}
	crawltest.WaitFor(t, "the three URLs queued on ip:192.0.2.1", 5*time.Second, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		h := f.s.hosts["ip:192.0.2.1"]
		return h != nil && h.queued() == 3 && len(f.s.hosts) == 1
	})
	tk, ok, _, _ := f.Poll()
	if !ok || !tk.Robots {
		t.Fatalf("task %+v, want a robots.txt", tk)
	}
	if more, ok, _, _ := f.Poll(); ok {
		t.Errorf("%s given while %s is in flight to the same address", more.URL, tk.URL)
	}
}

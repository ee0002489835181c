package recorder

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// redirectingRobots serves a site whose /robots.txt redirects hops times
// (/robots.txt -> /r1 -> ... -> /rHOPS) to rules disallowing /secret.
func redirectingRobots(hops int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/robots.txt" && hops > 0:
			http.Redirect(w, r, "/r1", http.StatusMovedPermanently)
		case strings.HasPrefix(p, "/r") && p != "/r"+itoa(hops):
			http.Redirect(w, r, "/r"+itoa(atoiSuffix(p)+1), http.StatusFound)
		case p == "/r"+itoa(hops) || p == "/robots.txt":
			w.Write([]byte("User-agent: *\nDisallow: /secret\n"))
		default:
			linkPage("/secret1", "/secret2", "/open")(w, r)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// atoiSuffix is the number ending a path ("/r3" -> 3; 0 when none).
func atoiSuffix(p string) int {
	i := len(p)
	for i > 0 && p[i-1] >= '0' && p[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(p[i:])
	return n
}

func TestRobotsRedirects(t *testing.T) {
	v, srv := startVhosts(t, map[string]http.HandlerFunc{
		"one.test":   redirectingRobots(1),
		"three.test": redirectingRobots(3),
		"five.test":  redirectingRobots(5),
		"six.test":   redirectingRobots(6),
		// A cross-host redirect: the rules found apply to cross.test.
		"cross.test": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(w, r, "http://rules.test/robots.txt", http.StatusMovedPermanently)
				return
			}
			linkPage("/secret1", "/open")(w, r)
		},
		"rules.test": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("User-agent: *\nDisallow: /secret\n"))
		},
	})
	cfg := localConfig(t, srv.Listener.Addr().String(),
		"http://one.test/", "http://three.test/", "http://five.test/", "http://six.test/", "http://cross.test/")
	res := runCrawl(t, cfg)
	got := v.got()
	for _, want := range []string{"one.test/r1", "three.test/r3", "five.test/r5", "six.test/r5", "rules.test/robots.txt",
		"one.test/open", "three.test/open", "five.test/open", "cross.test/open"} {
		if !slices.Contains(got, want) {
			t.Errorf("not fetched: %s", want)
		}
	}
	for _, bad := range []string{"one.test/secret1", "three.test/secret2", "five.test/secret1", "cross.test/secret1", "six.test/r6"} {
		if slices.Contains(got, bad) {
			t.Errorf("fetched: %s", bad)
		}
	}
	// Six hops are more than RFC 9309's five: robots.txt is unavailable,
	// which allows everything.
	if !slices.Contains(got, "six.test/secret1") {
		t.Errorf("six.test/secret1 not fetched after an unavailable robots.txt")
	}
	if want := int64(1 + 3 + 5 + 5 + 1); res.Stats.RobotsRedirects != want {
		t.Errorf("robots redirects %d, want %d", res.Stats.RobotsRedirects, want)
	}
	pages := readPages(t, cfg.OutDir, 0)
	var hops int
	for _, p := range pages {
		if p.Redirect != "" && strings.Contains(p.URL, "one.test/robots.txt") && p.Redirect == "http://one.test/r1" {
			hops++
		}
	}
	if hops != 1 {
		t.Errorf("page log: %d rows of one.test's robots.txt redirect, want 1", hops)
	}
}

// TestRobotsTTL: rules are fetched again once RobotsTTL has passed, and
// the new rules apply.
func TestRobotsTTL(t *testing.T) {
	var fetches atomic.Int32
	v, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if fetches.Add(1) == 1 {
				w.Write([]byte("User-agent: *\nAllow: /\n"))
			} else {
				w.Write([]byte("User-agent: *\nDisallow: /p4\n"))
			}
			return
		}
		n := atoiSuffix(r.URL.Path)
		linkPage("/p"+itoa(n+1))(w, r)
	}})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/p0")
	cfg.MinDelay = 100 * time.Millisecond
	cfg.RobotsTTL = 150 * time.Millisecond
	cfg.MaxPages = 8
	res := runCrawl(t, cfg)
	got := v.got()
	if fetches.Load() < 2 || res.Stats.RobotsRefetches < 1 {
		t.Fatalf("robots.txt fetched %d times (%d refetches), want at least 2; requests %v", fetches.Load(), res.Stats.RobotsRefetches, got)
	}
	if !slices.Contains(got, "a.test/p3") || slices.Contains(got, "a.test/p4") {
		t.Errorf("the refreshed rules were not applied: %v", got)
	}
}

// TestRobotsRetry: a robots.txt that answers 503 twice is retried with
// backoff; the host's URLs wait (none is excluded) and are fetched once
// robots.txt answers.
func TestRobotsRetry(t *testing.T) {
	var mu sync.Mutex
	var robotsAt []time.Time
	v, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			mu.Lock()
			robotsAt = append(robotsAt, time.Now())
			n := len(robotsAt)
			mu.Unlock()
			if n <= 2 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.Write([]byte("User-agent: *\nDisallow: /private\n"))
			return
		}
		linkPage("/ok", "/private")(w, r)
	}})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/")
	cfg.RobotsRetry = 100 * time.Millisecond
	res := runCrawl(t, cfg)
	got := v.got()
	if !slices.Contains(got, "a.test/") || !slices.Contains(got, "a.test/ok") || slices.Contains(got, "a.test/private") {
		t.Errorf("requests %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(robotsAt) != 3 {
		t.Fatalf("robots.txt fetched %d times, want 3", len(robotsAt))
	}
	// Backoff: 100ms, then 200ms.
	if d := robotsAt[1].Sub(robotsAt[0]); d < 100*time.Millisecond {
		t.Errorf("first retry after %v", d)
	}
	if d := robotsAt[2].Sub(robotsAt[1]); d < 200*time.Millisecond {
		t.Errorf("second retry after %v", d)
	}
	if res.Stats.RobotsRetries != 2 || res.Stats.RobotsExcluded != 1 {
		t.Errorf("robots retries %d, excluded %d; want 2 and 1 (/private)", res.Stats.RobotsRetries, res.Stats.RobotsExcluded)
	}
}

// TestCrawlDelayGroup: the Crawl-delay of the group naming the agent
// applies between pages (the group selection itself is tested in
// recorder/robots).
func TestCrawlDelayGroup(t *testing.T) {
	// Through a real server: the specific group's 1s applies between pages,
	// not the global group's 0.
	var mu sync.Mutex
	var at []time.Time
	_, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nCrawl-delay: 0\n\nUser-agent: crawltrace/1\nCrawl-delay: 1\nAllow: /\n"))
			return
		}
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		linkPage("/b")(w, r)
	}})
	runCrawl(t, localConfig(t, srv.Listener.Addr().String(), "http://a.test/"))
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 2 || at[1].Sub(at[0]) < time.Second {
		t.Errorf("page requests at %v, want 2 at least 1s apart", at)
	}
}

// TestRobotsHopWaitsHostDelay: a robots.txt redirect that stays on the
// held server waits the server's politeness delay, DelayFactor x the last
// request's duration, not just MinDelay; one to another server waits its
// turn behind the node's other hops there (TestRobotsHopsFanIn).
func TestRobotsHopWaitsHostDelay(t *testing.T) {
	const slow = 40 * time.Millisecond
	var mu sync.Mutex
	var robotsEnd, hopStart time.Time
	_, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			time.Sleep(slow)
			mu.Lock()
			robotsEnd = time.Now()
			mu.Unlock()
			// The port does not make it another server.
			http.Redirect(w, r, "http://a.test:80/real-robots.txt", http.StatusMovedPermanently)
		case "/real-robots.txt":
			mu.Lock()
			hopStart = time.Now()
			mu.Unlock()
			w.Write([]byte("User-agent: *\nDisallow: /secret\n"))
		default:
			linkPage("/secret", "/open")(w, r)
		}
	}})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/")
	cfg.DelayFactor = 10
	cfg.MinDelay = time.Millisecond
	cfg.MaxDelay = 5 * time.Second
	runCrawl(t, cfg)
	mu.Lock()
	defer mu.Unlock()
	if robotsEnd.IsZero() || hopStart.IsZero() {
		t.Fatalf("robots.txt answered at %v, its redirect target fetched at %v", robotsEnd, hopStart)
	}
	if gap := hopStart.Sub(robotsEnd); gap < 10*slow {
		t.Errorf("the hop followed %v after robots.txt answered; the host's delay is at least %v", gap, 10*slow)
	}
}

// TestRobotsHopsFanIn: hosts whose robots.txt all redirect to one other
// server reach it one hop at a time, each after the delay rule, although
// every host is held by its own worker at once.
func TestRobotsHopsFanIn(t *testing.T) {
	const hosts, minDelay = 6, 60 * time.Millisecond
	var mu sync.Mutex
	var inFlight, maxInFlight int
	var starts, ends []time.Time
	sites := map[string]http.HandlerFunc{"rules.test": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		starts = append(starts, time.Now())
		mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		inFlight--
		ends = append(ends, time.Now())
		mu.Unlock()
		w.Write([]byte("User-agent: *\nDisallow: /secret\n"))
	}}
	var seeds []string
	for i := range hosts {
		h := "h" + itoa(i) + ".test"
		seeds = append(seeds, "http://"+h+"/")
		sites[h] = func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(w, r, "http://rules.test/robots.txt", http.StatusMovedPermanently)
				return
			}
			linkPage("/secret", "/open")(w, r)
		}
	}
	v, srv := startVhosts(t, sites)
	cfg := localConfig(t, srv.Listener.Addr().String(), seeds...)
	cfg.Workers = hosts
	cfg.MinDelay = minDelay
	runCrawl(t, cfg)
	mu.Lock()
	defer mu.Unlock()
	if len(starts) != hosts {
		t.Fatalf("rules.test answered %d robots.txt requests, want %d", len(starts), hosts)
	}
	if maxInFlight != 1 {
		t.Errorf("%d robots.txt hops to rules.test in flight at once, want 1", maxInFlight)
	}
	for i := 1; i < hosts; i++ {
		if gap := starts[i].Sub(ends[i-1]); gap < minDelay {
			t.Errorf("hop %d to rules.test started %v after the one before ended, want at least %v", i, gap, minDelay)
		}
	}
	if got := v.got(); slices.Contains(got, "h0.test/secret") {
		t.Error("the rules found through the redirect were not applied")
	}
}

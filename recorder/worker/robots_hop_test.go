package worker

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
	"github.com/crawltrace/crawltrace/recorder/fetch"
	"github.com/crawltrace/crawltrace/recorder/politeness"
	"github.com/crawltrace/crawltrace/recorder/robots"
)

// redirectingRobots answers a site whose /robots.txt redirects hops
// times (/robots.txt -> /r1 -> ... -> /rHOPS) to rules disallowing
// /secret, and whose pages link /secret1 and /open.
func redirectingRobots(host string, hops int) func(path string) (fetch.Result, string) {
	return func(p string) (fetch.Result, string) {
		n := 0
		if strings.HasPrefix(p, "/r") {
			fmt.Sscanf(p, "/r%d", &n)
		}
		switch {
		case (p == "/robots.txt" || strings.HasPrefix(p, "/r")) && n < hops:
			return redirectTo(fmt.Sprintf("http://%s/r%d", host, n+1))
		case p == "/robots.txt" || strings.HasPrefix(p, "/r"):
			return robotsTxt("User-agent: *\nDisallow: /secret\n")
		}
		return linkPage("/secret1", "/open")
	}
}

// TestRobotsRedirectChains: a robots.txt redirect is followed hop by
// hop, up to five (RFC 9309); a sixth makes the file unavailable, which
// allows everything. A redirect to another node's server is queued there
// (Options.HopQueue) and made by that node's worker, and the rules it
// finds come back to the origin's own frontier (Hop.Home). Every hop is
// a row of the page log.
func TestRobotsRedirectChains(t *testing.T) {
	sites := map[string]func(string) (fetch.Result, string){
		"one.test":  redirectingRobots("one.test", 1),
		"five.test": redirectingRobots("five.test", 5),
		"six.test":  redirectingRobots("six.test", 6),
		"cross.test": func(p string) (fetch.Result, string) {
			if p == "/robots.txt" {
				return redirectTo("http://rules.test/robots.txt")
			}
			return linkPage("/secret1", "/open")
		},
		"rules.test": func(string) (fetch.Result, string) { return robotsTxt("User-agent: *\nDisallow: /secret\n") },
	}
	w := newVWeb(func(u string, _ int) (fetch.Result, string) {
		site := sites[politeness.Host(u)]
		if site == nil {
			t.Fatalf("request to an unknown host: %s", u)
		}
		return site(u[strings.Index(u[len("http://"):], "/")+len("http://"):])
	})
	hub := newVNode(t, w, 1, Options{}, nil)
	home := newVNode(t, w, 0, Options{HopQueue: func(u string) HopQueue {
		if politeness.Host(u) == "rules.test" {
			return hub.f
		}
		return nil
	}}, nil, "http://one.test/", "http://five.test/", "http://six.test/", "http://cross.test/")
	w.run(t, time.Minute, home, hub)

	for _, u := range []string{"http://one.test/r1", "http://five.test/r5", "http://six.test/r5", "http://one.test/open",
		"http://five.test/open", "http://six.test/open", "http://cross.test/open", "http://six.test/secret1"} {
		if !w.requested(u) {
			t.Errorf("not requested: %s", u)
		}
	}
	for _, u := range []string{"http://one.test/secret1", "http://five.test/secret1", "http://cross.test/secret1", "http://six.test/r6"} {
		if w.requested(u) {
			t.Errorf("requested: %s", u)
		}
	}
	if rs := w.of("http://rules.test/robots.txt"); len(rs) != 1 || rs[0].node != 1 {
		t.Errorf("rules.test/robots.txt requests %+v, want one by node 1", rs)
	}
	if rs := w.of("http://cross.test/open"); len(rs) != 1 || rs[0].node != 0 {
		t.Errorf("cross.test/open requests %+v, want one by node 0", rs)
	}
	if got := home.st.RobotsRedirects.Load() + hub.st.RobotsRedirects.Load(); got != 1+5+5+1 {
		t.Errorf("%d robots.txt redirects followed, want 12", got)
	}
	if got := home.st.RobotsExcluded.Load(); got != 3 {
		t.Errorf("%d URLs excluded, want the 3 /secret1 under rules found through redirects", got)
	}
	if got := home.st.RobotsFetches.Load() + hub.st.RobotsFetches.Load(); got != 2+6+6+2 {
		t.Errorf("%d robots.txt requests, want 16", got)
	}
	rows := home.sink.pages()
	if r := rows["http://one.test/robots.txt"]; r == nil || r.Page.Redirect != "http://one.test/r1" {
		t.Errorf("one.test/robots.txt's row %+v, want its redirect to /r1", r)
	}
	if r := hub.sink.pages()["http://rules.test/robots.txt"]; r == nil || r.Page.Status != 200 {
		t.Errorf("rules.test/robots.txt's row in node 1's log: %+v", r)
	}
}

// TestRobotsRetryBackoff: a robots.txt answering 503 twice is fetched
// again after the policy's backoff, 100ms then 200ms from the failure;
// meanwhile its origin's URLs wait (none is fetched or excluded), and
// the rules found at last apply.
func TestRobotsRetryBackoff(t *testing.T) {
	w := newVWeb(func(u string, n int) (fetch.Result, string) {
		switch u {
		case "http://a.test/robots.txt":
			if n < 2 {
				return status(503, "")
			}
			return robotsTxt("User-agent: *\nDisallow: /private\n")
		case "http://a.test/":
			return linkPage("/ok", "/private")
		}
		return linkPage()
	})
	node := newVNode(t, w, 0, Options{Robots: robots.Policy{TTL: time.Hour, Retry: 100 * time.Millisecond, Retries: 4}}, nil, "http://a.test/")
	w.run(t, time.Minute, node)
	rs := w.onHost("a.test")
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%s %d", r.url[len("http://a.test"):], r.status))
	}
	want := "[/robots.txt 503 /robots.txt 503 /robots.txt 200 / 200 /ok 200]"
	if fmt.Sprint(got) != want {
		t.Fatalf("requests %v, want %s", got, want)
	}
	if a, b := rs[1].start-rs[0].end, rs[2].start-rs[1].end; a != 100*time.Millisecond || b != 200*time.Millisecond {
		t.Errorf("retries %v and %v after the failures, want 100ms and 200ms", a, b)
	}
	if r, e := node.st.RobotsRetries.Load(), node.st.RobotsExcluded.Load(); r != 2 || e != 1 {
		t.Errorf("robots.txt retries %d, excluded %d; want 2 and 1 (/private)", r, e)
	}
}

// TestRobotsTTLRefetch: rules are fetched again once their TTL has
// passed, counted as a refetch, and the new rules apply.
func TestRobotsTTLRefetch(t *testing.T) {
	w := newVWeb(func(u string, n int) (fetch.Result, string) {
		if u == "http://a.test/robots.txt" {
			if n == 0 {
				return robotsTxt("User-agent: *\nAllow: /\n")
			}
			return robotsTxt("User-agent: *\nDisallow: /p4\n")
		}
		var i int
		fmt.Sscanf(u, "http://a.test/p%d", &i)
		return linkPage(fmt.Sprintf("/p%d", i+1))
	})
	delay := politeness.Delay{Min: 100 * time.Millisecond, Max: time.Minute}.Wait
	node := newVNode(t, w, 0, Options{Robots: robots.Policy{TTL: 250 * time.Millisecond}}, delay, "http://a.test/p0")
	w.run(t, time.Minute, node)
	if !w.requested("http://a.test/p3") || w.requested("http://a.test/p4") {
		t.Errorf("p3 requested %v, p4 requested %v; want the refreshed rules applied", w.requested("http://a.test/p3"), w.requested("http://a.test/p4"))
	}
	if n, r := len(w.of("http://a.test/robots.txt")), node.st.RobotsRefetches.Load(); n < 2 || r < 1 {
		t.Errorf("robots.txt requested %d times, %d refetches counted; want 2 or more and 1 or more", n, r)
	}
}

// TestRobotsRedirectToHTTPS: http://a.test/robots.txt redirects to
// https, the common case on the real web: the hop waits in the host's
// own queue, the HTTPS rules apply to the http origin, and the https
// origin fetches its own robots.txt; every request to the host, of
// either origin, hops included, waits the host's delay after the last.
func TestRobotsRedirectToHTTPS(t *testing.T) {
	w := newVWeb(func(u string, _ int) (fetch.Result, string) {
		switch u {
		case "http://a.test/robots.txt":
			return redirectTo("https://a.test/robots.txt")
		case "https://a.test/robots.txt":
			return robotsTxt("User-agent: *\nDisallow: /secret\n")
		case "http://a.test/":
			return linkPage("/secret", "/open", "https://a.test/page")
		}
		return linkPage()
	})
	delay := politeness.Delay{Min: 100 * time.Millisecond, Max: time.Minute}.Wait
	node := newVNode(t, w, 0, Options{}, delay, "http://a.test/")
	w.run(t, time.Minute, node)
	var got []string
	for _, r := range w.reqs {
		got = append(got, r.url)
	}
	want := []string{"http://a.test/robots.txt", "https://a.test/robots.txt", "http://a.test/", "http://a.test/open",
		"https://a.test/robots.txt", "https://a.test/page"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	for i := 1; i < len(w.reqs); i++ {
		if gap := w.reqs[i].start - w.reqs[i-1].end; gap < 100*time.Millisecond {
			t.Errorf("%s began %v after %s ended, within the host's delay", w.reqs[i].url, gap, w.reqs[i-1].url)
		}
	}
	if r, e := node.st.RobotsRedirects.Load(), node.st.RobotsExcluded.Load(); r != 1 || e != 1 {
		t.Errorf("robots.txt redirects %d, URLs excluded %d; want 1 and 1 (/secret)", r, e)
	}
}

// TestMaxRedirectsChain: an endless chain /r0 -> /r1 -> ... is cut after
// MaxRedirects redirects: MaxRedirects+1 fetches, a redirect target
// submitted for each followed, one chain cut.
func TestMaxRedirectsChain(t *testing.T) {
	for _, maxRedirects := range []int{0, 5} {
		w := newVWeb(func(u string, _ int) (fetch.Result, string) {
			if u == "http://a.test/robots.txt" {
				return status(404, "")
			}
			var i int
			fmt.Sscanf(u, "http://a.test/r%d", &i)
			return redirectTo(fmt.Sprintf("/r%d", i+1))
		})
		node := newVNode(t, w, 0, Options{MaxRedirects: maxRedirects}, nil, "http://a.test/r0")
		w.run(t, time.Minute, node)
		targets := 0
		for _, m := range node.sink.msgs {
			for _, u := range m.URLs {
				if u.Kind == tracefile.URLRedirect {
					targets++
				}
			}
		}
		st := node.st
		if a, c := st.FetchAttempts.Load(), st.RedirectsCut.Load(); a != int64(maxRedirects+1) || c != 1 || targets != maxRedirects || len(w.reqs) != maxRedirects+2 {
			t.Errorf("max %d: %d fetches, %d requests, %d targets submitted, %d cut; want %d, %d, %d, 1",
				maxRedirects, a, len(w.reqs), targets, c, maxRedirects+1, maxRedirects+2, maxRedirects)
		}
	}
}

// TestUnreachableOriginOneRetry: an origin whose connection is refused
// (its robots.txt has no response) is retried once, not Retries times
// like a 5xx; its URLs wait meanwhile, are then excluded, and the crawl
// ends on its own, while the host's other origin is crawled.
func TestUnreachableOriginOneRetry(t *testing.T) {
	w := newVWeb(func(u string, _ int) (fetch.Result, string) {
		switch {
		case strings.HasPrefix(u, "https://"):
			return fetch.Result{Err: fmt.Errorf("dial tcp 127.0.0.1:443: %w", syscall.ECONNREFUSED)}, ""
		case u == "http://a.test/robots.txt":
			return status(404, "")
		case u == "http://a.test/":
			return linkPage("/ok", "https://a.test/s1", "https://a.test/s2")
		}
		return linkPage()
	})
	node := newVNode(t, w, 0, Options{Robots: robots.Policy{TTL: time.Hour, Retry: 200 * time.Millisecond, Retries: 4}}, nil, "http://a.test/")
	w.run(t, time.Minute, node)
	tries := w.of("https://a.test/robots.txt")
	if len(tries) != 2 || tries[1].start-tries[0].end != 200*time.Millisecond {
		t.Fatalf("https://a.test/robots.txt requested %+v, want twice, 200ms apart", tries)
	}
	if !w.requested("http://a.test/ok") || w.requested("https://a.test/s1") || w.requested("https://a.test/s2") {
		t.Errorf("requests %+v", w.reqs)
	}
	st := node.st
	if r, e, errs := st.RobotsRetries.Load(), st.RobotsExcluded.Load(), st.Snapshot().RobotsByStatus[0]; r != 1 || e != 2 || errs != 2 {
		t.Errorf("robots.txt retries %d, excluded %d, without a response %d; want 1, 2 and 2", r, e, errs)
	}
}

package recorder

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawltrace/crawltrace/internal/tracefile"
)

// TestPoliteness checks that a host never sees two requests at once and
// that consecutive requests to a host are at least MinDelay apart.
func TestPoliteness(t *testing.T) {
	const minDelay = 15 * time.Millisecond
	type hostLog struct {
		inflight, maxInflight int
		starts, ends          []time.Time
	}
	var mu sync.Mutex
	logs := map[string]*hostLog{}
	site := func(name string, n int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			l := logs[name]
			if l == nil {
				l = &hostLog{}
				logs[name] = l
			}
			l.inflight++
			l.maxInflight = max(l.maxInflight, l.inflight)
			l.starts = append(l.starts, time.Now())
			mu.Unlock()
			time.Sleep(2 * time.Millisecond) // widen the window for overlap
			var links []string
			for i := 0; i < n; i++ {
				links = append(links, fmt.Sprintf("/p%d", i))
			}
			linkPage(links...)(w, r)
			mu.Lock()
			l.inflight--
			l.ends = append(l.ends, time.Now())
			mu.Unlock()
		}
	}
	_, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": site("a", 8), "b.test": site("b", 8)})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/", "http://b.test/")
	cfg.Workers = 8
	cfg.MinDelay = minDelay
	res := runCrawl(t, cfg)
	if res.Stats.StopReason != StopDone {
		t.Errorf("stop reason %q", res.Stats.StopReason)
	}
	for name, l := range logs {
		if l.maxInflight != 1 {
			t.Errorf("host %s saw %d concurrent requests", name, l.maxInflight)
		}
		// robots.txt + home + 8 pages
		if len(l.starts) != 10 {
			t.Errorf("host %s: %d requests, want 10", name, len(l.starts))
		}
		for i := 1; i < len(l.starts); i++ {
			if gap := l.starts[i].Sub(l.ends[i-1]); gap < minDelay {
				t.Errorf("host %s: request %d started %v after the previous ended, want >= %v", name, i, gap, minDelay)
			}
		}
	}
	if len(logs) != 2 {
		t.Errorf("hosts crawled: %d, want 2", len(logs))
	}
}

func TestRobots(t *testing.T) {
	robots := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				w.WriteHeader(code)
				w.Write([]byte(body))
				return
			}
			linkPage("/private/x", "/ok", "http://b.test/", "http://c.test/")(w, r)
		}
	}
	v, srv := startVhosts(t, map[string]http.HandlerFunc{
		"a.test": robots(200, "User-agent: *\nDisallow: /private/\n"),
		"b.test": robots(404, ""),
		"c.test": robots(503, ""),
	})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/")
	res := runCrawl(t, cfg)
	got := v.got()
	has := func(s string) bool { return slices.Contains(got, s) }
	for _, want := range []string{"a.test/robots.txt", "a.test/", "a.test/ok", "b.test/robots.txt", "b.test/", "b.test/ok", "b.test/private/x", "c.test/robots.txt"} {
		if !has(want) {
			t.Errorf("not fetched: %s", want)
		}
	}
	for _, bad := range []string{"a.test/private/x", "c.test/", "c.test/ok"} {
		if has(bad) {
			t.Errorf("fetched despite robots.txt: %s", bad)
		}
	}
	logged := urlMultiset(readURLs(t, cfg.OutDir))
	if !slices.Contains(logged, "link http://a.test/private/x") {
		t.Errorf("excluded URL was not logged at the splitter")
	}
	// a/private/x and c/ (c.test pages are never fetched, so their links are unknown).
	if res.Stats.RobotsExcluded != 2 {
		t.Errorf("robots exclusions %d, want 2", res.Stats.RobotsExcluded)
	}
}

func TestRedirectLogged(t *testing.T) {
	_, srv := startVhosts(t, map[string]http.HandlerFunc{
		"a.test": func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				linkPage("/r1", "/r2")(w, r)
			case "/r1":
				w.Header().Set("Location", "../target?x=1#frag")
				w.WriteHeader(http.StatusFound)
			case "/r2":
				w.Header().Set("Location", "HTTP://B.test:80/landing")
				w.WriteHeader(http.StatusMovedPermanently)
			default:
				linkPage()(w, r)
			}
		},
		"b.test": linkPage(),
	})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/")
	res := runCrawl(t, cfg)
	logged := urlMultiset(readURLs(t, cfg.OutDir))
	for _, want := range []string{"redirect http://a.test/target?x=1", "redirect http://b.test/landing"} {
		if !slices.Contains(logged, want) {
			t.Errorf("missing %q in %q", want, logged)
		}
	}
	if res.Stats.Redirects != 2 {
		t.Errorf("redirects %d", res.Stats.Redirects)
	}
	var redirects []string
	for _, p := range readPages(t, cfg.OutDir, 0) {
		if p.Redirect != "" {
			redirects = append(redirects, p.Redirect)
		}
	}
	slices.Sort(redirects)
	if !slices.Equal(redirects, []string{"http://a.test/target?x=1", "http://b.test/landing"}) {
		t.Errorf("page log redirects %q", redirects)
	}
}

func TestRefusePrivate(t *testing.T) {
	v, srv := startVhosts(t, map[string]http.HandlerFunc{"127.0.0.1": linkPage()})
	seed := "http://" + srv.Listener.Addr().String() + "/"
	cfg := localConfig(t, "", seed)
	cfg.Resolve = nil
	cfg.AllowPrivate = false
	res := runCrawl(t, cfg)
	if n := len(v.got()); n != 0 {
		t.Fatalf("server saw %d requests without AllowPrivate", n)
	}
	pages := readPages(t, cfg.OutDir, 0)
	if len(pages) != 1 || !strings.Contains(pages[0].Error, "refusing") {
		t.Errorf("page log %+v, want one refused robots.txt fetch", pages)
	}
	if res.Stats.RobotsExcluded != 1 {
		t.Errorf("robots exclusions %d, want 1 (unreachable robots.txt disallows)", res.Stats.RobotsExcluded)
	}
	// A public-looking name resolved to loopback is refused at dial time too.
	cfg = localConfig(t, srv.Listener.Addr().String(), "http://public.example/")
	cfg.AllowPrivate = false
	runCrawl(t, cfg)
	if n := len(v.got()); n != 0 {
		t.Fatalf("server saw %d requests for a name resolved to loopback", n)
	}
	cfg = localConfig(t, "", seed)
	cfg.Resolve = nil
	runCrawl(t, cfg)
	if n := len(v.got()); n != 2 {
		t.Fatalf("with AllowPrivate the server saw %d requests, want 2", n)
	}
}

func TestCancelMidCrawl(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	n := 0
	_, srv := startVhosts(t, map[string]http.HandlerFunc{"a.test": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		if n == 30 {
			cancel()
		}
		k := n
		mu.Unlock()
		linkPage(fmt.Sprintf("/p%d", k), fmt.Sprintf("/q%d", k))(w, r)
	}})
	cfg := localConfig(t, srv.Listener.Addr().String(), "http://a.test/")
	cfg.Writer.FlushRows = 7
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.StopReason != StopCanceled {
		t.Errorf("stop reason %q", res.Stats.StopReason)
	}
	m, err := tracefile.ReadManifest(cfg.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	rows := readURLs(t, cfg.OutDir) // fails on unclean segments
	if int64(len(rows)) != m.URLRows() || len(rows) < 30 {
		t.Errorf("read %d rows, manifest says %d", len(rows), m.URLRows())
	}
	if _, err := os.Stat(filepath.Join(cfg.OutDir, StatsName)); err != nil {
		t.Error(err)
	}
}

func TestNoSeeds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.OutDir = t.TempDir()
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "no seed") {
		t.Errorf("err = %v", err)
	}
	cfg.Seeds = []string{"mailto:x@y"}
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "mailto") {
		t.Errorf("err = %v", err)
	}
}

// Every stop reason reads as a sentence naming the limit that ended the crawl.
func TestStopText(t *testing.T) {
	for _, tc := range []struct{ reason, want string }{
		{StopMaxPages, "max-pages, the budget of 200000 pages (--max-pages) was used"},
		{StopDuration, "duration, the time limit of 1m0s (--duration) elapsed before --max-pages 200000 was reached"},
		{StopDone, "frontier empty, no URL was left to crawl before --max-pages 200000 was reached"},
		{StopCanceled, "signal, the crawl was interrupted"},
		{StopError, "error, writing the trace failed"},
	} {
		if got := StopText(tc.reason, 200000, time.Minute); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.reason, got, tc.want)
		}
	}
	if got := StopText(StopDone, 0, 0); got != "frontier empty, no URL was left to crawl" {
		t.Errorf("no budget: %q", got)
	}
}

package recorder

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestRobotsHTTPToHTTPS: http://a.test/robots.txt redirects to https, the
// common case on the real web; the HTTPS rules apply to the http origin,
// and the two origins of a.test share one request at a time and the delay.
func TestRobotsHTTPToHTTPS(t *testing.T) {
	var mu sync.Mutex
	var starts []time.Time
	var inFlight, peak int
	var got []string
	track := func(scheme string, h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			starts = append(starts, time.Now())
			got = append(got, scheme+" "+r.URL.Path)
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
			h(w, r)
			mu.Lock()
			inFlight--
			mu.Unlock()
		}
	}
	tlsSrv := httptest.NewTLSServer(nil)
	t.Cleanup(tlsSrv.Close)
	_, tlsPort, _ := net.SplitHostPort(tlsSrv.Listener.Addr().String())
	tlsSrv.Config.Handler = track("https", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nDisallow: /secret\n"))
			return
		}
		linkPage()(w, r)
	})
	plain := httptest.NewServer(track("http", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, "https://a.test:"+tlsPort+"/robots.txt", http.StatusMovedPermanently)
			return
		}
		linkPage("/secret", "/open", "https://a.test:"+tlsPort+"/page")(w, r)
	}))
	t.Cleanup(plain.Close)
	_, plainPort, _ := net.SplitHostPort(plain.Listener.Addr().String())

	cfg := localConfig(t, "127.0.0.1", "http://a.test:"+plainPort+"/")
	cfg.tlsConfig = tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.tlsConfig.ServerName = "example.com" // the name httptest's certificate is for
	cfg.MinDelay = 100 * time.Millisecond
	res := runCrawl(t, cfg)
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"http /robots.txt", "https /robots.txt", "http /", "http /open", "https /page"} {
		if !slices.Contains(got, want) {
			t.Errorf("not fetched: %s (requests %v)", want, got)
		}
	}
	if slices.Contains(got, "http /secret") {
		t.Errorf("fetched /secret, disallowed by the robots.txt behind the redirect")
	}
	if res.Stats.RobotsRedirects != 1 {
		t.Errorf("robots redirects %d, want 1", res.Stats.RobotsRedirects)
	}
	if peak != 1 {
		t.Errorf("%d requests to a.test in flight at once", peak)
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d < cfg.MinDelay {
			t.Errorf("requests %d and %d %v apart (%v)", i-1, i, d, got)
		}
	}
}

// TestPolitenessIPLookups: in ip mode the politeness keys' DNS lookups
// run off the splitter's goroutine, several at once, and a request goes
// to the address of its key. The hosts here exist only in the crawl's
// lookup (no --resolve), so a page is fetched only if the dial uses the
// key's address; each lookup waits until another one is running too, so
// the crawl gets anywhere only if lookups overlap.
func TestPolitenessIPLookups(t *testing.T) {
	v, srv := startVhosts(t, map[string]http.HandlerFunc{
		"h0.test": linkPage("/a"), "h1.test": linkPage("/a"), "h2.test": linkPage("/a"), "h3.test": linkPage("/a"),
	})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var mu sync.Mutex
	var running, peak int
	overlap := make(chan struct{})
	var once sync.Once
	cfg := localConfig(t, "")
	cfg.Resolve = nil
	cfg.PolitenessKey = PolitenessIP
	for i := range 4 {
		cfg.Seeds = append(cfg.Seeds, fmt.Sprintf("http://h%d.test:%s/", i, port))
	}
	cfg.lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
		mu.Lock()
		running++
		peak = max(peak, running)
		if running > 1 {
			once.Do(func() { close(overlap) })
		}
		mu.Unlock()
		select {
		case <-overlap:
		case <-time.After(3 * time.Second):
		}
		mu.Lock()
		running--
		mu.Unlock()
		// Two addresses: the key takes the smaller, the one served.
		return []netip.Addr{netip.MustParseAddr("127.0.0.9"), netip.MustParseAddr("127.0.0.1")}, nil
	}
	runCrawl(t, cfg)
	mu.Lock()
	defer mu.Unlock()
	if peak < 2 {
		t.Errorf("at most %d DNS lookup(s) at once, want them to overlap", peak)
	}
	got := v.got()
	for i := range 4 {
		if want := fmt.Sprintf("h%d.test/a", i); !slices.Contains(got, want) {
			t.Errorf("not fetched: %s (requests %v)", want, got)
		}
	}
}
